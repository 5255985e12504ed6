package layers

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// Sizes of the Notice attribute.
const (
	NoticeLength            = 64 // the SMP data, or the first 64 bytes of an SA record
	NoticeDataDetailsLength = 54
	noticeDataDetailsOffset = 10
)

// Notice is the Notice attribute (IBTA Vol 1 §14.2.5.1, attribute 0x0002),
// what a SubnTrap or SubnTrapRepress carries in its SMP data and what the SA
// forwards in a SubnAdmReport. Offsets count from the attribute's start.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|G|    Type     |        ProducerType / VendorID (24)           | 0
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    TrapNumber / DeviceID      |          IssuerLID            | 4
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|T|       NoticeCount           |                               | 8
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//	|                  DataDetails (54 bytes)                       | 10
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// G is IsGeneric: a generic notice carries a TrapNumber and a ProducerType,
// a vendor one a DeviceID and a VendorID. T is NoticeToggle. TrapDetails
// decodes DataDetails for the trap number.
type Notice struct {
	IsGeneric            bool
	Type                 uint8  // 7 bits: 0 fatal, 1 urgent, 2 security, 3 SM, 4 informational
	ProducerTypeVendorID uint32 // 24 bits
	TrapNumberDeviceID   uint16
	IssuerLID            uint16
	NoticeToggle         bool
	NoticeCount          uint16 // 15 bits
	DataDetails          []byte // 54 bytes
}

// DecodeNotice decodes a Notice from the first 64 bytes of d.
func DecodeNotice(d []byte) Notice {
	_ = d[NoticeLength-1]
	be := binary.BigEndian
	return Notice{
		IsGeneric: d[0]&0x80 != 0, Type: d[0] & 0x7F, ProducerTypeVendorID: get24(d[1:4]),
		TrapNumberDeviceID: be.Uint16(d[4:6]), IssuerLID: be.Uint16(d[6:8]),
		NoticeToggle: d[8]&0x80 != 0, NoticeCount: be.Uint16(d[8:10]) & 0x7FFF,
		DataDetails: d[noticeDataDetailsOffset:NoticeLength:NoticeLength],
	}
}

// MarshalTo writes the notice into the first 64 bytes of d.
func (n *Notice) MarshalTo(d []byte) error {
	if len(d) < NoticeLength {
		return fmt.Errorf("notice: needs %d bytes, have %d", NoticeLength, len(d))
	}
	be := binary.BigEndian
	d[0] = bit(n.IsGeneric)<<7 | n.Type&0x7F
	put24(d[1:4], n.ProducerTypeVendorID)
	be.PutUint16(d[4:6], n.TrapNumberDeviceID)
	be.PutUint16(d[6:8], n.IssuerLID)
	be.PutUint16(d[8:10], uint16(bit(n.NoticeToggle))<<15|n.NoticeCount&0x7FFF)
	return putBytes("notice", "DataDetails", d[noticeDataDetailsOffset:NoticeLength], n.DataDetails)
}

// Trap returns the trap number of a generic notice (false for a vendor's).
func (n *Notice) Trap() (TrapNumber, bool) { return TrapNumber(n.TrapNumberDeviceID), n.IsGeneric }

// Notice returns the Notice the SMP carries.
func (s *SMP) Notice() (Notice, bool) { return s.Data.notice(s.AttributeID) }

// Notice returns the Notice the SMP carries.
func (s *SMPDirected) Notice() (Notice, bool) { return s.Data.notice(s.AttributeID) }

func (d SMPData) notice(a SMPAttribute) (Notice, bool) {
	if a != SMPAttrNotice || len(d) < NoticeLength {
		return Notice{}, false
	}
	return DecodeNotice(d), true
}

// Notice returns the Notice an SA MAD carries (a SubnAdmReport forwards
// one to a subscriber): the first 64 bytes of its data.
func (s *SA) Notice() (Notice, bool) {
	if s.AttributeID != SAAttrNotice || len(s.Data) < NoticeLength {
		return Notice{}, false
	}
	return DecodeNotice(s.Data), true
}

// TrapNumber is the trap number of a generic Notice (IBTA Vol 1 §14.2.5.1
// Table 119 and on, §15.2.5.1).
type TrapNumber uint16

// The traps IBTA defines for the SM and SA (64-69) and the SMAs (128-259).
const (
	TrapGIDInService          TrapNumber = 64
	TrapGIDOutOfService       TrapNumber = 65
	TrapMcastGroupCreated     TrapNumber = 66
	TrapMcastGroupDeleted     TrapNumber = 67
	TrapPathsInvalid          TrapNumber = 68
	TrapPathsRecomputed       TrapNumber = 69
	TrapLinkStateChange       TrapNumber = 128
	TrapLinkIntegrity         TrapNumber = 129
	TrapBufferOverrun         TrapNumber = 130
	TrapFlowControlWatchdog   TrapNumber = 131
	TrapLocalChanges          TrapNumber = 144
	TrapSystemImageGUIDChange TrapNumber = 145
	TrapBadMKey               TrapNumber = 256
	TrapBadPKey               TrapNumber = 257
	TrapBadQKey               TrapNumber = 258
	TrapBadPKeyAtSwitch       TrapNumber = 259
)

var trapNames = map[TrapNumber]string{
	TrapGIDInService: "GID in service", TrapGIDOutOfService: "GID out of service",
	TrapMcastGroupCreated: "multicast group created", TrapMcastGroupDeleted: "multicast group deleted",
	TrapPathsInvalid: "paths invalid", TrapPathsRecomputed: "paths recomputed",
	TrapLinkStateChange: "link state change", TrapLinkIntegrity: "local link integrity threshold",
	TrapBufferOverrun: "excessive buffer overrun threshold", TrapFlowControlWatchdog: "flow control update watchdog",
	TrapLocalChanges: "local changes", TrapSystemImageGUIDChange: "system image GUID change",
	TrapBadMKey: "bad M_Key", TrapBadPKey: "bad P_Key", TrapBadQKey: "bad Q_Key",
	TrapBadPKeyAtSwitch: "bad P_Key at switch",
}

// String names the trap briefly ("link state change", "bad P_Key").
func (t TrapNumber) String() string {
	if n, ok := trapNames[t]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(%d)", uint16(t))
}

// Known reports the trap numbers IBTA defines DataDetails for.
func (t TrapNumber) Known() bool { _, ok := trapNames[t]; return ok }

// trapDescriptions are the traps' descriptions as Wireshark 4.0 titles a
// Notice with them (IBTA Vol 1 Tables 119-131: the notice's type, then
// what happened with the DataDetails fields named in angle brackets), its
// spelling kept ("OVerrun").
var trapDescriptions = map[TrapNumber]string{
	TrapGIDInService:          " (Informational) <GIDADDR> is now in service",
	TrapGIDOutOfService:       " (Informational) <GIDADDR> is out of service",
	TrapMcastGroupCreated:     " (Informational) New Multicast Group with multicast address <GIDADDR> is now created",
	TrapMcastGroupDeleted:     " (Informational) Multicast Group with multicast address <GIDADDR> is now deleted",
	TrapPathsInvalid:          " (Informational) Paths indicated by <PATH_REC> and <COMP_MASK> are no longer valid",
	TrapPathsRecomputed:       " (Informational) Paths indicated by <PATH_REC> and <COMP_MASK> have been recomputed",
	TrapLinkStateChange:       " (Urgent) Link State of at least one port of switch at <LIDADDR> has changed",
	TrapLinkIntegrity:         " (Urgent) Local Link Integrity threshold reached at <LIDADDR><PORTNO>",
	TrapBufferOverrun:         " (Urgent) Excessive Buffer OVerrun threshold reached at <LIDADDR><PORTNO>",
	TrapFlowControlWatchdog:   " (Urgent) Flow Control Update watchdog timer expired at <LIDADDR><PORTNO>",
	TrapLocalChanges:          " (Informational) CapMask, NodeDesc, LinkWidthEnabled or LinkSpeedEnabled at <LIDADDR> has been modified",
	TrapSystemImageGUIDChange: " (Informational) SystemImageGUID at <LIDADDR> has been modified.  New value is <SYSTEMIMAGEGUID>",
	TrapBadMKey:               " (Security) Bad M_Key, <M_KEY> from <LIDADDR> attempted <METHOD> with <ATTRIBUTEID> and <ATTRIBUTEMODIFIER>",
	TrapBadPKey:               " (Security) Bad P_Key, <KEY> from <LIDADDR1><GIDADDR1><QP1> to <LIDADDR2><GIDADDR2><QP2> on <SL>",
	TrapBadQKey:               " (Security) Bad Q_Key, <KEY> from <LIDADDR1><GIDADDR1><QP1> to <LIDADDR2><GIDADDR2><QP2> on <SL>",
	TrapBadPKeyAtSwitch:       " (Security) Bad P_Key, <KEY> from <LIDADDR1><GIDADDR1><QP1> to <LIDADDR2><GIDADDR2><QP2> on <SL> at switch <LIDADDR><PORTNO>",
}

// AppendDescription appends the trap's description as Wireshark 4.0 titles
// the Notice (" (Urgent) Link State of at least one port ..."), or, for a
// number IBTA defines no trap for (a vendor's DeviceID too: Wireshark reads
// the number whatever IsGeneric says), "Unknown or Vendor Specific Trap
// Number! (0x05)".
func (t TrapNumber) AppendDescription(buf []byte) []byte {
	if d, ok := trapDescriptions[t]; ok {
		return append(buf, d...)
	}
	buf = append(buf, "Unknown or Vendor Specific Trap Number! (0x"...)
	if t < 0x10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendUint(buf, uint64(t), 16)
	return append(buf, ')')
}

// AppendDetailsTitle appends the title Wireshark 4.0 gives a Notice's
// DataDetails: "Trap 64 DataDetails" for a trap it dissects, "Vendor
// Specific Subnet Management Trap" for any other number.
func (t TrapNumber) AppendDetailsTitle(buf []byte) []byte {
	if !t.Known() {
		return append(buf, "Vendor Specific Subnet Management Trap"...)
	}
	buf = strconv.AppendUint(append(buf, "Trap "...), uint64(t), 10)
	return append(buf, " DataDetails"...)
}

// TrapField names one field of a trap's DataDetails.
type TrapField uint32

// The DataDetails fields, one bit each.
const (
	TrapFieldGIDAddr TrapField = 1 << iota
	TrapFieldCompMask
	TrapFieldWaitForRepath
	TrapFieldLIDAddr
	TrapFieldPortNo
	TrapFieldOtherLocalChanges
	TrapFieldCapabilityMask
	TrapFieldLinkSpeedEnabledChange
	TrapFieldLinkWidthEnabledChange
	TrapFieldNodeDescriptionChange
	TrapFieldSystemImageGUID
	TrapFieldDRSLID
	TrapFieldMethod
	TrapFieldAttributeID
	TrapFieldAttributeModifier
	TrapFieldMKey
	TrapFieldDRNotice
	TrapFieldDRPathTruncated
	TrapFieldDRHopCount
	TrapFieldDRNoticeReturnPath
	TrapFieldLIDAddr1
	TrapFieldLIDAddr2
	TrapFieldKey
	TrapFieldSL
	TrapFieldQP1
	TrapFieldQP2
	TrapFieldGIDAddr1
	TrapFieldGIDAddr2
	TrapFieldDataValid
	TrapFieldPKey
	TrapFieldSwLIDAddr
)

const (
	trapPeers = TrapFieldLIDAddr1 | TrapFieldLIDAddr2 | TrapFieldSL | TrapFieldQP1 | TrapFieldQP2 |
		TrapFieldGIDAddr1 | TrapFieldGIDAddr2
	trapBadMKey = TrapFieldLIDAddr | TrapFieldDRSLID | TrapFieldMethod | TrapFieldAttributeID |
		TrapFieldAttributeModifier | TrapFieldMKey | TrapFieldDRNotice | TrapFieldDRPathTruncated |
		TrapFieldDRHopCount | TrapFieldDRNoticeReturnPath
	trapLocalChanges = TrapFieldLIDAddr | TrapFieldOtherLocalChanges | TrapFieldCapabilityMask |
		TrapFieldLinkSpeedEnabledChange | TrapFieldLinkWidthEnabledChange | TrapFieldNodeDescriptionChange
)

// Fields returns the DataDetails fields the trap carries (none for a trap
// number IBTA does not define).
func (t TrapNumber) Fields() TrapField {
	switch t {
	case TrapGIDInService, TrapGIDOutOfService, TrapMcastGroupCreated, TrapMcastGroupDeleted:
		return TrapFieldGIDAddr
	case TrapPathsInvalid, TrapPathsRecomputed:
		return TrapFieldCompMask | TrapFieldWaitForRepath
	case TrapLinkStateChange:
		return TrapFieldLIDAddr
	case TrapLinkIntegrity, TrapBufferOverrun, TrapFlowControlWatchdog:
		return TrapFieldLIDAddr | TrapFieldPortNo
	case TrapLocalChanges:
		return trapLocalChanges
	case TrapSystemImageGUIDChange:
		return TrapFieldLIDAddr | TrapFieldSystemImageGUID
	case TrapBadMKey:
		return trapBadMKey
	case TrapBadPKey, TrapBadQKey:
		return trapPeers | TrapFieldKey
	case TrapBadPKeyAtSwitch:
		return trapPeers | TrapFieldDataValid | TrapFieldPKey | TrapFieldSwLIDAddr | TrapFieldPortNo
	}
	return 0
}

// TrapDetails is a Notice's DataDetails decoded for its trap number; only
// the fields TrapNumber.Fields names are set. Offsets count from the start
// of DataDetails, as IBTA Vol 1 Table 120 and on lay them out (and
// Wireshark reads them):
//
//	64-67    6 GIDADDR (16)
//	68, 69   0 COMP_MASK (8), 8 WAIT_FOR_REPATH (bit 7)
//	128      0 LIDADDR
//	129-131  2 LIDADDR, 4 PORTNO
//	144      2 LIDADDR, 5 OtherLocalChanges (bit 0), 6 CAPABILITYMASK (4),
//	         11 LinkSpeedEnabledChange (bit 2), LinkWidthEnabledChange (bit 1),
//	         NodeDescriptionChange (bit 0)
//	145      2 LIDADDR, 6 SYSTEMIMAGEGUID (8)
//	256      2 LIDADDR, 4 DRSLID, 6 METHOD, 8 ATTRIBUTEID, 10 ATTRIBUTEMODIFIER (4),
//	         14 MKEY (8), 23 DRNotice (bit 7), DRPathTruncated (bit 6),
//	         DRHopCount (6 bits), 24 DRNoticeReturnPath (30)
//	257, 258 2 LIDADDR1, 4 LIDADDR2, 6 KEY (4), 10 SL (4 bits), 11 QP1 (3),
//	         15 QP2 (3), 18 GIDADDR1 (16), 34 GIDADDR2 (16)
//	259      0 DataValid, 2 LIDADDR1, 4 LIDADDR2, 6 PKEY, 8 SL (4 bits),
//	         9 QP1 (3), 13 QP2 (3), 16 GIDADDR1 (16), 32 GIDADDR2 (16),
//	         48 SWLIDADDR, 50 PORTNO
type TrapDetails struct {
	Trap   TrapNumber
	Fields TrapField

	GIDAddr                []byte // 16 bytes
	CompMask               uint64
	WaitForRepath          bool
	LIDAddr                uint16
	PortNo                 uint8
	OtherLocalChanges      bool
	CapabilityMask         uint32
	LinkSpeedEnabledChange bool
	LinkWidthEnabledChange bool
	NodeDescriptionChange  bool
	SystemImageGUID        uint64
	DRSLID                 uint16
	Method                 MADMethod
	AttributeID            uint16
	AttributeModifier      uint32
	MKey                   uint64
	DRNotice               bool
	DRPathTruncated        bool
	DRHopCount             uint8  // 6 bits
	DRNoticeReturnPath     []byte // 30 bytes
	LIDAddr1, LIDAddr2     uint16
	Key                    uint32 // the bad P_Key or Q_Key
	SL                     uint8  // 4 bits
	QP1, QP2               uint32 // 24 bits each
	GIDAddr1, GIDAddr2     []byte // 16 bytes each
	DataValid              uint16 // which of trap 259's fields hold data
	PKey                   uint16
	SwLIDAddr              uint16
}

// TrapDetails decodes the notice's DataDetails for its trap number: a
// vendor notice, or a trap number without defined details, gives a
// TrapDetails with no Fields.
func (n *Notice) TrapDetails() TrapDetails {
	t, generic := n.Trap()
	if !generic || len(n.DataDetails) < NoticeDataDetailsLength {
		return TrapDetails{Trap: t}
	}
	return decodeTrapDetails(t, n.DataDetails)
}

// DetailsAs decodes the notice's DataDetails as trap t's, whatever
// IsGeneric says: Wireshark 4.0 reads a vendor notice's DataDetails by its
// DeviceID as it reads a generic one's by its trap number (a vendor notice
// with DeviceID 0x0080 shows trap 128's LIDADDR). A number without defined
// details gives no Fields.
func (n *Notice) DetailsAs(t TrapNumber) TrapDetails {
	if len(n.DataDetails) < NoticeDataDetailsLength {
		return TrapDetails{Trap: t}
	}
	return decodeTrapDetails(t, n.DataDetails)
}

func decodeTrapDetails(t TrapNumber, d []byte) TrapDetails {
	be := binary.BigEndian
	r := TrapDetails{Trap: t, Fields: t.Fields()}
	peers := func(at int) {
		r.SL = d[at] >> 4
		r.QP1 = get24(d[at+1:])
		r.QP2 = get24(d[at+5:])
		r.GIDAddr1 = d[at+8 : at+24 : at+24]
		r.GIDAddr2 = d[at+24 : at+40 : at+40]
	}
	switch t {
	case TrapGIDInService, TrapGIDOutOfService, TrapMcastGroupCreated, TrapMcastGroupDeleted:
		r.GIDAddr = d[6:22:22]
	case TrapPathsInvalid, TrapPathsRecomputed:
		r.CompMask, r.WaitForRepath = be.Uint64(d[0:8]), d[8]&0x80 != 0
	case TrapLinkStateChange:
		r.LIDAddr = be.Uint16(d[0:2])
	case TrapLinkIntegrity, TrapBufferOverrun, TrapFlowControlWatchdog:
		r.LIDAddr, r.PortNo = be.Uint16(d[2:4]), d[4]
	case TrapLocalChanges:
		r.LIDAddr, r.OtherLocalChanges, r.CapabilityMask = be.Uint16(d[2:4]), d[5]&1 != 0, be.Uint32(d[6:10])
		r.LinkSpeedEnabledChange, r.LinkWidthEnabledChange, r.NodeDescriptionChange = d[11]&4 != 0, d[11]&2 != 0, d[11]&1 != 0
	case TrapSystemImageGUIDChange:
		r.LIDAddr, r.SystemImageGUID = be.Uint16(d[2:4]), be.Uint64(d[6:14])
	case TrapBadMKey:
		r.LIDAddr, r.DRSLID, r.Method = be.Uint16(d[2:4]), be.Uint16(d[4:6]), MADMethod(d[6])
		r.AttributeID, r.AttributeModifier, r.MKey = be.Uint16(d[8:10]), be.Uint32(d[10:14]), be.Uint64(d[14:22])
		r.DRNotice, r.DRPathTruncated, r.DRHopCount = d[23]&0x80 != 0, d[23]&0x40 != 0, d[23]&0x3F
		r.DRNoticeReturnPath = d[24:54:54]
	case TrapBadPKey, TrapBadQKey:
		r.LIDAddr1, r.LIDAddr2, r.Key = be.Uint16(d[2:4]), be.Uint16(d[4:6]), be.Uint32(d[6:10])
		peers(10)
	case TrapBadPKeyAtSwitch:
		r.DataValid, r.LIDAddr1, r.LIDAddr2, r.PKey = be.Uint16(d[0:2]), be.Uint16(d[2:4]), be.Uint16(d[4:6]), be.Uint16(d[6:8])
		peers(8)
		r.SwLIDAddr, r.PortNo = be.Uint16(d[48:50]), d[50]
	}
	return r
}
