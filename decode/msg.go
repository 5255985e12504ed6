package decode

import "github.com/ibwire/ibwire/layers"

// msgState is the SEND or RDMA WRITE message a request stream is in the
// middle of (FIRST seen, LAST not yet).
type msgState struct {
	active   bool
	gapped   bool // PSNs of the message were lost before the capture point
	orphan   bool // its FIRST was not seen: it began after a gap
	lastSeen bool
	hasRETH  bool
	op       layers.Operation
	first    layers.PSN
	last     layers.PSN
	frame    uint32
	pkts     uint32 // distinct PSNs seen
	bytes    uint32
	mtu      uint32 // payload of its FIRST and MIDDLE packets
	reth     uint32
	out      *outReq
}

// message follows the message a request packet belongs to: FIRST, MIDDLE,
// LAST in order, and the outstanding request it makes.
func (a *Analyzer) message(d *direction, r *reqState, p *Packet, b *layers.BTH, info *layers.OpcodeInfo,
	psn layers.PSN, span int, retrans, newData, ahead, judge, streamStart bool) {
	op := info.Operation
	cls := opClassOf(op)
	pos := info.Position
	payload := uint32(p.PayloadLength())
	cur := &r.cur
	first := d.st.Packets == 1 || streamStart
	// The packet just before this one (judge: it was captured) left a
	// message open, or none: the opcode must fit. Which message each packet
	// belongs to is cur's business; whether the opcodes follow each other
	// is judged on the packet before only, so a gap (the FIRST or LAST of a
	// message lost before the capture point) is never taken for an error.
	open := r.tailKnown && r.tailOpen && !streamStart
	openOp := r.tailOp

	if retrans {
		// A resent packet may fill a hole of the message in progress; its
		// LAST may complete it.
		if cur.active && cur.op == op && psn.Diff(cur.first) >= 0 && (!cur.lastSeen || psn.Diff(cur.last) <= 0) {
			if newData {
				cur.pkts++
				cur.bytes += payload
			}
			if pos == layers.PosLast {
				a.lastOf(r, psn)
				if newData {
					a.messageEnd(d, r, p, cls, psn, payload, true)
				}
			}
			a.tryFinish(d, r)
			return
		}
		if pos == layers.PosLast && newData {
			// The LAST of a message followed no more (lost before the
			// capture point, sent again): it still counts once.
			a.messageEnd(d, r, p, cls, psn, payload, false)
		}
		switch o := r.findOut(psn, cls); {
		case cls == OpClassRead && o != nil:
			// The same READ asked again, whole or from a missing PSN on
			// (a new RETH for the rest): the same message.
			if !o.completed {
				a.retryRead(o, psn)
			}
		case cls == OpClassRead && newData:
			// Its first transmission was not captured: the message
			// begins here.
			a.pushOut(d, r, p, b, psn, span, cls, false, true)
		case cls == OpClassRead && r.ring.at(psn).psnf&slotDone == 0:
			// A READ given up (an ACK went beyond it) and forgotten,
			// asked again: follow it again.
			a.pushOut(d, r, p, b, psn, span, cls, false, false)
		case (cls == OpClassFetchAdd || cls == OpClassCompareSwap) && o == nil:
			// An atomic resent after its answer was lost: follow the new
			// request.
			a.pushOut(d, r, p, b, psn, span, cls, false, false)
		}
		return
	}

	switch pos {
	case layers.PosFirst:
		// A message is open and no PSN is missing before this one: its
		// LAST was never sent.
		if judge && open {
			a.badSequence(d, p, psn, first)
		}
		*cur = msgState{active: true, op: op, first: psn, frame: a.frame, pkts: 1, bytes: payload, gapped: ahead, mtu: payload}
		if b.HasETH(layers.HdrRETH) {
			cur.hasRETH, cur.reth = true, b.RETH.DMALength
		}
		cur.out = a.pushOut(d, r, p, b, psn, 0, cls, true, false)
		p.Analysis.Info |= InfoMessageStart
	case layers.PosMiddle, layers.PosLast:
		if judge && (!open || openOp != op) {
			// Nothing was lost just before, and it did not leave a
			// message of this operation open.
			a.badSequence(d, p, psn, first)
		}
		if !cur.active || cur.op != op || cur.lastSeen && psn.Diff(cur.last) > 0 {
			// No message of this operation is open here: its FIRST was
			// lost before the capture point (or never sent). Follow the
			// rest of the message: a resent FIRST may still complete it.
			*cur = msgState{active: true, gapped: true, orphan: true, op: op, first: psn, frame: a.frame, pkts: 1, bytes: payload}
			cur.out = a.pushOut(d, r, p, b, psn, 0, cls, true, false)
			if pos == layers.PosLast {
				a.lastOf(r, psn)
				a.messageEnd(d, r, p, cls, psn, payload, true)
			}
			return
		}
		if ahead {
			cur.gapped = true
		}
		cur.pkts++
		cur.bytes += payload
		if pos == layers.PosMiddle {
			cur.mtu = max(cur.mtu, payload)
		}
		if pos == layers.PosLast {
			a.lastOf(r, psn)
			a.messageEnd(d, r, p, cls, psn, payload, true)
			a.tryFinish(d, r)
		}
	default: // ONLY, and requests that are not segmented (READ, atomics)
		if judge && open {
			a.badSequence(d, p, psn, first)
		}
		cur.active = false
		if cls == OpClassNone {
			return
		}
		a.pushOut(d, r, p, b, psn, span, cls, false, true)
		if cls != OpClassRead {
			// A READ counts when its last response is taken.
			a.countMessage(d, p, cls)
		}
		if op == layers.OpSend || op == layers.OpRDMAWrite {
			an := &p.Analysis
			an.MessageFrame, an.MessageSize = a.frame, payload
			an.Info |= InfoMessage | InfoMessageStart
			if op == layers.OpRDMAWrite && b.HasETH(layers.HdrRETH) && b.RETH.DMALength != payload {
				d.st.SeqErrors++
				a.finding(Finding{Kind: FindRETHLengthMismatch, Frame: a.frame, Conv: d.conv.id, PSN: psn})
			}
		}
	}
}

// pushOut starts following a request message; start says the packet
// starts it (not a READ or atomic asked again, nor a message whose FIRST
// was lost).
func (a *Analyzer) pushOut(d *direction, r *reqState, p *Packet, b *layers.BTH, psn layers.PSN, span int,
	cls OpClass, open, start bool) *outReq {
	if r.outLen > 0 {
		// A message begins: the one before it ends just before.
		if t := &r.out[(r.outHead+r.outLen-1)&(outRingSize-1)]; !t.lastKnown && psn.Diff(t.first) > 0 {
			t.last, t.lastKnown = psn.Add(-1), true
		}
	}
	if start {
		p.Analysis.Info |= InfoMessageStart
	}
	if d.conv.svc != layers.ServiceRC && d.conv.svc != layers.ServiceXRC && d.conv.svc != layers.ServiceRD {
		// UC: nothing answers.
		return nil
	}
	// The request is written where it will live, zeroed and then filled
	// field by field: this runs for every request message, and a composite
	// literal with variables in it is built aside and copied in, which
	// costs the analysis several percent.
	o := r.push()
	*o = outReq{}
	o.first, o.op, o.frame, o.t0, o.nextResp = psn, cls, a.frame, a.now, psn
	if !open {
		o.last, o.lastKnown = psn.Add(span-1), !r.spanPending || r.spanPSN != psn
	}
	if cls == OpClassRead {
		o.length, o.lengthUnknown = b.RETH.DMALength, !b.HasETH(layers.HdrRETH)
		o.startAt = true
	}
	return o
}

// lastOf records that the message in progress ends at psn.
func (a *Analyzer) lastOf(r *reqState, psn layers.PSN) {
	cur := &r.cur
	cur.lastSeen, cur.last = true, psn
	if o := cur.out; o != nil && o.first == cur.first && !o.done {
		o.last, o.lastKnown = psn, true
	}
}

// messageEnd counts the message whose LAST is the current packet, at psn
// (withCur: the message in progress, r.cur): the packet says which frame
// began it and its size, as far as known (every PSN may not be captured
// yet: a WRITE's RETH length, else whole packets up to the LAST).
func (a *Analyzer) messageEnd(d *direction, r *reqState, p *Packet, cls OpClass, psn layers.PSN, payload uint32, withCur bool) {
	a.countMessage(d, p, cls)
	an := &p.Analysis
	an.Info |= InfoMessage
	an.MessageFrame, an.MessageSize = a.frame, payload
	if !withCur {
		return
	}
	cur := &r.cur
	an.MessageFrame, an.MessageSize = cur.frame, cur.bytes
	switch {
	case cur.orphan:
	case cur.hasRETH:
		an.MessageSize = cur.reth
	case cur.mtu > 0:
		an.MessageSize = uint32(psn.Diff(cur.first))*cur.mtu + payload
	}
}

// tryFinish checks the message in progress once its LAST and every PSN
// before it were seen: a WRITE moved its RETH length.
func (a *Analyzer) tryFinish(d *direction, r *reqState) {
	cur := &r.cur
	if !cur.lastSeen || int(cur.pkts) != cur.last.Diff(cur.first)+1 {
		return
	}
	if cur.hasRETH && cur.reth != cur.bytes {
		d.st.SeqErrors++
		a.finding(Finding{Kind: FindRETHLengthMismatch, Frame: cur.frame, Conv: d.conv.id, PSN: cur.first})
	}
	cur.active = false
}

// badSequence reports an opcode that cannot follow the one before. On the
// first packet of a stream it is only a warning: the capture may have begun
// inside a message.
func (a *Analyzer) badSequence(d *direction, p *Packet, psn layers.PSN, first bool) {
	d.st.SeqErrors++
	sev := SevError
	if first {
		sev = SevWarn
	}
	a.finding(Finding{Kind: FindBadOpcodeSequence, Severity: sev, Frame: a.frame, Conv: d.conv.id, PSN: psn})
}

// countMessage counts a message of direction d, once: at its LAST or ONLY
// packet (atomics at their request, READs at the response that completes
// them), whichever transmission of it was the first captured.
func (a *Analyzer) countMessage(d *direction, p *Packet, cls OpClass) {
	d.st.Messages++
	d.st.Ops[cls]++
}

// retryRead follows READ o asked again from PSN q (whole, or from a
// missing response on): the responses start again at q.
func (a *Analyzer) retryRead(o *outReq, q layers.PSN) {
	o.done, o.startAt = false, true
	o.nextResp = q
	o.retryMid = q != o.first
}
