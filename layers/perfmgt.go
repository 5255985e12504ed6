package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
)

// Sizes of the PerfMgt body.
const (
	PerfMgtReservedLength = 40
	PerfMgtDataLength     = 192
)

// PerfMgt is the body of a performance management MAD, management class
// 0x04 (IBTA Vol 1 §16.1): 40 reserved bytes, then 192 bytes of attribute
// data. Offsets count from the start of the MAD.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            common MAD header (24 bytes, see MAD)              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Reserved (40 bytes)                 24   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 PerfMgt attribute data (192 bytes)       64   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// AttributeID, AttributeModifier and Method are copies of the MAD header's;
// PortCounters and PortCountersExtended decode Data when the attribute matches.
type PerfMgt struct {
	madBody

	AttributeID       PerfAttribute // from the MAD header
	AttributeModifier uint32        // from the MAD header
	Method            MADMethod     // from the MAD header

	Reserved []byte // 40 bytes
	Data     []byte // 192 bytes
}

var perfMgtFields = []FieldSpan{{"Reserved", 0, PerfMgtReservedLength}, {"Data", PerfMgtReservedLength, PerfMgtDataLength}}

// LayerType returns LayerTypePerfMgt.
func (p *PerfMgt) LayerType() gopacket.LayerType { return LayerTypePerfMgt }

// CanDecode returns LayerTypePerfMgt.
func (p *PerfMgt) CanDecode() gopacket.LayerClass { return LayerTypePerfMgt }

func (p *PerfMgt) setHeader(h *MAD) {
	p.AttributeID, p.AttributeModifier, p.Method = PerfAttribute(h.AttributeID), h.AttributeModifier, h.Method
}

// DecodeFromBytes decodes the 232 bytes after the MAD header.
func (p *PerfMgt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	p.Reserved, p.Data = nil, nil
	d, err := p.split("PerfMgt", perfMgtFields, data, df)
	if err != nil {
		return err
	}
	p.Reserved = d[:PerfMgtReservedLength:PerfMgtReservedLength]
	p.Data = d[PerfMgtReservedLength:MADDataLength:MADDataLength]
	return nil
}

// SerializeTo prepends the 232 body bytes.
func (p *PerfMgt) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := prependBody(b)
	if err != nil {
		return err
	}
	if err := putBytes("perfmgt", "Reserved", d[:PerfMgtReservedLength], p.Reserved); err != nil {
		return err
	}
	return putBytes("perfmgt", "Data", d[PerfMgtReservedLength:], p.Data)
}

// PortCounters returns the PortCounters attribute the MAD carries.
func (p *PerfMgt) PortCounters() (PortCounters, bool) {
	if p.AttributeID != PerfAttrPortCounters || len(p.Data) < PortCountersLength {
		return PortCounters{}, false
	}
	return DecodePortCounters(p.Data), true
}

// PortCountersExtended returns the PortCountersExtended attribute the MAD carries.
func (p *PerfMgt) PortCountersExtended() (PortCountersExtended, bool) {
	if p.AttributeID != PerfAttrPortCountersExtended || len(p.Data) < PortCountersExtendedLength {
		return PortCountersExtended{}, false
	}
	return DecodePortCountersExtended(p.Data), true
}

// PerfAttribute is the AttributeID of a performance management MAD (IBTA
// Vol 1 §16.1).
type PerfAttribute uint16

// Performance management attributes.
const (
	PerfAttrClassPortInfo                 PerfAttribute = 0x0001
	PerfAttrPortSamplesControl            PerfAttribute = 0x0010
	PerfAttrPortSamplesResult             PerfAttribute = 0x0011
	PerfAttrPortCounters                  PerfAttribute = 0x0012
	PerfAttrPortRcvErrorDetails           PerfAttribute = 0x0015
	PerfAttrPortXmitDiscardDetails        PerfAttribute = 0x0016
	PerfAttrPortOpRcvCounters             PerfAttribute = 0x0017
	PerfAttrPortFlowCtlCounters           PerfAttribute = 0x0018
	PerfAttrPortVLOpPackets               PerfAttribute = 0x0019
	PerfAttrPortVLOpData                  PerfAttribute = 0x001A
	PerfAttrPortVLXmitFlowCtlUpdateErrors PerfAttribute = 0x001B
	PerfAttrPortVLXmitWaitCounters        PerfAttribute = 0x001C
	PerfAttrPortCountersExtended          PerfAttribute = 0x001D
	PerfAttrPortSamplesResultExtended     PerfAttribute = 0x001E
	PerfAttrSwPortVLCongestion            PerfAttribute = 0x0030
)

var perfAttrNames = map[PerfAttribute]string{
	PerfAttrClassPortInfo: "ClassPortInfo", PerfAttrPortSamplesControl: "PortSamplesControl",
	PerfAttrPortSamplesResult: "PortSamplesResult", PerfAttrPortCounters: "PortCounters",
	PerfAttrPortRcvErrorDetails: "PortRcvErrorDetails", PerfAttrPortXmitDiscardDetails: "PortXmitDiscardDetails",
	PerfAttrPortOpRcvCounters: "PortOpRcvCounters", PerfAttrPortFlowCtlCounters: "PortFlowCtlCounters",
	PerfAttrPortVLOpPackets: "PortVLOpPackets", PerfAttrPortVLOpData: "PortVLOpData",
	PerfAttrPortVLXmitFlowCtlUpdateErrors: "PortVLXmitFlowCtlUpdateErrors",
	PerfAttrPortVLXmitWaitCounters:        "PortVLXmitWaitCounters", PerfAttrPortCountersExtended: "PortCountersExtended",
	PerfAttrPortSamplesResultExtended: "PortSamplesResultExtended", PerfAttrSwPortVLCongestion: "SwPortVLCongestion",
}

// String names the attribute ("PortCounters", ...).
func (a PerfAttribute) String() string {
	if n, ok := perfAttrNames[a]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(0x%04x)", uint16(a))
}

// Sizes of the counter attributes.
const (
	PortCountersLength         = 44
	PortCountersExtendedLength = 72
)

// PortCounters is the PortCounters attribute (IBTA Vol 1 §16.1.3), at the
// start of the PerfMgt data.
//
//	byte 0 reserved, 1 PortSelect, 2 CounterSelect, 4 SymbolErrorCounter,
//	6 LinkErrorRecoveryCounter, 7 LinkDownedCounter, 8 PortRcvErrors,
//	10 PortRcvRemotePhysicalErrors, 12 PortRcvSwitchRelayErrors,
//	14 PortXmitDiscards, 16 PortXmitConstraintErrors, 17 PortRcvConstraintErrors,
//	18 CounterSelect2 (reserved before IBTA 1.2.1),
//	19 LocalLinkIntegrityErrors(4)/ExcessiveBufferOverrunErrors(4),
//	20 reserved (2), 22 VL15Dropped, 24 PortXmitData (4), 28 PortRcvData,
//	32 PortXmitPkts, 36 PortRcvPkts, 40 PortXmitWait
type PortCounters struct {
	Reserved0                    uint8
	PortSelect                   uint8
	CounterSelect                uint16
	SymbolErrorCounter           uint16
	LinkErrorRecoveryCounter     uint8
	LinkDownedCounter            uint8
	PortRcvErrors                uint16
	PortRcvRemotePhysicalErrors  uint16
	PortRcvSwitchRelayErrors     uint16
	PortXmitDiscards             uint16
	PortXmitConstraintErrors     uint8
	PortRcvConstraintErrors      uint8
	CounterSelect2               uint8
	LocalLinkIntegrityErrors     uint8 // 4 bits
	ExcessiveBufferOverrunErrors uint8 // 4 bits
	Reserved20                   uint16
	VL15Dropped                  uint16
	PortXmitData                 uint32 // in 4-byte words
	PortRcvData                  uint32 // in 4-byte words
	PortXmitPkts                 uint32
	PortRcvPkts                  uint32
	PortXmitWait                 uint32
}

// DecodePortCounters decodes PortCounters from the first 44 bytes of d.
func DecodePortCounters(d []byte) PortCounters {
	_ = d[PortCountersLength-1]
	be := binary.BigEndian
	return PortCounters{
		Reserved0: d[0], PortSelect: d[1], CounterSelect: be.Uint16(d[2:4]), SymbolErrorCounter: be.Uint16(d[4:6]),
		LinkErrorRecoveryCounter: d[6], LinkDownedCounter: d[7], PortRcvErrors: be.Uint16(d[8:10]),
		PortRcvRemotePhysicalErrors: be.Uint16(d[10:12]), PortRcvSwitchRelayErrors: be.Uint16(d[12:14]),
		PortXmitDiscards: be.Uint16(d[14:16]), PortXmitConstraintErrors: d[16], PortRcvConstraintErrors: d[17],
		CounterSelect2: d[18], LocalLinkIntegrityErrors: d[19] >> 4, ExcessiveBufferOverrunErrors: d[19] & 0xF,
		Reserved20: be.Uint16(d[20:22]), VL15Dropped: be.Uint16(d[22:24]),
		PortXmitData: be.Uint32(d[24:28]), PortRcvData: be.Uint32(d[28:32]),
		PortXmitPkts: be.Uint32(d[32:36]), PortRcvPkts: be.Uint32(d[36:40]), PortXmitWait: be.Uint32(d[40:44]),
	}
}

// MarshalTo writes the counters into the first 44 bytes of d.
func (c *PortCounters) MarshalTo(d []byte) error {
	if len(d) < PortCountersLength {
		return fmt.Errorf("perfmgt: PortCounters needs %d bytes, have %d", PortCountersLength, len(d))
	}
	be := binary.BigEndian
	d[0], d[1] = c.Reserved0, c.PortSelect
	be.PutUint16(d[2:4], c.CounterSelect)
	be.PutUint16(d[4:6], c.SymbolErrorCounter)
	d[6], d[7] = c.LinkErrorRecoveryCounter, c.LinkDownedCounter
	be.PutUint16(d[8:10], c.PortRcvErrors)
	be.PutUint16(d[10:12], c.PortRcvRemotePhysicalErrors)
	be.PutUint16(d[12:14], c.PortRcvSwitchRelayErrors)
	be.PutUint16(d[14:16], c.PortXmitDiscards)
	d[16], d[17], d[18] = c.PortXmitConstraintErrors, c.PortRcvConstraintErrors, c.CounterSelect2
	d[19] = c.LocalLinkIntegrityErrors<<4 | c.ExcessiveBufferOverrunErrors&0xF
	be.PutUint16(d[20:22], c.Reserved20)
	be.PutUint16(d[22:24], c.VL15Dropped)
	for i, v := range [...]uint32{c.PortXmitData, c.PortRcvData, c.PortXmitPkts, c.PortRcvPkts, c.PortXmitWait} {
		be.PutUint32(d[24+4*i:], v)
	}
	return nil
}

// PortCountersExtended is the PortCountersExtended attribute (IBTA Vol 1
// §16.1.4): 64-bit data and packet counters.
//
//	byte 0 reserved, 1 PortSelect, 2 CounterSelect, 4 reserved (4),
//	8 PortXmitData (8), 16 PortRcvData, 24 PortXmitPkts, 32 PortRcvPkts,
//	40 PortUnicastXmitPkts, 48 PortUnicastRcvPkts,
//	56 PortMulticastXmitPkts, 64 PortMulticastRcvPkts
type PortCountersExtended struct {
	Reserved0             uint8
	PortSelect            uint8
	CounterSelect         uint16
	Reserved4             uint32
	PortXmitData          uint64 // in 4-byte words
	PortRcvData           uint64 // in 4-byte words
	PortXmitPkts          uint64
	PortRcvPkts           uint64
	PortUnicastXmitPkts   uint64
	PortUnicastRcvPkts    uint64
	PortMulticastXmitPkts uint64
	PortMulticastRcvPkts  uint64
}

// portCountersReserved and portCountersExtendedReserved are the reserved
// bytes of PortCounters (byte 18 is CounterSelect2 since IBTA 1.2; Wireshark
// still calls it reserved) and PortCountersExtended, in wire order.
var (
	portCountersReserved         = []FieldSpan{{"Reserved0", 0, 1}, {"CounterSelect2", 18, 1}, {"Reserved20", 20, 2}}
	portCountersExtendedReserved = []FieldSpan{{"Reserved0", 0, 1}, {"Reserved4", 4, 4}}
)

// PortCountersReservedBytes returns reserved span i of PortCounters data d
// (or of PortCountersExtended data, when extended) as a slice of d; nil
// past the last.
func PortCountersReservedBytes(d []byte, extended bool, i int) []byte {
	spans := portCountersReserved
	if extended {
		spans = portCountersExtendedReserved
	}
	if i >= len(spans) || len(d) < spans[i].Offset+spans[i].Size {
		return nil
	}
	return d[spans[i].Offset : spans[i].Offset+spans[i].Size]
}

// DecodePortCountersExtended decodes PortCountersExtended from the first 72 bytes of d.
func DecodePortCountersExtended(d []byte) PortCountersExtended {
	_ = d[PortCountersExtendedLength-1]
	be := binary.BigEndian
	u := func(i int) uint64 { return be.Uint64(d[8+8*i:]) }
	return PortCountersExtended{
		Reserved0: d[0], PortSelect: d[1], CounterSelect: be.Uint16(d[2:4]), Reserved4: be.Uint32(d[4:8]),
		PortXmitData: u(0), PortRcvData: u(1), PortXmitPkts: u(2), PortRcvPkts: u(3),
		PortUnicastXmitPkts: u(4), PortUnicastRcvPkts: u(5), PortMulticastXmitPkts: u(6), PortMulticastRcvPkts: u(7),
	}
}

// MarshalTo writes the counters into the first 72 bytes of d.
func (c *PortCountersExtended) MarshalTo(d []byte) error {
	if len(d) < PortCountersExtendedLength {
		return fmt.Errorf("perfmgt: PortCountersExtended needs %d bytes, have %d", PortCountersExtendedLength, len(d))
	}
	be := binary.BigEndian
	d[0], d[1] = c.Reserved0, c.PortSelect
	be.PutUint16(d[2:4], c.CounterSelect)
	be.PutUint32(d[4:8], c.Reserved4)
	for i, v := range [...]uint64{c.PortXmitData, c.PortRcvData, c.PortXmitPkts, c.PortRcvPkts,
		c.PortUnicastXmitPkts, c.PortUnicastRcvPkts, c.PortMulticastXmitPkts, c.PortMulticastRcvPkts} {
		be.PutUint64(d[8+8*i:], v)
	}
	return nil
}
