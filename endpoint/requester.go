package endpoint

import (
	"encoding/binary"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// maxUnackedPSNs is how far rxe's requester runs ahead of the oldest
// unacknowledged PSN (RXE_MAX_UNACKED_PSNS, ENDPOINT.md §1.7).
const maxUnackedPSNs = 128

// maxPktsPerAck: the A bit goes on the last packet of a message and on a
// packet once more than this many went without one (RXE_MAX_PKT_PER_ACK).
const maxPktsPerAck = 64

// infiniteRetry is the retry count rxe treats as unlimited, for both
// retry_cnt and rnr_retry.
const infiniteRetry = 7

// wqe is a send work request inside the requester.
type wqe struct {
	p      postedWR
	sgl    [][]byte // local memory, resolved at post
	length int
	status Status // non-success: a local error found at post
	vendor string

	assigned bool // PSNs given out
	first    layers.PSN
	last     layers.PSN
	off      int // bytes of a SEND/WRITE sent since the last rewind
	readDone int // bytes of a READ received
	sentAll  bool
}

func (w *wqe) op() WROpcode { return w.p.wr.Op }

func (w *wqe) rdAtomic() bool {
	switch w.op() {
	case WRRead, WRCompareSwap, WRFetchAdd:
		return true
	}
	return false
}

func (w *wqe) atomic() bool { return w.op() == WRCompareSwap || w.op() == WRFetchAdd }

// requester is the send side of a QP and its completer: segmentation, the
// ACK-request policy, the PSN window, retransmission and RNR waits, and
// completions in order.
type requester struct {
	qp   *QP
	ring []wqe
	// head is the oldest WR not completed, next the one being sent, tail
	// the end of the posted ones (counters; the ring index is mod len).
	head, next, tail uint64
	psn              layers.PSN // next PSN to send
	comp             layers.PSN // oldest PSN not acknowledged
	noack            int
	rdOut            int
	retryLeft        uint8
	rnrLeft          uint8
	retryTimer       *time.Timer
	retryArmed       bool
	rnrTimer         *time.Timer
	rnrWait          bool
	// startedRetry: a retry ran and nothing was acknowledged since; only
	// a timeout starts another (rxe's comp.started_retry).
	startedRetry bool
}

func (r *requester) init(qp *QP, n int) {
	r.qp = qp
	r.ring = make([]wqe, n)
	r.retryTimer = time.NewTimer(time.Hour)
	r.retryTimer.Stop()
	r.rnrTimer = time.NewTimer(time.Hour)
	r.rnrTimer.Stop()
}

func (r *requester) at(i uint64) *wqe { return &r.ring[i%uint64(len(r.ring))] }

func (r *requester) stopTimers() {
	r.retryTimer.Stop()
	r.retryArmed = false
	r.rnrTimer.Stop()
	r.rnrWait = false
}

// reset forgets every WR without completing it (→ RESET).
func (r *requester) reset() {
	r.stopTimers()
	r.qp.sqCount.Add(-int32(r.tail - r.head))
	for i := r.head; i < r.tail; i++ {
		r.clear(r.at(i))
	}
	r.head, r.next, r.tail = 0, 0, 0
	r.startedRetry = false
	r.psn, r.comp, r.noack, r.rdOut = 0, 0, 0, 0
}

func (r *requester) clear(w *wqe) {
	sgl := w.sgl[:0]
	*w = wqe{sgl: sgl}
}

// start readies the requester at sq_psn (RTR → RTS).
func (r *requester) start(psn layers.PSN) {
	r.psn, r.comp = psn, psn
	r.retryLeft, r.rnrLeft = r.qp.attr.RetryCnt, r.qp.attr.RNRRetry
}

// post takes a WR from PostSend into the send queue.
func (r *requester) post(p postedWR) {
	qp := r.qp
	if qp.state == StateErr || qp.state == StateSQE {
		qp.sqCount.Add(-1)
		qp.sendCQ.push(WC{ID: p.wr.ID, Status: StatusWRFlushErr, Op: wcOpcode(p.wr.Op), QPN: qp.qpn})
		return
	}
	w := r.at(r.tail)
	r.clear(w)
	w.p = p
	write := p.wr.Op == WRRead || p.wr.Op == WRCompareSwap || p.wr.Op == WRFetchAdd
	sgl, total, err := qp.dev.resolveSGL(qp.pd, p.sges[:p.nsge], write, w.sgl[:0])
	w.sgl = sgl
	w.length = int(total)
	switch {
	case err != nil:
		w.status, w.vendor = StatusLocProtErr, "local key, range or access"
	case total > 1<<31:
		w.status, w.vendor = StatusLocLenErr, "message longer than 2^31"
	case w.atomic() && total < 8:
		w.status, w.vendor = StatusLocLenErr, "atomic result SGE shorter than 8 bytes"
	}
	r.tail++
}

// hasWork reports whether send would do something now.
func (r *requester) hasWork() bool {
	qp := r.qp
	if qp.state != StateRTS || r.rnrWait || r.next == r.tail {
		return false
	}
	w := r.at(r.next)
	if w.status != StatusSuccess {
		return r.next == r.head
	}
	if qp.typ == RC {
		if r.psn.Diff(r.comp) > maxUnackedPSNs {
			return false
		}
		if w.rdAtomic() && r.rdOut >= roundPow2(qp.attr.MaxRdAtomic) {
			return false
		}
	}
	return true
}

// send sends up to one batch of packets.
func (r *requester) send() {
	for range txBatch {
		if !r.hasWork() {
			return
		}
		w := r.at(r.next)
		if w.status != StatusSuccess {
			// A WR that failed locally completes in error once
			// everything before it has. An RC QP goes to ERR; UC and
			// UD go to SQE, where sends are flushed and receives go
			// on (IBTA Vol 1 §10.3.1).
			// The state changes before the completion shows: an
			// application that polls the error and then asks the QP's
			// state must see ERR or SQE, not RTS.
			if r.qp.typ == RC {
				r.qp.setState(StateErr)
				r.complete(w.status, w.vendor)
				r.qp.enterError()
			} else {
				r.qp.setState(StateSQE)
				r.complete(w.status, w.vendor)
				r.flushAll()
			}
			return
		}
		r.sendPacket(w)
	}
}

// packets is how many PSNs a WR uses.
func (r *requester) packets(w *wqe) int {
	if w.atomic() || r.qp.typ == UD {
		return 1
	}
	return layers.Segments(w.length, r.qp.mtu)
}

func (r *requester) sendPacket(w *wqe) {
	qp := r.qp
	mtu := qp.mtu
	if !w.assigned {
		w.assigned = true
		w.first = r.psn
		w.last = r.psn.Add(r.packets(w) - 1)
	}
	remote, hop := qp.attr.Remote, qp.attr.HopLimit
	sport := udpSourcePort(qp.attr.FlowLabel, qp.qpn, qp.attr.DestQPN)
	svc := serviceOf(qp.typ)
	wr := &w.p.wr
	switch wr.Op {
	case WRSend, WRSendWithImm, WRSendWithInv, WRWrite, WRWriteWithImm:
		if qp.typ == UD {
			r.sendUD(w)
			return
		}
		remaining := w.length - w.off
		first, last := w.off == 0, remaining <= mtu
		pos := layers.PositionOf(first, last)
		plen := min(remaining, mtu)
		isWrite := wr.Op == WRWrite || wr.Op == WRWriteWithImm
		operation := layers.OpSend
		if isWrite {
			operation = layers.OpRDMAWrite
		}
		imm := last && (wr.Op == WRSendWithImm || wr.Op == WRWriteWithImm)
		inv := last && wr.Op == WRSendWithInv
		h, payload := qp.start(opcodeFor(svc, operation, pos, imm, inv), plen)
		gather(w.sgl, w.off, payload)
		h.PSN = r.psn
		if isWrite && first {
			h.RETH = layers.RETH{VA: wr.RemoteAddr, RKey: wr.RKey, DMALength: uint32(w.length)}
		}
		if imm {
			h.ImmDt.Value = wr.Imm
		}
		if inv {
			h.IETH.RKey = wr.InvalidateRKey
		}
		h.SE = last && wr.Solicited && (wr.Op != WRWrite)
		h.AckReq = qp.typ == RC && r.ackReq(last)
		qp.finish(remote, sport, hop)
		w.off += plen
		r.psn = r.psn.Add(1)
		if h.AckReq {
			r.armTimer()
		}
		if last {
			r.next++
			w.sentAll = true // a UC WR completes once the QP has written it (QP.run)
		}
	case WRRead:
		h, _ := qp.start(opcodeFor(svc, layers.OpRDMAReadRequest, layers.PosOnly, false, false), 0)
		h.PSN = w.first.Add(w.readDone / mtu)
		h.RETH = layers.RETH{VA: wr.RemoteAddr + uint64(w.readDone), RKey: wr.RKey, DMALength: uint32(w.length - w.readDone)}
		h.AckReq = r.ackReq(true)
		qp.finish(remote, sport, hop)
		r.psn = w.last.Add(1)
		r.next++
		r.rdOut++
		w.sentAll = true
		r.armTimer()
	case WRCompareSwap, WRFetchAdd:
		operation, swapAdd := layers.OpCompareSwap, wr.Swap
		if wr.Op == WRFetchAdd {
			operation, swapAdd = layers.OpFetchAdd, wr.CompareAdd
		}
		h, _ := qp.start(opcodeFor(svc, operation, layers.PosOnly, false, false), 0)
		h.PSN = r.psn
		h.AtomicETH = layers.AtomicETH{VA: wr.RemoteAddr, RKey: wr.RKey, SwapAddData: swapAdd, CompareData: wr.CompareAdd}
		h.AckReq = r.ackReq(true)
		qp.finish(remote, sport, hop)
		r.psn = r.psn.Add(1)
		r.next++
		r.rdOut++
		w.sentAll = true
		r.armTimer()
	}
}

// sendUD sends a UD SEND; a message longer than the MTU completes without
// being sent, as rxe does.
func (r *requester) sendUD(w *wqe) {
	qp := r.qp
	wr := &w.p.wr
	r.next++
	w.sentAll = true // it completes once the QP has written it (QP.run)
	if w.length > qp.mtu {
		return
	}
	imm := wr.Op == WRSendWithImm
	h, payload := qp.start(opcodeFor(layers.ServiceUD, layers.OpSend, layers.PosOnly, imm, false), w.length)
	gather(w.sgl, 0, payload)
	h.PSN = r.psn
	h.DestQP = wr.Dest.QPN
	h.SE = wr.Solicited
	qkey := wr.Dest.QKey
	if qkey&0x80000000 != 0 && qkey != layers.GSIQKey {
		qkey = qp.attr.QKey
	}
	h.DETH = layers.DETH{QKey: qkey, SrcQP: qp.qpn}
	if imm {
		h.ImmDt.Value = wr.Imm
	}
	hop := wr.Dest.HopLimit
	if hop == 0 {
		hop = qp.attr.HopLimit
	}
	qp.finish(wr.Dest.Addr.Unmap(), udSourcePort(qp.qpn), hop)
	r.psn = r.psn.Add(1)
}

// ackReq applies rxe's policy: the A bit on the last packet of a message,
// and on a packet once more than maxPktsPerAck went without it.
func (r *requester) ackReq(last bool) bool {
	if !last {
		n := r.noack
		r.noack++
		if n <= maxPktsPerAck {
			return false
		}
	}
	r.noack = 0
	return true
}

// armTimer starts the retransmission timer unless it runs already: rxe
// kicks it forward rather than restarting it on every packet.
func (r *requester) armTimer() {
	d := timeoutDuration(r.qp.attr.Timeout)
	if d == 0 || r.retryArmed {
		return
	}
	r.retryTimer.Reset(d)
	r.retryArmed = true
}

// progress records that everything before psn was acknowledged.
func (r *requester) progress(psn layers.PSN) {
	if psn.Diff(r.comp) <= 0 {
		return
	}
	r.comp = psn
	r.retryLeft, r.rnrLeft = r.qp.attr.RetryCnt, r.qp.attr.RNRRetry
	r.startedRetry = false
	if r.psn.Less(r.comp) {
		// A late ACK covers packets this side went back to resend:
		// resume at the first unacknowledged one.
		r.rewind()
	}
	r.retryTimer.Stop()
	r.retryArmed = false
	if r.psn.Diff(r.comp) > 0 {
		r.armTimer()
	}
}

// completeSent completes UC and UD WRs, which need no acknowledgement, in
// order, once their packets are on the wire: the QP's loop calls it after
// each flush, so a completion never runs ahead of the datagrams it
// reports sent.
func (r *requester) completeSent() {
	for r.head < r.next {
		w := r.at(r.head)
		if !w.sentAll {
			return
		}
		r.complete(StatusSuccess, "")
	}
}

// complete completes the head WR.
func (r *requester) complete(st Status, vendor string) {
	qp := r.qp
	w := r.at(r.head)
	if w.rdAtomic() && w.sentAll && r.rdOut > 0 {
		r.rdOut--
	}
	if st != StatusSuccess || !w.p.wr.Unsignaled {
		wc := WC{ID: w.p.wr.ID, Status: st, Op: wcOpcode(w.op()), QPN: qp.qpn, Vendor: vendor}
		if st == StatusSuccess {
			wc.ByteLen = uint32(w.length)
		}
		qp.sendCQ.push(wc)
	}
	r.clear(w)
	r.head++
	if r.next < r.head {
		r.next = r.head
	}
	qp.sqCount.Add(-1)
}

func wcOpcode(op WROpcode) WCOpcode {
	switch op {
	case WRWrite, WRWriteWithImm:
		return WCWrite
	case WRRead:
		return WCRead
	case WRCompareSwap:
		return WCCompareSwap
	case WRFetchAdd:
		return WCFetchAdd
	}
	return WCSend
}

// flushAll completes every outstanding WR with WR_FLUSH_ERR (→ ERR).
func (r *requester) flushAll() {
	r.stopTimers()
	for r.head < r.tail {
		r.complete(StatusWRFlushErr, "")
	}
	r.next = r.head
}

// rewind goes back to the oldest unacknowledged PSN (go-back-N): the head
// WR resumes at that PSN, a partly answered READ asks for the rest only.
func (r *requester) rewind() {
	qp := r.qp
	for i := r.head; i < r.tail; i++ {
		w := r.at(i)
		if !w.assigned {
			break
		}
		w.sentAll = false
		if i == r.head && !w.rdAtomic() {
			w.off = max(0, r.comp.Diff(w.first)) * qp.mtu
		} else if !w.rdAtomic() {
			w.off = 0
		}
	}
	r.next = r.head
	r.psn = r.comp
	r.rdOut = 0
	r.noack = 0
}

// retry is a transport retry (timeout or sequence NAK): it uses up one of
// retry_cnt, or fails the head WR with RETRY_EXC_ERR. While a retry runs
// and nothing new was acknowledged, only a timeout starts another one.
func (r *requester) retry(timeout bool) {
	c := &r.qp.dev.c
	if r.startedRetry && !timeout {
		return
	}
	if r.retryLeft == 0 {
		c.retryExceeded.Add(1)
		r.fail(StatusRetryExcErr, "transport retries exhausted")
		return
	}
	if r.retryLeft != infiniteRetry {
		r.retryLeft--
	}
	c.completerRetry.Add(1)
	r.startedRetry = true
	r.retryTimer.Stop()
	r.retryArmed = false
	r.rewind()
}

func (r *requester) onTimeout() {
	r.retryArmed = false
	if r.qp.state != StateRTS && r.qp.state != StateSQD {
		return
	}
	if r.rnrWait || r.psn == r.comp || r.head == r.tail {
		return
	}
	r.retry(true)
}

func (r *requester) onRNRTimer() {
	if !r.rnrWait {
		return
	}
	r.rnrWait = false
	if r.qp.state == StateRTS || r.qp.state == StateSQD {
		r.rewind()
	}
}

// onResponse is the completer: it matches an ACK, NAK, READ response or
// atomic ACK against the oldest outstanding WRs (ENDPOINT.md §1.8).
func (r *requester) onResponse(p *rxPacket) {
	qp := r.qp
	b := &p.bth
	psn := b.PSN
	info := b.Info()
	// A response beyond the head WR acknowledges it (SEND/WRITE), or
	// shows that its READ responses or atomic ACK were lost.
	for r.head < r.tail {
		w := r.at(r.head)
		if !w.assigned || psn.Diff(w.last) <= 0 {
			break
		}
		if w.rdAtomic() {
			r.retry(false)
			return
		}
		r.progress(w.last.Add(1))
		r.complete(StatusSuccess, "")
	}
	if r.head == r.tail {
		r.drop(p, "response with no request outstanding")
		return
	}
	if psn.Less(r.comp) {
		r.drop(p, "response to a PSN already completed (duplicate)")
		return
	}
	w := r.at(r.head)
	if !w.assigned || psn.Less(w.first) {
		r.drop(p, "response before the oldest request's first PSN")
		return
	}
	switch info.Operation {
	case layers.OpAcknowledge:
		syn := b.AETH.Syndrome
		switch {
		case syn.IsAck():
			if w.rdAtomic() {
				r.drop(p, "ACK inside an outstanding READ or atomic")
				return
			}
			r.progress(psn.Add(1))
			if psn == w.last {
				r.complete(StatusSuccess, "")
			}
		case syn.IsRNRNak():
			qp.dev.c.rcvdRNRErr.Add(1)
			r.progress(psn)
			if r.rnrLeft == 0 {
				qp.dev.c.retryRNRExceeded.Add(1)
				r.fail(StatusRNRRetryExcErr, "RNR retries exhausted")
				return
			}
			if r.rnrLeft != infiniteRetry {
				r.rnrLeft--
			}
			r.retryTimer.Stop()
			r.retryArmed = false
			r.rnrWait = true
			r.rnrTimer.Reset(syn.RNRTimer())
		case syn.IsNak() && syn.NAKCode() == layers.NAKPSNSequenceError:
			qp.dev.c.rcvdSeqErr.Add(1)
			if r.rnrWait {
				// The packets that followed an RNR-NAKed one arrive
				// out of sequence; the RNR wait already rewinds.
				return
			}
			r.progress(psn)
			r.retry(false)
		default:
			st := StatusBadRespErr
			if syn.IsNak() {
				switch syn.NAKCode() {
				case layers.NAKInvalidRequest, layers.NAKInvalidRDRequest:
					st = StatusRemInvReqErr
				case layers.NAKRemoteAccessError:
					st = StatusRemAccessErr
				case layers.NAKRemoteOperationalError:
					st = StatusRemOpErr
				}
			}
			r.progress(psn)
			r.fail(st, syn.String())
		}
	case layers.OpRDMAReadResponse:
		if psn != r.comp {
			r.drop(p, "READ response ahead of the expected PSN")
			return
		}
		if w.op() != WRRead {
			r.fail(StatusBadRespErr, "READ response to a WR that is not a READ")
			return
		}
		// rxe's check_ack: FIRST, LAST and ONLY must carry an ACK.
		if info.Has(layers.HdrAETH) && !b.AETH.Syndrome.IsAck() {
			r.fail(StatusBadRespErr, "READ response whose AETH is not an ACK")
			return
		}
		off := psn.Diff(w.first) * qp.mtu
		payload := b.PacketPayload()
		remaining := w.length - off
		if off != w.readDone || remaining < 0 {
			r.drop(p, "READ response for data already received")
			return
		}
		last := info.Position == layers.PosLast || info.Position == layers.PosOnly
		if last && len(payload) != remaining || !last && (len(payload) != qp.mtu || remaining <= qp.mtu) {
			r.drop(p, "READ response of the wrong length for its place")
			return
		}
		scatter(w.sgl, off, payload)
		w.readDone += len(payload)
		r.progress(psn.Add(1))
		if last {
			r.complete(StatusSuccess, "")
		}
	case layers.OpAtomicAcknowledge:
		if psn != r.comp {
			r.drop(p, "atomic ACK ahead of the expected PSN")
			return
		}
		if !w.atomic() {
			r.fail(StatusBadRespErr, "atomic ACK to a WR that is not an atomic")
			return
		}
		if !b.AETH.Syndrome.IsAck() {
			r.fail(StatusBadRespErr, "atomic ACK whose AETH is not an ACK")
			return
		}
		var v [8]byte
		binary.NativeEndian.PutUint64(v[:], b.AtomicAckETH.OrigRemoteData)
		scatter(w.sgl, 0, v[:])
		r.progress(psn.Add(1))
		r.complete(StatusSuccess, "")
	}
}

// fail completes the head WR with st and moves the QP to ERR, where the
// WRs behind it are flushed. BAD_RESP_ERR is a response of another kind of
// request at the head WR's PSN, or a READ response or atomic ACK without an
// ACK AETH (verbs: "an unexpected transport layer opcode was returned by
// the responder"; rxe's check_ack errors the WQE).
func (r *requester) fail(st Status, why string) {
	r.qp.setState(StateErr) // before the completion shows, as in send
	r.complete(st, why)
	r.qp.enterError()
}

// drop counts a response the completer ignores, as rxe's does, and tells
// the device's drop handler why (why is a constant).
func (r *requester) drop(p *rxPacket, why string) {
	r.qp.dev.c.completerDrops.Add(1)
	r.qp.dev.dropped(p, Drop{Reason: DropCompleter, Detail: why})
}
