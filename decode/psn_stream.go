package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// psnRingSize is how many recent PSNs of a stream remember their frame:
// more than rxe's window of 128 unacknowledged PSNs.
const psnRingSize = 256

// outRingSize is how many outstanding requests a direction follows (a
// power of two: indexes wrap with a mask).
const outRingSize = 128

// psnSlot is what a stream remembers of one recent PSN.
type psnSlot struct {
	psnf  uint32 // PSN in the low 24 bits, slot flags above
	frame uint32 // latest frame that carried it
	t     time.Duration
}

const (
	slotValid   = 1 << 24
	slotAckReq  = 1 << 25 // the packet asked for an ACK
	slotDupResp = 1 << 26 // the responder had already executed it (a duplicate there)
	slotLive    = 1 << 27 // sent, not yet answered
	slotBad     = 1 << 28 // damaged (CRC, malformed): the responder dropped it
	slotDone    = 1 << 29 // a PSN of a READ that completed
)

func (s *psnSlot) holds(p layers.PSN) bool {
	return s.psnf&(slotValid|layers.PSNMask) == slotValid|uint32(p)
}

type psnRing [psnRingSize]psnSlot

func (r *psnRing) at(p layers.PSN) *psnSlot { return &r[uint32(p)%psnRingSize] }

// A READ request whose RETH was not captured (a snapshot length cut it)
// has an unknown length: spanUnknown marks it, and the next request may
// land up to maxUnknownSpan PSNs on (a READ of 2 GiB at MTU 256 would take
// more, but no tool reads that much at once) before its PSNs count as lost.
const (
	spanUnknown    = ^uint32(0)
	maxUnknownSpan = 1 << 16
)

// reqState is the request stream of a direction: the PSNs its sender used,
// a model of what the receiving responder executed, and the requests not
// yet answered.
type reqState struct {
	outHead int
	outLen  int
	next    layers.PSN // the PSN expected next (highest + its span)
	highT   time.Duration
	highA   bool // the highest PSN's packet asked for an ACK
	prevPSN layers.PSN
	hasPrev bool
	// A READ whose PSN span is not known yet (no path MTU): filled in when
	// the next request shows how many PSNs it used.
	spanPending bool
	spanPSN     layers.PSN
	spanLen     uint32 // spanUnknown: the READ's RETH was not captured
	// Retransmission episode: from the first PSN sent again until new PSNs.
	inEpisode  bool
	epCause    RetransCause
	epHighest  layers.PSN
	epTailOpen bool // a timeout with no ACK-requesting packet at the top: what follows was sent and lost
	cause      RetransCause
	// Responder model: the PSN the responder expects next.
	ePSN   layers.PSN
	eValid bool
	// The highest PSN answered, for finding the request a NAK refers to.
	ansPSN   layers.PSN
	ansValid bool
	cur      msgState
	// The packet with the highest PSN so far (the one a packet in order
	// follows): whether it left a message of operation tailOp open (FIRST
	// or MIDDLE); tailKnown is false when it was damaged or unknown.
	tailKnown bool
	tailOpen  bool
	tailOp    layers.Operation
	fatal     bool
	win       layers.PSNWindow
	ring      psnRing
	out       [outRingSize]outReq
}

// outReq is an outstanding request message.
type outReq struct {
	first, last layers.PSN
	lastKnown   bool
	done        bool
	gap         bool // responses were lost (READ)
	op          OpClass
	// A response message must begin (FIRST or ONLY) at nextResp: no
	// response to the READ, or to its latest retry, has come yet.
	startAt bool
	// The READ was asked again from the middle (at nextResp, after its
	// first PSN; startAt until a response came): a responder may replay
	// the rest as MIDDLE ... LAST (rxe does) or begin it with FIRST or ONLY.
	retryMid bool
	// completed: the READ's last missing response came; it is counted.
	completed bool
	// lastResp: its LAST (or ONLY) response was captured.
	lastResp bool
	// lengthUnknown: its RETH was not captured (a snapshot length cut it).
	lengthUnknown bool
	frame         uint32 // first transmission of the first packet
	respFrame     uint32
	t0            time.Duration
	length        uint32 // RETH length of a READ
	respBytes     uint32
	// nextResp is the PSN after the highest response since the READ (or
	// its latest retry) was sent.
	nextResp layers.PSN
	// seen counts the READ's response PSNs captured, each once, whichever
	// transmission carried it.
	seen uint32
}

// respState is the READ-response stream of a direction, whose PSNs must
// follow each other.
type respState struct {
	win     layers.PSNWindow
	ring    psnRing
	started bool
	// The response packet before, in capture order: its PSN, and whether
	// it left a message open (FIRST or MIDDLE).
	prev     layers.PSN
	prevOpen bool
}

func (a *Analyzer) reqOf(d *direction) *reqState {
	if d.req == nil {
		if n := len(a.free.req); n > 0 {
			d.req = a.free.req[n-1]
			a.free.req = a.free.req[:n-1]
			*d.req = reqState{}
		} else {
			d.req = &reqState{}
		}
	}
	return d.req
}

func (a *Analyzer) respOf(d *direction) *respState {
	if d.resp == nil {
		if n := len(a.free.resp); n > 0 {
			d.resp = a.free.resp[n-1]
			a.free.resp = a.free.resp[:n-1]
			*d.resp = respState{}
		} else {
			d.resp = &respState{}
		}
	}
	return d.resp
}

// request follows a request packet of direction d.
func (a *Analyzer) request(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, bad bool) {
	r := a.reqOf(d)
	c := d.conv
	an := &p.Analysis
	psn := b.PSN
	d.lastReq = a.now
	// A READ request whose RETH the capture did not keep (unknownRead)
	// takes as many PSNs as its length says, which the next request's PSN
	// tells.
	isRead, unknownRead := false, false
	if info.Operation == layers.OpRDMAReadRequest {
		isRead = b.HasETH(layers.HdrRETH) && (p.Err == nil || p.Cut())
		unknownRead = !isRead
	}

	// The set-up exchange named the starting PSNs, but implementations
	// disagree on which side's a CM REQ carries (Linux puts the passive
	// side's there), so they are kept, not used to judge the first packet.
	hi, started := r.win.Highest()
	guessed := false // the READ before took the PSNs up to this one, as far as we know
	if started {
		if r.spanPending && r.spanPSN == hi {
			// The READ before this request used as many PSNs as its
			// responses will: known from the path MTU once a response told
			// it, else from where this request's PSN lands.
			if r.spanLen == spanUnknown {
				if dd := psn.Diff(hi); dd > 1 && dd <= maxUnknownSpan {
					r.fill(hi.Add(1), psn, a)
					guessed = true
				}
			} else if c.mtu != 0 {
				if n := layers.Segments(int(r.spanLen), c.mtu); n > 1 {
					r.fill(hi.Add(1), hi.Add(n), a)
				}
			} else if dd := psn.Diff(hi); dd > 1 && dd <= layers.Segments(int(r.spanLen), 256) {
				r.fill(hi.Add(1), psn, a)
				c.mtu = mtuFor(r.spanLen, dd)
				guessed = true
			}
			hi, _ = r.win.Highest()
		}
		r.spanPending = false
		an.ExpectedPSN = r.next
		an.Info |= InfoExpected
	}
	span := 1
	if isRead {
		span = layers.Segments(int(b.RETH.DMALength), c.mtu)
	}
	// A UDP GSO run captured before segmentation is its packets' PSNs, one
	// each, and no damage: its ICRC is bad only over the whole.
	gso := false
	if bad {
		if n, _, ok := p.GSORun(); ok {
			span, bad, gso = n, p.Err != nil && !p.Cut(), true
		}
	}
	st, gap := layers.PSNInOrder, 0
	if !r.win.ObserveNext(psn) {
		st, gap = r.win.Observe(psn)
	}
	slot := r.ring.at(psn)
	had := slot.holds(psn)
	prevFrame, prevT := slot.frame, slot.t

	retrans, lost := false, false
	switch st {
	case layers.PSNFirst, layers.PSNInOrder:
		if r.inEpisode {
			if r.epTailOpen && psn.Diff(r.epHighest) > 0 {
				retrans, lost = true, true
				if b.AckReq {
					r.epTailOpen = false
				}
			} else {
				r.inEpisode = false
			}
		}
	case layers.PSNAhead:
		r.inEpisode = false
		an.GapPSNs = uint32(gap)
		a.psnGap(d, psn, gap)
	case layers.PSNLate:
		if r.inEpisode || r.cause != CauseNone || a.now-r.highT > a.opts.ReorderWindow {
			retrans, lost = true, true
		} else {
			d.st.OutOfOrder++
			a.finding(Finding{Kind: FindOutOfOrder, Frame: a.frame, Conv: c.id, PSN: psn})
		}
	default: // duplicate, too old
		retrans = true
	}

	if retrans {
		newEpisode := !r.inEpisode || (r.hasPrev && psn.Diff(r.prevPSN) <= 0)
		if lost && r.inEpisode && r.epTailOpen && psn.Diff(r.epHighest) > 0 {
			newEpisode = false
		}
		if newEpisode {
			cause := r.cause
			r.cause = CauseNone
			switch {
			case cause == CauseNone && had && a.now-prevT < a.opts.ReorderWindow:
				// Sent again too soon for any ACK timer: a copy (a mirror port
				// seeing the packet twice) or a requester's own choice.
			case cause == CauseNone:
				cause = CauseTimeout
				d.st.AckTimeouts++
				if had {
					an.Elapsed = a.now - prevT
				}
				a.finding(Finding{Kind: FindAckTimeout, Frame: a.frame, Conv: c.id, PSN: psn})
			case cause == CauseNAK:
				d.st.GoBackN++
			}
			r.inEpisode, r.epCause = true, cause
			r.epHighest = hi
			r.epTailOpen = cause == CauseTimeout && !r.highA
		}
		an.Cause = r.epCause
		d.st.Retransmissions++
		var ref uint32
		if had && !lost {
			ref = prevFrame
			an.RetransmittedFrame = prevFrame
			an.Info |= InfoRetransmittedFrame
		} else {
			d.st.RetransLost++
		}
		a.finding(Finding{Kind: FindRetransmission, Frame: a.frame, Ref: ref, Conv: c.id, PSN: psn})
		// The PSNs from here on wait for an answer again.
		if r.ansValid && psn.Diff(r.ansPSN) <= 0 {
			r.ansPSN = psn.Add(-1)
		}
	}

	// The responder model: executed in order, a duplicate, or dropped.
	flags := uint32(slotValid | slotLive)
	if had {
		flags |= slot.psnf & slotDone
	}
	if b.AckReq {
		flags |= slotAckReq
	}
	if !r.eValid {
		r.ePSN, r.eValid = psn, true
	}
	if bad {
		flags |= slotBad
	} else {
		switch {
		case psn == r.ePSN:
			r.ePSN = psn.Add(span)
		case psn.Diff(r.ePSN) < 0:
			flags |= slotDupResp
		}
	}
	*slot = psnSlot{psnf: flags | uint32(psn), frame: a.frame, t: a.now}
	if st != layers.PSNDuplicate && st != layers.PSNTooOld && st != layers.PSNLate {
		r.highT, r.highA = a.now, b.AckReq
		r.next = psn.Add(span)
		if (isRead || gso) && span > 1 {
			r.fill(psn.Add(1), psn.Add(span), a)
			r.next = psn.Add(span)
		} else if isRead && c.mtu == 0 && b.RETH.DMALength > 256 {
			r.spanPending, r.spanPSN, r.spanLen = true, psn, b.RETH.DMALength
		} else if unknownRead {
			r.spanPending, r.spanPSN, r.spanLen = true, psn, spanUnknown
		}
	}
	r.prevPSN, r.hasPrev = psn, true

	newHigh := st == layers.PSNFirst || st == layers.PSNInOrder || st == layers.PSNAhead
	if p.Err != nil && !p.Cut() || !info.Known {
		if newHigh {
			r.tailKnown = false
		}
		return
	}
	newData := !retrans || lost
	if newData {
		an.Info |= InfoNewData
		d.st.Goodput += uint64(p.PayloadLength())
	}
	// A packet right after the highest PSN, sent for the first time, must
	// fit the packet before it; after missing PSNs (a gap), a resent one
	// or one out of order, what came just before is unknown; so it is when
	// the span of the READ before was guessed from this packet's PSN (some
	// of those PSNs may have been lost).
	judge := !retrans && !guessed && (st == layers.PSNFirst || st == layers.PSNInOrder && r.tailKnown)
	a.message(d, r, p, b, info, psn, span, retrans, newData, st == layers.PSNAhead, judge, st == layers.PSNFirst)
	if newHigh {
		r.tailKnown = !bad && info.Operation != layers.OpUnknown
		r.tailOpen = info.Position == layers.PosFirst || info.Position == layers.PosMiddle
		r.tailOp = info.Operation
	}
}

// fill marks PSNs [from, to) as used by the READ before them: each gets the
// READ's frame.
func (r *reqState) fill(from, to layers.PSN, a *Analyzer) {
	base := r.ring.at(from.Add(-1))
	for q := from; q != to; q = q.Add(1) {
		r.win.Observe(q)
		*r.ring.at(q) = psnSlot{psnf: slotValid | slotLive | uint32(q), frame: base.frame, t: base.t}
	}
	if r.eValid && r.ePSN == from {
		r.ePSN = to
	}
	r.next = to
	// The READ's outstanding entry now knows its last PSN.
	for i := r.outLen - 1; i >= 0; i-- {
		o := &r.out[(r.outHead+i)&(outRingSize-1)]
		if o.op == OpClassRead && o.first == from.Add(-1) {
			o.last, o.lastKnown = to.Add(-1), true
			break
		}
	}
}

// mtuFor guesses the path MTU from a READ of n bytes that used span PSNs.
func mtuFor(n uint32, span int) int {
	for m := 256; m <= 4096; m *= 2 {
		if layers.Segments(int(n), m) == span {
			return m
		}
	}
	return 0
}

// push makes room for an outstanding request, forgetting the oldest when
// full, and returns its slot for the caller to fill.
func (r *reqState) push() *outReq {
	if r.outLen == outRingSize {
		r.outHead = (r.outHead + 1) & (outRingSize - 1)
		r.outLen--
	}
	i := (r.outHead + r.outLen) & (outRingSize - 1)
	r.outLen++
	return &r.out[i]
}

// pop drops answered requests from the front.
func (r *reqState) pop() {
	for r.outLen > 0 && r.out[r.outHead].done {
		r.outHead = (r.outHead + 1) & (outRingSize - 1)
		r.outLen--
	}
}

// findOut returns the outstanding request whose PSNs hold p.
func (r *reqState) findOut(p layers.PSN, op OpClass) *outReq {
	for i := 0; i < r.outLen; i++ {
		o := &r.out[(r.outHead+i)&(outRingSize-1)]
		if op != OpClassNone && o.op != op {
			continue
		}
		last := o.last
		switch {
		case !o.lastKnown && o.lengthUnknown:
			last = o.first.Add(maxUnknownSpan - 1)
		case !o.lastKnown:
			last = o.first.Add(layers.Segments(int(o.length), 256) - 1)
		}
		if p.Diff(o.first) >= 0 && p.Diff(last) <= 0 {
			return o
		}
	}
	return nil
}

// firstUnanswered is the frame of the earliest request packet with a PSN at
// or after p that no response has answered yet (0 when none was captured).
func (r *reqState) firstUnanswered(p layers.PSN) (uint32, layers.PSN) {
	q := p
	if r.ansValid && r.ansPSN.Diff(q) >= 0 {
		q = r.ansPSN.Add(1)
	}
	hi, ok := r.win.Highest()
	if !ok {
		return 0, p
	}
	for n := 0; n < psnRingSize && q.Diff(hi) <= 0; n, q = n+1, q.Add(1) {
		if s := r.ring.at(q); s.holds(q) && s.psnf&slotBad == 0 {
			return s.frame, q
		}
	}
	return 0, p
}

// answered records that every PSN up to p has had its answer.
func (r *reqState) answered(p layers.PSN) {
	if !r.ansValid || p.Diff(r.ansPSN) > 0 {
		r.ansPSN, r.ansValid = p, true
	}
}

// response follows a response packet of direction d: it answers requests
// of the opposite direction.
func (a *Analyzer) response(d *direction, p *Packet, b *layers.BTH, info *layers.OpcodeInfo) {
	an := &p.Analysis
	psn := b.PSN
	peer := d.peer()
	if peer == nil {
		peer = a.pairByResponse(d, psn)
		if peer != nil {
			an.Conv, an.Dir = d.conv.id, d.side+1
		}
	}
	var r *reqState
	if peer != nil {
		r = peer.req
	}
	if b.HasETH(layers.HdrAETH) && (p.Err == nil || p.Cut()) {
		// MSN progress is counted, not judged: rxe ignores the MSN.
		if delta := (b.AETH.MSN - d.msn) & 0xFFFFFF; d.msnValid && delta < 1<<23 {
			d.st.MSNProgress += uint64(delta)
		}
		d.msn, d.msnValid = b.AETH.MSN, true
		switch syn := b.AETH.Syndrome; {
		case syn.IsNak():
			d.st.NAKs[min(syn.NAKCode(), 7)]++
			a.nak(d, r, p, psn, syn)
			return
		case syn.IsRNRNak():
			d.st.RNRNAKs++
			a.rnrNak(d, r, p, psn, syn)
			return
		case syn.IsAck():
			if n, ok := syn.Credits(); ok && n == 0 && info.Operation == layers.OpAcknowledge {
				a.finding(Finding{Kind: FindCreditsExhausted, Frame: a.frame, Conv: d.conv.id, PSN: psn})
			}
		}
	}
	if r == nil {
		return
	}
	switch info.Operation {
	case layers.OpRDMAReadResponse:
		a.readResponse(d, r, p, b, info, psn)
	case layers.OpAtomicAcknowledge:
		a.ack(d, r, p, psn, psn.Add(-1), true)
	default:
		a.ack(d, r, p, psn, psn, false)
	}
}

// ack handles an ACK (or ATOMIC ACK) for PSN p: every SEND and WRITE
// through done is complete; an ATOMIC ACK also completes the atomic at p.
func (a *Analyzer) ack(d *direction, r *reqState, p *Packet, psn, done layers.PSN, atomic bool) {
	an := &p.Analysis
	slot := r.ring.at(psn)
	if slot.holds(psn) {
		an.RequestFrame = slot.frame
		an.AckRTT = a.now - slot.t
		an.Info |= InfoRequest | InfoAckRTT
		if slot.psnf&slotDupResp != 0 {
			d.st.Duplicates++
			a.finding(Finding{Kind: FindDuplicate, Frame: a.frame, Ref: slot.frame, Conv: d.conv.id, PSN: psn})
		}
	}
	r.answered(psn)
	a.complete(d, r, done, p, false)
	if atomic {
		if o := r.findOut(psn, OpClassNone); o != nil && (o.op == OpClassFetchAdd || o.op == OpClassCompareSwap) && !o.done {
			a.finishOut(d, r, o, p)
		}
	}
	r.pop()
}

// complete marks every SEND/WRITE request ending at or before p answered by
// the current response. A READ or atomic that ends before p and is still
// waiting lost its response before the capture point (responses come in
// order). After an ACK beyond it, it stops waiting, with no latency, until
// it is asked again (retryRead). After a NAK or the response of a later
// READ (keep), it keeps waiting: the requester will ask again.
func (a *Analyzer) complete(d *direction, r *reqState, p layers.PSN, pkt *Packet, keep bool) {
	for i := 0; i < r.outLen; i++ {
		o := &r.out[(r.outHead+i)&(outRingSize-1)]
		if o.first.Diff(p) > 0 {
			break
		}
		if o.done || !o.lastKnown || o.last.Diff(p) > 0 {
			continue
		}
		switch o.op {
		case OpClassRead, OpClassFetchAdd, OpClassCompareSwap:
			if o.last.Diff(p) < 0 {
				o.done, o.gap = !keep, true
			}
			continue
		}
		a.finishOut(d, r, o, pkt)
	}
}

// finishOut records the answer to an outstanding request.
func (a *Analyzer) finishOut(d *direction, r *reqState, o *outReq, pkt *Packet) {
	o.done = true
	lat := a.now - o.t0
	d.conv.lat.Add(lat)
	if a.opts.OnLatency != nil {
		a.opts.OnLatency(Latency{Op: o.op, D: lat, Request: o.frame, Response: a.frame, Conv: d.conv.id})
	}
	an := &pkt.Analysis
	if an.Info&InfoLatency == 0 || o.op != OpClassSend && o.op != OpClassWrite {
		an.Latency, an.Op = lat, o.op
		an.Info |= InfoLatency
	}
	if o.respFrame == 0 {
		o.respFrame = a.frame
	}
	if l := a.opts.Links; l != nil {
		l.respond(o.frame, o.respFrame, a.frame)
	}
}

// nak handles a NAK: a PSN sequence error starts go-back-N at psn; the
// other codes end the QP.
func (a *Analyzer) nak(d *direction, r *reqState, p *Packet, psn layers.PSN, syn layers.AETHSyndrome) {
	code := syn.NAKCode()
	sev := SevError
	if code == layers.NAKPSNSequenceError {
		sev = SevWarn
	}
	var ref uint32
	if r != nil {
		var q layers.PSN
		ref, q = r.firstUnanswered(psn)
		if ref != 0 {
			p.Analysis.RequestFrame = ref
			p.Analysis.Info |= InfoRequest
			r.answered(q)
		}
		a.complete(d, r, psn.Add(-1), p, true)
		r.pop()
		if code == layers.NAKPSNSequenceError {
			if r.cause == CauseNone {
				r.cause = CauseNAK
			}
			r.ePSN, r.eValid = psn, true
		} else {
			r.fatal = true
			d.conv.state = ConvError
		}
	} else if code != layers.NAKPSNSequenceError {
		d.conv.state = ConvError
	}
	a.finding(Finding{Kind: FindNAK, Sub: uint8(code), Severity: sev, Frame: a.frame, Ref: ref, Conv: d.conv.id, PSN: psn})
}

// rnrNak handles an RNR NAK: the request at psn was refused and will be
// sent again after the timer.
func (a *Analyzer) rnrNak(d *direction, r *reqState, p *Packet, psn layers.PSN, syn layers.AETHSyndrome) {
	var ref uint32
	if r != nil {
		var q layers.PSN
		ref, q = r.firstUnanswered(psn)
		if ref != 0 {
			p.Analysis.RequestFrame = ref
			p.Analysis.Info |= InfoRequest
			r.answered(q)
		}
		a.complete(d, r, psn.Add(-1), p, true)
		r.pop()
		if r.cause == CauseNone {
			r.cause = CauseRNR
		}
		r.ePSN, r.eValid = psn, true
	}
	a.finding(Finding{Kind: FindRNRNAK, Sub: syn.Value(), Frame: a.frame, Ref: ref, Conv: d.conv.id, PSN: psn})
}

// readResponse follows a READ response packet. A READ completes at the
// response that leaves none of its PSNs missing, its LAST (or ONLY) among
// them, whichever transmission carried each: a READ asked again, whole or
// from a missing PSN on, is the same message (see retryRead).
func (a *Analyzer) readResponse(d *direction, r *reqState, p *Packet, b *layers.BTH, info *layers.OpcodeInfo, psn layers.PSN) {
	an := &p.Analysis
	rs := a.respOf(d)
	c := d.conv
	pos := info.Position
	if (p.Err == nil || p.Cut()) && (pos == layers.PosFirst || pos == layers.PosMiddle) && p.PayloadLength() > c.mtu {
		c.mtu = p.PayloadLength()
	}
	o := r.findOut(psn, OpClassRead)
	st, gap := layers.PSNInOrder, 0
	if !rs.win.ObserveNext(psn) {
		st, gap = rs.win.Observe(psn)
	}
	slot := rs.ring.at(psn)
	had := slot.holds(psn)
	retrans := st == layers.PSNDuplicate || st == layers.PSNTooOld
	lost := false
	if st == layers.PSNLate {
		// Behind the highest and never captured: sent again after a
		// duplicate READ, its first transmission lost before the capture
		// point (the READ may be answered already).
		retrans, lost = true, true
	}
	if st == layers.PSNFirst && o != nil && psn.Diff(o.first) > 0 {
		st, gap = layers.PSNAhead, psn.Diff(o.first)
	}
	if st == layers.PSNAhead && o != nil && r.findOut(psn.Add(-1), OpClassRead) != nil {
		// Response PSNs of a READ were skipped (the PSNs of requests that
		// an ACK answers are no gap; a response that answers no READ
		// followed is not judged).
		an.GapPSNs = uint32(gap)
		o.gap = true
		r.cause = CauseReadLoss
		a.psnGap(d, psn, gap)
	}
	if pos == layers.PosMiddle || pos == layers.PosLast {
		a.readSequence(d, rs, o, psn)
	}
	rs.started = true
	rs.prev, rs.prevOpen = psn, pos == layers.PosFirst || pos == layers.PosMiddle
	if o != nil {
		o.startAt = false
	}
	if retrans {
		d.st.Retransmissions++
		an.Cause = CauseDupRequest
		var ref uint32
		if had && !lost {
			ref = slot.frame
			an.RetransmittedFrame = ref
			an.Info |= InfoRetransmittedFrame
		} else {
			d.st.RetransLost++
		}
		a.finding(Finding{Kind: FindRetransmission, Frame: a.frame, Ref: ref, Conv: c.id, PSN: psn})
	}
	*slot = psnSlot{psnf: slotValid | uint32(psn), frame: a.frame, t: a.now}
	if o == nil || p.Err != nil && !p.Cut() {
		return
	}
	an.RequestFrame = o.frame
	an.Info |= InfoRequest
	if !retrans || lost {
		an.Info |= InfoNewData
		d.st.Goodput += uint64(p.PayloadLength())
	}
	if pos == layers.PosFirst || pos == layers.PosOnly {
		an.Info |= InfoMessageStart
		if o.respFrame == 0 {
			o.respFrame = a.frame
		}
		// A READ response means the requests before the READ are done.
		a.complete(d, r, o.first.Add(-1), p, true)
	}
	if psn.Diff(o.nextResp) >= 0 {
		o.nextResp = psn.Add(1)
	}
	if o.completed {
		return
	}
	if !retrans || lost {
		o.seen++
		o.respBytes += uint32(p.PayloadLength())
	}
	if pos == layers.PosLast || pos == layers.PosOnly {
		o.last, o.lastKnown, o.lastResp = psn, true, true
		r.answered(psn)
	}
	if !o.lastResp {
		return
	}
	span := o.last.Diff(o.first) + 1
	if int(o.seen) < span {
		// Some came before the READ was followed (its request resent
		// after its first responses): the ring of recent PSNs knows.
		if span > psnRingSize || !rs.ring.holdsAll(o.first, span) {
			return
		}
		if c.mtu > 0 && layers.Segments(int(o.length), c.mtu) == span {
			o.respBytes = o.length
		}
	}
	a.completeRead(d, r, o, p)
	r.pop()
}

// holdsAll reports whether the n PSNs from p on were all captured.
func (r *psnRing) holdsAll(p layers.PSN, n int) bool {
	for ; n > 0; n, p = n-1, p.Add(1) {
		if !r.at(p).holds(p) {
			return false
		}
	}
	return true
}

// completeRead ends READ o at the current response: its latency from the
// first request, the message counted once with its size.
func (a *Analyzer) completeRead(d *direction, r *reqState, o *outReq, p *Packet) {
	an := &p.Analysis
	o.completed = true
	if n := o.last.Diff(o.first); n < psnRingSize {
		// A READ asked again once its state is gone is no new message.
		for q := o.first; n >= 0; n, q = n-1, q.Add(1) {
			if s := r.ring.at(q); s.holds(q) {
				s.psnf |= slotDone
			}
		}
	}
	an.MessageFrame = o.frame
	an.MessageSize = o.respBytes
	an.Info |= InfoMessage
	if req := d.peer(); req != nil {
		a.countMessage(req, p, OpClassRead)
	}
	a.finishOut(d, r, o, p)
	if !o.gap && !o.lengthUnknown && o.respBytes != o.length {
		d.st.SeqErrors++
		a.finding(Finding{Kind: FindRETHLengthMismatch, Frame: o.frame, Conv: d.conv.id, PSN: o.first})
	}
}

// psnGap records n PSNs missing before psn in what d sends: one count for
// the conversation table, the finding for the expert.
func (a *Analyzer) psnGap(d *direction, psn layers.PSN, n int) {
	d.st.PSNGaps++
	d.st.GapPSNs += uint64(n)
	a.finding(Finding{Kind: FindPSNGap, Frame: a.frame, Conv: d.conv.id, PSN: psn, Count: uint32(n)})
}

// readSequence judges a READ response MIDDLE or LAST at psn that does not
// continue the response message of the packet before it. A responder
// starts every response message with FIRST or ONLY, and the rest of a READ
// asked again from its middle with FIRST, ONLY, MIDDLE or LAST (rxe
// replays the rest as MIDDLE ... LAST); so the packet is out of sequence
// only when no PSN of its message can be missing: it is the first PSN of a
// READ (or of a READ asked again whole), or it comes straight after a
// complete message. Otherwise the message began among PSNs the capture
// lacks (lost before the capture point: a gap, or the start of a resent
// sequence), which is no protocol error. On the first response of the
// capture without its READ, the capture may have begun inside the
// message: a warning.
func (a *Analyzer) readSequence(d *direction, rs *respState, o *outReq, psn layers.PSN) {
	if rs.started && rs.prevOpen && psn == rs.prev.Add(1) {
		return
	}
	if o != nil && o.retryMid && o.startAt && psn == o.nextResp {
		return
	}
	sev := SevNone
	switch {
	case o != nil && o.startAt && psn == o.nextResp:
		sev = SevError
	case rs.started && !rs.prevOpen && psn == rs.prev.Add(1):
		sev = SevError
	case !rs.started && o == nil:
		sev = SevWarn
	}
	if sev == SevNone {
		return
	}
	d.st.SeqErrors++
	a.finding(Finding{Kind: FindBadOpcodeSequence, Severity: sev, Frame: a.frame, Conv: d.conv.id, PSN: psn})
}

// udTrack follows the PSNs of one UD sender (address and QP): a UD QP uses
// one PSN sequence for every destination.
type udTrack struct{ win layers.PSNWindow }

type udSender struct {
	src addrKey
	qp  uint32
}

// udPSN looks for gaps in a UD sender's PSNs.
func (a *Analyzer) udPSN(d *direction, p *Packet, b *layers.BTH) {
	k := udSender{d.key.src, d.key.udSrc &^ udSrcFlag}
	t, ok := a.ud[k]
	if !ok {
		if len(a.ud) >= 4*a.opts.MaxLive {
			clear(a.ud)
		}
		t = &udTrack{}
		a.ud[k] = t
	}
	st, gap := t.win.Observe(b.PSN)
	switch st {
	case layers.PSNAhead:
		p.Analysis.GapPSNs = uint32(gap)
		a.psnGap(d, b.PSN, gap)
	case layers.PSNDuplicate:
		d.st.Retransmissions++
		a.finding(Finding{Kind: FindRetransmission, Frame: a.frame, Conv: d.conv.id, PSN: b.PSN})
	}
}
