package layers

import (
	"encoding/binary"
	"net"
)

// The SA records (IBTA Vol 1 §15.2.5). A record opens with its record
// identifier (RID), the keys a query matches on, and then holds its body:
// for most records an SMP attribute as a port or switch returns it
// (NodeRecord is a LID and a NodeInfo and NodeDescription, PortInfoRecord
// a LID, port and PortInfo ...), for the others a layout of its own
// (LinkRecord, ServiceRecord, TraceRecord ...). A GetTableResp carries
// several records of one attribute, AttributeOffset 8-byte words apart.
//
//	record                     RID                                        body
//	NodeRecord                 LID, reserved (4)                          NodeInfo (40), NodeDescription (64)
//	PortInfoRecord             EndportLID, PortNum, reserved (4)          PortInfo
//	SLtoVLMappingTableRecord   LID, InputPortNum, OutputPortNum, res (8)  SLtoVLMappingTable
//	SwitchInfoRecord           LID, reserved (4)                          SwitchInfo
//	Linear/RandomFDBRecord     LID, BlockNum(16), reserved (8)            Linear/RandomForwardingTable
//	MulticastFDBRecord         LID, Position(4)/res(3)/BlockNum(9), res   MulticastForwardingTable
//	SMInfoRecord               LID, reserved (4)                          SMInfo
//	GUIDInfoRecord             LID, BlockNum(8), reserved (8)             GUIDInfo
//	P_KeyTableRecord           LID, BlockNum(16), PortNum, reserved (8)   P_KeyTable
//	VLArbitrationTableRecord   LID, OutputPortNum, BlockNum(8), res (8)   VLArbitrationTable
//	InformInfoRecord           SubscriberGID, Enum, reserved (24)         InformInfo (36)
//	LinkRecord                 FromLID, FromPort (3)                      ToPort, ToLID, reserved
//	ServiceRecord              ServiceID, ServiceGID, ServiceP_Key, res   ServiceLease ... ServiceData
//	MCMemberRecord             MGID, PortGID (32)                         Q_Key ... ProxyJoin
//	PathRecord, TraceRecord, MultiPathRecord, ServiceAssociationRecord: no RID

// SADataOffset is where SubnetAdminData starts in the SA body: after the
// RMPP header and the SA header.
const SADataOffset = RMPPHeaderLength + 20

// SAReservedOffset is where the SA header's 2 reserved bytes sit in the SA
// body, after SM_Key and AttributeOffset.
const SAReservedOffset = RMPPHeaderLength + 10

// Sizes of the SA records and attributes that have a fixed size.
const (
	NodeRecordLength               = 108
	PortInfoRecordLength           = 68
	SLtoVLMappingTableRecordLength = 16
	SwitchInfoRecordLength         = 24
	LinearFDBRecordLength          = 72
	RandomFDBRecordLength          = 72
	MulticastFDBRecordLength       = 72
	SMInfoRecordLength             = 28
	GUIDInfoRecordLength           = 72
	PKeyTableRecordLength          = 72
	VLArbitrationTableRecordLength = 72
	InformInfoLength               = 36
	InformInfoRecordLength         = 60
	LinkRecordLength               = 8
	ServiceRecordLength            = 176
	TraceRecordLength              = 46
	ServiceAssociationRecordLength = 80
	MultiPathRecordFixedLength     = 24 // before its SGIDCount + DGIDCount GIDs of 16 bytes
	MCMemberRecordRIDLength        = 32 // MGID and PortGID: Q_Key follows
	InformInfoRecordRIDLength      = 24 // SubscriberGID, Enum, 6 reserved: InformInfo follows
	LinkRecordRIDLength            = 3  // FromLID, FromPort: ToPort follows
	ServiceRecordRIDLength         = 28 // ServiceID, ServiceGID, ServiceP_Key, 2 reserved: ServiceLease follows
)

// RecordLength returns the size of one record of the attribute, or 0 when
// it has no fixed size (MultiPathRecord, Notice, ClassPortInfo ...).
func (a SAAttribute) RecordLength() int {
	return saRecordLengths[a]
}

var saRecordLengths = map[SAAttribute]int{
	SAAttrInformInfo: InformInfoLength, SAAttrNodeRecord: NodeRecordLength, SAAttrPortInfoRecord: PortInfoRecordLength,
	SAAttrSLtoVLMappingTableRecord: SLtoVLMappingTableRecordLength, SAAttrSwitchInfoRecord: SwitchInfoRecordLength,
	SAAttrLinearFDBRecord: LinearFDBRecordLength, SAAttrRandomFDBRecord: RandomFDBRecordLength,
	SAAttrMulticastFDBRecord: MulticastFDBRecordLength, SAAttrSMInfoRecord: SMInfoRecordLength,
	SAAttrGUIDInfoRecord: GUIDInfoRecordLength, SAAttrPKeyTableRecord: PKeyTableRecordLength,
	SAAttrVLArbitrationTableRecord: VLArbitrationTableRecordLength, SAAttrInformInfoRecord: InformInfoRecordLength,
	SAAttrLinkRecord: LinkRecordLength, SAAttrServiceRecord: ServiceRecordLength, SAAttrPathRecord: PathRecordLength,
	SAAttrMCMemberRecord: MCMemberRecordLength, SAAttrTraceRecord: TraceRecordLength,
	SAAttrServiceAssociationRecord: ServiceAssociationRecordLength,
}

// Record returns record i of the SA data: in a GetTableResp the records
// follow each other AttributeOffset 8-byte words apart; any other MAD holds
// one record, at the start. False past the records the data holds.
func (s *SA) Record(i int) ([]byte, bool) {
	if i == 0 {
		return s.Data, len(s.Data) > 0
	}
	stride := 8 * int(s.AttributeOffset)
	n := s.AttributeID.RecordLength()
	if n == 0 {
		n = stride
	}
	if s.Method != MethodGetTableResp || stride == 0 || i < 0 || i*stride+n > len(s.Data) {
		return nil, false
	}
	return s.Data[i*stride:], true
}

// smpBodies says where a record that wraps SMP attributes has them: after
// its RID, at an offset into the record.
var smpBodies = map[SAAttribute][]struct {
	attr   SMPAttribute
	offset int
}{
	SAAttrNodeRecord:               {{SMPAttrNodeInfo, 4}, {SMPAttrNodeDescription, 44}},
	SAAttrPortInfoRecord:           {{SMPAttrPortInfo, 4}},
	SAAttrSLtoVLMappingTableRecord: {{SMPAttrSLtoVLMappingTable, 8}},
	SAAttrSwitchInfoRecord:         {{SMPAttrSwitchInfo, 4}},
	SAAttrLinearFDBRecord:          {{SMPAttrLinearFDB, 8}},
	SAAttrRandomFDBRecord:          {{SMPAttrRandomFDB, 8}},
	SAAttrMulticastFDBRecord:       {{SMPAttrMulticastFDB, 8}},
	SAAttrSMInfoRecord:             {{SMPAttrSMInfo, 4}},
	SAAttrGUIDInfoRecord:           {{SMPAttrGUIDInfo, 8}},
	SAAttrPKeyTableRecord:          {{SMPAttrPKeyTable, 8}},
	SAAttrVLArbitrationTableRecord: {{SMPAttrVLArbitrationTable, 8}},
}

// SMPBody returns the SMP attribute a of the record at the start of rec,
// when records of attribute r wrap one: its 64 bytes, as an SMP carries
// them, decoded with SMPData's methods (NodeRecord's NodeInfo, a
// PortInfoRecord's PortInfo ...). The window may run past the record
// (a NodeInfo is 40 bytes), never past rec.
func (r SAAttribute) SMPBody(rec []byte, a SMPAttribute) (SMPData, bool) {
	for _, b := range smpBodies[r] {
		if b.attr == a && b.offset+SMPDataLength <= len(rec) {
			return SMPData(rec[b.offset : b.offset+SMPDataLength : b.offset+SMPDataLength]), true
		}
	}
	return nil, false
}

// SMPBodies reports whether records of attribute r wrap SMP attributes.
func (r SAAttribute) SMPBodies() bool { return len(smpBodies[r]) > 0 }

// ReservedSpans returns the reserved bytes of a record of attribute r, from
// the record's start, in wire order: its RID's, then its body's (an SMP
// attribute's own reserved bytes aside); nil for a record without any.
func (r SAAttribute) ReservedSpans() []FieldSpan { return saReservedSpans[r] }

var saReservedSpans = map[SAAttribute][]FieldSpan{
	SAAttrNodeRecord:               {{"Reserved", 2, 2}},
	SAAttrPortInfoRecord:           {{"Reserved", 3, 1}},
	SAAttrSLtoVLMappingTableRecord: {{"Reserved", 4, 4}},
	SAAttrSwitchInfoRecord:         {{"Reserved", 2, 2}},
	SAAttrLinearFDBRecord:          {{"Reserved", 4, 4}},
	SAAttrRandomFDBRecord:          {{"Reserved", 4, 4}},
	SAAttrMulticastFDBRecord:       {{"Reserved", 4, 4}},
	SAAttrSMInfoRecord:             {{"Reserved", 2, 2}},
	SAAttrPKeyTableRecord:          {{"Reserved", 5, 3}},
	SAAttrVLArbitrationTableRecord: {{"Reserved", 4, 4}},
	SAAttrGUIDInfoRecord:           {{"Reserved", 4, 4}},
	SAAttrInformInfo:               informInfoReserved(0),
	SAAttrInformInfoRecord:         append([]FieldSpan{{"Reserved", 18, 6}}, informInfoReserved(InformInfoRecordRIDLength)...),
	SAAttrTraceRecord:              {{"Reserved", 10, 1}},
	SAAttrMultiPathRecord:          {{"Reserved", 13, 1}, {"Reserved", 17, 7}},
}

// informInfoReserved are InformInfo's reserved bytes 20-21 and 32, for an
// InformInfo that starts at off.
func informInfoReserved(off int) []FieldSpan {
	return []FieldSpan{{"Reserved", off + 20, 2}, {"Reserved", off + 32, 1}}
}

// TableRID is the record identifier of the records that wrap an SMP
// attribute, every key any of them has; which keys a record has depends on
// its attribute (see the table in this file). LID is the EndportLID of a
// PortInfoRecord.
type TableRID struct {
	LID           uint16
	PortNum       uint8 // PortInfoRecord (byte 2), P_KeyTableRecord (byte 4)
	InputPortNum  uint8 // SLtoVLMappingTableRecord
	OutputPortNum uint8 // SLtoVLMappingTableRecord (byte 3), VLArbitrationTableRecord (byte 2)
	BlockNum      uint16
	Position      uint8 // MulticastForwardingTableRecord: 4 bits
}

// DecodeTableRID decodes the RID of a record of attribute r from the start
// of rec; false for an attribute without such a RID or a short rec.
func (r SAAttribute) DecodeTableRID(rec []byte) (TableRID, bool) {
	if !r.SMPBodies() || len(rec) < 8 {
		return TableRID{}, false
	}
	be := binary.BigEndian
	id := TableRID{LID: be.Uint16(rec[0:2])}
	switch r {
	case SAAttrPortInfoRecord:
		id.PortNum = rec[2]
	case SAAttrSLtoVLMappingTableRecord:
		id.InputPortNum, id.OutputPortNum = rec[2], rec[3]
	case SAAttrLinearFDBRecord, SAAttrRandomFDBRecord:
		id.BlockNum = be.Uint16(rec[2:4])
	case SAAttrMulticastFDBRecord:
		id.Position, id.BlockNum = rec[2]>>4, be.Uint16(rec[2:4])&0x1FF
	case SAAttrGUIDInfoRecord:
		id.BlockNum = uint16(rec[2])
	case SAAttrPKeyTableRecord:
		id.BlockNum, id.PortNum = be.Uint16(rec[2:4]), rec[4]
	case SAAttrVLArbitrationTableRecord:
		id.OutputPortNum, id.BlockNum = rec[2], uint16(rec[3])
	}
	return id, true
}

// InformInfo is a subscription to traps and notices (IBTA Vol 1
// §13.4.8.3), 36 bytes; InformInfoRecord wraps one after its RID.
//
//	byte 0 GID (16), 16 LIDRangeBegin, 18 LIDRangeEnd, 20 reserved,
//	22 IsGeneric, 23 Subscribe, 24 Type, 26 TrapNumber/DeviceID,
//	28 QPN(24), 31 reserved(3)/RespTimeValue(5), 32 reserved,
//	33 ProducerType/VendorID(24)
type InformInfo struct {
	GID                  net.IP
	LIDRangeBegin        uint16
	LIDRangeEnd          uint16
	IsGeneric            uint8
	Subscribe            uint8
	Type                 uint16
	TrapNumberDeviceID   uint16
	QPN                  uint32 // 24 bits
	RespTimeValue        uint8  // 5 bits
	ProducerTypeVendorID uint32 // 24 bits
}

// DecodeInformInfo decodes an InformInfo from the first 36 bytes of d.
func DecodeInformInfo(d []byte) InformInfo {
	_ = d[InformInfoLength-1]
	be := binary.BigEndian
	return InformInfo{
		GID: net.IP(d[0:16:16]), LIDRangeBegin: be.Uint16(d[16:18]), LIDRangeEnd: be.Uint16(d[18:20]),
		IsGeneric: d[22], Subscribe: d[23], Type: be.Uint16(d[24:26]), TrapNumberDeviceID: be.Uint16(d[26:28]),
		QPN: be.Uint32(d[27:31]) & 0xFFFFFF, RespTimeValue: d[31] & 0x1F,
		ProducerTypeVendorID: be.Uint32(d[32:36]) & 0xFFFFFF,
	}
}

// InformInfoRecord is an InformInfo with the subscriber it belongs to
// (IBTA Vol 1 §15.2.5.12).
type InformInfoRecord struct {
	SubscriberGID net.IP
	Enum          uint16
	InformInfo    InformInfo
}

// DecodeInformInfoRecord decodes an InformInfoRecord from the first 60
// bytes of d.
func DecodeInformInfoRecord(d []byte) InformInfoRecord {
	_ = d[InformInfoRecordLength-1]
	return InformInfoRecord{SubscriberGID: net.IP(d[0:16:16]), Enum: binary.BigEndian.Uint16(d[16:18]),
		InformInfo: DecodeInformInfo(d[InformInfoRecordRIDLength:])}
}

// LinkRecord is one link between two ports (IBTA Vol 1 §15.2.5.13).
//
//	byte 0 FromLID, 2 FromPort, 3 ToPort, 4 ToLID, 6 reserved (2)
type LinkRecord struct {
	FromLID  uint16
	FromPort uint8
	ToPort   uint8
	ToLID    uint16
}

// DecodeLinkRecord decodes a LinkRecord from the first 6 bytes of d.
func DecodeLinkRecord(d []byte) LinkRecord {
	_ = d[5]
	be := binary.BigEndian
	return LinkRecord{FromLID: be.Uint16(d[0:2]), FromPort: d[2], ToPort: d[3], ToLID: be.Uint16(d[4:6])}
}

// ServiceRecord advertises a service (IBTA Vol 1 §15.2.5.14).
//
//	byte 0 ServiceID, 8 ServiceGID (16), 24 ServiceP_Key, 26 reserved,
//	28 ServiceLease, 32 ServiceKey (16), 48 ServiceName (64),
//	112 ServiceData8 (16), 128 ServiceData16 (16), 144 ServiceData32 (16),
//	160 ServiceData64 (16)
type ServiceRecord struct {
	ServiceID    ServiceID
	ServiceGID   net.IP
	ServicePKey  uint16
	ServiceLease uint32
	ServiceKey   []byte // 16 bytes
	ServiceName  []byte // 64 bytes, NUL-padded UTF-8
	ServiceData  []byte // 64 bytes: 16 of 8 bits, 8 of 16, 4 of 32, 2 of 64
}

// DecodeServiceRecord decodes a ServiceRecord from the first 176 bytes of d.
func DecodeServiceRecord(d []byte) ServiceRecord {
	_ = d[ServiceRecordLength-1]
	be := binary.BigEndian
	return ServiceRecord{
		ServiceID: ServiceID(be.Uint64(d[0:8])), ServiceGID: net.IP(d[8:24:24]), ServicePKey: be.Uint16(d[24:26]),
		ServiceLease: be.Uint32(d[28:32]), ServiceKey: d[32:48:48], ServiceName: d[48:112:112],
		ServiceData: d[112:176:176],
	}
}

// TraceRecord is one hop of a path trace (IBTA Vol 1 §15.2.5.19).
//
//	byte 0 GIDPrefix, 8 IDGeneration, 10 reserved, 11 NodeType, 12 NodeID,
//	20 ChassisID, 28 EntryPortID, 36 ExitPortID, 44 EntryPort, 45 ExitPort
type TraceRecord struct {
	GIDPrefix    uint64
	IDGeneration uint16
	NodeType     uint8
	NodeID       uint64
	ChassisID    uint64
	EntryPortID  uint64
	ExitPortID   uint64
	EntryPort    uint8
	ExitPort     uint8
}

// DecodeTraceRecord decodes a TraceRecord from the first 46 bytes of d.
func DecodeTraceRecord(d []byte) TraceRecord {
	_ = d[TraceRecordLength-1]
	be := binary.BigEndian
	return TraceRecord{
		GIDPrefix: be.Uint64(d[0:8]), IDGeneration: be.Uint16(d[8:10]), NodeType: d[11], NodeID: be.Uint64(d[12:20]),
		ChassisID: be.Uint64(d[20:28]), EntryPortID: be.Uint64(d[28:36]), ExitPortID: be.Uint64(d[36:44]),
		EntryPort: d[44], ExitPort: d[45],
	}
}

// MultiPathRecord asks for paths between sets of ports (IBTA Vol 1
// §15.2.5.20): 24 bytes, then SGIDCount source GIDs and DGIDCount
// destination GIDs.
//
//	byte 0 RawTraffic(1)/reserved(3)/FlowLabel(20), 3 HopLimit, 4 TClass,
//	5 Reversible(1)/NumbPath(7), 6 P_Key, 8 QoSClass(12)/SL(4),
//	10 MTUSelector(2)/MTU(6), 11 RateSelector(2)/Rate(6),
//	12 PacketLifeTimeSelector(2)/PacketLifeTime(6), 13 reserved,
//	14 IndependenceSelector(2)/GIDScope(6), 15 SGIDCount, 16 DGIDCount,
//	17 reserved (7), 24 the GIDs
type MultiPathRecord struct {
	RawTraffic             bool
	FlowLabel              uint32 // 20 bits
	HopLimit               uint8
	TClass                 uint8
	Reversible             bool
	NumbPath               uint8 // 7 bits
	PKey                   uint16
	SL                     uint8 // 4 bits
	MTUSelector            PathSelector
	MTU                    PathMTU
	RateSelector           PathSelector
	Rate                   StaticRate
	PacketLifeTimeSelector PathSelector
	PacketLifeTime         uint8 // 6 bits
	IndependenceSelector   uint8 // 2 bits
	GIDScope               uint8 // 6 bits
	SGIDCount              uint8
	DGIDCount              uint8
	// GIDs are the source GIDs then the destination GIDs, 16 bytes each, as
	// many of the SGIDCount + DGIDCount as d holds.
	GIDs []byte
}

// DecodeMultiPathRecord decodes a MultiPathRecord from d, at least 24 bytes.
func DecodeMultiPathRecord(d []byte) MultiPathRecord {
	_ = d[MultiPathRecordFixedLength-1]
	n := min(int(d[15])+int(d[16]), (len(d)-MultiPathRecordFixedLength)/16)
	return MultiPathRecord{
		RawTraffic: d[0]&0x80 != 0, FlowLabel: binary.BigEndian.Uint32(d[0:4]) >> 8 & 0xFFFFF, HopLimit: d[3],
		TClass: d[4], Reversible: d[5]&0x80 != 0, NumbPath: d[5] & 0x7F, PKey: binary.BigEndian.Uint16(d[6:8]),
		SL: d[9] & 0xF, MTUSelector: PathSelector(d[10] >> 6), MTU: PathMTU(d[10] & 0x3F),
		RateSelector: PathSelector(d[11] >> 6), Rate: StaticRate(d[11] & 0x3F),
		PacketLifeTimeSelector: PathSelector(d[12] >> 6), PacketLifeTime: d[12] & 0x3F,
		IndependenceSelector: d[14] >> 6, GIDScope: d[14] & 0x3F, SGIDCount: d[15], DGIDCount: d[16],
		GIDs: d[MultiPathRecordFixedLength : MultiPathRecordFixedLength+16*n : MultiPathRecordFixedLength+16*n],
	}
}

// GID returns GID i of the record: the source GIDs first.
func (m *MultiPathRecord) GID(i int) (net.IP, bool) {
	if i < 0 || 16*(i+1) > len(m.GIDs) {
		return nil, false
	}
	return net.IP(m.GIDs[16*i : 16*(i+1) : 16*(i+1)]), true
}

// ServiceAssociationRecord pairs a service key with a name (IBTA Vol 1
// §15.2.5.15): byte 0 ServiceKey (16), 16 ServiceName (64).
type ServiceAssociationRecord struct {
	ServiceKey  []byte
	ServiceName []byte // NUL-padded
}

// DecodeServiceAssociationRecord decodes one from the first 80 bytes of d.
func DecodeServiceAssociationRecord(d []byte) ServiceAssociationRecord {
	_ = d[ServiceAssociationRecordLength-1]
	return ServiceAssociationRecord{ServiceKey: d[0:16:16], ServiceName: d[16:80:80]}
}
