package layers

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"

	"github.com/google/gopacket"
)

// CM is the body of a communication management MAD, management class 0x07
// (IBTA Vol 1 §12.6), carried on QP1. The MAD's AttributeID says which
// message it is; DecodeFromBytes fills the matching field (REQ, REP, RTU
// ...) and zeroes the others. Offsets below count from the start of the
// MAD; each message layout is on its type.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  | MgmtClass 0x07| ClassVersion 2| Method 0x03   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   ... TransactionID ... AttributeID (message kind) ...        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Local Communication ID (all but SIDR)               24   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Remote Communication ID (all but REQ and SIDR)      28   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      message fields, then PrivateData to byte 255             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type CM struct {
	madBody

	AttributeID CMAttribute // from the MAD header: the message kind

	REQ     CMReq
	MRA     CMMra
	REJ     CMRej
	REP     CMRep
	RTU     CMRtu
	DREQ    CMDreq
	DREP    CMDrep
	SIDRReq CMSidrReq
	SIDRRep CMSidrRep
	LAP     CMLap
	APR     CMApr

	// Data holds the 232 bytes of the attributes not decoded
	// (ClassPortInfo, unknown ones); nil otherwise.
	Data []byte
}

// cmReservedSpans are the whole reserved bytes of the messages whose fields
// name no reserved part of a byte (the REQ's bytes 4-7 and 24-27, the REP's
// bytes 15, 19 and 23, the DREQ's byte 11), in wire order.
var cmReservedSpans = map[CMAttribute][]FieldSpan{
	CMAttrREQ:  {{"Reserved4", 4, 4}, {"Reserved24", 24, 4}},
	CMAttrREP:  {{"Reserved15", 15, 1}, {"Reserved19", 19, 1}, {"Reserved23", 23, 1}},
	CMAttrDREQ: {{"Reserved11", 11, 1}},
}

// ReservedBytes returns reserved span i of the message (see
// cmReservedSpans) as a slice of its bytes, or nil past the last.
func (c *CM) ReservedBytes(i int) []byte {
	spans := cmReservedSpans[c.AttributeID]
	if i >= len(spans) || len(c.Contents) < spans[i].Offset+spans[i].Size {
		return nil
	}
	s := spans[i]
	return c.Contents[s.Offset : s.Offset+s.Size]
}

// cmReqServiceID is where a REQ's ServiceID starts in the message.
const cmReqServiceID = 8

// ServiceIDPrefix returns the first five bytes of a REQ's ServiceID, which
// mark an IP-CM service ID (0x0000000001), as a slice of the message.
func (c *CM) ServiceIDPrefix() []byte {
	if len(c.Contents) < cmReqServiceID+ipcmPrefixLength {
		return nil
	}
	return c.Contents[cmReqServiceID : cmReqServiceID+ipcmPrefixLength]
}

// LayerType returns LayerTypeCM.
func (c *CM) LayerType() gopacket.LayerType { return LayerTypeCM }

// CanDecode returns LayerTypeCM.
func (c *CM) CanDecode() gopacket.LayerClass { return LayerTypeCM }

func (c *CM) setHeader(h *MAD) { c.AttributeID = CMAttribute(h.AttributeID) }

// DecodeFromBytes decodes the 232 bytes after the MAD header as the message
// AttributeID names.
func (c *CM) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	attr := c.AttributeID
	*c = CM{AttributeID: attr}
	d, err := c.split("CM", cmFieldsOf(attr), data, df)
	if err != nil {
		return err
	}
	switch attr {
	case CMAttrREQ:
		c.REQ.decode(d)
	case CMAttrMRA:
		c.MRA.decode(d)
	case CMAttrREJ:
		c.REJ.decode(d)
	case CMAttrREP:
		c.REP.decode(d)
	case CMAttrRTU:
		c.RTU.LocalCommID, c.RTU.RemoteCommID, c.RTU.PrivateData = commIDs(d, 8)
	case CMAttrDREQ:
		c.DREQ.decode(d)
	case CMAttrDREP:
		c.DREP.LocalCommID, c.DREP.RemoteCommID, c.DREP.PrivateData = commIDs(d, 8)
	case CMAttrSIDRReq:
		c.SIDRReq.decode(d)
	case CMAttrSIDRRep:
		c.SIDRRep.decode(d)
	case CMAttrLAP:
		c.LAP.decode(d)
	case CMAttrAPR:
		c.APR.decode(d)
	default:
		c.Data = d
	}
	return nil
}

// SerializeTo prepends the 232 body bytes of the message AttributeID names.
func (c *CM) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := prependBody(b)
	if err != nil {
		return err
	}
	switch c.AttributeID {
	case CMAttrREQ:
		return c.REQ.encode(d)
	case CMAttrMRA:
		return c.MRA.encode(d)
	case CMAttrREJ:
		return c.REJ.encode(d)
	case CMAttrREP:
		return c.REP.encode(d)
	case CMAttrRTU:
		return putCommIDs(d, c.RTU.LocalCommID, c.RTU.RemoteCommID, "RTU", c.RTU.PrivateData, 8)
	case CMAttrDREQ:
		return c.DREQ.encode(d)
	case CMAttrDREP:
		return putCommIDs(d, c.DREP.LocalCommID, c.DREP.RemoteCommID, "DREP", c.DREP.PrivateData, 8)
	case CMAttrSIDRReq:
		return c.SIDRReq.encode(d)
	case CMAttrSIDRRep:
		return c.SIDRRep.encode(d)
	case CMAttrLAP:
		return c.LAP.encode(d)
	case CMAttrAPR:
		return c.APR.encode(d)
	}
	return putBytes("cm", "Data", d, c.Data)
}

// commIDs reads the two communication IDs that open most messages and the
// private data from byte pd on.
func commIDs(d []byte, pd int) (local, remote uint32, priv []byte) {
	return binary.BigEndian.Uint32(d[0:4]), binary.BigEndian.Uint32(d[4:8]), d[pd:MADDataLength:MADDataLength]
}

// putCommIDs writes the two communication IDs and the private data from byte pd on.
func putCommIDs(d []byte, local, remote uint32, msg string, priv []byte, pd int) error {
	binary.BigEndian.PutUint32(d[0:4], local)
	binary.BigEndian.PutUint32(d[4:8], remote)
	return putBytes("cm", msg+".PrivateData", d[pd:], priv)
}

// CMReq is the REQ message, ConnectRequest (IBTA Vol 1 §12.6, Table 106).
// Byte offsets from the start of the CM data (add 24 for the MAD):
//
//	 0 LocalCommID            4 reserved (ECE vendor ID in IBTA 1.4)
//	 8 ServiceID (8)         16 LocalCAGUID (8)      24 reserved (4)
//	28 LocalQKey             32 LocalQPN (24) | ResponderResources (8)
//	36 LocalEECN (24) | InitiatorDepth (8)
//	40 RemoteEECN (24) | RemoteCMResponseTimeout (5) TransportServiceType (2) E2E (1)
//	44 StartingPSN (24) | LocalCMResponseTimeout (5) RetryCount (3)
//	48 P_Key (16) | PathMTU (4) RDCExists (1) RNRRetryCount (3) |
//	   MaxCMRetries (4) SRQ (1) ExtendedTransportType (3)
//	52 primary path (44, see CMPath)   96 alternate path (44)
//	140 PrivateData (92; starts with the IP-CM header when ServiceID.IsIPCM)
type CMReq struct {
	LocalCommID             uint32
	Reserved4               uint32 // IBTA 1.4 ECE: vendor ID in the low 24 bits
	ServiceID               ServiceID
	LocalCAGUID             uint64
	Reserved24              uint32
	LocalQKey               uint32
	LocalQPN                uint32 // 24 bits
	ResponderResources      uint8
	LocalEECN               uint32 // 24 bits
	InitiatorDepth          uint8
	RemoteEECN              uint32 // 24 bits
	RemoteCMResponseTimeout uint8  // 5 bits: 4.096 µs × 2^n
	TransportServiceType    CMTransportType
	EndToEndFlowControl     bool
	StartingPSN             PSN
	LocalCMResponseTimeout  uint8 // 5 bits
	RetryCount              uint8 // 3 bits
	PKey                    uint16
	PathMTU                 PathMTU // 4 bits
	RDCExists               bool
	RNRRetryCount           uint8 // 3 bits
	MaxCMRetries            uint8 // 4 bits
	SRQ                     bool
	ExtendedTransportType   CMExtendedTransport
	Primary                 CMPath
	Alternate               CMPath // all zero when there is none
	PrivateData             []byte // 92 bytes
	// IPCM is decoded from the first 36 bytes of PrivateData when the
	// ServiceID is in the IP-CM range; when Valid it is written over them.
	IPCM IPCMHeader
}

func (r *CMReq) decode(d []byte) {
	be := binary.BigEndian
	r.LocalCommID, r.Reserved4 = be.Uint32(d[0:4]), be.Uint32(d[4:8])
	r.ServiceID, r.LocalCAGUID = ServiceID(be.Uint64(d[8:16])), be.Uint64(d[16:24])
	r.Reserved24, r.LocalQKey = be.Uint32(d[24:28]), be.Uint32(d[28:32])
	r.LocalQPN, r.ResponderResources = get24(d[32:35]), d[35]
	r.LocalEECN, r.InitiatorDepth = get24(d[36:39]), d[39]
	r.RemoteEECN, r.RemoteCMResponseTimeout = get24(d[40:43]), d[43]>>3
	r.TransportServiceType, r.EndToEndFlowControl = CMTransportType(d[43]>>1&3), d[43]&1 != 0
	r.StartingPSN, r.LocalCMResponseTimeout, r.RetryCount = PSN(get24(d[44:47])), d[47]>>3, d[47]&7
	r.PKey = be.Uint16(d[48:50])
	r.PathMTU, r.RDCExists, r.RNRRetryCount = PathMTU(d[50]>>4), d[50]&8 != 0, d[50]&7
	r.MaxCMRetries, r.SRQ, r.ExtendedTransportType = d[51]>>4, d[51]&8 != 0, CMExtendedTransport(d[51]&7)
	r.Primary.decode(d[52:96])
	r.Alternate.decode(d[96:140])
	r.PrivateData = d[140:232:232]
	if r.ServiceID.IsIPCM() {
		r.IPCM = decodeIPCM(r.PrivateData)
	}
}

func (r *CMReq) encode(d []byte) error {
	be := binary.BigEndian
	be.PutUint32(d[0:4], r.LocalCommID)
	be.PutUint32(d[4:8], r.Reserved4)
	be.PutUint64(d[8:16], uint64(r.ServiceID))
	be.PutUint64(d[16:24], r.LocalCAGUID)
	be.PutUint32(d[24:28], r.Reserved24)
	be.PutUint32(d[28:32], r.LocalQKey)
	put24(d[32:35], r.LocalQPN)
	d[35] = r.ResponderResources
	put24(d[36:39], r.LocalEECN)
	d[39] = r.InitiatorDepth
	put24(d[40:43], r.RemoteEECN)
	d[43] = r.RemoteCMResponseTimeout<<3 | uint8(r.TransportServiceType&3)<<1 | bit(r.EndToEndFlowControl)
	put24(d[44:47], uint32(r.StartingPSN))
	d[47] = r.LocalCMResponseTimeout<<3 | r.RetryCount&7
	be.PutUint16(d[48:50], r.PKey)
	d[50] = uint8(r.PathMTU)<<4 | bit(r.RDCExists)<<3 | r.RNRRetryCount&7
	d[51] = r.MaxCMRetries<<4 | bit(r.SRQ)<<3 | uint8(r.ExtendedTransportType&7)
	r.Primary.encode(d[52:96])
	r.Alternate.encode(d[96:140])
	if err := putBytes("cm", "REQ.PrivateData", d[140:232], r.PrivateData); err != nil {
		return err
	}
	return r.IPCM.encode(d[140:232])
}

// CMPath is a path of a REQ (primary or alternate), 44 bytes:
//
//	 0 LocalPortLID   2 RemotePortLID   4 LocalPortGID (16)   20 RemotePortGID (16)
//	36 FlowLabel (20) | reserved (6) | PacketRate (6)
//	40 TrafficClass   41 HopLimit   42 SL (4) SubnetLocal (1) reserved (3)
//	43 LocalACKTimeout (5) reserved (3; in the alternate path of IBTA 1.4,
//	   bit 2 is SAP Supported)
type CMPath struct {
	LocalLID        uint16
	RemoteLID       uint16
	LocalGID        net.IP // 16 bytes
	RemoteGID       net.IP // 16 bytes
	FlowLabel       uint32 // 20 bits
	Reserved0       uint8  // 6 bits
	PacketRate      StaticRate
	TrafficClass    uint8
	HopLimit        uint8
	SL              uint8 // 4 bits
	SubnetLocal     bool
	Reserved1       uint8 // 3 bits
	LocalACKTimeout uint8 // 5 bits: 4.096 µs × 2^n
	Reserved2       uint8 // 3 bits
}

func (p *CMPath) decode(d []byte) {
	be := binary.BigEndian
	p.LocalLID, p.RemoteLID = be.Uint16(d[0:2]), be.Uint16(d[2:4])
	p.LocalGID, p.RemoteGID = net.IP(d[4:20:20]), net.IP(d[20:36:36])
	w := be.Uint32(d[36:40])
	p.FlowLabel, p.Reserved0, p.PacketRate = w>>12, uint8(w>>6)&0x3F, StaticRate(w&0x3F)
	p.TrafficClass, p.HopLimit = d[40], d[41]
	p.SL, p.SubnetLocal, p.Reserved1 = d[42]>>4, d[42]&8 != 0, d[42]&7
	p.LocalACKTimeout, p.Reserved2 = d[43]>>3, d[43]&7
}

func (p *CMPath) encode(d []byte) {
	be := binary.BigEndian
	be.PutUint16(d[0:2], p.LocalLID)
	be.PutUint16(d[2:4], p.RemoteLID)
	copy(d[4:20], gid16(p.LocalGID))
	copy(d[20:36], gid16(p.RemoteGID))
	be.PutUint32(d[36:40], (p.FlowLabel&0xFFFFF)<<12|uint32(p.Reserved0&0x3F)<<6|uint32(p.PacketRate&0x3F))
	d[40], d[41] = p.TrafficClass, p.HopLimit
	d[42] = p.SL<<4 | bit(p.SubnetLocal)<<3 | p.Reserved1&7
	d[43] = p.LocalACKTimeout<<3 | p.Reserved2&7
}

// CMMra is the MRA message, MsgRcptAck (IBTA Vol 1 §12.6, Table 107):
//
//	0 LocalCommID   4 RemoteCommID   8 MessageMRAed (2) reserved (6)
//	9 ServiceTimeout (5) reserved (3)   10 PrivateData (222)
type CMMra struct {
	LocalCommID    uint32
	RemoteCommID   uint32
	MessageMRAed   CMMRAedMessage
	Reserved8      uint8 // 6 bits
	ServiceTimeout uint8 // 5 bits: 4.096 µs × 2^n
	Reserved9      uint8 // 3 bits
	PrivateData    []byte
}

func (m *CMMra) decode(d []byte) {
	m.LocalCommID, m.RemoteCommID, m.PrivateData = commIDs(d, 10)
	m.MessageMRAed, m.Reserved8 = CMMRAedMessage(d[8]>>6), d[8]&0x3F
	m.ServiceTimeout, m.Reserved9 = d[9]>>3, d[9]&7
}

func (m *CMMra) encode(d []byte) error {
	d[8] = uint8(m.MessageMRAed&3)<<6 | m.Reserved8&0x3F
	d[9] = m.ServiceTimeout<<3 | m.Reserved9&7
	return putCommIDs(d, m.LocalCommID, m.RemoteCommID, "MRA", m.PrivateData, 10)
}

// CMRej is the REJ message, ConnectReject (IBTA Vol 1 §12.6, Table 108):
//
//	0 LocalCommID   4 RemoteCommID   8 MessageRejected (2) reserved (6)
//	9 RejectInfoLength (7) reserved (1)   10 Reason (16)
//	12 AdditionalRejectionInformation (72)   84 PrivateData (148)
type CMRej struct {
	LocalCommID      uint32
	RemoteCommID     uint32
	MessageRejected  CMRejectedMessage
	Reserved8        uint8 // 6 bits
	RejectInfoLength uint8 // 7 bits: the bytes of ARI that are valid
	Reserved9        uint8 // 1 bit
	Reason           CMRejectReason
	ARI              []byte // 72 bytes
	PrivateData      []byte // 148 bytes
}

func (r *CMRej) decode(d []byte) {
	r.LocalCommID, r.RemoteCommID, r.PrivateData = commIDs(d, 84)
	r.MessageRejected, r.Reserved8 = CMRejectedMessage(d[8]>>6), d[8]&0x3F
	r.RejectInfoLength, r.Reserved9 = d[9]>>1, d[9]&1
	r.Reason = CMRejectReason(binary.BigEndian.Uint16(d[10:12]))
	r.ARI = d[12:84:84]
}

func (r *CMRej) encode(d []byte) error {
	d[8] = uint8(r.MessageRejected&3)<<6 | r.Reserved8&0x3F
	d[9] = r.RejectInfoLength<<1 | r.Reserved9&1
	binary.BigEndian.PutUint16(d[10:12], uint16(r.Reason))
	if err := putBytes("cm", "REJ.ARI", d[12:84], r.ARI); err != nil {
		return err
	}
	return putCommIDs(d, r.LocalCommID, r.RemoteCommID, "REJ", r.PrivateData, 84)
}

// AdditionalInfo returns the valid part of the ARI (RejectInfoLength bytes).
func (r *CMRej) AdditionalInfo() []byte { return r.ARI[:min(int(r.RejectInfoLength), len(r.ARI))] }

// CMRep is the REP message, ConnectReply (IBTA Vol 1 §12.6, Table 110):
//
//	 0 LocalCommID   4 RemoteCommID   8 LocalQKey   12 LocalQPN (24) reserved (8)
//	16 LocalEECN (24) reserved (8)    20 StartingPSN (24) reserved (8)
//	24 ResponderResources   25 InitiatorDepth
//	26 TargetACKDelay (5) FailoverAccepted (2) E2E (1)
//	27 RNRRetryCount (3) SRQ (1) reserved (4)   28 LocalCAGUID (8)
//	36 PrivateData (196)
type CMRep struct {
	LocalCommID         uint32
	RemoteCommID        uint32
	LocalQKey           uint32
	LocalQPN            uint32 // 24 bits
	Reserved15          uint8
	LocalEECN           uint32 // 24 bits
	Reserved19          uint8
	StartingPSN         PSN
	Reserved23          uint8
	ResponderResources  uint8
	InitiatorDepth      uint8
	TargetACKDelay      uint8 // 5 bits
	FailoverAccepted    CMFailover
	EndToEndFlowControl bool
	RNRRetryCount       uint8 // 3 bits
	SRQ                 bool
	Reserved27          uint8 // 4 bits
	LocalCAGUID         uint64
	PrivateData         []byte // 196 bytes
}

func (r *CMRep) decode(d []byte) {
	be := binary.BigEndian
	r.LocalCommID, r.RemoteCommID, r.PrivateData = commIDs(d, 36)
	r.LocalQKey = be.Uint32(d[8:12])
	r.LocalQPN, r.Reserved15 = get24(d[12:15]), d[15]
	r.LocalEECN, r.Reserved19 = get24(d[16:19]), d[19]
	r.StartingPSN, r.Reserved23 = PSN(get24(d[20:23])), d[23]
	r.ResponderResources, r.InitiatorDepth = d[24], d[25]
	r.TargetACKDelay, r.FailoverAccepted, r.EndToEndFlowControl = d[26]>>3, CMFailover(d[26]>>1&3), d[26]&1 != 0
	r.RNRRetryCount, r.SRQ, r.Reserved27 = d[27]>>5, d[27]&0x10 != 0, d[27]&0xF
	r.LocalCAGUID = be.Uint64(d[28:36])
}

func (r *CMRep) encode(d []byte) error {
	be := binary.BigEndian
	be.PutUint32(d[8:12], r.LocalQKey)
	put24(d[12:15], r.LocalQPN)
	put24(d[16:19], r.LocalEECN)
	put24(d[20:23], uint32(r.StartingPSN))
	d[15], d[19], d[23], d[24], d[25] = r.Reserved15, r.Reserved19, r.Reserved23, r.ResponderResources, r.InitiatorDepth
	d[26] = r.TargetACKDelay<<3 | uint8(r.FailoverAccepted&3)<<1 | bit(r.EndToEndFlowControl)
	d[27] = r.RNRRetryCount<<5 | bit(r.SRQ)<<4 | r.Reserved27&0xF
	be.PutUint64(d[28:36], r.LocalCAGUID)
	return putCommIDs(d, r.LocalCommID, r.RemoteCommID, "REP", r.PrivateData, 36)
}

// CMRtu is the RTU message, ReadyToUse (IBTA Vol 1 §12.6, Table 111):
// 0 LocalCommID, 4 RemoteCommID, 8 PrivateData (224).
type CMRtu struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  []byte
}

// CMDreq is the DREQ message, DisconnectRequest (IBTA Vol 1 §12.6, Table
// 112): 0 LocalCommID, 4 RemoteCommID, 8 RemoteQPN/EECN (24) reserved (8),
// 12 PrivateData (220).
type CMDreq struct {
	LocalCommID  uint32
	RemoteCommID uint32
	RemoteQPN    uint32 // 24 bits: the peer's QPN (or EECN for RD)
	Reserved11   uint8
	PrivateData  []byte
}

func (r *CMDreq) decode(d []byte) {
	r.LocalCommID, r.RemoteCommID, r.PrivateData = commIDs(d, 12)
	r.RemoteQPN, r.Reserved11 = get24(d[8:11]), d[11]
}

func (r *CMDreq) encode(d []byte) error {
	put24(d[8:11], r.RemoteQPN)
	d[11] = r.Reserved11
	return putCommIDs(d, r.LocalCommID, r.RemoteCommID, "DREQ", r.PrivateData, 12)
}

// CMDrep is the DREP message, DisconnectReply (IBTA Vol 1 §12.6, Table
// 113): 0 LocalCommID, 4 RemoteCommID, 8 PrivateData (224).
type CMDrep struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  []byte
}

// CMSidrReq is the SIDR_REQ message, ServiceIDResReq (IBTA Vol 1 §12.6,
// Table 119), which resolves a service ID to a UD QP:
//
//	0 RequestID   4 P_Key (16) reserved (16)   8 ServiceID (8)
//	16 PrivateData (216; starts with the IP-CM header when ServiceID.IsIPCM)
type CMSidrReq struct {
	RequestID   uint32
	PKey        uint16
	Reserved6   uint16
	ServiceID   ServiceID
	PrivateData []byte
	IPCM        IPCMHeader
}

func (r *CMSidrReq) decode(d []byte) {
	be := binary.BigEndian
	r.RequestID, r.PKey, r.Reserved6 = be.Uint32(d[0:4]), be.Uint16(d[4:6]), be.Uint16(d[6:8])
	r.ServiceID, r.PrivateData = ServiceID(be.Uint64(d[8:16])), d[16:232:232]
	if r.ServiceID.IsIPCM() {
		r.IPCM = decodeIPCM(r.PrivateData)
	}
}

func (r *CMSidrReq) encode(d []byte) error {
	be := binary.BigEndian
	be.PutUint32(d[0:4], r.RequestID)
	be.PutUint16(d[4:6], r.PKey)
	be.PutUint16(d[6:8], r.Reserved6)
	be.PutUint64(d[8:16], uint64(r.ServiceID))
	if err := putBytes("cm", "SIDR_REQ.PrivateData", d[16:], r.PrivateData); err != nil {
		return err
	}
	return r.IPCM.encode(d[16:])
}

// CMSidrRep is the SIDR_REP message, ServiceIDResReqResp (IBTA Vol 1
// §12.6, Table 120):
//
//	 0 RequestID   4 Status   5 AdditionalInfoLength   6 reserved (16)
//	 8 QPN (24) reserved (8)   12 ServiceID (8)   20 QKey
//	24 ClassPortInfo / AdditionalInformation (72)   96 PrivateData (136)
type CMSidrRep struct {
	RequestID            uint32
	Status               CMSIDRStatus
	AdditionalInfoLength uint8
	Reserved6            uint16
	QPN                  uint32 // 24 bits
	Reserved11           uint8
	ServiceID            ServiceID
	QKey                 uint32
	AdditionalInfo       []byte // 72 bytes; a ClassPortInfo when Status is Redirect
	PrivateData          []byte // 136 bytes
}

func (r *CMSidrRep) decode(d []byte) {
	be := binary.BigEndian
	r.RequestID, r.Status, r.AdditionalInfoLength = be.Uint32(d[0:4]), CMSIDRStatus(d[4]), d[5]
	r.Reserved6, r.QPN, r.Reserved11 = be.Uint16(d[6:8]), get24(d[8:11]), d[11]
	r.ServiceID, r.QKey = ServiceID(be.Uint64(d[12:20])), be.Uint32(d[20:24])
	r.AdditionalInfo, r.PrivateData = d[24:96:96], d[96:232:232]
}

func (r *CMSidrRep) encode(d []byte) error {
	be := binary.BigEndian
	be.PutUint32(d[0:4], r.RequestID)
	d[4], d[5] = uint8(r.Status), r.AdditionalInfoLength
	be.PutUint16(d[6:8], r.Reserved6)
	put24(d[8:11], r.QPN)
	d[11] = r.Reserved11
	be.PutUint64(d[12:20], uint64(r.ServiceID))
	be.PutUint32(d[20:24], r.QKey)
	if err := putBytes("cm", "SIDR_REP.AdditionalInfo", d[24:96], r.AdditionalInfo); err != nil {
		return err
	}
	return putBytes("cm", "SIDR_REP.PrivateData", d[96:], r.PrivateData)
}

// CMLap is the LAP message, LoadAlternatePath (IBTA Vol 1 §12.8, Table 115):
//
//	 0 LocalCommID   4 RemoteCommID   8 reserved (4)
//	12 RemoteQPN/EECN (24) | RemoteCMResponseTimeout (5) reserved (3)
//	16 reserved (4)   20 AlternateLocalPortLID   22 AlternateRemotePortLID
//	24 AlternateLocalPortGID (16)   40 AlternateRemotePortGID (16)
//	56 AlternateFlowLabel (20) reserved (4) | AlternateTrafficClass (8)
//	60 AlternateHopLimit   61 reserved (2) AlternatePacketRate (6)
//	62 AlternateSL (4) AlternateSubnetLocal (1) reserved (3)
//	63 AlternateLocalACKTimeout (5) reserved (3)   64 PrivateData (168)
type CMLap struct {
	LocalCommID              uint32
	RemoteCommID             uint32
	Reserved8                uint32
	RemoteQPN                uint32 // 24 bits (QPN or EECN)
	RemoteCMResponseTimeout  uint8  // 5 bits
	Reserved15               uint8  // 3 bits
	Reserved16               uint32
	AlternateLocalLID        uint16
	AlternateRemoteLID       uint16
	AlternateLocalGID        net.IP
	AlternateRemoteGID       net.IP
	AlternateFlowLabel       uint32 // 20 bits
	Reserved58               uint8  // 4 bits
	AlternateTrafficClass    uint8
	AlternateHopLimit        uint8
	Reserved61               uint8 // 2 bits
	AlternatePacketRate      StaticRate
	AlternateSL              uint8 // 4 bits
	AlternateSubnetLocal     bool
	Reserved62               uint8 // 3 bits
	AlternateLocalACKTimeout uint8 // 5 bits
	Reserved63               uint8 // 3 bits
	PrivateData              []byte
}

func (l *CMLap) decode(d []byte) {
	be := binary.BigEndian
	l.LocalCommID, l.RemoteCommID, l.PrivateData = commIDs(d, 64)
	l.Reserved8, l.RemoteQPN = be.Uint32(d[8:12]), get24(d[12:15])
	l.RemoteCMResponseTimeout, l.Reserved15, l.Reserved16 = d[15]>>3, d[15]&7, be.Uint32(d[16:20])
	l.AlternateLocalLID, l.AlternateRemoteLID = be.Uint16(d[20:22]), be.Uint16(d[22:24])
	l.AlternateLocalGID, l.AlternateRemoteGID = net.IP(d[24:40:40]), net.IP(d[40:56:56])
	w := be.Uint32(d[56:60])
	l.AlternateFlowLabel, l.Reserved58, l.AlternateTrafficClass = w>>12, uint8(w>>8)&0xF, uint8(w)
	l.AlternateHopLimit, l.Reserved61, l.AlternatePacketRate = d[60], d[61]>>6, StaticRate(d[61]&0x3F)
	l.AlternateSL, l.AlternateSubnetLocal, l.Reserved62 = d[62]>>4, d[62]&8 != 0, d[62]&7
	l.AlternateLocalACKTimeout, l.Reserved63 = d[63]>>3, d[63]&7
}

func (l *CMLap) encode(d []byte) error {
	be := binary.BigEndian
	be.PutUint32(d[8:12], l.Reserved8)
	put24(d[12:15], l.RemoteQPN)
	d[15] = l.RemoteCMResponseTimeout<<3 | l.Reserved15&7
	be.PutUint32(d[16:20], l.Reserved16)
	be.PutUint16(d[20:22], l.AlternateLocalLID)
	be.PutUint16(d[22:24], l.AlternateRemoteLID)
	copy(d[24:40], gid16(l.AlternateLocalGID))
	copy(d[40:56], gid16(l.AlternateRemoteGID))
	be.PutUint32(d[56:60], (l.AlternateFlowLabel&0xFFFFF)<<12|uint32(l.Reserved58&0xF)<<8|uint32(l.AlternateTrafficClass))
	d[60], d[61] = l.AlternateHopLimit, l.Reserved61<<6|uint8(l.AlternatePacketRate&0x3F)
	d[62] = l.AlternateSL<<4 | bit(l.AlternateSubnetLocal)<<3 | l.Reserved62&7
	d[63] = l.AlternateLocalACKTimeout<<3 | l.Reserved63&7
	return putCommIDs(d, l.LocalCommID, l.RemoteCommID, "LAP", l.PrivateData, 64)
}

// CMApr is the APR message, AlternatePathResponse (IBTA Vol 1 §12.8,
// Table 116):
//
//	0 LocalCommID   4 RemoteCommID   8 AdditionalInfoLength   9 APStatus
//	10 reserved (16)   12 AdditionalInformation (72)   84 PrivateData (148)
type CMApr struct {
	LocalCommID          uint32
	RemoteCommID         uint32
	AdditionalInfoLength uint8
	APStatus             CMAPRStatus
	Reserved10           uint16
	AdditionalInfo       []byte // 72 bytes
	PrivateData          []byte // 148 bytes
}

func (a *CMApr) decode(d []byte) {
	a.LocalCommID, a.RemoteCommID, a.PrivateData = commIDs(d, 84)
	a.AdditionalInfoLength, a.APStatus = d[8], CMAPRStatus(d[9])
	a.Reserved10, a.AdditionalInfo = binary.BigEndian.Uint16(d[10:12]), d[12:84:84]
}

func (a *CMApr) encode(d []byte) error {
	d[8], d[9] = a.AdditionalInfoLength, uint8(a.APStatus)
	binary.BigEndian.PutUint16(d[10:12], a.Reserved10)
	if err := putBytes("cm", "APR.AdditionalInfo", d[12:84], a.AdditionalInfo); err != nil {
		return err
	}
	return putCommIDs(d, a.LocalCommID, a.RemoteCommID, "APR", a.PrivateData, 84)
}

// IPCMHeaderLength is the size of the IP-CM private-data header.
const IPCMHeaderLength = 36

// IPCMHeader is the header that IP-based connection management (IBTA Vol 1
// Annex A11, used by RDMA CM) puts at the start of the REQ and SIDR_REQ
// private data:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| MajV  | MinV  |  IPV  | Resv  |        Source Port            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Source IP address (16 bytes; IPv4 in the last 4)       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     Destination IP address (16 bytes; IPv4 in the last 4)     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  consumer private data ...                    |
//
// Valid says the message's ServiceID is an IP-CM one, so the fields mean
// something. SrcIP and DstIP are slices of the private data: 4 bytes for
// IPVersion 4, else 16.
type IPCMHeader struct {
	Valid               bool
	MajorVersion        uint8 // 4 bits (0)
	MinorVersion        uint8 // 4 bits (0)
	IPVersion           uint8 // 4 bits: 4 or 6
	Reserved            uint8 // 4 bits
	SrcPort             uint16
	SrcIP               net.IP
	DstIP               net.IP
	ConsumerPrivateData []byte // what follows the header
}

func decodeIPCM(pd []byte) IPCMHeader {
	h := IPCMHeader{Valid: true, MajorVersion: pd[0] >> 4, MinorVersion: pd[0] & 0xF, IPVersion: pd[1] >> 4,
		Reserved: pd[1] & 0xF, SrcPort: binary.BigEndian.Uint16(pd[2:4]), ConsumerPrivateData: pd[IPCMHeaderLength:]}
	if h.IPVersion == 4 {
		h.SrcIP, h.DstIP = net.IP(pd[16:20:20]), net.IP(pd[32:36:36])
	} else {
		h.SrcIP, h.DstIP = net.IP(pd[4:20:20]), net.IP(pd[20:36:36])
	}
	return h
}

// encode writes a valid header over the start of the private data pd, and
// the consumer private data after it.
func (h *IPCMHeader) encode(pd []byte) error {
	if !h.Valid {
		return nil
	}
	pd[0] = h.MajorVersion<<4 | h.MinorVersion&0xF
	pd[1] = h.IPVersion<<4 | h.Reserved&0xF
	binary.BigEndian.PutUint16(pd[2:4], h.SrcPort)
	if h.IPVersion == 4 {
		src, dst := h.SrcIP.To4(), h.DstIP.To4()
		if (src == nil && h.SrcIP != nil) || (dst == nil && h.DstIP != nil) {
			return fmt.Errorf("cm: IP-CM header says IPv4 but holds %v -> %v", h.SrcIP, h.DstIP)
		}
		copy(pd[16:20], src)
		copy(pd[32:36], dst)
	} else {
		copy(pd[4:20], gid16(h.SrcIP))
		copy(pd[20:36], gid16(h.DstIP))
	}
	return putBytes("cm", "IPCM.ConsumerPrivateData", pd[IPCMHeaderLength:], h.ConsumerPrivateData)
}

// ServiceID is a CM service identifier. IP-CM (Annex A11) service IDs are
// 0x0000000001PPpppp: the RDMA CM port space PS = 0x01PP and port pppp.
type ServiceID uint64

// ipcmPrefixMask selects the bytes that mark an IP-CM service ID.
const (
	ipcmPrefixMask = 0xFFFFFFFFFF000000
	ipcmPrefix     = 0x0000000001000000
	// ipcmPrefixLength is the bytes the prefix takes: the ServiceID's
	// first five.
	ipcmPrefixLength = 5
)

// IPCMServiceID returns the service ID RDMA CM uses for port in port space ps.
func IPCMServiceID(ps PortSpace, port uint16) ServiceID {
	return ServiceID(uint64(ps)<<16 | uint64(port))
}

// IsIPCM reports whether the service ID is in the IP-CM range.
func (s ServiceID) IsIPCM() bool { return uint64(s)&ipcmPrefixMask == ipcmPrefix }

// PortSpace returns the RDMA CM port space, bytes 4-5 (0x0106 for TCP).
func (s ServiceID) PortSpace() PortSpace { return PortSpace(s >> 16) }

// Protocol returns byte 5, the IP protocol of an IP-CM service ID (0x06 TCP,
// 0x11 UDP): Wireshark's cm.req.serviceid.protocol.
func (s ServiceID) Protocol() uint8 { return uint8(s >> 16) }

// Port returns the low 16 bits, the port of an IP-CM service ID.
func (s ServiceID) Port() uint16 { return uint16(s) }

// String returns the ID as 16 hex digits, as tshark prints it.
func (s ServiceID) String() string { return fmt.Sprintf("0x%016x", uint64(s)) }

// PortSpace is an RDMA CM port space (librdmacm enum rdma_port_space).
type PortSpace uint16

// RDMA CM port spaces.
const (
	PortSpaceSDP   PortSpace = 0x0001
	PortSpaceIPoIB PortSpace = 0x0002
	PortSpaceTCP   PortSpace = 0x0106
	PortSpaceUDP   PortSpace = 0x0111
	PortSpaceIB    PortSpace = 0x013F
)

var portSpaceNames = map[PortSpace]string{PortSpaceSDP: "SDP", PortSpaceIPoIB: "IPoIB", PortSpaceTCP: "TCP",
	PortSpaceUDP: "UDP", PortSpaceIB: "IB"}

// String names the port space ("TCP", ...).
func (p PortSpace) String() string {
	if n, ok := portSpaceNames[p]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(0x%04x)", uint16(p))
}

// CMAttribute is the AttributeID of a CM MAD: the message kind (IBTA Vol 1
// §12.6).
type CMAttribute uint16

// CM messages.
const (
	CMAttrClassPortInfo CMAttribute = 0x0001
	CMAttrREQ           CMAttribute = 0x0010
	CMAttrMRA           CMAttribute = 0x0011
	CMAttrREJ           CMAttribute = 0x0012
	CMAttrREP           CMAttribute = 0x0013
	CMAttrRTU           CMAttribute = 0x0014
	CMAttrDREQ          CMAttribute = 0x0015
	CMAttrDREP          CMAttribute = 0x0016
	CMAttrSIDRReq       CMAttribute = 0x0017
	CMAttrSIDRRep       CMAttribute = 0x0018
	CMAttrLAP           CMAttribute = 0x0019
	CMAttrAPR           CMAttribute = 0x001A
)

var cmAttrNames = [...]struct{ name, abbrev string }{
	CMAttrREQ: {"ConnectRequest", "REQ"}, CMAttrMRA: {"MsgRcptAck", "MRA"}, CMAttrREJ: {"ConnectReject", "REJ"},
	CMAttrREP: {"ConnectReply", "REP"}, CMAttrRTU: {"ReadyToUse", "RTU"}, CMAttrDREQ: {"DisconnectRequest", "DREQ"},
	CMAttrDREP: {"DisconnectReply", "DREP"}, CMAttrSIDRReq: {"ServiceIDResReq", "SIDR_REQ"},
	CMAttrSIDRRep: {"ServiceIDResReqResp", "SIDR_REP"}, CMAttrLAP: {"LoadAlternatePath", "LAP"},
	CMAttrAPR: {"AlternatePathResponse", "APR"}, CMAttrClassPortInfo: {"ClassPortInfo", "ClassPortInfo"},
}

// String returns Wireshark's name for the message ("ConnectRequest", ...).
func (a CMAttribute) String() string {
	if int(a) < len(cmAttrNames) && cmAttrNames[a].name != "" {
		return cmAttrNames[a].name
	}
	return fmt.Sprintf("Unknown(0x%04x)", uint16(a))
}

// WiresharkDissects reports whether tshark 4.0 dissects the message's body
// (REQ, REP, RTU, REJ, DREQ, DREP); it titles the others "(Dissector Not
// Implemented)".
func (a CMAttribute) WiresharkDissects() bool {
	switch a {
	case CMAttrREQ, CMAttrREP, CMAttrRTU, CMAttrREJ, CMAttrDREQ, CMAttrDREP:
		return true
	}
	return false
}

// Abbrev returns the IBTA abbreviation of the message ("REQ", "SIDR_REP", ...).
func (a CMAttribute) Abbrev() string {
	if int(a) < len(cmAttrNames) && cmAttrNames[a].abbrev != "" {
		return cmAttrNames[a].abbrev
	}
	return a.String()
}

// CMTransportType is the REQ's Transport Service Type.
type CMTransportType uint8

// Transport service types.
const (
	CMTransportRC       CMTransportType = 0
	CMTransportUC       CMTransportType = 1
	CMTransportRD       CMTransportType = 2
	CMTransportExtended CMTransportType = 3 // see ExtendedTransportType (XRC)
)

// String names the transport ("RC", "UC", ...).
func (t CMTransportType) String() string {
	return enumName([]string{"RC", "UC", "RD", "Extended"}, uint(t), "Unknown")
}

// CMExtendedTransport is the REQ's Extended Transport Type, used when the
// Transport Service Type is 3.
type CMExtendedTransport uint8

// Extended transport types.
const (
	CMExtendedNone CMExtendedTransport = 0
	CMExtendedXRC  CMExtendedTransport = 1
)

// String names the extended transport ("XRC").
func (t CMExtendedTransport) String() string {
	return enumName([]string{"None", "XRC"}, uint(t), "Reserved")
}

// CMFailover is the REP's Failover Accepted field.
type CMFailover uint8

// String names the failover answer.
func (f CMFailover) String() string {
	return enumName([]string{"Accepted", "NotSupported", "Rejected", "Reserved"}, uint(f), "Unknown")
}

// CMRejectedMessage is the REJ's Message Rejected field.
type CMRejectedMessage uint8

// String names the rejected message.
func (m CMRejectedMessage) String() string {
	return enumName([]string{"REQ", "REP", "Other", "Reserved"}, uint(m), "Unknown")
}

// CMMRAedMessage is the MRA's Message MRAed field.
type CMMRAedMessage uint8

// String names the acknowledged message.
func (m CMMRAedMessage) String() string {
	return enumName([]string{"REQ", "REP", "LAP", "Reserved"}, uint(m), "Unknown")
}

// CMRejectReason is the REJ's Reason (IBTA Vol 1 Table 109).
type CMRejectReason uint16

// Reject reasons.
const (
	RejNoQP                      CMRejectReason = 1
	RejNoEEC                     CMRejectReason = 2
	RejNoResources               CMRejectReason = 3
	RejTimeout                   CMRejectReason = 4
	RejUnsupported               CMRejectReason = 5
	RejInvalidCommID             CMRejectReason = 6
	RejInvalidCommInstance       CMRejectReason = 7
	RejInvalidServiceID          CMRejectReason = 8
	RejInvalidTransportType      CMRejectReason = 9
	RejStaleConnection           CMRejectReason = 10
	RejRDCNotExist               CMRejectReason = 11
	RejInvalidGID                CMRejectReason = 12
	RejInvalidLID                CMRejectReason = 13
	RejInvalidSL                 CMRejectReason = 14
	RejInvalidTrafficClass       CMRejectReason = 15
	RejInvalidHopLimit           CMRejectReason = 16
	RejInvalidPacketRate         CMRejectReason = 17
	RejInvalidAltGID             CMRejectReason = 18
	RejInvalidAltLID             CMRejectReason = 19
	RejInvalidAltSL              CMRejectReason = 20
	RejInvalidAltTrafficClass    CMRejectReason = 21
	RejInvalidAltHopLimit        CMRejectReason = 22
	RejInvalidAltPacketRate      CMRejectReason = 23
	RejPortCMRedirect            CMRejectReason = 24
	RejPortRedirect              CMRejectReason = 25
	RejInvalidMTU                CMRejectReason = 26
	RejInsufficientRespResources CMRejectReason = 27
	RejConsumerDefined           CMRejectReason = 28
	RejInvalidRNRRetry           CMRejectReason = 29
	RejDuplicateLocalCommID      CMRejectReason = 30
	RejInvalidClassVersion       CMRejectReason = 31
	RejInvalidFlowLabel          CMRejectReason = 32
	RejInvalidAltFlowLabel       CMRejectReason = 33
	RejVendorOptionNotSupported  CMRejectReason = 35
)

var cmRejectNames = [...]string{
	RejNoQP: "No QP available", RejNoEEC: "No EE context available", RejNoResources: "No resources available",
	RejTimeout: "Timeout", RejUnsupported: "Unsupported request",
	RejInvalidCommID: "Invalid Communication ID", RejInvalidCommInstance: "Invalid Communication Instance",
	RejInvalidServiceID: "Invalid Service ID", RejInvalidTransportType: "Invalid Transport Service Type",
	RejStaleConnection: "Stale connection", RejRDCNotExist: "RDC does not exist",
	RejInvalidGID: "Primary Remote Port GID rejected", RejInvalidLID: "Primary Remote Port LID rejected",
	RejInvalidSL: "Invalid Primary SL", RejInvalidTrafficClass: "Invalid Primary Traffic Class",
	RejInvalidHopLimit: "Invalid Primary Hop Limit", RejInvalidPacketRate: "Invalid Primary Packet Rate",
	RejInvalidAltGID: "Alternate Remote Port GID rejected", RejInvalidAltLID: "Alternate Remote Port LID rejected",
	RejInvalidAltSL: "Invalid Alternate SL", RejInvalidAltTrafficClass: "Invalid Alternate Traffic Class",
	RejInvalidAltHopLimit: "Invalid Alternate Hop Limit", RejInvalidAltPacketRate: "Invalid Alternate Packet Rate",
	RejPortCMRedirect: "Port and CM Redirection", RejPortRedirect: "Port Redirection",
	RejInvalidMTU: "Invalid Path MTU", RejInsufficientRespResources: "Insufficient Responder Resources",
	RejConsumerDefined: "Consumer Reject", RejInvalidRNRRetry: "RNR NAK Retry Count Rejected",
	RejDuplicateLocalCommID: "Duplicate Local Communication ID", RejInvalidClassVersion: "Unsupported Class Version",
	RejInvalidFlowLabel: "Invalid Primary Flow Label", RejInvalidAltFlowLabel: "Invalid Alternate Flow Label",
	RejVendorOptionNotSupported: "Vendor Option Not Supported",
}

// String returns the IBTA name of the reason.
func (r CMRejectReason) String() string { return enumName(cmRejectNames[:], uint(r), "Reserved") }

// Known reports a reason the IBTA defines (String names it).
func (r CMRejectReason) Known() bool { return int(r) < len(cmRejectNames) && cmRejectNames[r] != "" }

// CMRejectReasonByName finds a reason by its name ("Invalid Service ID"),
// ignoring case.
func CMRejectReasonByName(s string) (CMRejectReason, bool) {
	for r, n := range cmRejectNames {
		if n != "" && strings.EqualFold(n, s) {
			return CMRejectReason(r), true
		}
	}
	return 0, false
}

// CMSIDRStatus is the SIDR_REP's Status (IBTA Vol 1 §12.6, SIDR_REP).
type CMSIDRStatus uint8

// SIDR_REP statuses.
const (
	SIDRValid               CMSIDRStatus = 0
	SIDRServiceNotSupported CMSIDRStatus = 1
	SIDRRejected            CMSIDRStatus = 2
	SIDRNoQP                CMSIDRStatus = 3
	SIDRRedirect            CMSIDRStatus = 4
	SIDRUnsupportedVersion  CMSIDRStatus = 5
)

var cmSIDRNames = [...]string{"QPN valid", "Service ID not supported", "Rejected by the service provider",
	"No QP available", "Redirect", "Unsupported class version"}

// String returns the IBTA meaning of the status.
func (s CMSIDRStatus) String() string { return enumName(cmSIDRNames[:], uint(s), "Reserved") }

// CMAPRStatus is the APR's AP Status (IBTA Vol 1 §12.8, APR).
type CMAPRStatus uint8

// APR statuses.
const (
	APRLoaded            CMAPRStatus = 0
	APRInvalidCommID     CMAPRStatus = 1
	APRUnsupported       CMAPRStatus = 2
	APRRejected          CMAPRStatus = 3
	APRRedirect          CMAPRStatus = 4
	APRIsCurrent         CMAPRStatus = 5
	APRInvalidQPNEECN    CMAPRStatus = 6
	APRInvalidLID        CMAPRStatus = 7
	APRInvalidGID        CMAPRStatus = 8
	APRInvalidFlowLabel  CMAPRStatus = 9
	APRInvalidTClass     CMAPRStatus = 10
	APRInvalidHopLimit   CMAPRStatus = 11
	APRInvalidPacketRate CMAPRStatus = 12
	APRInvalidSL         CMAPRStatus = 13
)

var cmAPRNames = [...]string{"Alternate path loaded", "Invalid Communication ID", "Unsupported request",
	"Rejected", "Redirect", "Is the current primary path", "Invalid QPN/EECN", "Invalid alternate LID",
	"Invalid alternate GID", "Invalid alternate flow label", "Invalid alternate traffic class",
	"Invalid alternate hop limit", "Invalid alternate packet rate", "Invalid alternate SL"}

// String returns the IBTA meaning of the status.
func (s CMAPRStatus) String() string { return enumName(cmAPRNames[:], uint(s), "Reserved") }

// Field lists of each message, for truncation errors.
var (
	cmPathFields = []FieldSpan{{"LocalLID", 0, 2}, {"RemoteLID", 2, 2}, {"LocalGID", 4, 16}, {"RemoteGID", 20, 16},
		{"FlowLabel/PacketRate", 36, 4}, {"TrafficClass", 40, 1}, {"HopLimit", 41, 1}, {"SL/SubnetLocal", 42, 1},
		{"LocalACKTimeout", 43, 1}}
	cmReqFields = func() []FieldSpan {
		f := []FieldSpan{{"REQ.LocalCommID", 0, 4}, {"REQ.Reserved", 4, 4}, {"REQ.ServiceID", 8, 8},
			{"REQ.LocalCAGUID", 16, 8}, {"REQ.Reserved", 24, 4}, {"REQ.LocalQKey", 28, 4},
			{"REQ.LocalQPN/ResponderResources", 32, 4}, {"REQ.LocalEECN/InitiatorDepth", 36, 4},
			{"REQ.RemoteEECN/RemoteCMResponseTimeout/TransportServiceType/EndToEndFlowControl", 40, 4},
			{"REQ.StartingPSN/LocalCMResponseTimeout/RetryCount", 44, 4}, {"REQ.P_Key", 48, 2},
			{"REQ.PathMTU/RDCExists/RNRRetryCount", 50, 1}, {"REQ.MaxCMRetries/SRQ/ExtendedTransportType", 51, 1}}
		for _, p := range []struct {
			name string
			off  int
		}{{"REQ.Primary", 52}, {"REQ.Alternate", 96}} {
			for _, s := range cmPathFields {
				f = append(f, FieldSpan{p.name + s.Name, p.off + s.Offset, s.Size})
			}
		}
		return append(f, FieldSpan{"REQ.PrivateData", 140, 92})
	}()
	cmMraFields = []FieldSpan{{"MRA.LocalCommID", 0, 4}, {"MRA.RemoteCommID", 4, 4}, {"MRA.MessageMRAed", 8, 1},
		{"MRA.ServiceTimeout", 9, 1}, {"MRA.PrivateData", 10, 222}}
	cmRejFields = []FieldSpan{{"REJ.LocalCommID", 0, 4}, {"REJ.RemoteCommID", 4, 4}, {"REJ.MessageRejected", 8, 1},
		{"REJ.RejectInfoLength", 9, 1}, {"REJ.Reason", 10, 2}, {"REJ.ARI", 12, 72}, {"REJ.PrivateData", 84, 148}}
	cmRepFields = []FieldSpan{{"REP.LocalCommID", 0, 4}, {"REP.RemoteCommID", 4, 4}, {"REP.LocalQKey", 8, 4},
		{"REP.LocalQPN", 12, 4}, {"REP.LocalEECN", 16, 4}, {"REP.StartingPSN", 20, 4}, {"REP.ResponderResources", 24, 1},
		{"REP.InitiatorDepth", 25, 1}, {"REP.TargetACKDelay/FailoverAccepted/EndToEndFlowControl", 26, 1},
		{"REP.RNRRetryCount/SRQ", 27, 1}, {"REP.LocalCAGUID", 28, 8}, {"REP.PrivateData", 36, 196}}
	cmRtuFields  = []FieldSpan{{"RTU.LocalCommID", 0, 4}, {"RTU.RemoteCommID", 4, 4}, {"RTU.PrivateData", 8, 224}}
	cmDreqFields = []FieldSpan{{"DREQ.LocalCommID", 0, 4}, {"DREQ.RemoteCommID", 4, 4}, {"DREQ.RemoteQPN/EECN", 8, 4},
		{"DREQ.PrivateData", 12, 220}}
	cmDrepFields    = []FieldSpan{{"DREP.LocalCommID", 0, 4}, {"DREP.RemoteCommID", 4, 4}, {"DREP.PrivateData", 8, 224}}
	cmSidrReqFields = []FieldSpan{{"SIDR_REQ.RequestID", 0, 4}, {"SIDR_REQ.P_Key", 4, 2}, {"SIDR_REQ.Reserved", 6, 2},
		{"SIDR_REQ.ServiceID", 8, 8}, {"SIDR_REQ.PrivateData", 16, 216}}
	cmSidrRepFields = []FieldSpan{{"SIDR_REP.RequestID", 0, 4}, {"SIDR_REP.Status", 4, 1},
		{"SIDR_REP.AdditionalInfoLength", 5, 1}, {"SIDR_REP.Reserved", 6, 2}, {"SIDR_REP.QPN", 8, 4},
		{"SIDR_REP.ServiceID", 12, 8}, {"SIDR_REP.QKey", 20, 4}, {"SIDR_REP.AdditionalInfo", 24, 72},
		{"SIDR_REP.PrivateData", 96, 136}}
	cmLapFields = []FieldSpan{{"LAP.LocalCommID", 0, 4}, {"LAP.RemoteCommID", 4, 4}, {"LAP.Reserved", 8, 4},
		{"LAP.RemoteQPN/EECN/RemoteCMResponseTimeout", 12, 4}, {"LAP.Reserved", 16, 4},
		{"LAP.AlternateLocalLID", 20, 2}, {"LAP.AlternateRemoteLID", 22, 2}, {"LAP.AlternateLocalGID", 24, 16},
		{"LAP.AlternateRemoteGID", 40, 16}, {"LAP.AlternateFlowLabel/TrafficClass", 56, 4},
		{"LAP.AlternateHopLimit", 60, 1}, {"LAP.AlternatePacketRate", 61, 1}, {"LAP.AlternateSL/SubnetLocal", 62, 1},
		{"LAP.AlternateLocalACKTimeout", 63, 1}, {"LAP.PrivateData", 64, 168}}
	cmAprFields = []FieldSpan{{"APR.LocalCommID", 0, 4}, {"APR.RemoteCommID", 4, 4},
		{"APR.AdditionalInfoLength", 8, 1}, {"APR.APStatus", 9, 1}, {"APR.Reserved", 10, 2},
		{"APR.AdditionalInfo", 12, 72}, {"APR.PrivateData", 84, 148}}
	cmDataFields = []FieldSpan{{"Data", 0, MADDataLength}}
)

func cmFieldsOf(a CMAttribute) []FieldSpan {
	switch a {
	case CMAttrREQ:
		return cmReqFields
	case CMAttrMRA:
		return cmMraFields
	case CMAttrREJ:
		return cmRejFields
	case CMAttrREP:
		return cmRepFields
	case CMAttrRTU:
		return cmRtuFields
	case CMAttrDREQ:
		return cmDreqFields
	case CMAttrDREP:
		return cmDrepFields
	case CMAttrSIDRReq:
		return cmSidrReqFields
	case CMAttrSIDRRep:
		return cmSidrRepFields
	case CMAttrLAP:
		return cmLapFields
	case CMAttrAPR:
		return cmAprFields
	}
	return cmDataFields
}
