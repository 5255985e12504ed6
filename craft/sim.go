package craft

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// maxEvents bounds a run: a conversation whose faults keep it from ever
// finishing fails instead of looping.
const maxEvents = 2_000_000

// maxRetries is how many local ACK timeouts in a row, without progress,
// the requester takes before giving up (rxe treats retry count 7 as
// infinite; a model must stop somewhere).
const maxRetries = 7

// txKey names the k-th transmission of a side.
type txKey struct {
	side Side
	k    int
}

// tx is one packet on its way: what the receiver will act on.
type tx struct {
	side    Side
	k       int // transmission number of its side, from 1
	epoch   int // requester epoch of the request it is, or answers
	bth     layers.BTH
	payload []byte
	rxLen   int // payload bytes the receiver sees
	off     int // PSN offset from the run's first PSN
	npsn    int
	pkt     int // request packet index; -1 for responses
	cnp     bool
	drop    bool // the receiver discards it unread
	rec     *rec // its capture, nil when lost
}

// rec is a captured frame with what it should be found to be.
type rec struct {
	seq   int
	at    time.Duration
	side  Side
	k     int
	frame Frame
	tx    *tx
	finds []pendingFinding
}

type pendingFinding struct {
	kind   FindingKind
	ref    *rec
	detail string
}

func (r *rec) add(k FindingKind, ref *rec, format string, args ...any) {
	r.finds = append(r.finds, pendingFinding{k, ref, fmt.Sprintf(format, args...)})
}

// wqe is the requester's view of one op.
type wqe struct {
	kind        OpKind
	first, last int // PSN offsets
	done        bool
	recvd       int // READ response packets received in order
}

type readRes struct{ first, n int }

type evKind uint8

const (
	evSend evKind = iota
	evArrive
	evTimeout
	evRNRDone
)

type event struct {
	at   time.Duration
	seq  int
	kind evKind
	tx   *tx
	gen  int
	off  int
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// sim runs one batch of ops between the two ends.
type sim struct {
	cfg     *Config
	b       *Builder
	ops     []Op
	f       *Faults
	corrupt map[txKey]CorruptKind

	base  layers.PSN
	pkts  []reqPacket
	byOff []int // PSN offset → index in pkts
	total int   // PSNs of the run
	wqes  []wqe

	events eventHeap
	seq    int
	recs   []*rec
	lost   []Frame // frames sent and lost, in send order

	lossRNG, ceRNG *rand.Rand
	lostPkts       map[int]bool // request packet index → first transmission lost
	lostResp       map[int]bool
	naks           map[int]layers.NAKCode
	rnrLeft        map[int]int
	rnrTimer       map[int]layers.RNRTimerCode
	txCount        [2]int
	txFree         [2]time.Duration
	lastRec        [2]map[int]*rec // last capture of each PSN offset, per side
	errWhy         string
	err            error // a frame that would not build: the run fails

	// requester
	reliable    bool
	snd, una    int // next PSN offset to send, oldest unacknowledged
	highSent    int // one past the highest PSN offset sent
	sentOnce    map[int]bool
	epoch       int
	sendPending bool
	blocked     bool // waiting out an RNR NAK
	qpErr       bool
	noack       int
	timerGen    int
	timerArmed  bool
	cause       string // why the requester last went back
	timedOut    bool   // a timeout happened; the next captured retransmission says so
	retries     int    // timeouts in a row without progress
	sentBefore  [2]map[int]bool

	// responder
	ePSN    int
	nakSent bool
	respErr bool
	msn     uint32
	inMsg   bool
	msgOp   layers.Operation
	resid   int
	ucDrop  bool
	reads   []readRes
	atomics map[int]uint64
	nakDone map[int]bool
}

// simulate runs ops from the Conn's state; it does not change the Conn.
func (c *Conn) simulate(ops []Op, f *Faults, corrupt map[txKey]CorruptKind) (*sim, error) {
	s := &sim{cfg: c.cfg, b: c.b, ops: ops, f: f, corrupt: corrupt, base: c.psn, msn: c.msn,
		reliable: c.cfg.Service == layers.ServiceRC,
		lossRNG:  rand.New(rand.NewPCG(f.Seed, 0x6c6f7373)), ceRNG: rand.New(rand.NewPCG(f.Seed, 0x63652121)),
		lostPkts: map[int]bool{}, lostResp: map[int]bool{}, naks: map[int]layers.NAKCode{},
		rnrLeft: map[int]int{}, rnrTimer: map[int]layers.RNRTimerCode{}, sentOnce: map[int]bool{},
		atomics: map[int]uint64{}, nakDone: map[int]bool{},
		lastRec: [2]map[int]*rec{{}, {}}, sentBefore: [2]map[int]bool{{}, {}}}
	s.txFree[Requester], s.txFree[Responder] = c.now, c.now
	off := 0
	for i, op := range ops {
		ps, err := segment(c.cfg, i, op, off, s.base)
		if err != nil {
			return nil, err
		}
		w := wqe{kind: op.Kind, first: off}
		for _, p := range ps {
			for j := 0; j < p.npsn; j++ {
				s.byOff = append(s.byOff, len(s.pkts))
			}
			s.pkts = append(s.pkts, p)
			off += p.npsn
		}
		w.last = off - 1
		s.wqes = append(s.wqes, w)
	}
	s.total = off
	for _, n := range append(append([]int(nil), f.Loss.Packets...), faultPackets(f)...) {
		if n < 1 || n > len(s.pkts) {
			return nil, fmt.Errorf("craft: faults: request packet %d: the ops make packets 1 to %d", n, len(s.pkts))
		}
	}
	for _, p := range f.Loss.Packets {
		s.lostPkts[p-1] = true
	}
	for _, k := range f.Loss.Responses {
		s.lostResp[k] = true
	}
	for _, n := range f.NAKs {
		s.naks[n.Packet-1] = n.Code
	}
	for _, r := range f.RNRs {
		s.rnrLeft[r.Packet-1] += max(r.Times, 1)
		s.rnrTimer[r.Packet-1] = r.Timer
	}
	s.schedule(event{at: c.now, kind: evSend})
	s.sendPending = true
	for n := 0; s.events.Len() > 0; n++ {
		if n > maxEvents {
			return nil, fmt.Errorf("craft: the conversation does not end after %d events (too much loss?)", maxEvents)
		}
		if s.err != nil {
			return nil, s.err
		}
		ev := heap.Pop(&s.events).(event)
		switch ev.kind {
		case evSend:
			s.sendPending = false
			s.send(ev.at)
		case evArrive:
			if ev.tx.side == Requester {
				s.responderReceive(ev.at, ev.tx)
			} else {
				s.requesterReceive(ev.at, ev.tx)
			}
		case evTimeout:
			if ev.gen == s.timerGen && s.timerArmed {
				s.timerArmed = false
				s.timeout(ev.at)
			}
		case evRNRDone:
			if ev.gen == s.epoch && !s.qpErr {
				s.blocked = false
				s.rewind(ev.at, ev.off, "after an RNR NAK")
			}
		}
	}
	return s, s.err
}

// faultPackets lists the request packets NAKs and RNR NAKs name.
func faultPackets(f *Faults) []int {
	var ps []int
	for _, n := range f.NAKs {
		ps = append(ps, n.Packet)
	}
	for _, r := range f.RNRs {
		ps = append(ps, r.Packet)
	}
	return ps
}

// fatal ends the run with err.
func (s *sim) fatal(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *sim) schedule(e event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.events, e)
}

// wake makes the requester try to send.
func (s *sim) wake(now time.Duration) {
	if !s.sendPending {
		s.sendPending = true
		s.schedule(event{at: max(now, s.txFree[Requester]), kind: evSend})
	}
}

// kick (re)arms the local ACK timer while something is unacknowledged.
func (s *sim) kick(now time.Duration) {
	s.timerGen++
	s.timerArmed = s.reliable && s.una < s.highSent && !s.qpErr && !s.blocked
	if s.timerArmed {
		s.schedule(event{at: now + s.cfg.AckTimeout, kind: evTimeout, gen: s.timerGen})
	}
}

// wqeAt returns the op whose PSNs include offset off.
func (s *sim) wqeAt(off int) *wqe {
	if off < 0 || off >= s.total {
		return nil
	}
	return &s.wqes[s.pkts[s.byOff[off]].op]
}

// send transmits the requester's next packet if it may.
func (s *sim) send(now time.Duration) {
	if s.qpErr || s.blocked || s.snd >= s.total {
		return
	}
	if s.reliable && s.snd-s.una >= s.cfg.Window {
		return
	}
	pi := s.byOff[s.snd]
	p := s.pkts[pi]
	w := &s.wqes[p.op]
	if s.reliable && w.kind.readOrAtomic() && s.snd == w.first {
		n := 0
		for i := range s.wqes {
			if o := &s.wqes[i]; o != w && o.kind.readOrAtomic() && !o.done && o.first < s.highSent {
				n++
			}
		}
		if n >= s.cfg.MaxRdAtomic {
			return
		}
	}
	if s.ops[p.op].Wait && s.snd == w.first {
		for i := 0; i < p.op; i++ {
			if !s.wqes[i].done {
				return
			}
		}
	}
	b, npsn := p.bth, p.npsn
	if d := s.snd - p.off; d > 0 {
		// A READ resumed part way: a fresh request for what is missing.
		skip := uint32(d * s.cfg.MTU)
		b.PSN = s.base.Add(s.snd)
		b.RETH.VA += uint64(skip)
		b.RETH.DMALength -= min(skip, b.RETH.DMALength)
		npsn -= d
	}
	if s.reliable {
		ack := p.last
		if !ack {
			limit := s.cfg.Ack.maxPerAck()
			ack = limit >= 0 && s.noack > limit
			s.noack++
		}
		if ack {
			s.noack = 0
		}
		b.AckReq = ack
	}
	t := s.transmit(now, &tx{side: Requester, epoch: s.epoch, bth: b, payload: p.payload, off: s.snd, npsn: npsn, pkt: pi})
	s.snd += npsn
	s.highSent = max(s.highSent, s.snd)
	if !s.reliable {
		s.una = s.snd
		if p.last {
			w.done = true
		}
	} else if !s.timerArmed {
		s.kick(t)
	}
	s.sendPending = true
	s.schedule(event{at: t + s.cfg.Step, kind: evSend})
}

// transmit sends t from its side at the first free moment from now on:
// decides loss, marks and corruption, captures the frame and schedules its
// arrival. It returns the moment the frame was sent.
func (s *sim) transmit(now time.Duration, t *tx) time.Duration {
	side := t.side
	at := max(now, s.txFree[side])
	s.txFree[side] = at + s.cfg.Step
	s.txCount[side]++
	t.k = s.txCount[side]

	lost := s.f.Loss.Prob > 0 && s.lossRNG.Float64() < s.f.Loss.Prob
	ce := false
	request := side == Requester
	if request {
		first := !s.sentOnce[t.pkt]
		s.sentOnce[t.pkt] = true
		lost = lost || first && s.lostPkts[t.pkt] || s.f.Loss.Every > 0 && t.k%s.f.Loss.Every == 0
		t.cnp = s.f.CNPEvery > 0 && t.k%s.f.CNPEvery == 0
		ce = t.cnp || s.f.CE.Every > 0 && t.k%s.f.CE.Every == 0
		if s.f.CE.Prob > 0 && s.ceRNG.Float64() < s.f.CE.Prob {
			ce = true
		}
	} else {
		lost = lost || s.lostResp[t.k]
	}
	kind := s.corrupt[txKey{side, t.k}]
	kind.reshape(&t.bth)
	t.rxLen = len(t.payload)
	retrans := false
	if t.sequenced() {
		for o := t.off; o < t.off+max(t.npsn, 1); o++ {
			retrans = retrans || s.sentBefore[side][o]
			s.sentBefore[side][o] = true
		}
	}
	p := Packet{From: side, BTH: t.bth, Payload: t.payload}
	if ce {
		p.ECN = CE
	}
	if t.bth.Opcode.Info().Service == layers.ServiceCNP {
		p.ECN = NotECT
	}
	fr, err := s.b.Build(p, s.cfg.Start.Add(at))
	if err != nil {
		s.fatal(err)
		return at
	}
	if lost {
		s.lost = append(s.lost, fr)
		return at
	}
	var detail string
	switch kind {
	case BadICRC, BadVCRC, Truncated, WrongPad, UnknownOpcode:
		fr.Data, detail, err = kind.damage(s.cfg.Encap, fr.Data)
		if err != nil {
			s.fatal(err)
			return at
		}
		_, bth, _, _ := frameLayout(s.cfg.Encap, fr.Data)
		if kind == WrongPad {
			pad := (4 - len(t.payload)%4) % 4
			t.rxLen = len(t.payload) + pad - int(fr.Data[bth+1]>>4&3)
			t.drop = t.rxLen < 0
		}
		if kind == UnknownOpcode {
			t.bth.Opcode = layers.Opcode(fr.Data[bth])
			fr.Info.Opcode = t.bth.Opcode
		}
	case BadSequence:
		detail = fmt.Sprintf("%v with no message begun", t.bth.Opcode)
	case RETHMismatch:
		detail = fmt.Sprintf("RETH DMA length %d, the message carries %d", t.bth.RETH.DMALength, t.bth.RETH.DMALength-4)
	}
	// A corrupted answer is dropped by the requester whatever its kind.
	t.drop = t.drop || kind.dropped() || side == Responder && kind != NoCorruption
	fr.Info.Corrupt = kind
	r := &rec{seq: len(s.recs) + 1, at: at, side: side, k: t.k, frame: fr, tx: t}
	s.recs = append(s.recs, r)
	t.rec = r
	if kind != NoCorruption {
		r.add(kind.finding(), nil, "%s", detail)
	}
	if ce {
		if s.cfg.Encap == RoCEv2 || s.cfg.Encap == RoCEv2IPv6 {
			r.add(FindingECNCE, nil, "IP ECN Congestion Experienced")
		} else {
			r.add(FindingFECN, nil, "BTH FECN set")
		}
	}
	s.noteSequence(t, retrans)
	s.schedule(event{at: at + s.cfg.Delay, kind: evArrive, tx: t})
	return at
}

// sequenced reports whether t is a request or READ response, whose PSNs
// form a sequence an analyzer follows.
func (t *tx) sequenced() bool {
	return t.pkt >= 0 || t.bth.Opcode.Info().Operation == layers.OpRDMAReadResponse
}

// noteSequence records retransmission findings on a captured frame and
// remembers it as the latest capture of its PSN.
func (s *sim) noteSequence(t *tx, retrans bool) {
	r := t.rec
	if r == nil || !t.sequenced() {
		return
	}
	span := max(t.npsn, 1)
	if retrans {
		var prev *rec
		for o := t.off; o < t.off+span; o++ {
			if p := s.lastRec[t.side][o]; p != nil && (prev == nil || p.seq > prev.seq) {
				prev = p
			}
		}
		why := s.cause
		if t.side == Responder {
			why = "for a duplicate READ request"
		}
		if prev != nil {
			r.add(FindingRetransmission, prev, "PSN %d again, %s", t.bth.PSN, why)
		} else {
			r.add(FindingRetransmission, nil, "PSN %d again, %s; its first transmission was lost", t.bth.PSN, why)
		}
		if t.side == Requester && s.timedOut {
			s.timedOut = false
			r.add(FindingAckTimeout, nil, "resent after the %v local ACK timeout", s.cfg.AckTimeout)
		}
	}
	for o := t.off; o < t.off+span; o++ {
		s.lastRec[t.side][o] = r
	}
}

// timeout fires the local ACK timer: go back to the oldest unacknowledged PSN.
func (s *sim) timeout(now time.Duration) {
	if s.qpErr || s.blocked || s.una >= s.highSent {
		return
	}
	if s.retries++; s.retries > maxRetries {
		s.qpErr = true
		s.errWhy = fmt.Sprintf("retry count exceeded: %d local ACK timeouts without progress", maxRetries)
		return
	}
	s.timedOut = true
	s.rewind(now, s.una, "after the local ACK timeout")
}

// rewind makes the requester go back to PSN offset off (go-back-N).
func (s *sim) rewind(now time.Duration, off int, cause string) {
	s.epoch++
	s.cause = cause
	s.snd = off
	for i := range s.wqes {
		w := &s.wqes[i]
		if w.kind == OpRead && !w.done && w.last >= off {
			w.recvd = min(w.recvd, max(0, off-w.first))
		}
	}
	s.kick(now)
	s.wake(now)
}

// advance moves the oldest unacknowledged PSN past completed ops, and past
// SEND/WRITE packets up to p; it reports whether it moved. An ACK beyond a
// READ or atomic that has not completed means its responses were lost.
func (s *sim) advance(now time.Duration, p int, epoch int) {
	moved := false
	for s.una < s.total {
		w := s.wqeAt(s.una)
		if w.done {
			s.una = w.last + 1
			moved = true
			continue
		}
		if s.una > p {
			break
		}
		if w.kind.readOrAtomic() {
			if p >= w.last && epoch == s.epoch {
				s.rewind(now, w.first+w.recvd, "after an ACK beyond an unanswered "+w.kind.String())
			}
			break
		}
		if w.last <= p {
			w.done = true
			s.una = w.last + 1
		} else {
			s.una = p + 1
		}
		moved = true
	}
	if moved {
		s.retries = 0
		s.kick(now)
		s.wake(now)
	}
}

// requesterReceive is the completer: ACKs, NAKs, READ responses, ATOMIC ACKs.
func (s *sim) requesterReceive(now time.Duration, t *tx) {
	if t.drop || s.qpErr {
		return
	}
	info := t.bth.Opcode.Info()
	p := t.off
	switch info.Operation {
	case layers.OpAcknowledge:
		syn := t.bth.AETH.Syndrome
		switch syn.Type() {
		case layers.AETHAck:
			s.advance(now, p, t.epoch)
		case layers.AETHRNRNak:
			if t.epoch != s.epoch {
				return
			}
			s.advance(now, p-1, t.epoch)
			s.blocked = true
			s.epoch++
			s.kick(now)
			s.schedule(event{at: now + layers.RNRTimerCode(syn.Value()).Duration(), kind: evRNRDone, gen: s.epoch, off: p})
		case layers.AETHNak:
			if syn.NAKCode() != layers.NAKPSNSequenceError {
				s.qpErr = true
				s.errWhy = fmt.Sprintf("NAK %v for PSN %d", syn.NAKCode(), t.bth.PSN)
				s.kick(now)
				return
			}
			if t.epoch != s.epoch {
				return
			}
			s.advance(now, p-1, t.epoch)
			s.rewind(now, p, "after a NAK PSN sequence error")
		}
	case layers.OpRDMAReadResponse:
		w := s.wqeAt(p)
		if w == nil || w.kind != OpRead || w.done {
			return
		}
		s.advance(now, w.first-1, t.epoch)
		exp := w.first + w.recvd
		switch {
		case p == exp:
			w.recvd++
			if exp == w.last {
				w.done = true
			}
			s.advance(now, w.first-1, t.epoch)
			s.kick(now)
		case p > exp && t.epoch == s.epoch:
			s.rewind(now, exp, "after READ responses were lost")
		}
	case layers.OpAtomicAcknowledge:
		s.advance(now, p-1, t.epoch)
		if w := s.wqeAt(p); w != nil && w.kind.readOrAtomic() && w.kind != OpRead && !w.done {
			w.done = true
			s.advance(now, p-1, t.epoch)
		}
	}
}

// respond transmits a packet from the responder answering request t.
func (s *sim) respond(now time.Duration, b layers.BTH, payload []byte, t *tx, off int) *tx {
	b.PSN = s.base.Add(off)
	r := &tx{side: Responder, epoch: t.epoch, bth: b, payload: payload, off: off, npsn: 1, pkt: -1}
	s.transmit(now, r)
	return r
}

func (s *sim) ackBTH(op layers.Opcode, syn layers.AETHSyndrome) layers.BTH {
	return layers.BTH{Opcode: op, PKey: s.cfg.PKey, DestQP: s.cfg.Requester.QPN,
		AETH: layers.AETH{Syndrome: syn, MSN: s.msn & 0xFFFFFF}}
}

// nak sends a NAK (or RNR NAK) with PSN offset off in answer to t.
func (s *sim) nak(now time.Duration, syn layers.AETHSyndrome, off int, t *tx) {
	r := s.respond(now, s.ackBTH(opAck, syn), nil, t, off)
	if r.rec != nil {
		kind := FindingNAK
		if syn.IsRNRNak() {
			kind = FindingRNRNak
		}
		r.rec.add(kind, t.rec, "%v, PSN %d", syn, r.bth.PSN)
	}
}

// fail answers t with an error NAK, which puts the QP in the error state.
func (s *sim) fail(now time.Duration, code layers.NAKCode, t *tx, why string) {
	s.nak(now, layers.MakeNakSyndrome(code), t.off, t)
	s.respErr = true
	s.errWhy = fmt.Sprintf("responder NAK %v for PSN %d: %s", code, t.bth.PSN, why)
}

// responderReceive handles a request arriving at the responder.
func (s *sim) responderReceive(now time.Duration, t *tx) {
	if t.drop || s.respErr {
		return
	}
	if t.cnp {
		b := layers.BTH{Opcode: opCNPRoCE, PKey: s.cfg.PKey, DestQP: s.cfg.Requester.QPN, BECN: true}
		if s.cfg.Encap.Native() {
			b.Opcode = opCNPIB
		}
		r := &tx{side: Responder, epoch: t.epoch, bth: b, pkt: -1}
		s.transmit(now, r)
		if r.rec != nil {
			r.rec.add(FindingCNP, t.rec, "congestion notification for QP 0x%06x", s.cfg.Requester.QPN)
		}
	}
	switch s.cfg.Service {
	case layers.ServiceUD:
		return
	case layers.ServiceUC:
		s.ucReceive(t)
		return
	}
	d := t.off - s.ePSN
	if d > 0 {
		if !s.nakSent {
			s.nakSent = true
			s.nak(now, layers.MakeNakSyndrome(layers.NAKPSNSequenceError), s.ePSN, t)
		}
		return
	}
	if d < 0 {
		s.duplicate(now, t)
		return
	}
	s.nakSent = false
	if code, ok := s.naks[t.pkt]; ok && !s.nakDone[t.pkt] {
		s.nakDone[t.pkt] = true
		if code == layers.NAKPSNSequenceError {
			s.nakSent = true
			s.nak(now, layers.MakeNakSyndrome(code), s.ePSN, t)
			return
		}
		s.fail(now, code, t, "injected")
		return
	}
	if s.rnrLeft[t.pkt] > 0 {
		s.rnrLeft[t.pkt]--
		s.nak(now, layers.MakeRNRNakSyndrome(s.rnrTimer[t.pkt]), t.off, t)
		return
	}
	info := t.bth.Opcode.Info()
	if !info.Known || !info.IsRequest() || info.Service != layers.ServiceRC {
		s.fail(now, layers.NAKInvalidRequest, t, fmt.Sprintf("opcode %v is not an RC request", t.bth.Opcode))
		return
	}
	if why := s.checkRequest(info, t); why != "" {
		s.fail(now, layers.NAKInvalidRequest, t, why)
		return
	}
	s.execute(now, info, t)
}

// checkRequest applies the responder's opcode-sequence and length checks
// (rxe CHK_OP_SEQ, CHK_LENGTH, CHK_RKEY) and says what fails.
func (s *sim) checkRequest(info *layers.OpcodeInfo, t *tx) string {
	pos, op := info.Position, info.Operation
	switch pos {
	case layers.PosFirst, layers.PosOnly:
		if s.inMsg {
			return fmt.Sprintf("%v while a %v message is open", t.bth.Opcode, s.msgOp)
		}
	case layers.PosMiddle, layers.PosLast:
		if !s.inMsg || s.msgOp != op {
			return fmt.Sprintf("%v without a FIRST", t.bth.Opcode)
		}
	}
	mtu, n := s.cfg.MTU, t.rxLen
	if op == layers.OpSend || op == layers.OpRDMAWrite {
		switch pos {
		case layers.PosFirst, layers.PosMiddle:
			if n != mtu {
				return fmt.Sprintf("%d bytes in a %v, not the MTU %d", n, t.bth.Opcode, mtu)
			}
		case layers.PosLast, layers.PosOnly:
			if n > mtu {
				return fmt.Sprintf("%d bytes exceed the MTU %d", n, mtu)
			}
		}
	}
	if op == layers.OpRDMAWrite {
		resid := s.resid
		if info.Has(layers.HdrRETH) {
			resid = int(t.bth.RETH.DMALength)
		}
		last := pos == layers.PosLast || pos == layers.PosOnly
		if !last && resid <= mtu || last && n != resid {
			return fmt.Sprintf("%d bytes where the RETH leaves %d", n, resid)
		}
	}
	return ""
}

// execute carries out an in-order, valid request.
func (s *sim) execute(now time.Duration, info *layers.OpcodeInfo, t *tx) {
	switch info.Operation {
	case layers.OpSend, layers.OpRDMAWrite:
		if info.Has(layers.HdrRETH) {
			s.resid = int(t.bth.RETH.DMALength)
		}
		s.resid -= t.rxLen
		s.ePSN = t.off + 1
		switch info.Position {
		case layers.PosFirst:
			s.inMsg, s.msgOp = true, info.Operation
		case layers.PosLast, layers.PosOnly:
			s.inMsg = false
			s.msn++
		}
		if t.bth.AckReq || s.cfg.Ack.EveryPacket {
			s.respond(now, s.ackBTH(opAck, layers.MakeAckSyndrome(s.cfg.Ack.creditCode())), nil, t, t.off)
		}
	case layers.OpRDMAReadRequest:
		n := layers.Segments(int(t.bth.RETH.DMALength), s.cfg.MTU)
		s.ePSN = t.off + n
		s.msn++
		s.reads = append(s.reads, readRes{first: t.off, n: n})
		s.readResponses(now, t)
	case layers.OpCompareSwap, layers.OpFetchAdd:
		s.ePSN = t.off + 1
		s.msn++
		orig := s.ops[s.pkts[t.pkt].op].Orig
		s.atomics[t.off] = orig
		s.atomicAck(now, t, orig)
	}
}

// readResponses sends the responses to READ request t.
func (s *sim) readResponses(now time.Duration, t *tx) {
	op := s.ops[s.pkts[t.pkt].op]
	from := int(t.bth.RETH.VA - op.VA)
	to := min(from+int(t.bth.RETH.DMALength), len(op.Data))
	data := op.Data[min(from, to):to]
	syn := layers.MakeAckSyndrome(s.cfg.Ack.creditCode())
	for i, b := range readResponses(s.cfg, s.base.Add(t.off), data, syn, s.msn) {
		chunk := data[min(i*s.cfg.MTU, len(data)):min((i+1)*s.cfg.MTU, len(data))]
		s.respond(now, b, chunk, t, t.off+i)
	}
}

func (s *sim) atomicAck(now time.Duration, t *tx, orig uint64) *tx {
	b := s.ackBTH(opAtomicAck, layers.MakeAckSyndrome(s.cfg.Ack.creditCode()))
	b.AtomicAckETH.OrigRemoteData = orig
	return s.respond(now, b, nil, t, t.off)
}

// duplicate handles a request whose PSN the responder has passed.
func (s *sim) duplicate(now time.Duration, t *tx) {
	info := t.bth.Opcode.Info()
	switch info.Operation {
	case layers.OpSend, layers.OpRDMAWrite:
		if t.bth.AckReq {
			r := s.respond(now, s.ackBTH(opAck, layers.MakeAckSyndrome(s.cfg.Ack.creditCode())), nil, t, s.ePSN-1)
			if r.rec != nil {
				r.rec.add(FindingDuplicate, t.rec, "ACK of the last PSN executed, for a duplicate request")
			}
		}
	case layers.OpRDMAReadRequest:
		for _, rr := range s.reads {
			if t.off >= rr.first && t.off < rr.first+rr.n {
				s.readResponses(now, t)
				return
			}
		}
	case layers.OpCompareSwap, layers.OpFetchAdd:
		if orig, ok := s.atomics[t.off]; ok {
			r := s.atomicAck(now, t, orig)
			if r.rec != nil {
				r.rec.add(FindingDuplicate, t.rec, "ATOMIC ACK replayed for a duplicate request, not executed again")
			}
		}
	}
}

// ucReceive is the UC responder: no ACKs; a gap drops the message.
func (s *sim) ucReceive(t *tx) {
	info := t.bth.Opcode.Info()
	if !info.Known || info.Service != layers.ServiceUC {
		return
	}
	if t.off != s.ePSN {
		s.inMsg = false
		s.ucDrop = true
	}
	s.ePSN = t.off + 1
	pos := info.Position
	if s.ucDrop {
		if pos != layers.PosFirst && pos != layers.PosOnly {
			return
		}
		s.ucDrop = false
	}
	if s.checkRequest(info, t) != "" {
		s.inMsg, s.ucDrop = false, true
		return
	}
	if info.Has(layers.HdrRETH) {
		s.resid = int(t.bth.RETH.DMALength)
	}
	s.resid -= t.rxLen
	switch pos {
	case layers.PosFirst:
		s.inMsg, s.msgOp = true, info.Operation
	case layers.PosLast, layers.PosOnly:
		s.inMsg = false
		s.msn++
	}
}

// sorted returns the captured frames in capture order.
func (s *sim) sorted() []*rec {
	out := append([]*rec(nil), s.recs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].at != out[j].at {
			return out[i].at < out[j].at
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// output numbers the captured frames and resolves their findings; it adds
// the PSN gaps an analyzer sees in the requests and READ responses.
func (s *sim) output() Trace {
	recs := s.sorted()
	num := make(map[*rec]int, len(recs))
	for i, r := range recs {
		num[r] = i + 1
	}
	readPSN := make([]bool, s.total)
	for _, w := range s.wqes {
		if w.kind == OpRead {
			for o := w.first; o <= w.last; o++ {
				readPSN[o] = true
			}
		}
	}
	var tr Trace
	reqNext, respNext := 0, 0
	for i, r := range recs {
		tr.Frames = append(tr.Frames, r.frame)
		t := r.tx
		switch {
		case t.pkt >= 0:
			if t.off > reqNext {
				r.add(FindingPSNGap, nil, "%d PSNs missing before PSN %d", t.off-reqNext, t.bth.PSN)
			}
			reqNext = max(reqNext, t.off+t.npsn)
		case t.pkt < 0 && t.bth.Opcode.Info().Operation == layers.OpRDMAReadResponse:
			missing := 0
			for o := respNext; o < t.off; o++ {
				if readPSN[o] {
					missing++
				}
			}
			if missing > 0 {
				r.add(FindingPSNGap, nil, "%d READ response PSNs missing before PSN %d", missing, t.bth.PSN)
			}
			respNext = max(respNext, t.off+1)
		}
		for _, f := range r.finds {
			ref := 0
			if f.ref != nil {
				ref = num[f.ref]
			}
			tr.Findings = append(tr.Findings, Finding{Frame: i + 1, Kind: f.kind, Ref: ref, Detail: f.detail})
		}
		switch info := t.bth.Opcode.Info(); {
		case t.pkt >= 0:
			tr.Frames[i].Info.Note = fmt.Sprintf("op %d %v, packet %d", s.pkts[t.pkt].op+1, s.ops[s.pkts[t.pkt].op].Kind, t.pkt+1)
		case info.Has(layers.HdrAETH):
			tr.Frames[i].Info.Note = fmt.Sprintf("%v, MSN %d", t.bth.AETH.Syndrome, t.bth.AETH.MSN)
		case info.Service == layers.ServiceCNP:
			tr.Frames[i].Info.Note = "congestion notification, BECN"
		}
	}
	sortFindings(tr.Findings)
	tr.Lost = append(tr.Lost, s.lost...)
	return tr
}
