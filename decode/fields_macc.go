package decode

import (
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// maccFields are Wireshark's macc.* fields of MAC Control frames (802.3x
// PAUSE, 802.1Qbb PFC, the MPCP timestamp), with its names, types and bases
// (checked against tshark 4.0's -G fields in the tests). Every value is
// read from layers.MACControl; a frame cut short has the fields that fit.
func maccFields() []*Field {
	macc := func(p *Packet) bool { return p.has&hasMACControl != 0 }
	M := func(p *Packet) *layers.MACControl { return &p.Headers.MACControl }
	fs := []*Field{
		byHeaders(protoField("macc", "MAC Control", macc)),
		withNames(uintField("macc.opcode", "Opcode", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).Opcode), macc(p) }),
			maccOpcodeName, maccOpcodeByName),
		// tshark's expert items, which -e prints as 1.
		noneField("macc.dst_address_invalid", "Destination address must be 01-80-C2-00-00-01", func(p *Packet) bool {
			return macc(p) && (M(p).Opcode == layers.MACControlPause || M(p).Opcode == layers.MACControlPFC) &&
				string(p.Headers.Ethernet.DstMAC) != string(layers.MACControlDst[:])
		}),
		noneField("macc.opcode.unknown", "Unknown opcode", func(p *Packet) bool {
			_, known := M(p).Opcode.Name()
			return macc(p) && !known
		}),
		uintField("macc.timestamp", "Timestamp", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(M(p).Timestamp), macc(p) && M(p).HasTimestamp()
		}),
		uintField("macc.pause_time", "pause_time", FTUint16, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(M(p).PauseTime), macc(p) && M(p).HasPauseTime()
		}),
		uintField("macc.cbfc.enbv", "CBFC Class Enable Vector", FTUint16, BaseHex, func(p *Packet) (uint64, bool) {
			return uint64(M(p).ClassEnableVector), macc(p) && M(p).HasClassEnableVector()
		}),
	}
	for i := range layers.PFCPriorities {
		fs = append(fs, boolField("macc.cbfc.enbv.c"+itoa(uint64(i)), "C"+itoa(uint64(i)), func(p *Packet) (bool, bool) {
			return M(p).ClassEnableVector&(1<<i) != 0, macc(p) && M(p).HasClassEnableVector()
		}))
	}
	fs = append(fs, noneField("macc.cbfc.enbv.not_zero", "8 MSbs of ENBV must be 0", func(p *Packet) bool {
		return macc(p) && M(p).HasClassEnableVector() && M(p).ClassEnableVector&0xFF00 != 0
	}))
	for i := range layers.PFCPriorities {
		fs = append(fs, uintField("macc.cbfc.pause_time.c"+itoa(uint64(i)), "C"+itoa(uint64(i)), FTUint16, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(M(p).PauseTimes[i]), macc(p) && M(p).HasPauseTimeOf(i)
		}))
	}
	return fs
}

// maccOpcodes are the opcodes Wireshark names, for filters by name.
var maccOpcodes = []layers.MACControlOpcode{layers.MACControlPause, layers.MACControlGate, layers.MACControlReport,
	layers.MACControlRegisterReq, layers.MACControlRegister, layers.MACControlRegisterAck, layers.MACControlPFC}

// maccOpcodeName names an opcode as tshark's tree does: "Unknown" for
// those it has no name for.
func maccOpcodeName(u uint64) (string, bool) {
	if u > 0xFFFF {
		return "", false
	}
	if n, ok := layers.MACControlOpcode(u).Name(); ok {
		return n, true
	}
	return "Unknown", true
}

// maccOpcodeByName accepts Wireshark's names and the short ones a user
// types (macc.opcode == PFC, macc.opcode == PAUSE).
func maccOpcodeByName(s string) (uint64, bool) {
	switch strings.ToUpper(s) {
	case "PFC", "CBFC":
		return uint64(layers.MACControlPFC), true
	case "PAUSE":
		return uint64(layers.MACControlPause), true
	}
	for _, o := range maccOpcodes {
		if n, _ := o.Name(); strings.EqualFold(n, s) {
			return uint64(o), true
		}
	}
	return 0, false
}
