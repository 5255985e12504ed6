package layers

import (
	"slices"
	"strconv"
	"strings"
)

// Where the fields of the management attributes and records lie: each
// table lists an attribute's fields by Wireshark's titles, in bits from the
// start of the attribute's data (IBTA Vol 1 §14.2.5 for the SMP attributes,
// §15.2.5 for the SA records, §16.1.3-16.1.4 for the PerfMgt counters), as
// the decoders in smp.go, sa.go and perfmgt.go read them
// (TestMgmtBitFieldsMatchDecoders checks each entry against them). FieldBytes
// places a field by them under the header names below; the attribute's
// data is found wherever the frame carries it: an SMP's data (LID-routed
// or directed-route), the part of an SA record that wraps an SMP attribute
// (a PortInfoRecord's PortInfo), the SA data, the PerfMgt data.

// Header names of the management attributes FieldBytes places fields in.
const (
	NodeInfoHeader             = "NodeInfo"
	PortInfoHeader             = "PortInfo"
	SwitchInfoHeader           = "SwitchInfo"
	SMInfoHeader               = "SMInfo"
	PathRecordHeader           = "PathRecord"
	MCMemberRecordHeader       = "MCMemberRecord"
	PortCountersHeader         = "PortCounters"
	PortCountersExtendedHeader = "PortCountersExtended"
	NoticeHeader               = "Notice"
	ClassPortInfoHeader        = "ClassPortInfo"
	InformInfoHeader           = "InformInfo"
	InformInfoRecordHeader     = "InformInfoRecord"
	LinkRecordHeader           = "LinkRecord"
	ServiceRecordHeader        = "ServiceRecord"
	TraceRecordHeader          = "TraceRecord"
	MultiPathRecordHeader      = "MultiPathRecord"
	ServiceAssocRecordHeader   = "ServiceAssociationRecord"
	// NoticeDetailsHeader is a Notice's DataDetails, whatever its trap.
	NoticeDetailsHeader = "NoticeDataDetails"
)

// sharedBits are the fields a table places on the same bits on purpose:
// Wireshark 4.0 reads the three LinkSpeedWidthPairsTable speeds from one.
var sharedBits = map[string]bool{"speedtwofive": true, "speedfive": true, "speedten": true}

// RIDHeader names the record identifier (RID) of SA records of attribute
// r for FieldBytes ("RID.PortInfoRecord"): the LID, port and block numbers
// that open the records that wrap an SMP attribute.
func RIDHeader(r SAAttribute) string { return "RID." + r.String() }

// RIDHeaders are the RIDHeader of every record FieldBytes places a RID in.
func RIDHeaders() []string {
	var hs []string
	for r := range ridBits() {
		hs = append(hs, RIDHeader(r))
	}
	slices.Sort(hs)
	return hs
}

// saRecordHeaders are the SA records whose fields FieldBytes places, by
// the attribute whose data holds them (an InformInfo is also the part of
// an InformInfoRecord after its RID).
var saRecordHeaders = map[string]SAAttribute{
	PathRecordHeader: SAAttrPathRecord, MCMemberRecordHeader: SAAttrMCMemberRecord,
	InformInfoRecordHeader: SAAttrInformInfoRecord, LinkRecordHeader: SAAttrLinkRecord,
	ServiceRecordHeader: SAAttrServiceRecord, TraceRecordHeader: SAAttrTraceRecord,
	MultiPathRecordHeader: SAAttrMultiPathRecord, ServiceAssocRecordHeader: SAAttrServiceAssociationRecord,
}

// TrapHeader names the DataDetails of trap t for FieldBytes ("Trap128"):
// its fields count from the Notice's start, and the header is there when
// the Notice's TrapNumberDeviceID is t (whatever IsGeneric says, as
// Wireshark reads it).
func TrapHeader(t TrapNumber) string { return "Trap" + strconv.Itoa(int(t)) }

// smpAttrHeaders are the SMP attributes among them.
var smpAttrHeaders = map[string]SMPAttribute{
	NodeInfoHeader: SMPAttrNodeInfo, PortInfoHeader: SMPAttrPortInfo, SwitchInfoHeader: SMPAttrSwitchInfo,
	SMInfoHeader: SMPAttrSMInfo,
}

// mgmtBitFields are the tables, by header name.
var mgmtBitFields = map[string][]bitField{
	NodeInfoHeader: {
		{"BaseVersion", 0, 8}, {"ClassVersion", 8, 8}, {"NodeType", 16, 8}, {"NumPorts", 24, 8},
		{"SystemImageGUID", 32, 64}, {"NodeGUID", 96, 64}, {"PortGUID", 160, 64}, {"PartitionCap", 224, 16},
		{"DeviceID", 240, 16}, {"Revision", 256, 32}, {"LocalPortNum", 288, 8}, {"VendorID", 296, 24},
	},
	PortInfoHeader: append([]bitField{
		{"M_Key", 0, 64}, {"GidPrefix", 64, 64}, {"LID", 128, 16}, {"MasterSMLID", 144, 16},
		{"CapabilityMask", 160, 32}, {"DiagCode", 192, 16}, {"M_KeyLeasePeriod", 208, 16},
		{"LocalPortNum", 224, 8}, {"LinkWidthEnabled", 232, 8}, {"LinkWidthSupported", 240, 8},
		{"LinkWidthActive", 248, 8}, {"LinkSpeedSupported", 256, 4}, {"PortState", 260, 4},
		{"PortPhysicalState", 264, 4}, {"LinkDownDefaultState", 268, 4}, {"M_KeyProtectBits", 272, 2},
		{"LMC", 277, 3}, {"LinkSpeedActive", 280, 4}, {"LinkSpeedEnabled", 284, 4}, {"NeighborMTU", 288, 4},
		{"MasterSMSL", 292, 4}, {"VLCap", 296, 4}, {"InitType", 300, 4}, {"VLHighLimit", 304, 8},
		{"VLArbitrationHighCap", 312, 8}, {"VLArbitrationLowCap", 320, 8}, {"InitTypeReply", 328, 4},
		{"MTUCap", 332, 4}, {"VLStallCount", 336, 3}, {"HOQLife", 339, 5}, {"OperationalVLs", 344, 4},
		{"PartitionEnforcementInbound", 348, 1}, {"PartitionEnforcementOutbound", 349, 1},
		{"FilterRawInbound", 350, 1}, {"FilterRawOutbound", 351, 1}, {"M_KeyViolations", 352, 16},
		{"P_KeyViolations", 368, 16}, {"Q_KeyViolations", 384, 16}, {"GUIDCap", 400, 8},
		{"ClientReregister", 408, 1}, {"SubnetTimeOut", 411, 5}, {"RespTimeValue", 419, 5},
		{"LocalPhyErrors", 424, 4}, {"OverrunErrors", 428, 4}, {"MaxCreditHint", 432, 16},
		{"LinkRoundTripLatency", 456, 24},
	}, capabilityBits()...),
	SwitchInfoHeader: {
		{"LinearFDBCap", 0, 16}, {"RandomFDBCap", 16, 16}, {"MulticastFDBCap", 32, 16}, {"LinearFDBTop", 48, 16},
		{"DefaultPort", 64, 8}, {"DefaultMulticastPrimaryPort", 72, 8}, {"DefaultMulticastNotPrimaryPort", 80, 8},
		{"LifeTimeValue", 88, 5}, {"PortStateChange", 93, 1}, {"OptimizedSLtoVLMappingProgramming", 94, 2},
		{"LIDsPerPort", 96, 16}, {"PartitionEnforcementCap", 112, 16}, {"InboundEnforcementCap", 128, 1},
		{"OutboundEnforcementCap", 129, 1}, {"FilterRawInboundCap", 130, 1}, {"FilterRawOutboundCap", 131, 1},
		{"EnhancedPortZero", 132, 1},
	},
	SMInfoHeader: {{"GUID", 0, 64}, {"SM_Key", 64, 64}, {"ActCount", 128, 32}, {"Priority", 160, 4}, {"SMState", 164, 4}},
	PathRecordHeader: {
		{"ServiceID", 0, 64}, {"DGID", 64, 128}, {"SGID", 192, 128}, {"DLID", 320, 16}, {"SLID", 336, 16},
		{"RawTraffic", 352, 1}, {"FlowLabel", 356, 20}, {"HopLimit", 376, 8}, {"TClass", 384, 8},
		{"Reversible", 392, 1}, {"NumbPath", 393, 7}, {"P_Key", 400, 16}, {"QoSClass", 416, 12}, {"SL", 428, 4},
		{"MTUSelector", 432, 2}, {"MTU", 434, 6}, {"RateSelector", 440, 2}, {"Rate", 442, 6},
		{"PacketLifeTimeSelector", 448, 2}, {"PacketLifeTime", 450, 6}, {"Preference", 456, 8},
	},
	MCMemberRecordHeader: {
		{"MGID", 0, 128}, {"PortGID", 128, 128}, {"Q_Key", 256, 32}, {"MLID", 288, 16}, {"MTUSelector", 304, 2},
		{"MTU", 306, 6}, {"TClass", 312, 8}, {"P_Key", 320, 16}, {"RateSelector", 336, 2}, {"Rate", 338, 6},
		{"PacketLifeTimeSelector", 344, 2}, {"PacketLifeTime", 346, 6}, {"SL", 352, 4}, {"FlowLabel", 356, 20},
		{"HopLimit", 376, 8}, {"Scope", 384, 4}, {"JoinState", 388, 4}, {"ProxyJoin", 392, 1},
	},
	PortCountersHeader: {
		{"PortSelect", 8, 8}, {"CounterSelect", 16, 16}, {"SymbolErrorCounter", 32, 16},
		{"LinkErrorRecoveryCounter", 48, 8}, {"LinkDownedCounter", 56, 8}, {"PortRcvErrors", 64, 16},
		{"PortRcvRemotePhysicalErrors", 80, 16}, {"PortRcvSwitchRelayErrors", 96, 16}, {"PortXmitDiscards", 112, 16},
		{"PortXmitConstraintErrors", 128, 8}, {"PortRcvConstraintErrors", 136, 8},
		{"LocalLinkIntegrityErrors", 152, 4}, {"ExcessiveBufferOverrunErrors", 156, 4}, {"VL15Dropped", 176, 16},
		{"PortXmitData", 192, 32}, {"PortRcvData", 224, 32}, {"PortXmitPkts", 256, 32}, {"PortRcvPkts", 288, 32},
		{"PortXmitWait", 320, 32},
	},
	PortCountersExtendedHeader: {
		{"PortSelect", 8, 8}, {"CounterSelect", 16, 16}, {"PortXmitData", 64, 64}, {"PortRcvData", 128, 64},
		{"PortXmitPkts", 192, 64}, {"PortRcvPkts", 256, 64}, {"PortUnicastXmitPkts", 320, 64},
		{"PortUnicastRcvPkts", 384, 64}, {"PortMulticastXmitPkts", 448, 64}, {"PortMulticastRcvPkts", 512, 64},
	},
}

// noticeBits are the Notice's own fields (IBTA Vol 1 §14.2.5.1).
var noticeBits = []bitField{{"IsGeneric", 0, 1}, {"Type", 1, 7}, {"ProducerTypeVendorID", 8, 24},
	{"TrapNumberDeviceID", 32, 16}, {"IssuerLID", 48, 16}, {"NoticeToggle", 64, 1}, {"NoticeCount", 65, 15},
	{"DataDetails", 80, 8 * NoticeDataDetailsLength}}

// classPortInfoBits are ClassPortInfo's fields (IBTA Vol 1 §13.4.8.1); its
// byte 32 is Reserved, byte 64 TrapHL (reserved before IBTA 1.2).
var classPortInfoBits = []bitField{{"BaseVersion", 0, 8}, {"ClassVersion", 8, 8}, {"CapabilityMask", 16, 16},
	{"CapabilityMask2", 32, 27}, {"RespTimeValue", 59, 5}, {"RedirectGID", 64, 128}, {"RedirectTC", 192, 8},
	{"RedirectSL", 200, 4}, {"RedirectFL", 204, 20}, {"RedirectLID", 224, 16}, {"RedirectP_Key", 240, 16},
	{"Reserved", 256, 8}, {"RedirectQP", 264, 24}, {"RedirectQ_Key", 288, 32}, {"TrapGID", 320, 128},
	{"TrapTC", 448, 8}, {"TrapSL", 456, 4}, {"TrapFL", 460, 20}, {"TrapLID", 480, 16}, {"TrapP_Key", 496, 16},
	{"TrapHL", 512, 8}, {"TrapQP", 520, 24}, {"TrapQ_Key", 544, 32}}

// trapBits are the traps' DataDetails fields by Wireshark's titles, in
// bits from the Notice's start (DataDetails begin at byte 10): IBTA Vol 1
// Table 120 and on, as decodeTrapDetails reads them.
func trapBits() map[TrapNumber][]bitField {
	const d = 8 * noticeDataDetailsOffset
	gid := []bitField{{"GIDADDR", d + 48, 128}}
	paths := []bitField{{"COMP_MASK", d, 64}, {"WAIT_FOR_REPATH", d + 64, 1}}
	port := []bitField{{"LIDADDR", d + 16, 16}, {"PORTNO", d + 32, 8}}
	peers := func(at int) []bitField {
		return []bitField{{"SL", d + 8*at, 4}, {"QP1", d + 8*(at+1), 24}, {"QP2", d + 8*(at+5), 24},
			{"GIDADDR1", d + 8*(at+8), 128}, {"GIDADDR2", d + 8*(at+24), 128}}
	}
	badKey := append([]bitField{{"LIDADDR1", d + 16, 16}, {"LIDADDR2", d + 32, 16}, {"KEY", d + 48, 32}}, peers(10)...)
	return map[TrapNumber][]bitField{
		TrapGIDInService: gid, TrapGIDOutOfService: gid, TrapMcastGroupCreated: gid, TrapMcastGroupDeleted: gid,
		TrapPathsInvalid: paths, TrapPathsRecomputed: paths,
		TrapLinkStateChange: {{"LIDADDR", d, 16}},
		TrapLinkIntegrity:   port, TrapBufferOverrun: port, TrapFlowControlWatchdog: port,
		TrapLocalChanges: {{"LIDADDR", d + 16, 16}, {"OtherLocalChanges", d + 47, 1}, {"CAPABILITYMASK", d + 48, 32},
			{"LinkSpeecEnabledChange", d + 93, 1}, {"LinkWidthEnabledChange", d + 94, 1}, {"NodeDescriptionChange", d + 95, 1}},
		TrapSystemImageGUIDChange: {{"LIDADDR", d + 16, 16}, {"SYSTEMIMAGEGUID", d + 48, 64}},
		TrapBadMKey: {{"LIDADDR", d + 16, 16}, {"DRSLID", d + 32, 16}, {"METHOD", d + 48, 8}, {"ATTRIBUTEID", d + 64, 16},
			{"ATTRIBUTEMODIFIER", d + 80, 32}, {"MKEY", d + 112, 64}, {"DRNotice", d + 184, 1}, {"DRPathTruncated", d + 185, 1},
			{"DRHopCount", d + 186, 6}, {"DRNoticeReturnPath", d + 192, 240}},
		TrapBadPKey: badKey, TrapBadQKey: badKey,
		TrapBadPKeyAtSwitch: append([]bitField{{"DataValid", d, 16}, {"LIDADDR1", d + 16, 16}, {"LIDADDR2", d + 32, 16},
			{"PKEY", d + 48, 16}}, append(peers(8), bitField{"SWLIDADDR", d + 384, 16}, bitField{"PORTNO", d + 400, 8})...),
	}
}

// saRecordBits are the SA records' fields past PathRecord and
// MCMemberRecord (IBTA Vol 1 §13.4.8.3, §15.2.5), by Wireshark's titles
// (which call the ServiceRecord's fields by their own names), as
// sa_records.go decodes them.
var saRecordBits = map[string][]bitField{
	InformInfoHeader: {{"GID", 0, 128}, {"LIDRangeBegin", 128, 16}, {"LIDRangeEnd", 144, 16}, {"IsGeneric", 176, 8},
		{"Subscribe", 184, 8}, {"Type", 192, 16}, {"TrapNumberDeviceID", 208, 16}, {"QPN", 224, 24},
		{"RespTimeValue", 251, 5}, {"ProducerTypeVendorID", 264, 24}},
	InformInfoRecordHeader: {{"SubscriberGID", 0, 128}, {"Enum", 128, 16}},
	LinkRecordHeader:       {{"FromLID", 0, 16}, {"FromPort", 16, 8}, {"ToPort", 24, 8}, {"ToLID", 32, 16}},
	ServiceRecordHeader: {{"ServiceID", 0, 64}, {"ServiceGID", 64, 128}, {"ServiceP_Key", 192, 16},
		{"ServiceLease", 224, 32}, {"ServiceKey", 256, 128}, {"ServiceName", 384, 512}},
	TraceRecordHeader: {{"GidPrefix", 0, 64}, {"IDGeneration", 64, 16}, {"NodeType", 88, 8}, {"NodeID", 96, 64},
		{"ChassisID", 160, 64}, {"EntryPortID", 224, 64}, {"ExitPortID", 288, 64}, {"EntryPort", 352, 8},
		{"ExitPort", 360, 8}},
	ServiceAssocRecordHeader: {{"ServiceKey", 0, 128}, {"ServiceName", 128, 512}},
	MultiPathRecordHeader: {{"RawTraffic", 0, 1}, {"FlowLabel", 4, 20}, {"HopLimit", 24, 8}, {"TClass", 32, 8},
		{"Reversible", 40, 1}, {"NumbPath", 41, 7}, {"P_Key", 48, 16}, {"SL", 76, 4}, {"MTUSelector", 80, 2},
		{"MTU", 82, 6}, {"RateSelector", 88, 2}, {"Rate", 90, 6}, {"PacketLifeTimeSelector", 96, 2},
		{"PacketLifeTime", 98, 6}, {"IndependenceSelector", 112, 2}, {"GIDScope", 114, 6}, {"SGIDCount", 120, 8},
		{"DGIDCount", 128, 8}},
}

// ridBits are the RIDs of the records that wrap an SMP attribute, by
// Wireshark's titles, as DecodeTableRID reads them.
func ridBits() map[SAAttribute][]bitField {
	lid := bitField{"LID", 0, 16}
	return map[SAAttribute][]bitField{
		SAAttrNodeRecord: {lid}, SAAttrSwitchInfoRecord: {lid}, SAAttrSMInfoRecord: {lid},
		SAAttrPortInfoRecord:           {{"EndportLID", 0, 16}, {"PortNum", 16, 8}},
		SAAttrSLtoVLMappingTableRecord: {lid, {"InputPortNum", 16, 8}, {"OutputPortNum", 24, 8}},
		SAAttrLinearFDBRecord:          {lid, {"BlockNum_SixteenBit", 16, 16}},
		SAAttrRandomFDBRecord:          {lid, {"BlockNum_SixteenBit", 16, 16}},
		SAAttrMulticastFDBRecord:       {lid, {"Position", 16, 4}, {"BlockNum_NineBit", 23, 9}},
		SAAttrGUIDInfoRecord:           {lid, {"BlockNum_EightBit", 16, 8}},
		SAAttrPKeyTableRecord:          {lid, {"BlockNum_SixteenBit", 16, 16}, {"PortNum", 32, 8}},
		SAAttrVLArbitrationTableRecord: {lid, {"OutputPortNum", 16, 8}, {"BlockNum_EightBit", 24, 8}},
	}
}

// smpTableBits are the SMP attributes Wireshark shows entry by entry (the
// tables) and the small ones, as the SMPData accessors read them; a field
// that repeats is named by its title for the first entry and "Title#i"
// for entry i (OccurrenceName). Fields that share a title within an
// attribute go by their Wireshark name's last part ("sltovlhighbits").
var smpTableBits = map[SMPAttribute][]bitField{
	SMPAttrGUIDInfo:           repeat(GUIDBlockEntries, 64, bitField{"GUID", 0, 64}),
	SMPAttrPKeyTable:          repeat(PKeyBlockEntries, 16, bitField{"MembershipType", 0, 1}, bitField{"P_KeyBase", 1, 15}),
	SMPAttrSLtoVLMappingTable: repeat(SLtoVLEntries/2, 8, bitField{"sltovlhighbits", 0, 4}, bitField{"sltovllowbits", 4, 4}),
	SMPAttrVLArbitrationTable: repeat(VLArbEntries, 16, bitField{"VL", 4, 4}, bitField{"Weight", 8, 8}),
	SMPAttrLinearFDB:          repeat(LinearFDBEntries, 8, bitField{"Port", 0, 8}),
	SMPAttrRandomFDB: repeat(RandomFDBEntries, 32, bitField{"LID", 0, 16}, bitField{"Valid", 16, 1},
		bitField{"LMC", 17, 3}, bitField{"Port", 24, 8}),
	SMPAttrMulticastFDB: repeat(MulticastFDBEntries, 16, bitField{"PortMask", 0, 16}),
	// Wireshark reads all three speeds from the first bit after the port
	// mask (sharedBits).
	SMPAttrLinkSpeedWidthPairsTable: {{"NumTables", 0, 8}, {"PortMask", 8, 256}, {"speedtwofive", 264, 1},
		{"speedfive", 264, 1}, {"speedten", 264, 1}},
	SMPAttrVendorDiag:      {{"NextIndex", 0, 16}, {"DiagData", 16, 496}},
	SMPAttrLedInfo:         {{"LedMask", 0, 1}},
	SMPAttrNodeDescription: {{"NodeString", 0, 8 * SMPDataLength}},
}

// repeat lays out n entries of the fields, stride bits apart.
func repeat(n, stride int, fields ...bitField) []bitField {
	var out []bitField
	for i := range n {
		for _, f := range fields {
			out = append(out, bitField{OccurrenceName(f.name, i), f.from + i*stride, f.width})
		}
	}
	return out
}

// OccurrenceName is how the tables name occurrence i of a repeated field:
// its name for the first, "name#i" for the others.
func OccurrenceName(name string, i int) string {
	if i == 0 {
		return name
	}
	return name + "#" + strconv.Itoa(i)
}

// capabilityBits places PortInfo's CapabilityMask bits, by their names in
// PortInfoCapabilities ("CapabilityMask.issm"): bit b of the 32-bit mask at
// byte 20.
func capabilityBits() []bitField {
	var out []bitField
	for _, c := range PortInfoCapabilities {
		out = append(out, bitField{"CapabilityMask." + c.Name, 160 + 31 - int(c.Bit), 1})
	}
	return out
}

func init() {
	mgmtBitFields[NoticeHeader] = noticeBits
	mgmtBitFields[NoticeDetailsHeader] = []bitField{{"DataDetails", 0, 8 * NoticeDataDetailsLength}}
	mgmtBitFields[ClassPortInfoHeader] = classPortInfoBits
	for t, fields := range trapBits() {
		mgmtBitFields[TrapHeader(t)] = fields
	}
	for a, fields := range smpTableBits {
		smpAttrHeaders[a.String()] = a
		mgmtBitFields[a.String()] = fields
	}
	for name, fields := range saRecordBits {
		mgmtBitFields[name] = fields
	}
	for r, fields := range ridBits() {
		mgmtBitFields[RIDHeader(r)] = fields
	}
	for name, fields := range mgmtBitFields {
		bitFields[name] = fields
	}
}

// mgmtBody returns the bytes of the management attribute named name in
// the last frame, as a slice of it: nil when the frame does not carry it;
// ok is false when name is not one of them.
func (p *Parser) mgmtBody(name string) (b []byte, ok bool) {
	if _, ok := mgmtBitFields[name]; !ok {
		return nil, false
	}
	if len(p.headerContents("MAD")) == 0 {
		return nil, true
	}
	m := &p.MAD
	var d []byte
	if a, isSMP := smpAttrHeaders[name]; isSMP {
		switch {
		case m.MgmtClass == MgmtClassSubnLID && m.SMP.Contents != nil && m.SMP.AttributeID == a:
			d = m.SMP.Data
		case m.MgmtClass == MgmtClassSubnDirected && m.SMPDirected.Contents != nil && m.SMPDirected.AttributeID == a:
			d = m.SMPDirected.Data
		case m.MgmtClass == MgmtClassSubnAdm && m.SA.Contents != nil:
			d, _ = m.SA.AttributeID.SMPBody(m.SA.Data, a)
			if m.SA.AttributeID == SAAttrLinkSpeedWidthPairsTableRecord && a == SMPAttrLinkSpeedWidthPairsTable &&
				len(m.SA.Data) >= SMPDataLength {
				// Wireshark reads this record's table from its first byte,
				// with no RID before it.
				d = m.SA.Data[:SMPDataLength]
			}
		}
		return p.inFrame(d), true
	}
	if name == ClassPortInfoHeader {
		switch {
		case m.MgmtClass == MgmtClassSubnAdm && m.SA.Contents != nil && m.SA.AttributeID == SAAttrClassPortInfo:
			d = m.SA.Data
		case m.MgmtClass == MgmtClassPerf && m.PerfMgt.Contents != nil && m.PerfMgt.AttributeID == PerfAttrClassPortInfo:
			d = m.PerfMgt.Data
		}
		return p.inFrame(d), true
	}
	if name == NoticeHeader || name == NoticeDetailsHeader || strings.HasPrefix(name, "Trap") {
		switch {
		case m.MgmtClass == MgmtClassSubnLID && m.SMP.Contents != nil && m.SMP.AttributeID == SMPAttrNotice:
			d = m.SMP.Data
		case m.MgmtClass == MgmtClassSubnDirected && m.SMPDirected.Contents != nil && m.SMPDirected.AttributeID == SMPAttrNotice:
			d = m.SMPDirected.Data
		case m.MgmtClass == MgmtClassSubnAdm && m.SA.Contents != nil && m.SA.AttributeID == SAAttrNotice:
			d = m.SA.Data
		}
		if len(d) < NoticeLength {
			return nil, true
		}
		d = d[:NoticeLength]
		if name == NoticeDetailsHeader {
			return p.inFrame(d[noticeDataDetailsOffset:]), true
		}
		if name != NoticeHeader && TrapHeader(TrapNumber(DecodeNotice(d).TrapNumberDeviceID)) != name {
			return nil, true // another trap's details
		}
		return p.inFrame(d), true
	}
	isSA := m.MgmtClass == MgmtClassSubnAdm && m.SA.Contents != nil
	if r, ok := saRecordHeaders[name]; ok {
		if isSA && m.SA.AttributeID == r {
			d = m.SA.Data
		}
		return p.inFrame(d), true
	}
	if name == InformInfoHeader {
		switch {
		case isSA && m.SA.AttributeID == SAAttrInformInfo:
			d = m.SA.Data
		case isSA && m.SA.AttributeID == SAAttrInformInfoRecord:
			d = m.SA.Data[min(InformInfoRecordRIDLength, len(m.SA.Data)):]
		}
		return p.inFrame(d), true
	}
	if rid, ok := strings.CutPrefix(name, "RID."); ok {
		if isSA && m.SA.AttributeID.String() == rid {
			d = m.SA.Data
		}
		return p.inFrame(d), true
	}
	switch name {
	case PortCountersHeader, PortCountersExtendedHeader:
		want := map[string]PerfAttribute{PortCountersHeader: PerfAttrPortCounters, PortCountersExtendedHeader: PerfAttrPortCountersExtended}[name]
		if m.MgmtClass == MgmtClassPerf && m.PerfMgt.Contents != nil && m.PerfMgt.AttributeID == want {
			d = m.PerfMgt.Data
		}
	}
	return p.inFrame(d), true
}

// inFrame returns d as a slice of the last frame, nil when d is not cut
// from it (its capacity may have been cut: it is found by its address).
func (p *Parser) inFrame(d []byte) []byte {
	if len(d) == 0 {
		return nil
	}
	f := p.frame
	if off := cap(f) - cap(d); off >= 0 && off+len(d) <= len(f) && &f[off] == &d[0] {
		return f[off : off+len(d)]
	}
	for off := 0; off+len(d) <= len(f); off++ {
		if &f[off] == &d[0] {
			return f[off : off+len(d)]
		}
	}
	return nil
}
