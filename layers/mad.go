package layers

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/google/gopacket"
)

// Sizes of a management datagram.
const (
	MADLength       = 256 // every MAD is exactly 256 bytes (IBTA Vol 1 §13.4.2)
	MADHeaderLength = 24  // the common MAD header
	MADDataLength   = MADLength - MADHeaderLength
)

// MgmtClass is the MAD management class (IBTA Vol 1 Table 114).
type MgmtClass uint8

// Management classes ibwire decodes or names.
const (
	MgmtClassSubnLID      MgmtClass = 0x01 // subnet management, LID-routed SMP
	MgmtClassSubnAdm      MgmtClass = 0x03 // subnet administration (SA)
	MgmtClassPerf         MgmtClass = 0x04 // performance management
	MgmtClassBM           MgmtClass = 0x05 // baseboard management
	MgmtClassDevMgt       MgmtClass = 0x06 // device management
	MgmtClassCM           MgmtClass = 0x07 // communication management
	MgmtClassSNMP         MgmtClass = 0x08 // SNMP tunnelling
	MgmtClassSubnDirected MgmtClass = 0x81 // subnet management, directed-route SMP
)

// String names the class ("SubnAdm", "CM", ...).
func (c MgmtClass) String() string {
	switch c {
	case MgmtClassSubnLID:
		return "SubnMgt(LID routed)"
	case MgmtClassSubnAdm:
		return "SubnAdm"
	case MgmtClassPerf:
		return "PerfMgt"
	case MgmtClassBM:
		return "BM"
	case MgmtClassDevMgt:
		return "DevMgt"
	case MgmtClassCM:
		return "CM"
	case MgmtClassSNMP:
		return "SNMP"
	case MgmtClassSubnDirected:
		return "SubnMgt(Directed Route)"
	}
	switch {
	case c >= 0x09 && c <= 0x0F, c >= 0x30 && c <= 0x4F:
		return fmt.Sprintf("Vendor(0x%02x)", uint8(c))
	case c >= 0x10 && c <= 0x2F:
		return fmt.Sprintf("Application(0x%02x)", uint8(c))
	}
	return fmt.Sprintf("Reserved(0x%02x)", uint8(c))
}

// MADMethod is the MAD method byte: bit 7 marks a response.
type MADMethod uint8

// Common MAD methods (IBTA Vol 1 Table 115, SA Table 187).
const (
	MethodGet          MADMethod = 0x01
	MethodSet          MADMethod = 0x02
	MethodSend         MADMethod = 0x03
	MethodTrap         MADMethod = 0x05
	MethodReport       MADMethod = 0x06
	MethodTrapRepress  MADMethod = 0x07
	MethodGetTable     MADMethod = 0x12
	MethodGetTraceTbl  MADMethod = 0x13
	MethodGetMulti     MADMethod = 0x14
	MethodDelete       MADMethod = 0x15
	MethodGetResp      MADMethod = 0x81
	MethodReportResp   MADMethod = 0x86
	MethodGetTableResp MADMethod = 0x92
	MethodGetMultiResp MADMethod = 0x94
	MethodDeleteResp   MADMethod = 0x95
)

var madMethodNames = map[MADMethod]string{
	MethodGet: "Get", MethodSet: "Set", MethodSend: "Send", MethodTrap: "Trap", MethodReport: "Report",
	MethodTrapRepress: "TrapRepress", MethodGetTable: "GetTable", MethodGetTraceTbl: "GetTraceTable",
	MethodGetMulti: "GetMulti", MethodDelete: "Delete", MethodGetResp: "GetResp", MethodReportResp: "ReportResp",
	MethodGetTableResp: "GetTableResp", MethodGetMultiResp: "GetMultiResp", MethodDeleteResp: "DeleteResp",
}

// String names the method ("Get", "GetResp", ...).
func (m MADMethod) String() string {
	if s, ok := madMethodNames[m]; ok {
		return s
	}
	return fmt.Sprintf("Unknown(0x%02x)", uint8(m))
}

// madMethodCalls are the methods as IBTA's text writes them, called
// ("Get()", "GetResp()"), as Wireshark names them.
var madMethodCalls = func() map[MADMethod]string {
	m := make(map[MADMethod]string, len(madMethodNames))
	for k, v := range madMethodNames {
		m[k] = v + "()"
	}
	return m
}()

// MADMethodName names a known method as a call ("Send()"); false for
// others.
func MADMethodName(m MADMethod) (string, bool) {
	s, ok := madMethodCalls[m]
	return s, ok
}

// IsResponse reports bit 7 (R) of the method.
func (m MADMethod) IsResponse() bool { return m&0x80 != 0 }

// MAD is a management datagram (IBTA Vol 1 §13.4): the common 24-byte header
// and a class-specific body, carried by UD packets to or from QP0 (subnet
// management) and QP1 (general services: SA, PerfMgt, CM).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  |   MgmtClass   | ClassVersion  |R|  Method     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           Status              |        ClassSpecific          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     TransactionID (64)                        |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         AttributeID           |           Reserved            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     AttributeModifier                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  class-specific data (232 bytes)              |
//
// Like the BTH, the MAD decodes its class body itself, into the fields below,
// because only the header says what the body is; MAD.DecodingLayers lists
// them for a DecodingLayerParser.
type MAD struct {
	Contents []byte // the 24-byte header
	Payload  []byte // the class-specific data

	BaseVersion       uint8
	MgmtClass         MgmtClass
	ClassVersion      uint8
	Method            MADMethod
	Status            uint16
	ClassSpecific     uint16
	TransactionID     uint64
	AttributeID       uint16
	Reserved          uint16
	AttributeModifier uint32

	// Class bodies; the one named by MgmtClass is valid.
	SMP         SMP
	SMPDirected SMPDirected
	SA          SA
	PerfMgt     PerfMgt
	CM          CM

	next gopacket.LayerType
}

var madFields = []FieldSpan{{"BaseVersion", 0, 1}, {"MgmtClass", 1, 1}, {"ClassVersion", 2, 1}, {"Method", 3, 1},
	{"Status", 4, 2}, {"ClassSpecific", 6, 2}, {"TransactionID", 8, 8}, {"AttributeID", 16, 2},
	{"Reserved", 18, 2}, {"AttributeModifier", 20, 4}}

// ReservedBytes returns the header's reserved bytes (18-19) as a slice of
// the header.
func (m *MAD) ReservedBytes() []byte {
	if len(m.Contents) < 20 {
		return nil
	}
	return m.Contents[18:20]
}

// LayerType returns LayerTypeMAD.
func (m *MAD) LayerType() gopacket.LayerType { return LayerTypeMAD }

// CanDecode returns LayerTypeMAD.
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }

// LayerContents returns the common header.
func (m *MAD) LayerContents() []byte { return m.Contents }

// LayerPayload returns the class-specific data.
func (m *MAD) LayerPayload() []byte { return m.Payload }

// NextLayerType returns the class body's layer type, or payload for classes
// ibwire does not decode.
func (m *MAD) NextLayerType() gopacket.LayerType { return m.next }

// DecodingLayers returns the MAD and its class bodies for a DecodingLayerParser.
func (m *MAD) DecodingLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{m, &m.SMP, &m.SMPDirected, &m.SA, &m.PerfMgt, &m.CM}
}

// classBody returns the embedded body that decodes class c, or nil.
func (m *MAD) classBody(c MgmtClass) madClassBody {
	switch c {
	case MgmtClassSubnLID:
		return &m.SMP
	case MgmtClassSubnDirected:
		return &m.SMPDirected
	case MgmtClassSubnAdm:
		return &m.SA
	case MgmtClassPerf:
		return &m.PerfMgt
	case MgmtClassCM:
		return &m.CM
	}
	return nil
}

// madClassBody is what each class body implements: a layer that learns the
// header fields it depends on (attribute, method) before it decodes.
type madClassBody interface {
	gopacket.DecodingLayer
	gopacket.Layer
	setHeader(h *MAD)
}

// DecodeFromBytes decodes the header and the class body. A MAD shorter than
// 256 bytes is reported as truncated at the field where it ends.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < MADHeaderLength {
		df.SetTruncated()
		m.Contents, m.Payload, m.next = nil, nil, gopacket.LayerTypeZero
		return checkLength("MAD", madFields, len(data))
	}
	m.BaseVersion = data[0]
	m.MgmtClass = MgmtClass(data[1])
	m.ClassVersion = data[2]
	m.Method = MADMethod(data[3])
	m.Status = binary.BigEndian.Uint16(data[4:6])
	m.ClassSpecific = binary.BigEndian.Uint16(data[6:8])
	m.TransactionID = binary.BigEndian.Uint64(data[8:16])
	m.AttributeID = binary.BigEndian.Uint16(data[16:18])
	m.Reserved = binary.BigEndian.Uint16(data[18:20])
	m.AttributeModifier = binary.BigEndian.Uint32(data[20:24])
	m.Contents = data[:MADHeaderLength:MADHeaderLength]
	m.Payload = data[MADHeaderLength:]
	m.next = gopacket.LayerTypePayload
	if body := m.classBody(m.MgmtClass); body != nil {
		body.setHeader(m)
		if err := body.DecodeFromBytes(m.Payload, df); err != nil {
			if de, ok := err.(*DecodeError); ok {
				// Offsets count from the start of the MAD, whose
				// bytes the caller handed over.
				de.Offset += MADHeaderLength
				if de.Detail == "" {
					de.Detail = "offset counted from the start of the MAD"
				}
			}
			return err
		}
		m.next = body.LayerType()
	}
	return nil
}

// SerializeTo prepends the common header; the class body is its own layer
// (see SerializableLayers).
func (m *MAD) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(MADHeaderLength)
	if err != nil {
		return err
	}
	h[0], h[1], h[2], h[3] = m.BaseVersion, uint8(m.MgmtClass), m.ClassVersion, uint8(m.Method)
	binary.BigEndian.PutUint16(h[4:6], m.Status)
	binary.BigEndian.PutUint16(h[6:8], m.ClassSpecific)
	binary.BigEndian.PutUint64(h[8:16], m.TransactionID)
	binary.BigEndian.PutUint16(h[16:18], m.AttributeID)
	binary.BigEndian.PutUint16(h[18:20], m.Reserved)
	binary.BigEndian.PutUint32(h[20:24], m.AttributeModifier)
	return nil
}

// addMADLayers adds a MAD and its class body to a packet being built.
func addMADLayers(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	if body := m.classBody(m.MgmtClass); body != nil {
		p.AddLayer(body)
		return nil
	}
	pl := gopacket.Payload(m.Payload)
	p.AddLayer(&pl)
	p.SetApplicationLayer(&pl)
	return nil
}

func decodeMADPacket(data []byte, p gopacket.PacketBuilder) error { return addMADLayers(data, p) }

// NewMAD returns a MAD of class c with the common header filled in for a
// request (BaseVersion 1, the class version ibwire speaks for c) and its
// class body told the header: set the body's fields, then serialize
// SerializableLayers().
func NewMAD(c MgmtClass, method MADMethod, attr uint16, tid uint64) *MAD {
	m := &MAD{BaseVersion: 1, MgmtClass: c, ClassVersion: 1, Method: method, AttributeID: attr, TransactionID: tid}
	switch c {
	case MgmtClassSubnAdm:
		m.ClassVersion = 2 // SA class version of IBTA 1.2
	case MgmtClassCM:
		m.ClassVersion = 2 // CM class version of IBTA 1.2
	}
	if body := m.classBody(c); body != nil {
		body.setHeader(m)
	}
	return m
}

// NewCMMAD returns a CM MAD (method Send, class version 2) carrying message
// attr; fill in the matching field of m.CM (REQ, REP, RTU ...).
func NewCMMAD(attr CMAttribute, tid uint64) *MAD {
	return NewMAD(MgmtClassCM, MethodSend, uint16(attr), tid)
}

// SerializableLayers returns the MAD header and its class body (or its raw
// payload for classes ibwire does not decode), for gopacket.SerializeLayers.
// It first tells the body the header fields it depends on, so a body is
// always serialized for the header it travels with.
func (m *MAD) SerializableLayers() []gopacket.SerializableLayer {
	if body := m.classBody(m.MgmtClass); body != nil {
		body.setHeader(m)
		if s, ok := body.(gopacket.SerializableLayer); ok {
			return []gopacket.SerializableLayer{m, s}
		}
	}
	return []gopacket.SerializableLayer{m, gopacket.Payload(m.Payload)}
}

// Bytes serializes the MAD (header and class body) into a new 256-byte slice.
func (m *MAD) Bytes() ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, m.SerializableLayers()...); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Info returns the summary Wireshark puts in its Info column for the MAD,
// e.g. "SubnGet(SMInfo)", "SubnAdmGetResp(PathRecord)", "CM: ConnectRequest".
func (m *MAD) Info() string {
	switch m.MgmtClass {
	case MgmtClassSubnLID, MgmtClassSubnDirected:
		return "Subn" + smMethodName(m.Method) + "(" + SMPAttribute(m.AttributeID).String() + ")"
	case MgmtClassSubnAdm:
		return "SubnAdm" + m.Method.String() + "(" + SAAttribute(m.AttributeID).String() + ")"
	case MgmtClassPerf:
		return "PERF (" + PerfAttribute(m.AttributeID).String() + ")"
	case MgmtClassCM:
		return "CM: " + CMAttribute(m.AttributeID).String()
	}
	return m.MgmtClass.String() + " " + m.Method.String()
}

// AppendInfo appends what Info returns, allocating nothing for the
// classes whose names are constants (SMPs with a known attribute).
func (m *MAD) AppendInfo(buf []byte) []byte {
	if m.MgmtClass == MgmtClassSubnLID || m.MgmtClass == MgmtClassSubnDirected {
		buf = append(buf, "Subn"...)
		buf = append(buf, smMethodName(m.Method)...)
		buf = append(buf, '(')
		buf = append(buf, SMPAttribute(m.AttributeID).String()...)
		return append(buf, ')')
	}
	if m.MgmtClass == MgmtClassSubnAdm {
		buf = append(buf, "SubnAdm"...)
		buf = append(buf, m.Method.String()...)
		buf = append(buf, '(')
		buf = append(buf, SAAttribute(m.AttributeID).String()...)
		return append(buf, ')')
	}
	return append(buf, m.Info()...)
}

// smMethodName names subnet-management methods as Wireshark does (it calls
// TrapRepress "TrapResp").
func smMethodName(m MADMethod) string {
	if m == MethodTrapRepress {
		return "TrapResp"
	}
	return m.String()
}

// madBody is what every class body shares: the 232 bytes after the common
// header. A body is the last layer of a MAD: it has no payload.
type madBody struct {
	Contents []byte // the class-specific data (232 bytes)
}

// LayerContents returns the class-specific data.
func (b *madBody) LayerContents() []byte { return b.Contents }

// LayerPayload returns nil: the class body ends the MAD.
func (b *madBody) LayerPayload() []byte { return nil }

// NextLayerType returns gopacket.LayerTypeZero: nothing follows a class body.
func (b *madBody) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// split checks that data holds a whole class body, reporting the first field
// of spans that does not fit, and keeps its 232 bytes.
func (b *madBody) split(layer string, spans []FieldSpan, data []byte, df gopacket.DecodeFeedback) ([]byte, error) {
	if len(data) < MADDataLength {
		df.SetTruncated()
		b.Contents = nil
		if err := checkLength(layer, spans, len(data)); err != nil {
			return nil, err
		}
		return nil, &DecodeError{Layer: layer, Field: "Data", Need: MADDataLength, Have: len(data), Err: ErrTruncated}
	}
	b.Contents = data[:MADDataLength:MADDataLength]
	return b.Contents, nil
}

// prependBody reserves the 232 bytes of a class body, zeroed (a reused
// SerializeBuffer hands back old bytes).
func prependBody(b gopacket.SerializeBuffer) ([]byte, error) {
	buf, err := b.PrependBytes(MADDataLength)
	if err != nil {
		return nil, err
	}
	clear(buf)
	return buf, nil
}

// putBytes copies src into the region dst, which it must fit.
func putBytes(layer, field string, dst, src []byte) error {
	if len(src) > len(dst) {
		return fmt.Errorf("%s: %s is %d bytes, the field holds %d", layer, field, len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// put24 writes the low 24 bits of v big-endian into b[0:3].
func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// get24 reads 24 bits big-endian from b[0:3].
func get24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// bit returns 1 for true.
func bit(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// gid16 returns the 16-byte form of a GID or IP address for the wire (zero
// for nil or malformed).
func gid16(ip net.IP) []byte {
	if len(ip) == net.IPv6len {
		return ip
	}
	return ip.To16()
}

// enumName returns names[v], or fallback(v) when v has no name.
func enumName(names []string, v uint, fallback string) string {
	if v < uint(len(names)) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", fallback, v)
}
