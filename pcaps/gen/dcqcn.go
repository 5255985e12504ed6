package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibwire/ibwire/craft"
)

// dcqcnSpecs are the DCQCN captures: craft's model of a sender under DCQCN
// with three timer settings (craft.CongestionCorpus), and the numbers the
// model used, which an analyzer must find again.
func dcqcnSpecs() []spec {
	var s []spec
	for _, c := range craft.CongestionCorpus() {
		s = append(s, spec{c.Name, c.Title, func() (craft.Encap, craft.Trace, []string, error) {
			r, err := c.Build()
			if err != nil {
				return craft.RoCEv2, craft.Trace{}, nil, err
			}
			return craft.RoCEv2, r.Trace, dcqcnNotes(c, r), nil
		}})
	}
	return s
}

func us(d time.Duration) string { return fmt.Sprintf("%.3f µs", float64(d)/1e3) }

func dcqcnNotes(c craft.NamedCongestion, r craft.CongestionResult) []string {
	p := c.DCQCN
	notes := []string{
		fmt.Sprintf("The flow: QP 0x%06x (192.168.1.1) to QP 0x%06x, UC RDMA WRITE ONLY of %d bytes (138-byte frames), DSCP 26, "+
			"captured at the sender's port (data as it leaves, CNPs as they arrive; one-way delay 0.5 µs). Line rate %.0f Mb/s; "+
			"marked CE from %s to %s while its rate is above %.0f Mb/s. DCQCN: T = %s, K = %s, B = %d bytes, F = 5, g = 1/256, "+
			"R_AI = %.0f Mb/s, R_HAI = %.0f Mb/s, reaction delay %s; the receiver sends at most one CNP per %s.",
			0x11, 0x12, c.Payload, p.LineRate/1e6, us(c.MarkFrom), us(c.MarkUntil), c.MarkAbove/1e6,
			us(p.IncreaseTimer), us(p.AlphaTimer), p.ByteCounter, p.AI/1e6, p.HAI/1e6, us(p.ReactionDelay), us(c.CNPInterval)),
		fmt.Sprintf("`ibdump -q -z dcqcn`: %d data packets, %d CE (the rest ECT(0)), %d CNPs, minimum CNP spacing %s; "+
			"rate increase events: %d fast recovery, %d additive, %d hyper; at the end %.3f Mb/s, α %.4f.",
			r.DataFrames, r.CEFrames, len(r.CNPs), us(r.MinCNPSpacing), r.Increases[0], r.Increases[1], r.Increases[2], r.FinalRate/1e6, r.FinalAlpha),
	}
	var rows []string
	for _, x := range r.CNPs {
		rows = append(rows, fmt.Sprintf("CNP frame %d (for CE frame %d) at %s: cut at %s, %.3f → %.3f Mb/s, first frame at the new rate %d",
			x.Frame, x.Marked, us(x.At), us(x.Cut), x.RateBefore/1e6, x.RateAfter/1e6, x.FirstSlow))
	}
	notes = append(notes, "Each CNP and the model's reaction (the first frame at the new rate starts the first longer gap): "+strings.Join(rows, "; ")+".")
	if v := c.Victim; v != nil {
		notes = append(notes, fmt.Sprintf("The victim: QP 0x%06x to QP 0x%06x from UDP source port %d, ECT(0) and never marked, %d packets at %.0f Mb/s, "+
			"%.0f Mb/s from %s to %s.", v.Config.Requester.QPN, v.Config.Responder.QPN, v.Config.UDPSrcPort, r.VictimFrames,
			v.Rate/1e6, v.SlowRate/1e6, us(v.SlowFrom), us(v.SlowUntil)))
	}
	return notes
}
