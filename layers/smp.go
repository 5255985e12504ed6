package layers

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
)

// SMPDataLength is the size of the attribute data an SMP carries.
const SMPDataLength = 64

// SMP is the body of a LID-routed subnet management packet, management
// class 0x01 (IBTA Vol 1 §14.2.1.1), which travels to and from QP0.
// Offsets count from the start of the MAD; the body starts at byte 24.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            common MAD header (24 bytes, see MAD)              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          M_Key (64)                      24   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Reserved (32 bytes)                 32   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      SMP Data (64 bytes)                 64   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Reserved (128 bytes)                128   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// AttributeID, AttributeModifier and Method are copies of the MAD header's,
// made before the body decodes; the typed accessors (NodeInfo, PortInfo,
// SMInfo, NodeDescription) read Data when the attribute matches.
type SMP struct {
	madBody

	AttributeID       SMPAttribute // from the MAD header
	AttributeModifier uint32       // from the MAD header
	Method            MADMethod    // from the MAD header

	MKey      uint64
	Reserved1 []byte // 32 bytes
	Data      SMPData
	Reserved2 []byte // 128 bytes
}

var smpFields = []FieldSpan{{"M_Key", 0, 8}, {"Reserved", 8, 32}, {"SMPData", 40, 64}, {"Reserved", 104, 128}}

// LayerType returns LayerTypeSMP.
func (s *SMP) LayerType() gopacket.LayerType { return LayerTypeSMP }

// CanDecode returns LayerTypeSMP.
func (s *SMP) CanDecode() gopacket.LayerClass { return LayerTypeSMP }

func (s *SMP) setHeader(h *MAD) {
	s.AttributeID, s.AttributeModifier, s.Method = SMPAttribute(h.AttributeID), h.AttributeModifier, h.Method
}

// DecodeFromBytes decodes the 232 bytes after the MAD header.
func (s *SMP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	s.MKey, s.Reserved1, s.Data, s.Reserved2 = 0, nil, nil, nil
	d, err := s.split("SMP", smpFields, data, df)
	if err != nil {
		return err
	}
	s.MKey = binary.BigEndian.Uint64(d[0:8])
	s.Reserved1 = d[8:40:40]
	s.Data = SMPData(d[40:104:104])
	s.Reserved2 = d[104:232:232]
	return nil
}

// SerializeTo prepends the 232 body bytes.
func (s *SMP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := prependBody(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d[0:8], s.MKey)
	if err := putBytes("smp", "Reserved1", d[8:40], s.Reserved1); err != nil {
		return err
	}
	if err := putBytes("smp", "Data", d[40:104], s.Data); err != nil {
		return err
	}
	return putBytes("smp", "Reserved2", d[104:232], s.Reserved2)
}

// NodeInfo returns the NodeInfo attribute the SMP carries.
func (s *SMP) NodeInfo() (NodeInfo, bool) { return s.Data.nodeInfo(s.AttributeID) }

// PortInfo returns the PortInfo attribute the SMP carries.
func (s *SMP) PortInfo() (PortInfo, bool) { return s.Data.portInfo(s.AttributeID) }

// SMInfo returns the SMInfo attribute the SMP carries.
func (s *SMP) SMInfo() (SMInfo, bool) { return s.Data.smInfo(s.AttributeID) }

// NodeDescription returns the NodeDescription the SMP carries.
func (s *SMP) NodeDescription() (string, bool) { return s.Data.nodeDescription(s.AttributeID) }

// SMPDirected is the body of a directed-route subnet management packet,
// management class 0x81 (IBTA Vol 1 §14.2.1.2). The MAD header's Status
// holds the D (direction) bit and a 15-bit status, and ClassSpecific holds
// HopPointer and HopCount; the methods of the same names read the copies
// the MAD hands over before decoding (DirectedRouteStatus and
// DirectedRouteClassSpecific build those header fields).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  |   MgmtClass   | ClassVersion  |R|  Method     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|D|          Status             |  HopPointer   |   HopCount    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        TransactionID, AttributeID, AttributeModifier ...      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          M_Key (64)                      24   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           DrSLID          32  |           DrDLID          34  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Reserved (28 bytes)                 36   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      SMP Data (64 bytes)                 64   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                    InitialPath (64 bytes)               128   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     ReturnPath (64 bytes)               192   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type SMPDirected struct {
	madBody

	AttributeID       SMPAttribute // from the MAD header
	AttributeModifier uint32       // from the MAD header
	Method            MADMethod    // from the MAD header

	MKey        uint64
	DrSLID      uint16
	DrDLID      uint16
	Reserved    []byte // 28 bytes
	Data        SMPData
	InitialPath []byte // 64 bytes: the port numbers to leave by, one per hop
	ReturnPath  []byte // 64 bytes: the port numbers received on

	status        uint16
	classSpecific uint16
}

var smpDirectedFields = []FieldSpan{{"M_Key", 0, 8}, {"DrSLID", 8, 2}, {"DrDLID", 10, 2}, {"Reserved", 12, 28},
	{"SMPData", 40, 64}, {"InitialPath", 104, 64}, {"ReturnPath", 168, 64}}

// LayerType returns LayerTypeSMPDirected.
func (s *SMPDirected) LayerType() gopacket.LayerType { return LayerTypeSMPDirected }

// CanDecode returns LayerTypeSMPDirected.
func (s *SMPDirected) CanDecode() gopacket.LayerClass { return LayerTypeSMPDirected }

func (s *SMPDirected) setHeader(h *MAD) {
	s.AttributeID, s.AttributeModifier, s.Method = SMPAttribute(h.AttributeID), h.AttributeModifier, h.Method
	s.status, s.classSpecific = h.Status, h.ClassSpecific
}

// Direction returns the D bit of the header's Status: true on the way back
// from the destination (a response), false outbound.
func (s *SMPDirected) Direction() bool { return s.status&0x8000 != 0 }

// Status returns the 15-bit status of the header's Status field.
func (s *SMPDirected) Status() uint16 { return s.status & 0x7FFF }

// HopPointer returns the upper byte of the header's ClassSpecific.
func (s *SMPDirected) HopPointer() uint8 { return uint8(s.classSpecific >> 8) }

// HopCount returns the lower byte of the header's ClassSpecific.
func (s *SMPDirected) HopCount() uint8 { return uint8(s.classSpecific) }

// DirectedRouteStatus builds the MAD Status of a directed-route SMP.
func DirectedRouteStatus(direction bool, status uint16) uint16 {
	return uint16(bit(direction))<<15 | status&0x7FFF
}

// DirectedRouteClassSpecific builds the MAD ClassSpecific of a directed-route SMP.
func DirectedRouteClassSpecific(hopPointer, hopCount uint8) uint16 {
	return uint16(hopPointer)<<8 | uint16(hopCount)
}

// DecodeFromBytes decodes the 232 bytes after the MAD header.
func (s *SMPDirected) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	s.MKey, s.DrSLID, s.DrDLID, s.Reserved, s.Data, s.InitialPath, s.ReturnPath = 0, 0, 0, nil, nil, nil, nil
	d, err := s.split("SMPDirected", smpDirectedFields, data, df)
	if err != nil {
		return err
	}
	s.MKey = binary.BigEndian.Uint64(d[0:8])
	s.DrSLID = binary.BigEndian.Uint16(d[8:10])
	s.DrDLID = binary.BigEndian.Uint16(d[10:12])
	s.Reserved = d[12:40:40]
	s.Data = SMPData(d[40:104:104])
	s.InitialPath = d[104:168:168]
	s.ReturnPath = d[168:232:232]
	return nil
}

// SerializeTo prepends the 232 body bytes.
func (s *SMPDirected) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := prependBody(b)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d[0:8], s.MKey)
	binary.BigEndian.PutUint16(d[8:10], s.DrSLID)
	binary.BigEndian.PutUint16(d[10:12], s.DrDLID)
	for _, f := range []struct {
		name     string
		dst, src []byte
	}{{"Reserved", d[12:40], s.Reserved}, {"Data", d[40:104], s.Data},
		{"InitialPath", d[104:168], s.InitialPath}, {"ReturnPath", d[168:232], s.ReturnPath}} {
		if err := putBytes("smpdirected", f.name, f.dst, f.src); err != nil {
			return err
		}
	}
	return nil
}

// NodeInfo returns the NodeInfo attribute the SMP carries.
func (s *SMPDirected) NodeInfo() (NodeInfo, bool) { return s.Data.nodeInfo(s.AttributeID) }

// PortInfo returns the PortInfo attribute the SMP carries.
func (s *SMPDirected) PortInfo() (PortInfo, bool) { return s.Data.portInfo(s.AttributeID) }

// SMInfo returns the SMInfo attribute the SMP carries.
func (s *SMPDirected) SMInfo() (SMInfo, bool) { return s.Data.smInfo(s.AttributeID) }

// NodeDescription returns the NodeDescription the SMP carries.
func (s *SMPDirected) NodeDescription() (string, bool) {
	return s.Data.nodeDescription(s.AttributeID)
}

// SMPAttribute is the AttributeID of a subnet management MAD (IBTA Vol 1
// §14.2.5).
type SMPAttribute uint16

// Subnet management attributes.
const (
	SMPAttrClassPortInfo            SMPAttribute = 0x0001
	SMPAttrNotice                   SMPAttribute = 0x0002
	SMPAttrInformInfo               SMPAttribute = 0x0003
	SMPAttrNodeDescription          SMPAttribute = 0x0010
	SMPAttrNodeInfo                 SMPAttribute = 0x0011
	SMPAttrSwitchInfo               SMPAttribute = 0x0012
	SMPAttrGUIDInfo                 SMPAttribute = 0x0014
	SMPAttrPortInfo                 SMPAttribute = 0x0015
	SMPAttrPKeyTable                SMPAttribute = 0x0016
	SMPAttrSLtoVLMappingTable       SMPAttribute = 0x0017
	SMPAttrVLArbitrationTable       SMPAttribute = 0x0018
	SMPAttrLinearFDB                SMPAttribute = 0x0019
	SMPAttrRandomFDB                SMPAttribute = 0x001A
	SMPAttrMulticastFDB             SMPAttribute = 0x001B
	SMPAttrLinkSpeedWidthPairsTable SMPAttribute = 0x001C
	SMPAttrSMInfo                   SMPAttribute = 0x0020
	SMPAttrVendorDiag               SMPAttribute = 0x0030
	SMPAttrLedInfo                  SMPAttribute = 0x0031
)

var smpAttrNames = map[SMPAttribute]string{
	SMPAttrClassPortInfo: "ClassPortInfo", SMPAttrNotice: "Notice", SMPAttrInformInfo: "InformInfo",
	SMPAttrNodeDescription: "NodeDescription", SMPAttrNodeInfo: "NodeInfo", SMPAttrSwitchInfo: "SwitchInfo",
	SMPAttrGUIDInfo: "GUIDInfo", SMPAttrPortInfo: "PortInfo", SMPAttrPKeyTable: "P_KeyTable",
	SMPAttrSLtoVLMappingTable: "SLtoVLMappingTable", SMPAttrVLArbitrationTable: "VLArbitrationTable",
	SMPAttrLinearFDB: "LinearForwardingTable", SMPAttrRandomFDB: "RandomForwardingTable",
	SMPAttrMulticastFDB: "MulticastForwardingTable", SMPAttrLinkSpeedWidthPairsTable: "LinkSpeedWidthPairsTable",
	SMPAttrSMInfo: "SMInfo", SMPAttrVendorDiag: "VendorDiag", SMPAttrLedInfo: "LedInfo",
}

// String returns the attribute name Wireshark shows (the forwarding tables
// under their IBTA names, LinearForwardingTable etc.).
func (a SMPAttribute) String() string {
	if n, ok := smpAttrNames[a]; ok {
		return n
	}
	if a >= 0xFF00 {
		return fmt.Sprintf("Vendor(0x%04x)", uint16(a))
	}
	return fmt.Sprintf("Reserved(0x%04x)", uint16(a))
}

// SMPData is the 64-byte attribute data of an SMP. Its methods decode it as
// one attribute or another, without checking which one the SMP names. The
// SMP layer always hands out all 64 bytes (a shorter SMP is malformed and
// has no data); like indexing a slice, the table accessors panic on an
// entry index past their table (GUIDBlockEntries and the like).
type SMPData []byte

func (d SMPData) nodeInfo(a SMPAttribute) (NodeInfo, bool) {
	if a != SMPAttrNodeInfo || len(d) < SMPDataLength {
		return NodeInfo{}, false
	}
	return d.NodeInfo(), true
}

func (d SMPData) portInfo(a SMPAttribute) (PortInfo, bool) {
	if a != SMPAttrPortInfo || len(d) < SMPDataLength {
		return PortInfo{}, false
	}
	return d.PortInfo(), true
}

func (d SMPData) smInfo(a SMPAttribute) (SMInfo, bool) {
	if a != SMPAttrSMInfo || len(d) < SMPDataLength {
		return SMInfo{}, false
	}
	return d.SMInfo(), true
}

func (d SMPData) nodeDescription(a SMPAttribute) (string, bool) {
	if a != SMPAttrNodeDescription || len(d) < SMPDataLength {
		return "", false
	}
	return d.NodeDescription(), true
}

// NodeDescription decodes the data as a NodeDescription (IBTA Vol 1
// §14.2.5.2): a 64-byte UTF-8 string, NUL-padded.
func (d SMPData) NodeDescription() string {
	if i := bytes.IndexByte(d, 0); i >= 0 {
		return string(d[:i])
	}
	return string(d)
}

// NodeType is the kind of node in NodeInfo.
type NodeType uint8

// Node types (IBTA Vol 1 §14.2.5.3).
const (
	NodeTypeCA     NodeType = 1
	NodeTypeSwitch NodeType = 2
	NodeTypeRouter NodeType = 3
)

// String names the node type.
func (t NodeType) String() string {
	return enumName([]string{1: "Channel Adapter", 2: "Switch", 3: "Router"}, uint(t), "Reserved")
}

// NodeInfo is the NodeInfo attribute (IBTA Vol 1 §14.2.5.3).
//
//	byte 0 BaseVersion, 1 ClassVersion, 2 NodeType, 3 NumPorts,
//	4 SystemImageGUID (8), 12 NodeGUID (8), 20 PortGUID (8),
//	28 PartitionCap (2), 30 DeviceID (2), 32 Revision (4),
//	36 LocalPortNum, 37 VendorID (3)
type NodeInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	NodeType        NodeType
	NumPorts        uint8
	SystemImageGUID uint64
	NodeGUID        uint64
	PortGUID        uint64
	PartitionCap    uint16
	DeviceID        uint16
	Revision        uint32
	LocalPortNum    uint8
	VendorID        uint32 // 24 bits (an IEEE OUI)
}

// NodeInfo decodes the data as a NodeInfo attribute.
func (d SMPData) NodeInfo() NodeInfo {
	_ = d[39]
	return NodeInfo{
		BaseVersion: d[0], ClassVersion: d[1], NodeType: NodeType(d[2]), NumPorts: d[3],
		SystemImageGUID: binary.BigEndian.Uint64(d[4:12]),
		NodeGUID:        binary.BigEndian.Uint64(d[12:20]),
		PortGUID:        binary.BigEndian.Uint64(d[20:28]),
		PartitionCap:    binary.BigEndian.Uint16(d[28:30]),
		DeviceID:        binary.BigEndian.Uint16(d[30:32]),
		Revision:        binary.BigEndian.Uint32(d[32:36]),
		LocalPortNum:    d[36],
		VendorID:        get24(d[37:40]),
	}
}

// PortState is the logical state of a port (PortInfo.PortState).
type PortState uint8

// Port states (IBTA Vol 1 §14.2.5.6).
const (
	PortStateNoChange PortState = 0
	PortStateDown     PortState = 1
	PortStateInit     PortState = 2
	PortStateArmed    PortState = 3
	PortStateActive   PortState = 4
)

// String names the port state.
func (s PortState) String() string {
	return enumName([]string{"NoStateChange", "Down", "Initialize", "Armed", "Active"}, uint(s), "Reserved")
}

// PortPhysicalState is the physical state of a port (PortInfo.PortPhysicalState).
type PortPhysicalState uint8

// String names the physical port state.
func (s PortPhysicalState) String() string {
	return enumName([]string{"NoStateChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
		"LinkUp", "LinkErrorRecovery", "PhyTest"}, uint(s), "Reserved")
}

// PortInfo is the PortInfo attribute (IBTA Vol 1 §14.2.5.6), its fields up
// to LinkRoundTripLatency.
//
//	byte 0 M_Key (8), 8 GidPrefix (8), 16 LID, 18 MasterSMLID,
//	20 CapabilityMask (4), 24 DiagCode, 26 M_KeyLeasePeriod,
//	28 LocalPortNum, 29 LinkWidthEnabled, 30 LinkWidthSupported,
//	31 LinkWidthActive, 32 LinkSpeedSupported(4)/PortState(4),
//	33 PortPhysicalState(4)/LinkDownDefaultState(4),
//	34 M_KeyProtectBits(2)/reserved(3)/LMC(3),
//	35 LinkSpeedActive(4)/LinkSpeedEnabled(4), 36 NeighborMTU(4)/MasterSMSL(4),
//	37 VLCap(4)/InitType(4), 38 VLHighLimit, 39 VLArbitrationHighCap,
//	40 VLArbitrationLowCap, 41 InitTypeReply(4)/MTUCap(4),
//	42 VLStallCount(3)/HOQLife(5), 43 OperationalVLs(4)/enforcement bits(4),
//	44 M_KeyViolations, 46 P_KeyViolations, 48 Q_KeyViolations, 50 GUIDCap,
//	51 ClientReregister(1)/MulticastPKeyTrapSuppressionEnabled(2)/SubnetTimeOut(5),
//	52 reserved(3)/RespTimeValue(5), 53 LocalPhyErrors(4)/OverrunErrors(4),
//	54 MaxCreditHint, 56 reserved, 57 LinkRoundTripLatency (3)
type PortInfo struct {
	MKey                 uint64
	GIDPrefix            uint64
	LID                  uint16
	MasterSMLID          uint16
	CapabilityMask       uint32
	DiagCode             uint16
	MKeyLeasePeriod      uint16
	LocalPortNum         uint8
	LinkWidthEnabled     uint8
	LinkWidthSupported   uint8
	LinkWidthActive      uint8
	LinkSpeedSupported   uint8 // 4 bits
	PortState            PortState
	PortPhysicalState    PortPhysicalState
	LinkDownDefaultState uint8 // 4 bits
	MKeyProtectBits      uint8 // 2 bits
	LMC                  uint8 // 3 bits
	LinkSpeedActive      uint8 // 4 bits
	LinkSpeedEnabled     uint8 // 4 bits
	NeighborMTU          PathMTU
	MasterSMSL           uint8 // 4 bits
	VLCap                uint8 // 4 bits
	InitType             uint8 // 4 bits
	VLHighLimit          uint8
	VLArbitrationHighCap uint8
	VLArbitrationLowCap  uint8
	InitTypeReply        uint8 // 4 bits
	MTUCap               PathMTU
	VLStallCount         uint8 // 3 bits
	HOQLife              uint8 // 5 bits
	OperationalVLs       uint8 // 4 bits
	PartitionEnforcement uint8 // 4 bits: inbound, outbound, filter raw inbound, filter raw outbound
	MKeyViolations       uint16
	PKeyViolations       uint16
	QKeyViolations       uint16
	GUIDCap              uint8
	ClientReregister     bool
	SubnetTimeOut        uint8 // 5 bits
	RespTimeValue        uint8 // 5 bits
	LocalPhyErrors       uint8 // 4 bits
	OverrunErrors        uint8 // 4 bits
	MaxCreditHint        uint16
	LinkRoundTripLatency uint32 // 24 bits
}

// PortInfo decodes the data as a PortInfo attribute.
func (d SMPData) PortInfo() PortInfo {
	_ = d[59]
	be := binary.BigEndian
	return PortInfo{
		MKey: be.Uint64(d[0:8]), GIDPrefix: be.Uint64(d[8:16]),
		LID: be.Uint16(d[16:18]), MasterSMLID: be.Uint16(d[18:20]),
		CapabilityMask: be.Uint32(d[20:24]), DiagCode: be.Uint16(d[24:26]), MKeyLeasePeriod: be.Uint16(d[26:28]),
		LocalPortNum: d[28], LinkWidthEnabled: d[29], LinkWidthSupported: d[30], LinkWidthActive: d[31],
		LinkSpeedSupported: d[32] >> 4, PortState: PortState(d[32] & 0xF),
		PortPhysicalState: PortPhysicalState(d[33] >> 4), LinkDownDefaultState: d[33] & 0xF,
		MKeyProtectBits: d[34] >> 6, LMC: d[34] & 7,
		LinkSpeedActive: d[35] >> 4, LinkSpeedEnabled: d[35] & 0xF,
		NeighborMTU: PathMTU(d[36] >> 4), MasterSMSL: d[36] & 0xF,
		VLCap: d[37] >> 4, InitType: d[37] & 0xF,
		VLHighLimit: d[38], VLArbitrationHighCap: d[39], VLArbitrationLowCap: d[40],
		InitTypeReply: d[41] >> 4, MTUCap: PathMTU(d[41] & 0xF),
		VLStallCount: d[42] >> 5, HOQLife: d[42] & 0x1F,
		OperationalVLs: d[43] >> 4, PartitionEnforcement: d[43] & 0xF,
		MKeyViolations: be.Uint16(d[44:46]), PKeyViolations: be.Uint16(d[46:48]), QKeyViolations: be.Uint16(d[48:50]),
		GUIDCap: d[50], ClientReregister: d[51]&0x80 != 0, SubnetTimeOut: d[51] & 0x1F,
		RespTimeValue: d[52] & 0x1F, LocalPhyErrors: d[53] >> 4, OverrunErrors: d[53] & 0xF,
		MaxCreditHint: be.Uint16(d[54:56]), LinkRoundTripLatency: get24(d[57:60]),
	}
}

// SMState is the state of a subnet manager (SMInfo.SMState).
type SMState uint8

// Subnet manager states (IBTA Vol 1 §14.4).
const (
	SMStateNotActive   SMState = 0
	SMStateDiscovering SMState = 1
	SMStateStandby     SMState = 2
	SMStateMaster      SMState = 3
)

// String names the subnet manager state.
func (s SMState) String() string {
	return enumName([]string{"Not Active", "Discovering", "Standby", "Master"}, uint(s), "Reserved")
}

// SMInfo is the SMInfo attribute (IBTA Vol 1 §14.2.5.13).
//
//	byte 0 GUID (8), 8 SM_Key (8), 16 ActCount (4), 20 Priority(4)/SMState(4)
type SMInfo struct {
	GUID     uint64
	SMKey    uint64
	ActCount uint32
	Priority uint8 // 4 bits
	SMState  SMState
}

// SMInfo decodes the data as an SMInfo attribute.
func (d SMPData) SMInfo() SMInfo {
	_ = d[20]
	return SMInfo{
		GUID: binary.BigEndian.Uint64(d[0:8]), SMKey: binary.BigEndian.Uint64(d[8:16]),
		ActCount: binary.BigEndian.Uint32(d[16:20]), Priority: d[20] >> 4, SMState: SMState(d[20] & 0xF),
	}
}

// MarshalTo writes the SMInfo into attribute data d (at least 21 bytes),
// for building an SMP.
func (s SMInfo) MarshalTo(d SMPData) {
	_ = d[20]
	binary.BigEndian.PutUint64(d[0:8], s.GUID)
	binary.BigEndian.PutUint64(d[8:16], s.SMKey)
	binary.BigEndian.PutUint32(d[16:20], s.ActCount)
	d[20] = s.Priority<<4 | uint8(s.SMState)&0xF
}

// SwitchInfo is the SwitchInfo attribute (IBTA Vol 1 §14.2.5.4).
//
//	byte 0 LinearFDBCap, 2 RandomFDBCap, 4 MulticastFDBCap, 6 LinearFDBTop,
//	8 DefaultPort, 9 DefaultMulticastPrimaryPort, 10 DefaultMulticastNotPrimaryPort,
//	11 LifeTimeValue(5)/PortStateChange(1)/OptimizedSLtoVLMappingProgramming(2),
//	12 LIDsPerPort, 14 PartitionEnforcementCap,
//	16 InboundEnforcementCap(1)/OutboundEnforcementCap(1)/FilterRawInboundCap(1)/
//	FilterRawOutboundCap(1)/EnhancedPortZero(1)/reserved(3)
type SwitchInfo struct {
	LinearFDBCap, RandomFDBCap, MulticastFDBCap, LinearFDBTop uint16
	DefaultPort                                               uint8
	DefaultMulticastPrimaryPort                               uint8
	DefaultMulticastNotPrimaryPort                            uint8
	LifeTimeValue                                             uint8 // 5 bits
	PortStateChange                                           bool
	OptimizedSLtoVLMappingProgramming                         uint8 // 2 bits
	LIDsPerPort                                               uint16
	PartitionEnforcementCap                                   uint16
	InboundEnforcementCap, OutboundEnforcementCap             bool
	FilterRawInboundCap, FilterRawOutboundCap                 bool
	EnhancedPortZero                                          bool
}

// SwitchInfo decodes the data as a SwitchInfo attribute.
func (d SMPData) SwitchInfo() SwitchInfo {
	_ = d[16]
	be := binary.BigEndian
	return SwitchInfo{
		LinearFDBCap: be.Uint16(d[0:2]), RandomFDBCap: be.Uint16(d[2:4]), MulticastFDBCap: be.Uint16(d[4:6]),
		LinearFDBTop: be.Uint16(d[6:8]), DefaultPort: d[8], DefaultMulticastPrimaryPort: d[9],
		DefaultMulticastNotPrimaryPort: d[10], LifeTimeValue: d[11] >> 3, PortStateChange: d[11]&4 != 0,
		OptimizedSLtoVLMappingProgramming: d[11] & 3, LIDsPerPort: be.Uint16(d[12:14]),
		PartitionEnforcementCap: be.Uint16(d[14:16]),
		InboundEnforcementCap:   d[16]&0x80 != 0, OutboundEnforcementCap: d[16]&0x40 != 0,
		FilterRawInboundCap: d[16]&0x20 != 0, FilterRawOutboundCap: d[16]&0x10 != 0, EnhancedPortZero: d[16]&0x08 != 0,
	}
}

// The table attributes: one block of entries per SMP, the attribute
// modifier saying which block (IBTA Vol 1 §14.2.5.5-§14.2.5.11). Entry i
// of a block is read with these accessors; i must be below the count.
const (
	GUIDBlockEntries    = 8  // GUIDInfo: 8 GUIDs of 8 bytes
	PKeyBlockEntries    = 32 // P_KeyTable: 32 P_Keys of 2 bytes
	SLtoVLEntries       = 16 // SLtoVLMappingTable: 16 VLs of 4 bits
	VLArbEntries        = 32 // VLArbitrationTable: 32 VL/weight pairs
	LinearFDBEntries    = 64 // LinearForwardingTable: 64 ports
	RandomFDBEntries    = 16 // RandomForwardingTable: 16 entries of 4 bytes
	MulticastFDBEntries = 32 // MulticastForwardingTable: 32 port masks of 2 bytes
)

// GUID returns entry i of a GUIDInfo block.
func (d SMPData) GUID(i int) uint64 { return binary.BigEndian.Uint64(d[8*i:]) }

// PKey returns entry i of a P_KeyTable block: the membership bit (full
// member) and the 15-bit base.
func (d SMPData) PKey(i int) (full bool, base uint16) {
	p := binary.BigEndian.Uint16(d[2*i:])
	return p&0x8000 != 0, p & 0x7FFF
}

// SLtoVL returns the VL that SL sl maps to (SLtoVLMappingTable).
func (d SMPData) SLtoVL(sl int) uint8 {
	if sl%2 == 0 {
		return d[sl/2] >> 4
	}
	return d[sl/2] & 0xF
}

// VLArb returns entry i of a VLArbitrationTable block: its VL (4 bits) and weight.
func (d SMPData) VLArb(i int) (vl, weight uint8) { return d[2*i] & 0xF, d[2*i+1] }

// LinearFDBPort returns the port of LID block*64+i (LinearForwardingTable).
func (d SMPData) LinearFDBPort(i int) uint8 { return d[i] }

// RandomFDBEntry is an entry of a RandomForwardingTable block.
type RandomFDBEntry struct {
	LID   uint16
	Valid bool
	LMC   uint8 // 3 bits
	Port  uint8
}

// RandomFDB returns entry i of a RandomForwardingTable block.
func (d SMPData) RandomFDB(i int) RandomFDBEntry {
	e := d[4*i : 4*i+4]
	return RandomFDBEntry{LID: binary.BigEndian.Uint16(e), Valid: e[2]&0x80 != 0, LMC: e[2] >> 4 & 7, Port: e[3]}
}

// MulticastFDBPortMask returns entry i of a MulticastForwardingTable block.
func (d SMPData) MulticastFDBPortMask(i int) uint16 { return binary.BigEndian.Uint16(d[2*i:]) }

// LinkSpeedWidthPairs is the LinkSpeedWidthPairsTable attribute (IBTA Vol 1
// §14.2.5.21): byte 0 NumTables, 1 PortMask (32), 33 the first pair's speed bits.
type LinkSpeedWidthPairs struct {
	NumTables  uint8
	PortMask   []byte
	SpeedFlags uint8 // the byte after the port mask
}

// LinkSpeedWidthPairs decodes the data as a LinkSpeedWidthPairsTable.
func (d SMPData) LinkSpeedWidthPairs() LinkSpeedWidthPairs {
	_ = d[33]
	return LinkSpeedWidthPairs{NumTables: d[0], PortMask: d[1:33:33], SpeedFlags: d[33]}
}

// VendorDiag decodes the data as a VendorDiag attribute: the index of the
// next diagnostic block and this block's 62 bytes.
func (d SMPData) VendorDiag() (nextIndex uint16, diagData []byte) {
	return binary.BigEndian.Uint16(d[0:2]), d[2:64:64]
}

// LedMask reports the LedInfo attribute's LedMask bit.
func (d SMPData) LedMask() bool { return d[0]&0x80 != 0 }

// PortInfoCapability is a bit of PortInfo's CapabilityMask (IBTA Vol 1
// §14.2.5.6, Table 146), with the name and title Wireshark gives it.
type PortInfoCapability struct {
	Name, Title string
	Bit         uint
}

// PortInfoCapabilities are the CapabilityMask bits Wireshark names, by bit
// number.
var PortInfoCapabilities = []PortInfoCapability{
	{"issm", "SM", 1}, {"noticesupported", "NoticeSupported", 2}, {"trapsupported", "TrapSupported", 3},
	{"optionalipdsupported", "OptionalIPDSupported", 4}, {"automaticmigrationsupported", "AutomaticMigrationSupported", 5},
	{"slmappingsupported", "SLMappingSupported", 6}, {"mkeynvram", "MKeyNVRAM", 7}, {"pkeynvram", "PKeyNVRAM", 8},
	{"ledinfosupported", "LEDInfoSupported", 9}, {"smdisabled", "SMdisabled", 10},
	{"systemimageguidsupported", "SystemImageGUIDSupported", 11},
	{"pkeyswitchexternalporttrapsupported", "PKeySwitchExternalPortTrapSupported", 12},
	{"communicationmanagementsupported", "CommunicationManagementSupported", 16},
	{"snmptunnelingsupported", "SNMPTunnelingSupported", 17}, {"reinitsupported", "ReinitSupported", 18},
	{"devicemanagementsupported", "DeviceManagementSupported", 19}, {"vendorclasssupported", "VendorClassSupported", 20},
	{"drnoticesupported", "DRNoticeSupported", 21}, {"capabilitymasknoticesupported", "CapabilityMaskNoticeSupported", 22},
	{"bootmanagementsupported", "BootManagementSupported", 23},
	{"linkroundtriplatencysupported", "LinkRoundTripLatencySupported", 24},
	{"clientregistrationsupported", "ClientRegistrationSupported", 25},
	{"otherlocalchangesnoticesupported", "OtherLocalChangesNoticeSupported", 26},
	{"linkspeedwidthpairstablesupported", "LinkSpeedWIdthPairsTableSupported", 27},
}

// PortInfoNames are the names of PortInfo's coded values (IBTA Vol 1
// §14.2.5.6, Table 146) as Wireshark words them, by field; Unknown is what
// it says of a code it has no name for (its LinkSpeedSupported says
// LinkWidthSupported there).
var PortInfoNames = map[string]struct {
	Names   map[uint16]string
	Unknown string
}{
	"DiagCode": {map[uint16]string{0: "Function Ready", 1: "Performing Self Test", 2: "Initializing",
		3: "Soft Error - Function has non-fatal error", 4: "Hard Error - Function has fatal error"},
		"Reserved DiagCode! Possible Error"},
	"LinkWidthEnabled": {map[uint16]string{0: "No State Change", 1: "1x", 2: "4x", 3: "1x or 4x", 4: "8x", 5: "1x or 8x",
		6: "4x or 8x", 7: "1x or 4x or 8x", 8: "12x", 9: "1x or 12x", 10: "4x or 12x", 11: "1x or 4x or 12x",
		12: "8x or 12x", 13: "1x or 8x or 12x", 14: "4x or 8x or 12x",
		0xFF: "Set to LinkWidthSupported Value - Response contains actual LinkWidthSupported"},
		"Reserved LinkWidthEnabled Value! Possible Error"},
	"LinkWidthSupported": {map[uint16]string{1: "1x", 3: "1x or 4x", 7: "1x or 4x or 8x", 11: "1x or 4x or 12x",
		15: "1x or 4x or 8x or 12x"}, "Reserved LinkWidthSupported Value! Possible Error"},
	"LinkWidthActive": {map[uint16]string{1: "1x", 2: "4x", 4: "8x", 8: "12x"},
		"Reserved LinkWidthActive Value! Possible Error"},
	"LinkSpeedSupported": {map[uint16]string{1: "2.5 Gbps", 3: "2.5 or 5.0 Gbps", 5: "2.5 or 10.0 Gbps",
		7: "2.5 or 5.0 or 10.0 Gbps"}, "Reserved LinkWidthSupported Value! Possible Error"},
	"PortState": {map[uint16]string{0: "No State Change", 1: "Down (includes failed links)", 2: "Initialized",
		3: "Armed", 4: "Active"}, "Reserved PortState Value! Possible Error"},
	"PortPhysicalState": {map[uint16]string{0: "No State Change", 1: "Sleep", 2: "Polling", 3: "Disabled",
		4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "Phy Test"},
		"Reserved PortPhysicalState Value! Possible Error"},
	"LinkDownDefaultState": {map[uint16]string{0: "No State Change", 1: "Sleep", 2: "Polling"},
		"Reserved LinkDownDefaultState Value! Possible Error"},
	"LinkSpeedActive": {map[uint16]string{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps"},
		"Reserved LinkSpeedActive Value! Possible Error"},
	"LinkSpeedEnabled": {map[uint16]string{0: "No State Change", 1: "2.5 Gbps", 3: "2.5 or 5.0 Gbps",
		5: "2.5 or 10.0 Gbps", 7: "2.5 or 5.0 or 10.0 Gbps",
		15: "Set to LinkSpeedSupported value - response contains actual LinkSpeedSupported"},
		"Reserved LinkSpeedEnabled Value! Possible Error"},
	"NeighborMTU": {mtuNames, "Reserved NeighborMTU Value! Possible Error"},
	"VLCap": {map[uint16]string{1: "VL0", 2: "VL0, VL1", 3: "VL0 - VL3", 4: "VL0 - VL7", 5: "VL0 - VL14"},
		"Reserved VLCap Value! Possible Error"},
	"MTUCap": {mtuNames, "Reserved MTUCap Value! Possible Error"},
	"OperationalVLs": {map[uint16]string{0: "No State Change", 1: "VL0", 2: "VL0, VL1", 3: "VL0 - VL3",
		4: "VL0 - VL7", 5: "VL0 - VL14"}, "Reserved OperationalVLs Value! Possible Error"},
}

var mtuNames = map[uint16]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
