package decode

import (
	"cmp"
	"slices"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// The CM contract: what a connection's REQ and REP negotiated (IBTA Vol 1
// §12.7), checked against the connection's traffic. Which field binds
// which side follows the Linux ib_cm (drivers/infiniband/core/cm.c,
// cm_req_handler and cm_rep_handler), which programs the QPs from them:
//
//   - READ/atomic requests outstanding: the active side may have the REP's
//     Responder Resources (the passive side's responder accepts that many),
//     the passive side the REP's Initiator Depth. The REP answers the REQ's
//     fields and is the one that binds.
//   - Retry Count: the REQ's binds both senders (the REP has none).
//   - RNR Retry Count: the REQ's binds the passive side's sender, the REP's
//     the active side's; 7 means retry for ever.
//   - Path MTU, P_Key, traffic class, flow label, SL: the REQ's primary
//     path, the same for both directions.
//
// A request is outstanding from its first transmission until a response
// completes it (its READ response LAST or ONLY, its atomic ACK, or an ACK
// of its PSN or a later one); retransmissions do not count again.
//
// Only what the wire carries is compared: the P_Key of the BTH (its low 15
// bits: the membership bit differs between full and limited members), the
// DSCP of the IPv4 TOS or of the IPv6 or GRH traffic class (the ECN bits
// are the network's), the flow label of IPv6 or the GRH only when the REQ
// names one and the packet carries one (a RoCEv2 stack derives one from
// the QPNs when it is zero; an IPv6 label of 0 means unlabelled, which is
// what rxe sends; IPv4 has none), and the SL of a native IB LRH (RoCE has no SL on the
// wire). UDP source ports are the stack's own choice and are not checked.
// On RoCE the traffic class and flow label bind the active side only: its
// stack wrote its own TOS into the REQ's path (rdma_cm's route), while the
// passive side's may apply its host's default (rdma_cm's default_roce_tos,
// a NIC's QoS setting) — a Mellanox ibdump capture in the public corpus
// has the active side at DSCP 0 as its REQ says and the passive at DSCP 26.
// On native IB the SM's path binds both.

// CMContract is what the CM negotiated for a connection, as
// ibwire.analysis.cm.* shows it on each of its packets. Arrays are
// indexed by the conversation's side (0: A→B, 1: B→A).
type CMContract struct {
	REQFrame, REPFrame uint32
	Active             uint8    // the side whose REQ began the connection
	MaxReads           [2]uint8 // READ/atomic requests each side may have outstanding
	RetryCount         uint8
	RNRRetryCount      [2]uint8 // 7: for ever
	PathMTU            int      // bytes
	PKey               uint16
	TrafficClass       uint8
	FlowLabel          uint32
	SL                 uint8
	// RejBy is set on a REJ: 1 when the active side sent it, 2 the passive.
	RejBy uint8
}

// Path attributes a packet can break (Finding.Sub of FindCMPathMismatch).
const (
	CMPathPKey uint8 = 1 + iota
	CMPathTrafficClass
	CMPathFlowLabel
	CMPathSL
)

var cmPathNames = [...]string{"", "P_Key", "traffic class", "flow label", "SL"}

// CMPathName names path attribute sub (CMPathPKey ...).
func CMPathName(sub uint8) string {
	if int(sub) < len(cmPathNames) {
		return cmPathNames[sub]
	}
	return ""
}

// cmRejBy are the read-only values a REJ's packet points to.
var cmRejBy = [3]CMContract{{}, {RejBy: 1}, {RejBy: 2}}

// cmRejSub packs a REJ's reason and sender (1 active, 2 passive) into a
// Finding.Sub: the reason in the low 6 bits (IBTA reasons end at 35), bit
// 6 set for the active side. A reason beyond 63 is kept as 0 (unnamed).
func cmRejSub(reason layers.CMRejectReason, by uint8) uint8 {
	if reason > 63 {
		reason = 0
	}
	sub := uint8(reason)
	if by == 1 {
		sub |= 1 << 6
	}
	return sub
}

func cmRejOfSub(sub uint8) (layers.CMRejectReason, uint8) {
	by := uint8(2)
	if sub&(1<<6) != 0 {
		by = 1
	}
	return layers.CMRejectReason(sub & 63), by
}

// RejByName names the side that sent a REJ: "active" or "passive".
func (c *CMContract) RejByName() string {
	switch c.RejBy {
	case 1:
		return "active"
	case 2:
		return "passive"
	}
	return ""
}

// cmReadRing bounds the READ/atomic requests a side is followed with:
// beyond it the oldest are taken as done (the count stays above every
// limit rxe and real HCAs allow, so the finding holds).
const cmReadRing = 64

// cmSide is one side's sender, as the contract follows it.
type cmSide struct {
	reads      [cmReadRing]layers.PSN // the last PSN of each READ/atomic outstanding, oldest first
	head, n    uint8
	hi         layers.PSN // the highest request PSN sent
	prev       layers.PSN // the PSN of the request before
	started    bool
	retryPSN   layers.PSN // the PSN retries went back to, and how often
	retries    uint8
	rnrPSN     layers.PSN
	rnrRetries uint8
}

// cmContract is a connection's contract and what its checks follow.
type cmContract struct {
	CMContract
	activeSrc addrKey // the active side's address and the QP it sends to
	activeQP  uint32
	side      [2]cmSide
}

// cmBind attaches the contract of REQ req and the REP at this frame to c;
// s is the side of c that sent the REQ.
func (a *Analyzer) cmBind(c *conv, s uint8, req *cmReq, rep *layers.CMRep, ab FlowKey) {
	k := &cmContract{activeSrc: addrKeyOf(ab.Src), activeQP: ab.DestQP}
	k.REQFrame, k.REPFrame, k.Active = req.frame, a.frame, s
	k.MaxReads[s], k.MaxReads[1-s] = rep.ResponderResources, rep.InitiatorDepth
	k.RetryCount = req.retry
	k.RNRRetryCount[s], k.RNRRetryCount[1-s] = rep.RNRRetryCount, req.rnrRetry
	k.PathMTU, k.PKey, k.TrafficClass, k.FlowLabel, k.SL = req.mtu, req.pkey, req.tclass, req.flowLabel, req.sl
	c.cm = k
}

// sideOf is the conversation side of direction d.
func (k *cmContract) sideOf(d *direction) uint8 {
	if d.key.src == k.activeSrc && d.key.qp == k.activeQP {
		return k.Active
	}
	return 1 - k.Active
}

// ref is the CM message a contract finding of kind f by side x breaks.
func (k *cmContract) ref(f FindingKind, x uint8) uint32 {
	switch f {
	case FindCMReadsExceeded:
		return k.REPFrame
	case FindCMRNRRetryExceeded:
		if x == k.Active {
			return k.REPFrame
		}
	}
	return k.REQFrame
}

// CMRef is the CM message (REQ or REP) that a contract finding at this
// packet refers to, 0 when it has none.
func (a *PacketAnalysis) CMRef() uint32 {
	k := a.CM
	if k == nil || a.Dir == 0 {
		return 0
	}
	x := a.Dir - 1
	switch {
	case a.Has(FindCMReadsExceeded):
		return k.REPFrame
	case a.Has(FindCMRNRRetryExceeded) && x == k.Active:
		return k.REPFrame
	case a.Findings&cmContractFindings != 0:
		return k.REQFrame
	}
	return 0
}

// cmMessageFindings are made at CM messages: their Ref is the message
// they concern.
const cmMessageFindings = 1<<FindCMMRA | 1<<FindCMMRAIgnored | 1<<FindCMDREQUnanswered | 1<<FindCMReject

const cmContractFindings = 1<<FindCMReadsExceeded | 1<<FindCMRetryExceeded | 1<<FindCMRNRRetryExceeded |
	1<<FindCMMTUExceeded | 1<<FindCMPathMismatch

// cmCheck checks packet p of direction d, on a connection the CM set up,
// against its contract.
func (a *Analyzer) cmCheck(d *direction, k *cmContract, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	an := &p.Analysis
	an.CM = &k.CMContract
	// A CNP is the congestion control's, not the connection's: it has a
	// PSN of 0 and its own priority.
	if p.Err != nil && !p.Cut() || info.Service == layers.ServiceCNP {
		return
	}
	x := k.sideOf(d)
	c := d.conv
	if k.PathMTU > 0 && p.PayloadLength() > k.PathMTU {
		a.finding(Finding{Kind: FindCMMTUExceeded, Frame: a.frame, Ref: k.REQFrame, Conv: c.id, PSN: b.PSN})
	}
	a.cmPath(k, p, b, c.id, x == k.Active)
	if info.Response {
		a.cmResponse(&k.side[1-x], b, info)
		return
	}
	s := &k.side[x]
	psn := b.PSN
	if !s.started || psn.Diff(s.hi) > 0 {
		last := psn
		switch info.Operation {
		case layers.OpRDMAReadRequest:
			if b.HasETH(layers.HdrRETH) && k.PathMTU > 0 {
				last = psn.Add(layers.Segments(int(b.RETH.DMALength), k.PathMTU) - 1)
			}
			fallthrough
		case layers.OpCompareSwap, layers.OpFetchAdd, layers.OpAtomicWrite, layers.OpFlush:
			// rxe takes a responder resource for ATOMIC WRITE and FLUSH too.
			if s.n == cmReadRing {
				s.head = (s.head + 1) % cmReadRing
				s.n--
			}
			s.reads[(s.head+s.n)%cmReadRing] = last
			s.n++
			if s.n > k.MaxReads[x] {
				an.CMCount = s.n
				a.finding(Finding{Kind: FindCMReadsExceeded, Frame: a.frame, Ref: k.REPFrame, Conv: c.id, PSN: psn})
			}
		}
		s.hi, s.started = last, true
	} else if s.started && psn.Diff(s.prev) <= 0 && an.Has(FindRetransmission) {
		// The sender went back: one more retry of the PSN it went back to.
		if an.Cause == CauseRNR {
			s.rnrRetries = nextRetry(s.rnrPSN, psn, s.rnrRetries)
			s.rnrPSN = psn
			if lim := k.RNRRetryCount[x]; lim != 7 && s.rnrRetries > lim {
				an.CMCount = s.rnrRetries
				a.finding(Finding{Kind: FindCMRNRRetryExceeded, Frame: a.frame, Ref: k.ref(FindCMRNRRetryExceeded, x), Conv: c.id, PSN: psn})
			}
		} else {
			s.retries = nextRetry(s.retryPSN, psn, s.retries)
			s.retryPSN = psn
			if s.retries > k.RetryCount {
				an.CMCount = s.retries
				a.finding(Finding{Kind: FindCMRetryExceeded, Frame: a.frame, Ref: k.REQFrame, Conv: c.id, PSN: psn})
			}
		}
	}
	s.prev = psn
}

// nextRetry counts a retry that went back to psn: one more when the last
// retry went back to the same PSN, else the first.
func nextRetry(last, psn layers.PSN, n uint8) uint8 {
	if n > 0 && last == psn {
		return min(n+1, 255)
	}
	return 1
}

// cmResponse completes the READ/atomic requests of side s that a response
// answers: those before its PSN, and the one at its PSN when it ends the
// answer (READ response LAST or ONLY, an atomic ACK, an ACK).
func (a *Analyzer) cmResponse(s *cmSide, b *layers.BTH, info *layers.OpcodeInfo) {
	if s.n == 0 {
		return
	}
	psn := b.PSN
	through := psn.Add(-1)
	switch {
	case b.HasETH(layers.HdrAETH) && !b.AETH.Syndrome.IsAck():
		// A NAK or RNR NAK: the requests before its PSN are done.
	case info.Operation == layers.OpRDMAReadResponse && (info.Position == layers.PosFirst || info.Position == layers.PosMiddle):
	default:
		through = psn
	}
	for s.n > 0 && s.reads[s.head%cmReadRing].Diff(through) <= 0 {
		s.head = (s.head + 1) % cmReadRing
		s.n--
	}
}

// cmPath reports the path attributes of p that differ from the REQ's.
func (a *Analyzer) cmPath(k *cmContract, p *Packet, b *layers.BTH, conv uint32, active bool) {
	mismatch := func(sub uint8) {
		p.Analysis.CMPath |= 1 << sub
		a.finding(Finding{Kind: FindCMPathMismatch, Sub: sub, Frame: a.frame, Ref: k.REQFrame, Conv: conv, PSN: b.PSN})
	}
	if b.PKey&0x7FFF != k.PKey&0x7FFF {
		mismatch(CMPathPKey)
	}
	h := p.Headers
	switch {
	case !active && p.has&hasLRH == 0:
		// RoCE's passive side: its own traffic class and flow label.
	case p.has&hasIPv4 != 0:
		if h.IPv4.TOS>>2 != k.TrafficClass>>2 {
			mismatch(CMPathTrafficClass)
		}
	case p.has&hasIPv6 != 0:
		if h.IPv6.TrafficClass>>2 != k.TrafficClass>>2 {
			mismatch(CMPathTrafficClass)
		}
		// A zero IPv6 flow label is unlabelled (RFC 6437), not a
		// different label: Linux rxe sends 0 there and carries the
		// REQ's label in the UDP source port instead.
		if k.FlowLabel != 0 && h.IPv6.FlowLabel != 0 && h.IPv6.FlowLabel != k.FlowLabel {
			mismatch(CMPathFlowLabel)
		}
	case p.has&hasGRH != 0:
		if h.GRH.TClass>>2 != k.TrafficClass>>2 {
			mismatch(CMPathTrafficClass)
		}
		if k.FlowLabel != 0 && h.GRH.FlowLabel != k.FlowLabel {
			mismatch(CMPathFlowLabel)
		}
	}
	if p.has&hasLRH != 0 && h.LRH.SL != k.SL {
		mismatch(CMPathSL)
	}
}

// cmMRA remembers an MRA until the message it acknowledged is sent again.
type cmMRA struct {
	frame    uint32
	msg      layers.CMMRAedMessage
	deadline time.Duration
}

// cmDREQ remembers a DREQ until its DREP.
type cmDREQ struct {
	frame uint32
	conv  uint32
}

// cmMRASent records an MRA from the side that received message msg (a REQ
// or a REP) of transaction k: its sender (k.by) may not send msg again
// before the service timeout.
func (a *Analyzer) cmMRASent(k cmTID, mra *layers.CMMra, ref uint32, conv uint32) {
	t := &a.cm
	t.mras[k] = cmMRA{frame: a.frame, msg: mra.MessageMRAed, deadline: a.now + layers.CMTimeout(mra.ServiceTimeout)}
	a.finding(Finding{Kind: FindCMMRA, Frame: a.frame, Ref: ref, Conv: conv})
}

// cmResent checks a REQ or REP sent again by k.by against an MRA.
func (a *Analyzer) cmResent(k cmTID, msg layers.CMMRAedMessage, conv uint32) {
	m, ok := a.cm.mras[k]
	if !ok || m.msg != msg {
		return
	}
	delete(a.cm.mras, k)
	if a.now < m.deadline {
		a.finding(Finding{Kind: FindCMMRAIgnored, Frame: a.frame, Ref: m.frame, Conv: conv})
	}
}

// cmUnansweredDREQs reports the DREQs still without a DREP at the end of
// the capture.
func (a *Analyzer) cmUnansweredDREQs() {
	if len(a.cm.dreqs) == 0 {
		return
	}
	left := make([]cmDREQ, 0, len(a.cm.dreqs))
	for _, r := range a.cm.dreqs {
		left = append(left, r)
	}
	slices.SortFunc(left, func(x, y cmDREQ) int { return cmp.Compare(x.frame, y.frame) })
	for _, r := range left {
		a.finding(Finding{Kind: FindCMDREQUnanswered, Frame: r.frame, Conv: r.conv})
	}
	clear(a.cm.dreqs)
}
