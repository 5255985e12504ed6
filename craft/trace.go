package craft

import (
	"fmt"
	"sort"
	"time"
)

// FindingKind names what an analyzer should report about a frame. The names
// are those of ibwire's analysis fields (ibwire.analysis.<name>).
type FindingKind string

// Findings craft knows it put into a conversation.
const (
	FindingPSNGap         FindingKind = "psn_gap"              // PSN ahead of the next expected one: packets before it were lost
	FindingRetransmission FindingKind = "retransmission"       // a PSN sent again (Ref: the previous capture of it, 0 if it was lost)
	FindingAckTimeout     FindingKind = "ack_timeout"          // the requester resent after its local ACK timer expired
	FindingNAK            FindingKind = "nak"                  // a NAK (Detail: its code; Ref: the request it answers)
	FindingRNRNak         FindingKind = "rnr_nak"              // an RNR NAK (Ref: the request it answers)
	FindingCNP            FindingKind = "cnp"                  // a congestion notification packet (Ref: the marked packet)
	FindingECNCE          FindingKind = "ecn_ce"               // IP ECN field says Congestion Experienced
	FindingFECN           FindingKind = "fecn"                 // BTH FECN set (RoCEv1 and native IB congestion mark)
	FindingICRCBad        FindingKind = "icrc_bad"             // the ICRC does not match
	FindingVCRCBad        FindingKind = "vcrc_bad"             // the VCRC does not match
	FindingTruncated      FindingKind = "truncated"            // the frame ends before its length fields say
	FindingMalformed      FindingKind = "malformed"            // a field contradicts the packet (pad count)
	FindingBadSequence    FindingKind = "bad_opcode_sequence"  // an opcode out of FIRST/MIDDLE/LAST order
	FindingLengthMismatch FindingKind = "reth_length_mismatch" // RETH DMA length differs from the bytes the message carries
	FindingUnknownOpcode  FindingKind = "unknown_opcode"       // an opcode the IBTA does not define
	FindingDuplicate      FindingKind = "duplicate"            // a responder answer sent again for a duplicate request
	FindingDCQCNVictim    FindingKind = "dcqcn.victim"         // the first packet of a flow slowed with no congestion mark or CNP of its own
	FindingSMB2NoResponse FindingKind = "smb2_no_response"     // an SMB2 request over SMB Direct that the capture does not answer
	FindingNVMeError      FindingKind = "nvme_error"           // an NVMe-oF completion with an error status (Ref: its command; Detail: the status)
	// Breaches of what the CM negotiated (Ref: the REQ or REP that set the
	// limit), and CM exchanges that went wrong (Ref: the message concerned).
	FindingCMReadsExceeded    FindingKind = "cm.reads_exceeded"     // more READ/atomic requests outstanding than the REP allows
	FindingCMRetryExceeded    FindingKind = "cm.retry_exceeded"     // a PSN retried more often than the REQ's Retry Count
	FindingCMRNRRetryExceeded FindingKind = "cm.rnr_retry_exceeded" // more RNR retries than the RNR Retry Count
	FindingCMMTUExceeded      FindingKind = "cm.mtu_exceeded"       // a payload larger than the REQ's path MTU
	FindingCMPathMismatch     FindingKind = "cm.path_mismatch"      // a P_Key, traffic class, flow label or SL other than the REQ's path
	FindingCMMRA              FindingKind = "cm.mra"                // an MRA (Ref: the message it acknowledges)
	FindingCMMRAIgnored       FindingKind = "cm.mra_ignored"        // a message sent again before the MRA's service timeout (Ref: the MRA)
	FindingCMDREQUnanswered   FindingKind = "cm.dreq_unanswered"    // a DREQ no DREP answered
)

// Finding is one expected finding: frame numbers count from 1 within the trace.
type Finding struct {
	Frame  int
	Kind   FindingKind
	Ref    int // a related frame, 0 when none was captured
	Detail string
}

func (f Finding) String() string {
	s := fmt.Sprintf("#%d %s", f.Frame, f.Kind)
	if f.Ref > 0 {
		s += fmt.Sprintf(" (ref #%d)", f.Ref)
	}
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

// Trace is a sequence of frames with the findings they should produce.
type Trace struct {
	Frames   []Frame
	Findings []Finding
	// Lost holds the frames the faults lost before the capture point, in
	// send order: neither captured nor received, but sent (MultiPoint
	// shows them at the points upstream of their loss).
	Lost []Frame
}

// Append adds u's frames after t's, renumbering u's findings.
func (t *Trace) Append(u Trace) {
	n := len(t.Frames)
	t.Frames = append(t.Frames, u.Frames...)
	t.Lost = append(t.Lost, u.Lost...)
	for _, f := range u.Findings {
		f.Frame += n
		if f.Ref > 0 {
			f.Ref += n
		}
		t.Findings = append(t.Findings, f)
	}
}

// End returns the time of the last frame (zero when there is none).
func (t *Trace) End() time.Time {
	if len(t.Frames) == 0 {
		return time.Time{}
	}
	return t.Frames[len(t.Frames)-1].Time
}

// Merge interleaves traces by frame time (stable: on equal times, earlier
// traces first), renumbering findings: the capture of several QPs at once.
func Merge(ts ...Trace) Trace {
	type item struct {
		tr, fr int
	}
	var items []item
	for i, t := range ts {
		for j := range t.Frames {
			items = append(items, item{i, j})
		}
	}
	sort.SliceStable(items, func(a, b int) bool {
		return ts[items[a].tr].Frames[items[a].fr].Time.Before(ts[items[b].tr].Frames[items[b].fr].Time)
	})
	num := make([][]int, len(ts))
	for i, t := range ts {
		num[i] = make([]int, len(t.Frames))
	}
	var out Trace
	for k, it := range items {
		num[it.tr][it.fr] = k + 1
		out.Frames = append(out.Frames, ts[it.tr].Frames[it.fr])
	}
	for i, t := range ts {
		for _, f := range t.Findings {
			f.Frame = num[i][f.Frame-1]
			if f.Ref > 0 {
				f.Ref = num[i][f.Ref-1]
			}
			out.Findings = append(out.Findings, f)
		}
	}
	sortFindings(out.Findings)
	for _, t := range ts {
		out.Lost = append(out.Lost, t.Lost...)
	}
	sort.SliceStable(out.Lost, func(a, b int) bool { return out.Lost[a].Time.Before(out.Lost[b].Time) })
	return out
}

// sortFindings orders findings by frame, then kind.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Frame != fs[j].Frame {
			return fs[i].Frame < fs[j].Frame
		}
		return fs[i].Kind < fs[j].Kind
	})
}

// FindingsOf returns the findings about frame n.
func (t *Trace) FindingsOf(n int) []Finding {
	var out []Finding
	for _, f := range t.Findings {
		if f.Frame == n {
			out = append(out, f)
		}
	}
	return out
}
