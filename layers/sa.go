package layers

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"

	"github.com/google/gopacket"
)

// Sizes of the SA body.
const (
	RMPPHeaderLength = 12
	SADataLength     = 200 // SubnetAdminData
	PathRecordLength = 64
)

// SA is the body of a subnet administration MAD, management class 0x03
// (IBTA Vol 1 §15.2.1.1): the RMPP header (§13.6.2.1), the SA header and
// 200 bytes of attribute data. Offsets count from the start of the MAD.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            common MAD header (24 bytes, see MAD)              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  RMPPVersion  |   RMPPType    | RRespTime |Flags|  RMPPStatus  | 24
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     Data1 (SegmentNumber for DATA and ACK)                    | 28
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|     Data2 (PayloadLength for DATA, NewWindowLast for ACK)     | 32
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          SM_Key (64)                          | 36
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        AttributeOffset        |           Reserved            | 44
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       ComponentMask (64)                      | 48
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|               SubnetAdminData (200 bytes)                     | 56
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// AttributeID, AttributeModifier and Method are copies of the MAD header's.
// When the attribute is a PathRecord, PathRecord decodes the data.
type SA struct {
	madBody

	AttributeID       SAAttribute // from the MAD header
	AttributeModifier uint32      // from the MAD header
	Method            MADMethod   // from the MAD header

	RMPP            RMPPHeader
	SMKey           uint64
	AttributeOffset uint16 // in 8-byte words, for GetTable responses
	Reserved        uint16
	ComponentMask   uint64
	Data            []byte // SubnetAdminData, 200 bytes
}

var saFields = []FieldSpan{{"RMPPVersion", 0, 1}, {"RMPPType", 1, 1}, {"RRespTime/RMPPFlags", 2, 1}, {"RMPPStatus", 3, 1},
	{"Data1", 4, 4}, {"Data2", 8, 4}, {"SM_Key", 12, 8}, {"AttributeOffset", 20, 2}, {"Reserved", 22, 2},
	{"ComponentMask", 24, 8}, {"SubnetAdminData", SADataOffset, SADataLength}}

// LayerType returns LayerTypeSA.
func (s *SA) LayerType() gopacket.LayerType { return LayerTypeSA }

// CanDecode returns LayerTypeSA.
func (s *SA) CanDecode() gopacket.LayerClass { return LayerTypeSA }

func (s *SA) setHeader(h *MAD) {
	s.AttributeID, s.AttributeModifier, s.Method = SAAttribute(h.AttributeID), h.AttributeModifier, h.Method
}

// DecodeFromBytes decodes the 232 bytes after the MAD header.
func (s *SA) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	s.RMPP, s.SMKey, s.AttributeOffset, s.Reserved, s.ComponentMask, s.Data = RMPPHeader{}, 0, 0, 0, 0, nil
	d, err := s.split("SA", saFields, data, df)
	if err != nil {
		return err
	}
	s.RMPP.decode(d)
	s.SMKey = binary.BigEndian.Uint64(d[12:20])
	s.AttributeOffset = binary.BigEndian.Uint16(d[20:22])
	s.Reserved = binary.BigEndian.Uint16(d[22:24])
	s.ComponentMask = binary.BigEndian.Uint64(d[24:32])
	s.Data = d[SADataOffset : SADataOffset+SADataLength : SADataOffset+SADataLength]
	return nil
}

// SerializeTo prepends the 232 body bytes.
func (s *SA) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := prependBody(b)
	if err != nil {
		return err
	}
	s.RMPP.encode(d)
	binary.BigEndian.PutUint64(d[12:20], s.SMKey)
	binary.BigEndian.PutUint16(d[20:22], s.AttributeOffset)
	binary.BigEndian.PutUint16(d[22:24], s.Reserved)
	binary.BigEndian.PutUint64(d[24:32], s.ComponentMask)
	return putBytes("sa", "Data", d[SADataOffset:SADataOffset+SADataLength], s.Data)
}

// PathRecord returns the PathRecord the SA data holds: the first record of
// a GetTable response, or the template of a Get.
func (s *SA) PathRecord() (PathRecord, bool) {
	if s.AttributeID != SAAttrPathRecord || len(s.Data) < PathRecordLength {
		return PathRecord{}, false
	}
	return DecodePathRecord(s.Data), true
}

// RMPPHeader is the header of the Reliable Multi-Packet Transaction
// Protocol (IBTA Vol 1 §13.6.2.1), which SA and other classes use to send
// attributes larger than one MAD.
type RMPPHeader struct {
	Version   uint8 // RMPPVersion, 1; 0 when RMPP is not used
	Type      RMPPType
	RRespTime uint8 // 5 bits
	Flags     RMPPFlags
	Status    RMPPStatus
	Data1     uint32
	Data2     uint32
}

func (r *RMPPHeader) decode(d []byte) {
	r.Version, r.Type, r.RRespTime, r.Flags, r.Status = d[0], RMPPType(d[1]), d[2]>>3, RMPPFlags(d[2]&7), RMPPStatus(d[3])
	r.Data1 = binary.BigEndian.Uint32(d[4:8])
	r.Data2 = binary.BigEndian.Uint32(d[8:12])
}

func (r *RMPPHeader) encode(d []byte) {
	d[0], d[1], d[2], d[3] = r.Version, uint8(r.Type), r.RRespTime<<3|uint8(r.Flags)&7, uint8(r.Status)
	binary.BigEndian.PutUint32(d[4:8], r.Data1)
	binary.BigEndian.PutUint32(d[8:12], r.Data2)
}

// SegmentNumber returns Data1 of a DATA or ACK packet.
func (r *RMPPHeader) SegmentNumber() uint32 { return r.Data1 }

// PayloadLength returns Data2 of a DATA packet: on the first segment the
// total length, on the last the bytes in it, else 0.
func (r *RMPPHeader) PayloadLength() uint32 { return r.Data2 }

// NewWindowLast returns Data2 of an ACK packet.
func (r *RMPPHeader) NewWindowLast() uint32 { return r.Data2 }

// RMPPType is the RMPP packet type.
type RMPPType uint8

// RMPP packet types.
const (
	RMPPTypeNone  RMPPType = 0 // RMPP not used
	RMPPTypeData  RMPPType = 1
	RMPPTypeAck   RMPPType = 2
	RMPPTypeStop  RMPPType = 3
	RMPPTypeAbort RMPPType = 4
)

// String names the packet type ("DATA", "ACK", ...).
func (t RMPPType) String() string {
	return enumName([]string{"None", "DATA", "ACK", "STOP", "ABORT"}, uint(t), "Reserved")
}

// WiresharkTitle is the title Wireshark gives the RMPP header of a packet
// of this type ("RMPP (DATA)"; " Not an RMPP Packet " with its spaces).
func (t RMPPType) WiresharkTitle() string {
	if t == RMPPTypeNone {
		return " Not an RMPP Packet "
	}
	return "RMPP (" + t.String() + ")"
}

// RMPPFlagNames name the RRespTime/Flags nibble's values as Wireshark does
// (IBTA Vol 1 §13.6.2.1), with its leading spaces.
var RMPPFlagNames = map[uint8]string{
	3: " (Transmission Sequence - First Packet)", 5: " (Transmission Sequence - Last Packet)",
	1: " (Transmission Sequence) ",
}

// RMPPStatusNames name the RMPP status codes (IBTA Vol 1 Table 180) as
// Wireshark does, with its leading spaces.
var RMPPStatusNames = map[uint8]string{
	0: " (Normal)", 1: " (Resources Exhausted)", 118: " (Total Time Too Long)",
	119: " (Inconsistent Last and PayloadLength)", 120: " (Inconsistent First and Segment Number)",
	121: " (Bad RMPPType)", 122: " (NewWindowLast Too Small)", 123: " (SegmentNumber Too Big)",
	124: " (Illegal Status)", 125: " (Unsupported Version)", 126: " (Too Many Retries)",
	127: " (Unspecified - Unknown Error Code on ABORT)",
}

// RMPPFlags are the three RMPP flag bits.
type RMPPFlags uint8

// RMPP flag bits.
const (
	RMPPFlagActive RMPPFlags = 1
	RMPPFlagFirst  RMPPFlags = 2
	RMPPFlagLast   RMPPFlags = 4
)

// String lists the flags set, e.g. "Active|First".
func (f RMPPFlags) String() string {
	if f == 0 {
		return "None"
	}
	var names []string
	for _, b := range []struct {
		f    RMPPFlags
		name string
	}{{RMPPFlagActive, "Active"}, {RMPPFlagFirst, "First"}, {RMPPFlagLast, "Last"}} {
		if f&b.f != 0 {
			names = append(names, b.name)
		}
	}
	if f > 7 {
		names = append(names, fmt.Sprintf("Unknown(0x%x)", uint8(f&^7)))
	}
	return strings.Join(names, "|")
}

// RMPPStatus is the RMPP status code of STOP and ABORT packets.
type RMPPStatus uint8

var rmppStatusNames = map[RMPPStatus]string{
	0: "Normal", 1: "Resources Exhausted", 118: "Total Time Too Long",
	119: "Inconsistent Last and PayloadLength", 120: "Inconsistent First and Segment Number",
	121: "Bad RMPPType", 122: "NewWindowLast Too Small", 123: "SegmentNumber Too Big",
	124: "Illegal Status", 125: "Unsupported Version", 126: "Too Many Retries",
	127: "Unspecified",
}

// String names the status as Wireshark does.
func (s RMPPStatus) String() string {
	if n, ok := rmppStatusNames[s]; ok {
		return n
	}
	if s >= 2 && s <= 117 {
		return fmt.Sprintf("Reserved(%d)", uint8(s))
	}
	return fmt.Sprintf("ClassSpecific(%d)", uint8(s))
}

// SAAttribute is the AttributeID of a subnet administration MAD (IBTA Vol 1
// §15.2.5).
type SAAttribute uint16

// Subnet administration attributes.
const (
	SAAttrClassPortInfo                  SAAttribute = 0x0001
	SAAttrNotice                         SAAttribute = 0x0002
	SAAttrInformInfo                     SAAttribute = 0x0003
	SAAttrNodeRecord                     SAAttribute = 0x0011
	SAAttrPortInfoRecord                 SAAttribute = 0x0012
	SAAttrSLtoVLMappingTableRecord       SAAttribute = 0x0013
	SAAttrSwitchInfoRecord               SAAttribute = 0x0014
	SAAttrLinearFDBRecord                SAAttribute = 0x0015
	SAAttrRandomFDBRecord                SAAttribute = 0x0016
	SAAttrMulticastFDBRecord             SAAttribute = 0x0017
	SAAttrSMInfoRecord                   SAAttribute = 0x0018
	SAAttrLinkSpeedWidthPairsTableRecord SAAttribute = 0x0019
	SAAttrLinkRecord                     SAAttribute = 0x0020
	SAAttrGUIDInfoRecord                 SAAttribute = 0x0030
	SAAttrServiceRecord                  SAAttribute = 0x0031
	SAAttrPKeyTableRecord                SAAttribute = 0x0033
	SAAttrPathRecord                     SAAttribute = 0x0035
	SAAttrVLArbitrationTableRecord       SAAttribute = 0x0036
	SAAttrMCMemberRecord                 SAAttribute = 0x0038
	SAAttrTraceRecord                    SAAttribute = 0x0039
	SAAttrMultiPathRecord                SAAttribute = 0x003A
	SAAttrServiceAssociationRecord       SAAttribute = 0x003B
	SAAttrInformInfoRecord               SAAttribute = 0x00F3
)

var saAttrNames = map[SAAttribute]string{
	SAAttrClassPortInfo: "ClassPortInfo", SAAttrNotice: "Notice", SAAttrInformInfo: "InformInfo",
	SAAttrNodeRecord: "NodeRecord", SAAttrPortInfoRecord: "PortInfoRecord",
	SAAttrSLtoVLMappingTableRecord: "SLtoVLMappingTableRecord", SAAttrSwitchInfoRecord: "SwitchInfoRecord",
	SAAttrLinearFDBRecord: "LinearForwardingTableRecord", SAAttrRandomFDBRecord: "RandomForwardingTableRecord",
	SAAttrMulticastFDBRecord: "MulticastForwardingTableRecord", SAAttrSMInfoRecord: "SMInfoRecord",
	SAAttrLinkSpeedWidthPairsTableRecord: "LinkSpeedWidthPairsTableRecord", SAAttrLinkRecord: "LinkRecord",
	SAAttrGUIDInfoRecord: "GuidInfoRecord", SAAttrServiceRecord: "ServiceRecord",
	SAAttrPKeyTableRecord: "P_KeyTableRecord", SAAttrPathRecord: "PathRecord",
	SAAttrVLArbitrationTableRecord: "VLArbitrationTableRecord", SAAttrMCMemberRecord: "MCMemberRecord",
	SAAttrTraceRecord: "TraceRecord", SAAttrMultiPathRecord: "MultiPathRecord",
	SAAttrServiceAssociationRecord: "ServiceAssociationRecord", SAAttrInformInfoRecord: "InformInfoRecord",
}

// String returns the attribute name Wireshark shows.
func (a SAAttribute) String() string {
	if n, ok := saAttrNames[a]; ok {
		return n
	}
	if a >= 0xFF00 {
		return fmt.Sprintf("Vendor(0x%04x)", uint16(a))
	}
	return fmt.Sprintf("Reserved(0x%04x)", uint16(a))
}

// PathMTU is the IBTA encoding of an MTU (PortInfo, PathRecord):
// 1 = 256 bytes ... 5 = 4096 bytes.
type PathMTU uint8

// MTU codes.
const (
	MTU256  PathMTU = 1
	MTU512  PathMTU = 2
	MTU1024 PathMTU = 3
	MTU2048 PathMTU = 4
	MTU4096 PathMTU = 5
)

// Bytes returns the MTU in bytes, or 0 for a reserved code.
func (m PathMTU) Bytes() int {
	if m >= MTU256 && m <= MTU4096 {
		return 128 << m
	}
	return 0
}

// String returns the MTU in bytes ("1024").
func (m PathMTU) String() string {
	if n := m.Bytes(); n > 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("Reserved(%d)", uint8(m))
}

// StaticRate is the IBTA encoding of a link rate, used by PathRecord.Rate
// and the CM path's PacketRate; the codes are Linux's enum ib_rate.
type StaticRate uint8

// rateNames lists the rates in Gb/s by code (Linux enum ib_rate).
var rateNames = [...]string{2: "2.5", 3: "10", 4: "30", 5: "5", 6: "20", 7: "40", 8: "60", 9: "80", 10: "120",
	11: "14", 12: "56", 13: "112", 14: "168", 15: "25", 16: "100", 17: "200", 18: "300", 19: "28", 20: "50",
	21: "400", 22: "600", 23: "800"}

// String returns the rate, e.g. "10 Gb/s".
func (r StaticRate) String() string {
	if int(r) < len(rateNames) && rateNames[r] != "" {
		return rateNames[r] + " Gb/s"
	}
	return enumName(nil, uint(r), "Reserved")
}

// PathSelector qualifies a PathRecord's MTU, Rate or PacketLifeTime in a query.
type PathSelector uint8

// String names the selector.
func (s PathSelector) String() string {
	return enumName([]string{"GreaterThan", "LessThan", "Exactly", "LargestAvailable"}, uint(s), "Unknown")
}

// PathRecord is the SA PathRecord attribute (IBTA Vol 1 §15.2.5.16), 64
// bytes. DGID and SGID are slices of the data decoded.
//
//	byte 0 ServiceID (8; reserved before IBTA 1.2.1), 8 DGID (16), 24 SGID (16),
//	40 DLID, 42 SLID, 44 RawTraffic(1)/reserved(3)/FlowLabel(20)/HopLimit(8),
//	48 TClass, 49 Reversible(1)/NumbPath(7), 50 P_Key, 52 QoSClass(12)/SL(4),
//	54 MTUSelector(2)/MTU(6), 55 RateSelector(2)/Rate(6),
//	56 PacketLifeTimeSelector(2)/PacketLifeTime(6), 57 Preference, 58 reserved (6)
type PathRecord struct {
	ServiceID              ServiceID
	DGID                   net.IP
	SGID                   net.IP
	DLID                   uint16
	SLID                   uint16
	RawTraffic             bool
	Reserved44             uint8  // 3 bits
	FlowLabel              uint32 // 20 bits
	HopLimit               uint8
	TClass                 uint8
	Reversible             bool
	NumbPath               uint8 // 7 bits
	PKey                   uint16
	QoSClass               uint16 // 12 bits
	SL                     uint8  // 4 bits
	MTUSelector            PathSelector
	MTU                    PathMTU
	RateSelector           PathSelector
	Rate                   StaticRate
	PacketLifeTimeSelector PathSelector
	PacketLifeTime         uint8 // 6 bits: 4.096 µs × 2^PacketLifeTime
	Preference             uint8
	Reserved58             []byte // 6 bytes
}

// PathRecordServiceIDBytes returns a PathRecord's first 8 bytes, its
// ServiceID (reserved before IBTA 1.2.1, as Wireshark 4.0 still shows them),
// as a slice of the record d.
func PathRecordServiceIDBytes(d []byte) []byte {
	if len(d) < 8 {
		return nil
	}
	return d[0:8]
}

// ReservedBytes returns the SA header's reserved bytes, after
// AttributeOffset, as a slice of the message.
func (s *SA) ReservedBytes() []byte {
	if len(s.Contents) < 24 {
		return nil
	}
	return s.Contents[22:24]
}

// DecodePathRecord decodes a PathRecord from the first 64 bytes of d.
func DecodePathRecord(d []byte) PathRecord {
	_ = d[63]
	be := binary.BigEndian
	w := be.Uint32(d[44:48])
	return PathRecord{
		ServiceID: ServiceID(be.Uint64(d[0:8])), DGID: net.IP(d[8:24:24]), SGID: net.IP(d[24:40:40]),
		DLID: be.Uint16(d[40:42]), SLID: be.Uint16(d[42:44]),
		RawTraffic: w&0x80000000 != 0, Reserved44: uint8(w>>28) & 7, FlowLabel: w >> 8 & 0xFFFFF, HopLimit: uint8(w),
		TClass: d[48], Reversible: d[49]&0x80 != 0, NumbPath: d[49] & 0x7F, PKey: be.Uint16(d[50:52]),
		QoSClass: be.Uint16(d[52:54]) >> 4, SL: d[53] & 0xF,
		MTUSelector: PathSelector(d[54] >> 6), MTU: PathMTU(d[54] & 0x3F),
		RateSelector: PathSelector(d[55] >> 6), Rate: StaticRate(d[55] & 0x3F),
		PacketLifeTimeSelector: PathSelector(d[56] >> 6), PacketLifeTime: d[56] & 0x3F,
		Preference: d[57], Reserved58: d[58:64:64],
	}
}

// MarshalTo writes the record into the first 64 bytes of d.
func (p *PathRecord) MarshalTo(d []byte) error {
	if len(d) < PathRecordLength {
		return fmt.Errorf("sa: PathRecord needs %d bytes, have %d", PathRecordLength, len(d))
	}
	be := binary.BigEndian
	clear(d[:PathRecordLength])
	be.PutUint64(d[0:8], uint64(p.ServiceID))
	copy(d[8:24], gid16(p.DGID))
	copy(d[24:40], gid16(p.SGID))
	be.PutUint16(d[40:42], p.DLID)
	be.PutUint16(d[42:44], p.SLID)
	be.PutUint32(d[44:48], uint32(bit(p.RawTraffic))<<31|uint32(p.Reserved44&7)<<28|(p.FlowLabel&0xFFFFF)<<8|uint32(p.HopLimit))
	d[48], d[49] = p.TClass, bit(p.Reversible)<<7|p.NumbPath&0x7F
	be.PutUint16(d[50:52], p.PKey)
	be.PutUint16(d[52:54], p.QoSClass<<4|uint16(p.SL&0xF))
	d[54] = uint8(p.MTUSelector)<<6 | uint8(p.MTU)&0x3F
	d[55] = uint8(p.RateSelector)<<6 | uint8(p.Rate)&0x3F
	d[56] = uint8(p.PacketLifeTimeSelector)<<6 | p.PacketLifeTime&0x3F
	d[57] = p.Preference
	copy(d[58:64], p.Reserved58)
	return nil
}

// MCMemberRecordLength is the size of an MCMemberRecord.
const MCMemberRecordLength = 52

// MCMemberRecord is a multicast group membership (IBTA Vol 1 §15.2.5.17).
//
//	byte 0 MGID (16), 16 PortGID (16), 32 Q_Key (4), 36 MLID,
//	38 MTUSelector(2)/MTU(6), 39 TClass, 40 P_Key, 42 RateSelector(2)/Rate(6),
//	43 PacketLifeTimeSelector(2)/PacketLifeTime(6),
//	44 SL(4)/FlowLabel(20)/HopLimit(8), 48 Scope(4)/JoinState(4),
//	49 ProxyJoin(1)/reserved(23)
type MCMemberRecord struct {
	MGID                   net.IP
	PortGID                net.IP
	QKey                   uint32
	MLID                   uint16
	MTUSelector            PathSelector
	MTU                    PathMTU
	TClass                 uint8
	PKey                   uint16
	RateSelector           PathSelector
	Rate                   StaticRate
	PacketLifeTimeSelector PathSelector
	PacketLifeTime         uint8 // 6 bits
	SL                     uint8 // 4 bits
	FlowLabel              uint32
	HopLimit               uint8
	Scope                  uint8 // 4 bits
	JoinState              uint8 // 4 bits: full, non, send-only non member ...
	ProxyJoin              bool
}

// DecodeMCMemberRecord decodes an MCMemberRecord from the first 52 bytes of d.
func DecodeMCMemberRecord(d []byte) MCMemberRecord {
	_ = d[MCMemberRecordLength-1]
	be := binary.BigEndian
	w := be.Uint32(d[44:48])
	return MCMemberRecord{
		MGID: net.IP(d[0:16:16]), PortGID: net.IP(d[16:32:32]), QKey: be.Uint32(d[32:36]), MLID: be.Uint16(d[36:38]),
		MTUSelector: PathSelector(d[38] >> 6), MTU: PathMTU(d[38] & 0x3F), TClass: d[39], PKey: be.Uint16(d[40:42]),
		RateSelector: PathSelector(d[42] >> 6), Rate: StaticRate(d[42] & 0x3F),
		PacketLifeTimeSelector: PathSelector(d[43] >> 6), PacketLifeTime: d[43] & 0x3F,
		SL: uint8(w >> 28), FlowLabel: w >> 8 & 0xFFFFF, HopLimit: uint8(w),
		Scope: d[48] >> 4, JoinState: d[48] & 0xF, ProxyJoin: d[49]&0x80 != 0,
	}
}

// MCMemberRecord returns the MCMemberRecord the SA data holds.
func (s *SA) MCMemberRecord() (MCMemberRecord, bool) {
	if s.AttributeID != SAAttrMCMemberRecord || len(s.Data) < MCMemberRecordLength {
		return MCMemberRecord{}, false
	}
	return DecodeMCMemberRecord(s.Data), true
}
