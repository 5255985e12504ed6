package endpoint

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"

	"github.com/ibwire/ibwire/layers"
)

// creditsUnlimited is the ACK credit code rxe always sends (AETH_ACK_UNLIMITED).
const creditsUnlimited = 0x1F

// resource remembers an accepted READ or atomic, so a duplicate can be
// answered: a READ is re-executed from memory, an atomic replays its
// original value without running again (ENDPOINT.md §1.9).
type resource struct {
	op          layers.Operation
	first, last layers.PSN
	va          uint64
	rkey        uint32
	length      uint32
	orig        uint64
	valid       bool
}

// responder is the receive side of a QP (rxe_resp.c's checks, in order).
type responder struct {
	qp      *QP
	psn     layers.PSN // expected PSN
	msn     uint32
	nakSent bool // a sequence NAK went out; the gap is not yet filled
	// lastSendWrite is the PSN of the newest SEND or WRITE packet
	// accepted: the PSN a duplicate SEND or WRITE is acknowledged with.
	// Not r.psn-1: that may be a READ's or an atomic's PSN, and a plain
	// ACK naming one tells rxe's completer the READ or atomic is done
	// (it completes the WR without its data), so a lost READ response
	// followed by a resent SEND and READ would lose the READ's data.
	// rxe's responder never names a READ there either (rxe_resp.c:
	// duplicate_request acknowledges resp.ack_psn-1, which READs leave
	// alone).
	lastSendWrite layers.PSN
	// The message in progress: OpSend or OpRDMAWrite after a FIRST or
	// MIDDLE, OpUnknown between messages.
	inOp   layers.Operation
	ucDrop bool // UC: discard until the next FIRST/ONLY
	// The receive WR of the SEND (or WRITE with immediate) in progress.
	haveWQE bool
	wqe     recvWQE
	sgl     [][]byte
	recvOff int
	// The WRITE in progress.
	wMR     *MR
	wVA     uint64
	wRemain uint32
	wTotal  uint32
	// Responder resources, a ring of max_dest_rd_atomic entries (rounded
	// up to a power of two) recycled without checking, as rxe does.
	res     []resource
	resNext int
	// The ACK owed for the packets handled in this burst (coalesced).
	ackPending bool
	ackPSN     layers.PSN
	grh        [layers.GRHLength]byte
}

func (r *responder) init(qp *QP) { r.qp = qp }

// start readies the responder at rq_psn (INIT → RTR).
func (r *responder) start(psn layers.PSN) {
	r.reset()
	r.psn = psn
	r.lastSendWrite = psn.Add(-1)
	r.resize()
}

// resize sizes the resource ring to max_dest_rd_atomic, forgetting what it
// held.
func (r *responder) resize() {
	n := roundPow2(r.qp.attr.MaxDestRdAtomic)
	if cap(r.res) < n {
		r.res = make([]resource, n)
	}
	r.res = r.res[:n]
	clear(r.res)
	r.resNext = 0
}

// reset clears MSN, the opcode state, the NAK flag and the resources (→
// RESET, ENDPOINT.md §1.10).
func (r *responder) reset() {
	r.msn, r.nakSent, r.inOp, r.ucDrop = 0, false, layers.OpUnknown, false
	r.haveWQE, r.recvOff, r.wMR = false, 0, nil
	r.ackPending = false
	clear(r.res)
	r.resNext = 0
}

// abort ends the message in progress (→ ERR); a receive WR it held is
// flushed.
func (r *responder) abort() {
	if r.haveWQE {
		r.qp.recvCQ.push(WC{ID: r.wqe.id, Status: StatusWRFlushErr, Op: WCRecv, QPN: r.qp.qpn})
	}
	r.haveWQE = false
	r.ackPending = false
	r.inOp = layers.OpUnknown
}

// drop counts a request the responder discards silently and tells the
// device's drop handler why (why is a constant).
func (r *responder) drop(p *rxPacket, why string) {
	r.qp.dev.c.responderDrops.Add(1)
	r.qp.dev.dropped(p, Drop{Reason: DropResponder, Detail: why})
}

// onRequest handles a request packet that passed the acceptance checks.
func (r *responder) onRequest(p *rxPacket) {
	qp := r.qp
	if qp.typ == UD {
		r.onUD(p)
		return
	}
	b := &p.bth
	info := b.Info()
	psn := b.PSN
	pos := info.Position
	startsMsg := pos == layers.PosFirst || pos == layers.PosOnly

	// CHK_PSN.
	if qp.typ == RC {
		switch d := psn.Diff(r.psn); {
		case d > 0:
			if !r.nakSent {
				r.nakSent = true
				qp.dev.c.outOfSeqRequest.Add(1)
				r.sendAck(r.psn, layers.MakeNakSyndrome(layers.NAKPSNSequenceError))
			} else {
				r.drop(p, "out of sequence after a sequence NAK, waiting for the expected PSN")
			}
			return
		case d < 0:
			r.duplicate(p)
			return
		}
		r.nakSent = false
	} else if psn != r.psn || r.ucDrop {
		if !startsMsg {
			r.ucDrop = true
			r.psn = psn.Add(1)
			r.drop(p, "UC: PSN gap inside a message, the rest of it is discarded")
			return
		}
		// A gap before a new message: the old one is lost, this one
		// starts afresh (its receive WR, if any, is reused).
		r.ucDrop = false
		r.inOp = layers.OpUnknown
		r.recvOff = 0
		r.psn = psn
	}

	// CHK_OP_SEQ.
	op := info.Operation
	if r.inOp != layers.OpUnknown {
		if op != r.inOp || startsMsg {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
	} else if !startsMsg {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}

	// CHK_OP_VALID.
	var need Access
	switch op {
	case layers.OpSend:
	case layers.OpRDMAWrite:
		need = AccessRemoteWrite
	case layers.OpRDMAReadRequest:
		need = AccessRemoteRead
	case layers.OpCompareSwap, layers.OpFetchAdd:
		need = AccessRemoteAtomic
	default:
		// FLUSH, ATOMIC_WRITE and reserved opcodes are not supported.
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}
	if need != 0 && qp.attr.Access&need == 0 {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}

	// CHK_RESOURCE.
	if op.TakesResponderResource() && len(r.res) == 0 {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}
	if (op == layers.OpSend || info.Immediate) && !r.haveWQE {
		wr, ok := qp.rq.take()
		if !ok {
			if qp.typ == RC {
				qp.dev.c.sendRNRErr.Add(1)
				r.flushAck()
				r.sendAck(psn, layers.MakeRNRNakSyndrome(qp.attr.MinRNRTimer))
			} else {
				r.drop(p, "no receive WR posted")
			}
			return
		}
		r.wqe, r.haveWQE, r.recvOff = wr, true, 0
		sgl, _, err := qp.dev.resolveSGL(qp.pd, wr.sges[:wr.n], true, r.sgl[:0])
		r.sgl = sgl
		if err != nil {
			r.fail(p, layers.NAKRemoteOperationalError, StatusLocProtErr)
			return
		}
	}

	// CHK_LENGTH.
	payload := b.PacketPayload()
	plen := len(payload)
	mtu := qp.mtu
	switch pos {
	case layers.PosOnly:
		if plen > mtu {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
	case layers.PosFirst, layers.PosMiddle:
		if plen != mtu {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
	case layers.PosLast:
		if plen == 0 || plen > mtu {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
	}
	if info.Has(layers.HdrRETH) && b.RETH.DMALength > 1<<31 {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}

	// CHK_RKEY, then EXECUTE.
	switch op {
	case layers.OpSend:
		r.execSend(p, payload)
	case layers.OpRDMAWrite:
		r.execWrite(p, payload)
	case layers.OpRDMAReadRequest:
		r.execRead(p)
	case layers.OpCompareSwap, layers.OpFetchAdd:
		r.execAtomic(p)
	}
}

// fail answers an invalid request: RC sends the NAK (with the request's
// PSN) and the QP goes to ERR, the receive WR in progress completing with
// st; UC drops the packet and the message.
func (r *responder) fail(p *rxPacket, code layers.NAKCode, st Status) { r.failWhy(p, code, st, "") }

// failWhy is fail with why as the receive completion's vendor text (the
// NAK code's name when empty).
func (r *responder) failWhy(p *rxPacket, code layers.NAKCode, st Status, why string) {
	qp := r.qp
	if qp.typ != RC {
		r.ucDrop = true
		r.inOp = layers.OpUnknown
		r.recvOff = 0
		r.drop(p, "UC: invalid request (opcode sequence, access, length), the message is discarded")
		return
	}
	r.flushAck()
	r.sendAck(p.bth.PSN, layers.MakeNakSyndrome(code))
	// ERR before the completion shows, as the requester does.
	qp.setState(StateErr)
	if r.haveWQE {
		vendor := why
		if vendor == "" {
			vendor = code.String()
		}
		qp.recvCQ.push(WC{ID: r.wqe.id, Status: st, Op: WCRecv, QPN: qp.qpn, Vendor: vendor})
		r.haveWQE = false
	}
	qp.enterError()
}

// advance accepts the packet: next expected PSN, message state, ACK if
// asked.
func (r *responder) advance(p *rxPacket) {
	info := p.bth.Info()
	switch info.Position {
	case layers.PosFirst:
		r.inOp = info.Operation
	case layers.PosLast, layers.PosOnly:
		r.inOp = layers.OpUnknown
		r.msn = (r.msn + 1) & layers.PSNMask
	}
	r.psn = r.psn.Add(1)
	r.lastSendWrite = p.bth.PSN
	if r.qp.typ == RC && p.bth.AckReq {
		r.queueAck(p.bth.PSN)
	}
}

func (r *responder) execSend(p *rxPacket, payload []byte) {
	qp := r.qp
	b := &p.bth
	info := b.Info()
	if !scatter(r.sgl, r.recvOff, payload) {
		r.failLength(p, "receive buffer too small")
		return
	}
	r.recvOff += len(payload)
	last := info.Position == layers.PosLast || info.Position == layers.PosOnly
	if !last {
		r.advance(p)
		return
	}
	wc := WC{ID: r.wqe.id, Op: WCRecv, QPN: qp.qpn, ByteLen: uint32(r.recvOff)}
	if info.Immediate {
		wc.WithImm, wc.Imm = true, b.ImmDt.Value
	}
	if info.Invalidate {
		if !qp.dev.invalidateRKey(qp.pd, b.IETH.RKey) {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
		wc.WithInv, wc.InvalidatedRKey = true, b.IETH.RKey
	}
	r.haveWQE = false
	r.advance(p)
	qp.recvCQ.push(wc)
}

// failLength: RC NAKs invalid request and the receive WR completes with
// LOC_LEN_ERR; UC drops.
func (r *responder) failLength(p *rxPacket, why string) {
	r.failWhy(p, layers.NAKInvalidRequest, StatusLocLenErr, why)
}

func (r *responder) execWrite(p *rxPacket, payload []byte) {
	qp := r.qp
	b := &p.bth
	info := b.Info()
	pos := info.Position
	if pos == layers.PosFirst || pos == layers.PosOnly {
		r.wMR, r.wVA, r.wRemain, r.wTotal = nil, b.RETH.VA, b.RETH.DMALength, b.RETH.DMALength
		if b.RETH.DMALength > 0 {
			mr := qp.dev.lookupRKey(qp.pd, b.RETH.RKey)
			if mr == nil || mr.access&AccessRemoteWrite == 0 {
				r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
				return
			}
			if _, ok := mr.slice(b.RETH.VA, uint64(b.RETH.DMALength)); !ok {
				r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
				return
			}
			r.wMR = mr
		}
	}
	// The payload must be a full MTU while more remains, and exactly the
	// rest (with the right pad) at the end.
	last := pos == layers.PosLast || pos == layers.PosOnly
	plen := uint32(len(payload))
	if r.wRemain > uint32(qp.mtu) {
		if plen != uint32(qp.mtu) || b.PadCount != 0 || last {
			r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
			return
		}
	} else if plen != r.wRemain || uint32(b.PadCount) != -r.wRemain&3 || !last {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}
	if plen > 0 {
		dst, ok := r.wMR.slice(r.wVA, uint64(plen))
		if !ok || !r.wMR.valid.Load() {
			r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
			return
		}
		copy(dst, payload)
		r.wVA += uint64(plen)
		r.wRemain -= plen
	}
	if last && info.Immediate {
		wc := WC{ID: r.wqe.id, Op: WCRecvWithImm, QPN: qp.qpn, ByteLen: r.wTotal, WithImm: true, Imm: b.ImmDt.Value}
		r.haveWQE = false
		r.advance(p)
		qp.recvCQ.push(wc)
		return
	}
	r.advance(p)
	if last {
		// after the copy: a reader that sees the count sees the bytes
		qp.remoteWrites.Add(1)
		select {
		case qp.writeNotify <- struct{}{}:
		default:
		}
	}
}

// newResource takes the next responder resource, overwriting the oldest.
func (r *responder) newResource() *resource {
	res := &r.res[r.resNext]
	r.resNext = (r.resNext + 1) % len(r.res)
	return res
}

func (r *responder) execRead(p *rxPacket) {
	qp := r.qp
	b := &p.bth
	length := b.RETH.DMALength
	var mr *MR
	if length > 0 {
		mr = qp.dev.lookupRKey(qp.pd, b.RETH.RKey)
		if mr == nil || mr.access&AccessRemoteRead == 0 {
			r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
			return
		}
		if _, ok := mr.slice(b.RETH.VA, uint64(length)); !ok {
			r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
			return
		}
	}
	n := max(1, (int(length)+qp.mtu-1)/qp.mtu)
	res := r.newResource()
	*res = resource{op: layers.OpRDMAReadRequest, first: b.PSN, last: b.PSN.Add(n - 1), va: b.RETH.VA,
		rkey: b.RETH.RKey, length: length, valid: true}
	r.msn = (r.msn + 1) & layers.PSNMask
	r.psn = b.PSN.Add(n)
	r.inOp = layers.OpUnknown
	r.flushAck()
	r.readReply(mr, b.PSN, b.RETH.VA, length)
}

// readReply sends the responses of a READ: PSNs from psn, FIRST/MIDDLE
// carrying exactly an MTU, AETH on FIRST, LAST and ONLY.
func (r *responder) readReply(mr *MR, psn layers.PSN, va uint64, length uint32) {
	qp := r.qp
	mtu := qp.mtu
	n := layers.Segments(int(length), mtu)
	sport := udpSourcePort(qp.attr.FlowLabel, qp.qpn, qp.attr.DestQPN)
	off := 0
	for i := range n {
		plen := min(int(length)-off, mtu)
		pos := layers.SegmentPosition(i, n)
		h, payload := qp.start(opcodeFor(layers.ServiceRC, layers.OpRDMAReadResponse, pos, false, false), plen)
		if plen > 0 {
			src, _ := mr.slice(va+uint64(off), uint64(plen))
			copy(payload, src)
		}
		h.PSN = psn.Add(i)
		h.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(creditsUnlimited), MSN: r.msn}
		qp.finish(qp.attr.Remote, sport, qp.attr.HopLimit)
		off += plen
	}
}

func (r *responder) execAtomic(p *rxPacket) {
	qp := r.qp
	b := &p.bth
	a := &b.AtomicETH
	mr := qp.dev.lookupRKey(qp.pd, a.RKey)
	if mr == nil || mr.access&AccessRemoteAtomic == 0 {
		r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
		return
	}
	if _, ok := mr.slice(a.VA, 8); !ok {
		r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
		return
	}
	if a.VA%8 != 0 {
		r.fail(p, layers.NAKInvalidRequest, StatusRemInvReqErr)
		return
	}
	word := mr.word(a.VA - mr.va)
	var orig uint64
	if b.Info().Operation == layers.OpFetchAdd {
		orig = atomic.AddUint64(word, a.SwapAddData) - a.SwapAddData
	} else {
		for {
			orig = atomic.LoadUint64(word)
			if orig != a.CompareData || atomic.CompareAndSwapUint64(word, orig, a.SwapAddData) {
				break
			}
		}
	}
	res := r.newResource()
	*res = resource{op: b.Info().Operation, first: b.PSN, last: b.PSN, va: a.VA, rkey: a.RKey, orig: orig, valid: true}
	r.msn = (r.msn + 1) & layers.PSNMask
	r.psn = b.PSN.Add(1)
	r.inOp = layers.OpUnknown
	r.flushAck()
	r.sendAtomicAck(b.PSN, orig)
}

// duplicate answers a request whose PSN is behind the expected one.
func (r *responder) duplicate(p *rxPacket) {
	qp := r.qp
	b := &p.bth
	info := b.Info()
	qp.dev.c.duplicateRequest.Add(1)
	switch info.Operation {
	case layers.OpSend, layers.OpRDMAWrite:
		// Acknowledge again, without executing (C9-105), with the
		// newest SEND or WRITE PSN: everything up to it arrived, and it
		// names no READ or atomic, whose answers are their responses.
		r.queueAck(r.lastSendWrite)
	case layers.OpRDMAReadRequest:
		for i := range r.res {
			res := &r.res[i]
			if !res.valid || res.op != layers.OpRDMAReadRequest || b.PSN.Less(res.first) || res.last.Less(b.PSN) {
				continue
			}
			va, length := b.RETH.VA, uint64(b.RETH.DMALength)
			if va < res.va || va+length > res.va+uint64(res.length) || va+length < va {
				r.drop(p, "duplicate READ outside the original request")
				return
			}
			var mr *MR
			if length > 0 {
				if mr = qp.dev.lookupRKey(qp.pd, res.rkey); mr == nil {
					r.fail(p, layers.NAKRemoteAccessError, StatusRemAccessErr)
					return
				}
			}
			r.flushAck()
			r.readReply(mr, b.PSN, va, uint32(length))
			return
		}
		r.drop(p, "duplicate READ no longer remembered")
	case layers.OpCompareSwap, layers.OpFetchAdd:
		for i := range r.res {
			res := &r.res[i]
			if res.valid && res.op == info.Operation && res.first == b.PSN {
				r.flushAck()
				r.sendAtomicAck(b.PSN, res.orig)
				return
			}
		}
		r.drop(p, "duplicate atomic no longer remembered")
	default:
		r.drop(p, "duplicate request")
	}
}

func (r *responder) queueAck(psn layers.PSN) {
	r.ackPending = true
	r.ackPSN = psn
}

// flushAck sends the coalesced ACK, if one is owed: an ACK for a PSN
// acknowledges everything up to it.
func (r *responder) flushAck() {
	if !r.ackPending {
		return
	}
	r.ackPending = false
	r.sendAck(r.ackPSN, layers.MakeAckSyndrome(creditsUnlimited))
}

func (r *responder) sendAck(psn layers.PSN, syn layers.AETHSyndrome) {
	qp := r.qp
	h, _ := qp.start(opcodeFor(layers.ServiceRC, layers.OpAcknowledge, layers.PosNone, false, false), 0)
	h.PSN = psn
	h.AETH = layers.AETH{Syndrome: syn, MSN: r.msn}
	qp.finish(qp.attr.Remote, udpSourcePort(qp.attr.FlowLabel, qp.qpn, qp.attr.DestQPN), qp.attr.HopLimit)
}

func (r *responder) sendAtomicAck(psn layers.PSN, orig uint64) {
	qp := r.qp
	h, _ := qp.start(opcodeFor(layers.ServiceRC, layers.OpAtomicAcknowledge, layers.PosNone, false, false), 0)
	h.PSN = psn
	h.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(creditsUnlimited), MSN: r.msn}
	h.AtomicAckETH.OrigRemoteData = orig
	qp.finish(qp.attr.Remote, udpSourcePort(qp.attr.FlowLabel, qp.qpn, qp.attr.DestQPN), qp.attr.HopLimit)
}

// onUD delivers a UD SEND: the 40-byte GRH first, then the payload. No PSN
// or sequence checks; a receive WR too small, or none, drops the packet.
func (r *responder) onUD(p *rxPacket) {
	qp := r.qp
	b := &p.bth
	payload := b.PacketPayload()
	if len(payload) > qp.mtu {
		r.drop(p, "UD: payload longer than the path MTU")
		return
	}
	wr, ok := qp.rq.peek()
	if !ok {
		r.drop(p, "no receive WR posted")
		return
	}
	sgl, total, err := qp.dev.resolveSGL(qp.pd, wr.sges[:wr.n], true, r.sgl[:0])
	r.sgl = sgl
	if err != nil || total < uint64(layers.GRHLength+len(payload)) {
		r.drop(p, "UD: receive buffer too small for the GRH and the payload")
		return
	}
	if _, ok := qp.rq.take(); !ok {
		r.drop(p, "no receive WR posted")
		return
	}
	r.fillGRH(p, len(payload))
	scatter(sgl, 0, r.grh[:])
	scatter(sgl, layers.GRHLength, payload)
	wc := WC{ID: wr.id, Op: WCRecv, QPN: qp.qpn, ByteLen: uint32(layers.GRHLength + len(payload)), SrcQP: b.DETH.SrcQP}
	if b.Info().Immediate {
		wc.WithImm, wc.Imm = true, b.ImmDt.Value
	}
	qp.recvCQ.push(wc)
}

// fillGRH builds the GRH rxe puts in front of a UD receive: for IPv4, 20
// zero bytes then the IPv4 header; for IPv6, the IPv6 header. Fields the
// wire does not report (IPv4 ID and TTL, hop limit) are zero.
func (r *responder) fillGRH(p *rxPacket, plen int) {
	g := r.grh[:]
	clear(g)
	udpLen := 8 + p.n
	src, dst := p.src.Addr(), p.dst.Addr()
	if src.Unmap().Is4() {
		h := g[20:]
		h[0] = 0x45
		h[1] = p.tc
		binary.BigEndian.PutUint16(h[2:], uint16(20+udpLen))
		binary.BigEndian.PutUint16(h[6:], 0x4000)
		h[9] = 17
		s, d := src.Unmap().As4(), dst.Unmap().As4()
		copy(h[12:16], s[:])
		copy(h[16:20], d[:])
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(h[i:]))
		}
		for sum > 0xFFFF {
			sum = sum&0xFFFF + sum>>16
		}
		binary.BigEndian.PutUint16(h[10:], ^uint16(sum))
		return
	}
	binary.BigEndian.PutUint32(g[0:], 6<<28|uint32(p.tc)<<20)
	binary.BigEndian.PutUint16(g[4:], uint16(udpLen))
	g[6] = 17
	s, d := src.As16(), dst.As16()
	copy(g[8:24], s[:])
	copy(g[24:40], d[:])
}

// GRHSource is the sender's address read back from the GRH a UD receive
// buffer starts with, as ibv_create_ah_from_wc reads it to answer a
// datagram: the IPv4 header's source in the last 20 bytes when the first
// 20 are zero (how rxe, and fillGRH, carry RoCEv2 over IPv4), else the
// IPv6 header's. ok is false when grh is shorter than a GRH or holds
// neither.
func GRHSource(grh []byte) (src netip.Addr, ok bool) {
	if len(grh) < layers.GRHLength {
		return netip.Addr{}, false
	}
	if h := grh[20:40]; allZero(grh[:20]) && h[0]>>4 == 4 {
		return netip.AddrFrom4([4]byte(h[12:16])), true
	}
	if grh[0]>>4 != 6 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16([16]byte(grh[8:24])).Unmap(), true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
