package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// EthernetTypeMACControl is the ethertype of IEEE 802.3 MAC Control frames
// (802.3 Clause 31): 802.3x PAUSE, 802.1Qbb Priority Flow Control and the
// EPON MPCP messages. gopacket v1.1.19 has no layer for it.
const EthernetTypeMACControl gplayers.EthernetType = 0x8808

// MACControlDst is the destination of PAUSE and PFC frames: the reserved
// multicast address no bridge forwards (802.3 Annex 31B.1).
var MACControlDst = [6]byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// MACControlOpcode is the first field of a MAC Control frame.
type MACControlOpcode uint16

// MAC Control opcodes (802.3 Annex 31A). Gate to RegisterAck are EPON's
// multi-point control protocol (802.3 Clause 64).
const (
	MACControlPause       MACControlOpcode = 0x0001 // 802.3x PAUSE (Annex 31B)
	MACControlGate        MACControlOpcode = 0x0002
	MACControlReport      MACControlOpcode = 0x0003
	MACControlRegisterReq MACControlOpcode = 0x0004
	MACControlRegister    MACControlOpcode = 0x0005
	MACControlRegisterAck MACControlOpcode = 0x0006
	MACControlPFC         MACControlOpcode = 0x0101 // 802.1Qbb Priority-based Flow Control (Annex 31D)
)

// macControlOpcodeNames are Wireshark's names (packet-maccontrol.c), which
// the -V tree and the summary print.
var macControlOpcodeNames = map[MACControlOpcode]string{
	MACControlPause: "Pause", MACControlGate: "Gate", MACControlReport: "Report",
	MACControlRegisterReq: "Register Req", MACControlRegister: "Register", MACControlRegisterAck: "Register Ack",
	MACControlPFC: "Class Based Flow Control [CBFC] Pause",
}

// Name returns Wireshark's name of the opcode and whether it has one.
func (o MACControlOpcode) Name() (string, bool) {
	n, ok := macControlOpcodeNames[o]
	return n, ok
}

// String returns Wireshark's name, or Unknown(0x....).
func (o MACControlOpcode) String() string {
	if n, ok := macControlOpcodeNames[o]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(0x%04x)", uint16(o))
}

// paramLength is the bytes of parameters the opcode's fields take (those
// ibwire decodes: an MPCP message's timestamp only).
func (o MACControlOpcode) paramLength() int {
	switch {
	case o == MACControlPause:
		return 2
	case o == MACControlPFC:
		return 2 + 2*PFCPriorities
	case o >= MACControlGate && o <= MACControlRegisterAck:
		return 4
	}
	return 0
}

// PFCPriorities is the number of priorities (traffic classes) a PFC frame
// carries a pause time for.
const PFCPriorities = 8

// PauseQuantumBits is the length of one pause quantum in bit times (802.3
// Annex 31B.2): a pause time of q lasts q*512 bit times at the link's speed.
const PauseQuantumBits = 512

var (
	macControlFields = []FieldSpan{{"Opcode", 0, 2}}
	pauseFields      = []FieldSpan{{"Opcode", 0, 2}, {"PauseTime", 2, 2}}
	pfcFields        = []FieldSpan{{"Opcode", 0, 2}, {"ClassEnableVector", 2, 2},
		{"PauseTime0", 4, 2}, {"PauseTime1", 6, 2}, {"PauseTime2", 8, 2}, {"PauseTime3", 10, 2},
		{"PauseTime4", 12, 2}, {"PauseTime5", 14, 2}, {"PauseTime6", 16, 2}, {"PauseTime7", 18, 2}}
	mpcpFields = []FieldSpan{{"Opcode", 0, 2}, {"Timestamp", 2, 4}}
)

// macControlAllFields is every opcode's fields in one table, by which
// Parser.FieldBytes places any of them (the parameters overlap: a PAUSE's
// time and a PFC frame's vector are both bytes 2-3).
// The class bits C0-C7 are the vector's low byte.
var macControlAllFields = append(append([]FieldSpan{}, pfcFields...), FieldSpan{"PauseTime", 2, 2}, FieldSpan{"Timestamp", 2, 4},
	FieldSpan{"ClassEnableBits", 3, 1})

// macControlSpans lists the fields of a MAC Control frame with opcode o.
func macControlSpans(o MACControlOpcode) []FieldSpan {
	switch {
	case o == MACControlPause:
		return pauseFields
	case o == MACControlPFC:
		return pfcFields
	case o >= MACControlGate && o <= MACControlRegisterAck:
		return mpcpFields
	}
	return macControlFields
}

// MACControl is a MAC Control frame's body, after the Ethernet (or 802.1Q)
// header whose ethertype is 0x8808. All fields are big-endian.
//
// 802.3x PAUSE (802.3 Annex 31B): the sender asks its link partner to stop
// sending any frame for PauseTime quanta; 0 lets it resume at once.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-------------------------------+-------------------------------+
//	|        opcode (0x0001)        |          pause_time           |
//	+-------------------------------+-------------------------------+
//	|                   reserved (zero) to 46 bytes                 |
//
// Priority-based Flow Control (IEEE 802.1Qbb, 802.3 Annex 31D): the same,
// per priority: bit i of the class-enable vector says time[i] applies to
// priority i (the upper 8 bits are reserved, zero).
//
//	+-------------------------------+-------------------------------+
//	|        opcode (0x0101)        |   class-enable vector         |
//	+-------------------------------+-------------------------------+
//	|            time[0]            |            time[1]            |
//	+-------------------------------+-------------------------------+
//	|            time[2] ...                        time[7]         |
//	+-------------------------------+-------------------------------+
//
// A frame cut inside its parameters keeps the fields that fit (the Has
// methods say which); DecodeFromBytes then reports the truncation.
type MACControl struct {
	gplayers.BaseLayer
	Opcode MACControlOpcode
	// PauseTime is the 802.3x PAUSE time in quanta.
	PauseTime uint16
	// ClassEnableVector has bit i set when PauseTimes[i] applies (PFC).
	ClassEnableVector uint16
	// PauseTimes are PFC's per-priority pause times in quanta.
	PauseTimes [PFCPriorities]uint16
	// Timestamp is an MPCP message's timestamp (EPON, 16 ns units).
	Timestamp uint32
	// Params holds the parameter bytes decoded (fewer than the opcode's
	// when the frame was cut).
	Params []byte
}

// LayerType returns LayerTypeMACControl.
func (m *MACControl) LayerType() gopacket.LayerType { return LayerTypeMACControl }

// CanDecode returns LayerTypeMACControl.
func (m *MACControl) CanDecode() gopacket.LayerClass { return LayerTypeMACControl }

// NextLayerType returns LayerTypeZero: what follows the parameters is
// padding to the minimum frame size.
func (m *MACControl) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// HasPauseTime reports an 802.3x PAUSE whose pause time was captured.
func (m *MACControl) HasPauseTime() bool { return m.Opcode == MACControlPause && len(m.Params) >= 2 }

// HasClassEnableVector reports a PFC frame whose class-enable vector was captured.
func (m *MACControl) HasClassEnableVector() bool {
	return m.Opcode == MACControlPFC && len(m.Params) >= 2
}

// HasPauseTimeOf reports a PFC frame whose pause time of priority prio was captured.
func (m *MACControl) HasPauseTimeOf(prio int) bool {
	return m.Opcode == MACControlPFC && prio >= 0 && prio < PFCPriorities && len(m.Params) >= 4+2*prio
}

// HasTimestamp reports an MPCP message whose timestamp was captured.
func (m *MACControl) HasTimestamp() bool {
	return m.Opcode >= MACControlGate && m.Opcode <= MACControlRegisterAck && len(m.Params) >= 4
}

// Enabled reports whether the PFC frame's class-enable vector names priority prio.
func (m *MACControl) Enabled(prio int) bool {
	return m.Opcode == MACControlPFC && prio >= 0 && prio < PFCPriorities && m.ClassEnableVector&(1<<prio) != 0
}

// DecodeFromBytes decodes the opcode and its parameters; Params slices
// into data.
func (m *MACControl) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*m = MACControl{}
	if err := checkLength("MACControl", macControlFields, len(data)); err != nil {
		df.SetTruncated()
		return err
	}
	m.Opcode = MACControlOpcode(binary.BigEndian.Uint16(data))
	want := m.Opcode.paramLength()
	n := min(want, len(data)-2)
	m.Params = data[2 : 2+n]
	m.BaseLayer = gplayers.BaseLayer{Contents: data[:2+n], Payload: data[2+n:]}
	p := m.Params
	switch {
	case m.Opcode == MACControlPause && n >= 2:
		m.PauseTime = binary.BigEndian.Uint16(p)
	case m.Opcode == MACControlPFC:
		if n >= 2 {
			m.ClassEnableVector = binary.BigEndian.Uint16(p)
		}
		for i := 0; i < PFCPriorities && 4+2*i <= n; i++ {
			m.PauseTimes[i] = binary.BigEndian.Uint16(p[2+2*i:])
		}
	case n >= 4:
		m.Timestamp = binary.BigEndian.Uint32(p)
	}
	if n < want {
		df.SetTruncated()
		return checkLength("MACControl", macControlSpans(m.Opcode), len(data))
	}
	return nil
}

// SerializeTo prepends the opcode and its parameters (Ethernet pads the
// frame to its minimum size). A PFC frame's class-enable vector is written
// as it is: set the bits of the priorities whose times apply.
func (m *MACControl) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := m.Opcode.paramLength()
	h, err := b.PrependBytes(2 + n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h, uint16(m.Opcode))
	p := h[2:]
	switch {
	case m.Opcode == MACControlPause:
		binary.BigEndian.PutUint16(p, m.PauseTime)
	case m.Opcode == MACControlPFC:
		binary.BigEndian.PutUint16(p, m.ClassEnableVector)
		for i, t := range m.PauseTimes {
			binary.BigEndian.PutUint16(p[2+2*i:], t)
		}
	case n == 4:
		binary.BigEndian.PutUint32(p, m.Timestamp)
	}
	return nil
}

func decodeMACControl(data []byte, p gopacket.PacketBuilder) error {
	m := &MACControl{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return nil
}
