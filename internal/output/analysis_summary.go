package output

import (
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// AppendAnalysisNotes appends what the analysis found about p to its
// one-line summary, tcpdump style, in brackets: "[retransmission of 1234]",
// "[PSN gap: 3 lost]", "[NAK PSN Sequence Error answers 1230]". CRC and
// decoding faults are left to the summary itself.
func AppendAnalysisNotes(buf []byte, p *decode.Packet) []byte {
	a := &p.Analysis
	reaction := a.DCQCN != nil && a.DCQCN.CNPFrame != 0
	if a.Findings == 0 && a.Info&decode.InfoResponse == 0 && !reaction {
		return buf
	}
	note := func(s ...string) {
		buf = append(buf, " ["...)
		for _, x := range s {
			buf = append(buf, x...)
		}
		buf = append(buf, ']')
	}
	frame := func(f uint32) string { return strconv.FormatUint(uint64(f), 10) }
	if a.Has(decode.FindPSNGap) {
		note("PSN gap: ", strconv.FormatUint(uint64(a.GapPSNs), 10), " lost")
	}
	if a.Has(decode.FindOutOfOrder) {
		note("out of order")
	}
	if a.Has(decode.FindAckTimeout) {
		if a.Elapsed > 0 {
			note("ACK timeout: resent after ", shortDuration(a.Elapsed))
		} else {
			note("ACK timeout")
		}
	}
	if a.Has(decode.FindRetransmission) {
		switch {
		case a.RetransmittedFrame != 0:
			note("retransmission of ", frame(a.RetransmittedFrame))
		default:
			note("retransmission, first copy lost")
		}
	}
	// The summary already names NAKs, RNR NAKs, CNPs and FECN: the notes
	// add what they answer.
	if a.Has(decode.FindNAK) && a.RequestFrame != 0 {
		note("NAK ", p.Headers.BTH.AETH.Syndrome.NAKCode().String(), " answers ", frame(a.RequestFrame))
	}
	if a.Has(decode.FindRNRNAK) && a.RequestFrame != 0 {
		note("RNR NAK answers ", frame(a.RequestFrame))
	}
	if a.Has(decode.FindDuplicate) {
		note("answers duplicate ", frame(a.RefFrame))
	}
	if a.Has(decode.FindCNP) && a.RefFrame != 0 {
		note("CNP for ", frame(a.RefFrame))
	}
	if a.Has(decode.FindECNCE) {
		note("ECN CE")
	}
	if reaction {
		note("rate cut ", shortDuration(a.DCQCN.Reaction), " after CNP ", frame(a.DCQCN.CNPFrame), " (the gap before this packet)")
	}
	if a.Has(decode.FindDCQCNVictim) {
		note("victim: under half its earlier rate, with no CE mark or CNP of its own")
	}
	if a.Has(decode.FindBadOpcodeSequence) {
		note("opcode out of sequence")
	}
	if a.Has(decode.FindRETHLengthMismatch) {
		note("RETH length mismatch")
	}
	if a.Has(decode.FindUnknownOpcode) {
		note("unknown opcode")
	}
	if a.Has(decode.FindCreditsExhausted) {
		note("no credits")
	}
	if a.Has(decode.FindUnanswered) {
		note("unanswered")
	}
	if a.Findings&cmFindings != 0 {
		appendCMNotes(p, note, frame)
	}
	if a.Info&decode.InfoResponse != 0 {
		note("answered by ", frame(a.ResponseFrame))
	}
	return buf
}

// cmFindings are the CM findings the notes say something about.
const cmFindings = 1<<decode.FindCMReadsExceeded | 1<<decode.FindCMRetryExceeded | 1<<decode.FindCMRNRRetryExceeded |
	1<<decode.FindCMMTUExceeded | 1<<decode.FindCMPathMismatch | 1<<decode.FindCMMRA | 1<<decode.FindCMMRAIgnored |
	1<<decode.FindCMDREQUnanswered | 1<<decode.FindCMReject

// appendCMNotes notes how a packet breaks what its connection's CM REQ/REP
// negotiated, naming the CM message, and what a CM message's finding is.
func appendCMNotes(p *decode.Packet, note func(s ...string), frame func(uint32) string) {
	a := &p.Analysis
	num := func(u uint8) string { return strconv.FormatUint(uint64(u), 10) }
	k := a.CM
	side := uint8(0)
	if a.Dir > 0 {
		side = a.Dir - 1
	}
	ref := a.CMRef()
	if k != nil && k.REQFrame != 0 {
		if a.Has(decode.FindCMReadsExceeded) {
			note(num(a.CMCount), " READ/atomic outstanding, CM REP ", frame(ref), " allows ", num(k.MaxReads[side]))
		}
		if a.Has(decode.FindCMRetryExceeded) {
			note("retry ", num(a.CMCount), " of this PSN, CM REQ ", frame(ref), " allows ", num(k.RetryCount))
		}
		if a.Has(decode.FindCMRNRRetryExceeded) {
			msg := " REQ "
			if ref == k.REPFrame {
				msg = " REP "
			}
			note("RNR retry ", num(a.CMCount), " of this PSN, CM", msg, frame(ref), " allows ", num(k.RNRRetryCount[side]))
		}
		if a.Has(decode.FindCMMTUExceeded) {
			note("payload ", strconv.Itoa(p.PayloadLength()), " > path MTU ", strconv.Itoa(k.PathMTU), " of CM REQ ", frame(ref))
		}
		if a.Has(decode.FindCMPathMismatch) {
			var which []byte
			for sub := decode.CMPathPKey; sub <= decode.CMPathSL; sub++ {
				if a.CMPath&(1<<sub) != 0 {
					if len(which) > 0 {
						which = append(which, ", "...)
					}
					which = append(which, decode.CMPathName(sub)...)
				}
			}
			note(string(which), " not as in CM REQ ", frame(ref))
		}
	}
	if a.Has(decode.FindCMMRA) {
		note("MRA for ", frame(a.RefFrame), ": ", shortDuration(layers.CMTimeout(p.Headers.MAD.CM.MRA.ServiceTimeout)))
	}
	if a.Has(decode.FindCMMRAIgnored) {
		note("sent again before the timeout of MRA ", frame(a.RefFrame))
	}
	if a.Has(decode.FindCMDREQUnanswered) {
		if a.RefFrame != 0 {
			note("DREQ sent again: ", frame(a.RefFrame), " unanswered")
		} else {
			note("DREQ unanswered")
		}
	}
	if a.Has(decode.FindCMReject) && k != nil && k.RejBy != 0 && p.HasMAD() {
		note("rejected by the ", k.RejByName(), " side: ", p.Headers.MAD.CM.REJ.Reason.String())
	}
}

// shortDuration prints d in ms or µs with three significant decimals.
func shortDuration(d time.Duration) string {
	if d >= time.Millisecond {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64) + " ms"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 3, 64) + " us"
}
