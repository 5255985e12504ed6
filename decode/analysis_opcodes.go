package decode

import "github.com/ibwire/ibwire/layers"

// OpcodeStat counts packets and bytes per BTH opcode (-z opcodes).
type OpcodeStat struct {
	packets, bytes [256]uint64
	total          uint64
}

// Add counts p when it is an IB transport packet.
func (s *OpcodeStat) Add(p *Packet) {
	b := p.BTH()
	if b == nil {
		return
	}
	s.packets[b.Opcode]++
	s.bytes[b.Opcode] += uint64(p.Length)
	s.total++
}

// OpcodeRow is one opcode's count.
type OpcodeRow struct {
	Opcode         layers.Opcode
	Packets, Bytes uint64
}

// Rows returns the opcodes seen, in numeric order, and the packet total.
func (s *OpcodeStat) Rows() ([]OpcodeRow, uint64) {
	var out []OpcodeRow
	for i, n := range s.packets {
		if n > 0 {
			out = append(out, OpcodeRow{layers.Opcode(i), n, s.bytes[i]})
		}
	}
	return out, s.total
}
