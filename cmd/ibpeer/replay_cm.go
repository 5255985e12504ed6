package main

import (
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
)

// hasReadsOrAtomics reports whether a plan sends RDMA READs or atomics,
// for which the peer must grant responder resources.
func hasReadsOrAtomics(p *replay.Plan) bool {
	for _, st := range p.Steps {
		if !st.Request {
			continue
		}
		if st.Frame.Opcode.Info().Operation.TakesResponderResource() {
			return true
		}
	}
	return false
}

// perftestDataConv picks the conversation --setup cm plays by default in a
// perftest -R capture: the first RC conversation with requests that is not
// perftest's set-up QP. perftest -R connects the set-up QP by RDMA CM
// first, runs its exchange as SENDs both ways on it, then connects the
// data QP to the same service between the same two ports; a conversation
// so followed is the set-up QP. 0 (NewPlan's default) when no
// conversation qualifies.
func perftestDataConv(c *replay.Capture) uint32 {
	setupQP := func(i int) bool {
		cv := &c.Convs[i]
		if cv.PairedBy != decode.PairedCM || cv.Dir[0].Messages == 0 || cv.Dir[1].Messages == 0 {
			return false
		}
		for j := i + 1; j < len(c.Convs); j++ {
			d := &c.Convs[j]
			if d.Service == layers.ServiceRC && d.PairedBy == decode.PairedCM && d.ServiceID == cv.ServiceID &&
				d.A == cv.A && d.B == cv.B && d.Start > cv.Start {
				return true
			}
		}
		return false
	}
	seen := map[uint32]bool{}
	for _, f := range c.Frames {
		if !f.Selected || f.Conv == 0 || !f.IB || seen[f.Conv] || !f.Opcode.Info().IsRequest() {
			continue
		}
		seen[f.Conv] = true
		if c.Convs[f.Conv-1].Service == layers.ServiceRC && !setupQP(int(f.Conv-1)) {
			return f.Conv
		}
	}
	return 0
}
