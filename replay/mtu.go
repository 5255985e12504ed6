package replay

import (
	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// mtuRange finds the smallest and largest IB path MTU at which the plan's
// packets segment as captured: each FIRST or MIDDLE packet is exactly one
// MTU long, each ONLY or LAST at most one, each RETH's length takes as
// many packets as the capture shows (for a READ, from its request to its
// LAST or ONLY response; else as at the plan's MTU). The MTUs that satisfy
// each of these form an interval, so their intersection does too. When no
// MTU fits (a capture that contradicts itself), the range is the plan's
// MTU alone.
func (p *Plan) mtuRange() (lo, hi int) {
	type rule struct{ length, packets int }
	exact, least := 0, 0
	var rules []rule
	reads := map[int]*layers.BTH{} // frame number → READ request
	var b layers.BTH
	for _, s := range p.Steps {
		if b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		info := b.Opcode.Info()
		n := len(b.PacketPayload())
		switch info.Position {
		case layers.PosFirst, layers.PosMiddle:
			if exact != 0 && exact != n {
				return p.MTU, p.MTU
			}
			exact = n
		default:
			least = max(least, n)
		}
		switch {
		case s.Request && info.Operation == layers.OpRDMAReadRequest:
			r := b
			reads[s.Frame.Number] = &r
		case s.Request && info.Has(layers.HdrRETH):
			rules = append(rules, rule{int(b.RETH.DMALength), p.segments(b.RETH.DMALength)})
		case info.Operation == layers.OpRDMAReadResponse && (info.Position == layers.PosLast || info.Position == layers.PosOnly):
			if r := reads[s.Frame.ResponseTo]; r != nil {
				rules = append(rules, rule{int(r.RETH.DMALength), b.PSN.Diff(r.PSN) + 1})
				delete(reads, s.Frame.ResponseTo)
			}
		}
	}
	for _, r := range reads { // no LAST or ONLY response captured
		rules = append(rules, rule{int(r.RETH.DMALength), p.segments(r.RETH.DMALength)})
	}
	fits := func(m int) bool {
		if (exact != 0 && m != exact) || m < least {
			return false
		}
		for _, r := range rules {
			if layers.Segments(r.length, m) != r.packets {
				return false
			}
		}
		return true
	}
	for c := layers.MTU256; c <= layers.MTU4096; c++ {
		if m := c.Bytes(); fits(m) {
			if lo == 0 {
				lo = m
			}
			hi = m
		}
	}
	if lo == 0 {
		return p.MTU, p.MTU
	}
	return lo, hi
}
