package endpoint

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// QPConfig sets up a QP (ibv_qp_init_attr).
type QPConfig struct {
	Type   QPType
	SendCQ *CQ
	RecvCQ *CQ
	// SRQ, when set, is where the QP takes its receive WRs; PostRecv on the
	// QP is then an error.
	SRQ *SRQ
	// MaxSendWR and MaxRecvWR bound the work queues (default 256 each).
	MaxSendWR int
	MaxRecvWR int
	// GSI makes this the device's QP1 (UD, Q_Key 0x80010000), for CM MADs.
	GSI bool
	// InboxLen is how many received packets may wait for the QP's
	// goroutine before further ones are dropped (default 1024).
	InboxLen int
}

// MaxSGE is the most scatter/gather elements a work request may have.
const MaxSGE = 8

// QPAttr holds a QP's attributes (ibv_qp_attr); AttrMask says which of them
// a Modify sets.
type QPAttr struct {
	State QPState
	// Access is the remote access the QP allows its peer (REMOTE_WRITE,
	// REMOTE_READ, REMOTE_ATOMIC).
	Access  Access
	PathMTU layers.PathMTU
	DestQPN uint32
	// RQPSN is the first PSN the responder expects; SQPSN the first PSN
	// the requester sends.
	RQPSN layers.PSN
	SQPSN layers.PSN
	// Timeout is the local ACK timeout exponent: 4.096 µs × 2^Timeout, 0
	// disables retransmission (rxe).
	Timeout uint8
	// RetryCnt and RNRRetry count retries; 7 means unlimited for both, as
	// in rxe.
	RetryCnt uint8
	RNRRetry uint8
	// MinRNRTimer is the timer code the responder puts in its RNR NAKs.
	MinRNRTimer layers.RNRTimerCode
	// MaxRdAtomic is how many READ/atomic requests the requester keeps
	// outstanding; MaxDestRdAtomic how many the responder remembers. Both
	// are rounded up to a power of two (rxe), at most 128. With
	// MaxRdAtomic 0 READs and atomics wait forever; with MaxDestRdAtomic 0
	// the responder NAKs them (invalid request), as rxe does.
	MaxRdAtomic     uint8
	MaxDestRdAtomic uint8
	QKey            uint32
	PKey            uint16
	// Remote is the peer's address (its GID) in the QP's address vector.
	Remote       netip.Addr
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32
}

// AttrMask selects QPAttr fields (enum ibv_qp_attr_mask).
type AttrMask uint32

// Attribute mask bits.
const (
	AttrState AttrMask = 1 << iota
	AttrAccess
	AttrPathMTU
	AttrDestQPN
	AttrRQPSN
	AttrSQPSN
	AttrTimeout
	AttrRetryCnt
	AttrRNRRetry
	AttrMinRNRTimer
	AttrMaxRdAtomic
	AttrMaxDestRdAtomic
	AttrQKey
	AttrPKey
	AttrAV // Remote, HopLimit, TrafficClass, FlowLabel
)

var attrNames = [...]string{"STATE", "ACCESS", "PATH_MTU", "DEST_QPN", "RQ_PSN", "SQ_PSN", "TIMEOUT",
	"RETRY_CNT", "RNR_RETRY", "MIN_RNR_TIMER", "MAX_QP_RD_ATOMIC", "MAX_DEST_RD_ATOMIC", "QKEY", "PKEY", "AV"}

func (m AttrMask) String() string {
	s := ""
	for i, n := range attrNames {
		if m&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += n
		}
	}
	if s == "" {
		return "none"
	}
	return s
}

// DefaultPKey is the default partition's key, the only one rxe accepts.
const DefaultPKey = 0xFFFF

// postedWR is a send WR on its way to the QP's goroutine; the SGEs are
// copied so the caller may reuse its slice at once, as verbs allows.
type postedWR struct {
	wr   SendWR
	sges [MaxSGE]SGE
	nsge int
}

// QP is a queue pair. One goroutine owns all of its protocol state:
// PostSend, Modify and the device's receive loop hand it work through
// channels.
type QP struct {
	dev    *Device
	pd     *PD
	typ    QPType
	qpn    uint32
	sendCQ *CQ
	recvCQ *CQ
	rq     *recvQueue
	srq    *SRQ
	gsi    bool

	stateA  atomic.Uint32 // mirror of state for PostSend/PostRecv
	sqCount atomic.Int32  // send WRs posted and not yet completed
	// WRITE messages placed as responder, and a nudge when that count
	// grows: a WRITE has no completion to wait for.
	remoteWrites atomic.Uint64
	writeNotify  chan struct{}
	maxSend      int
	inbox        chan *rxPacket
	sqIn         chan postedWR
	ctrl         chan func()
	done         chan struct{}
	exited       chan struct{}
	stopOnce     sync.Once

	// Owned by the QP goroutine from here on.
	state QPState
	attr  QPAttr
	mtu   int
	tx    txState
	req   requester
	resp  responder
}

// CreateQP makes a QP in the RESET state.
func (pd *PD) CreateQP(cfg QPConfig) (*QP, error) {
	if cfg.Type != RC && cfg.Type != UC && cfg.Type != UD {
		return nil, fmt.Errorf("create QP: type %v: %w", cfg.Type, ErrInvalidAttr)
	}
	if cfg.GSI && cfg.Type != UD {
		return nil, fmt.Errorf("create QP: the GSI QP is UD, not %v: %w", cfg.Type, ErrInvalidAttr)
	}
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, fmt.Errorf("create QP: send and receive CQs are required: %w", ErrInvalidAttr)
	}
	if cfg.MaxSendWR <= 0 {
		cfg.MaxSendWR = 256
	}
	if cfg.MaxRecvWR <= 0 {
		cfg.MaxRecvWR = 256
	}
	if cfg.InboxLen <= 0 {
		cfg.InboxLen = 1024
	}
	qp := &QP{
		dev: pd.dev, pd: pd, typ: cfg.Type, sendCQ: cfg.SendCQ, recvCQ: cfg.RecvCQ, srq: cfg.SRQ,
		maxSend: cfg.MaxSendWR, gsi: cfg.GSI,
		inbox:  make(chan *rxPacket, cfg.InboxLen),
		sqIn:   make(chan postedWR, cfg.MaxSendWR),
		ctrl:   make(chan func()),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
		tx:     newTxState(),

		writeNotify: make(chan struct{}, 1),
	}
	if cfg.SRQ != nil {
		qp.rq = cfg.SRQ.rq
	} else {
		qp.rq = newRecvQueue(pd, cfg.MaxRecvWR)
	}
	qp.attr = defaultAttr()
	if cfg.GSI {
		qp.attr.QKey = layers.GSIQKey
	}
	qp.req.init(qp, cfg.MaxSendWR)
	qp.resp.init(qp)
	if err := pd.dev.register(qp, cfg.GSI); err != nil {
		return nil, err
	}
	go qp.run()
	return qp, nil
}

func defaultAttr() QPAttr {
	return QPAttr{PathMTU: layers.MTU1024, PKey: DefaultPKey, HopLimit: 64}
}

// QPN is the QP number.
func (qp *QP) QPN() uint32 { return qp.qpn }

// Type is the QP's transport service.
func (qp *QP) Type() QPType { return qp.typ }

// State is the QP's current state.
func (qp *QP) State() QPState { return QPState(qp.stateA.Load()) }

// RemoteWrites counts the RDMA WRITE messages without immediate data the
// QP has placed in its memory as responder (a duplicate is not placed
// again, so not counted again). A WRITE completes nothing on this side;
// an application that waits for one, as perftest's ib_write_lat does by
// polling the last byte of its buffer, waits for this count instead: once
// it has grown, the WRITE's bytes are in memory.
func (qp *QP) RemoteWrites() uint64 { return qp.remoteWrites.Load() }

// RemoteWriteNotify returns a channel that receives a value after
// RemoteWrites grew; one value may stand for several WRITEs, so read the
// count again, as with CQ.Notify.
func (qp *QP) RemoteWriteNotify() <-chan struct{} { return qp.writeNotify }

// Device returns the device the QP belongs to.
func (qp *QP) Device() *Device { return qp.dev }

// call runs f on the QP's goroutine and waits for it.
func (qp *QP) call(f func()) error {
	done := make(chan struct{})
	select {
	case qp.ctrl <- func() { f(); close(done) }:
	case <-qp.exited:
		return ErrQPDestroyed
	}
	<-done
	return nil
}

// Query returns the QP's attributes, State included.
func (qp *QP) Query() (QPAttr, error) {
	var a QPAttr
	err := qp.call(func() { a = qp.attr; a.State = qp.state })
	return a, err
}

// Modify changes the attributes selected by mask and, with AttrState, the
// state, following the verbs state machine: each transition has required
// and optional attributes, and anything else is refused.
func (qp *QP) Modify(attr QPAttr, mask AttrMask) error {
	var err error
	if cerr := qp.call(func() { err = qp.modify(attr, mask) }); cerr != nil {
		return cerr
	}
	return err
}

// Destroy stops the QP's goroutine; its outstanding WRs are dropped
// without completions, as ibv_destroy_qp does.
func (qp *QP) Destroy() error {
	qp.stop()
	return nil
}

func (qp *QP) stop() {
	qp.stopOnce.Do(func() {
		close(qp.done)
		<-qp.exited
		qp.dev.unregister(qp)
	})
}

// PostSend queues a send WR. Validation that needs only the WR happens
// here; memory-key errors surface as LOC_PROT_ERR completions, as with
// verbs.
func (qp *QP) PostSend(wr *SendWR) error {
	st := qp.State()
	if st != StateRTS && st != StateSQD && st != StateSQE && st != StateErr {
		return fmt.Errorf("post send on QP %#x in %v: %w", qp.qpn, st, ErrInvalidState)
	}
	if len(wr.SGL) > MaxSGE {
		return fmt.Errorf("post send: %d SGEs, at most %d: %w", len(wr.SGL), MaxSGE, ErrInvalidWR)
	}
	switch wr.Op {
	case WRSend, WRSendWithImm:
	case WRSendWithInv, WRRead, WRCompareSwap, WRFetchAdd:
		if qp.typ != RC {
			return fmt.Errorf("post send: %v on a %v QP: %w", wr.Op, qp.typ, ErrInvalidWR)
		}
	case WRWrite, WRWriteWithImm:
		if qp.typ == UD {
			return fmt.Errorf("post send: %v on a UD QP: %w", wr.Op, ErrInvalidWR)
		}
	default:
		return fmt.Errorf("post send: opcode %v: %w", wr.Op, ErrInvalidWR)
	}
	if qp.typ == UD && !wr.Dest.Addr.IsValid() {
		return fmt.Errorf("post send: UD WR without destination: %w", ErrInvalidWR)
	}
	if int(qp.sqCount.Add(1)) > qp.maxSend {
		qp.sqCount.Add(-1)
		return fmt.Errorf("post send on QP %#x: %w", qp.qpn, ErrQueueFull)
	}
	p := postedWR{wr: *wr, nsge: len(wr.SGL)}
	copy(p.sges[:], wr.SGL)
	p.wr.SGL = nil
	select {
	case qp.sqIn <- p:
		return nil
	case <-qp.exited:
		return ErrQPDestroyed
	}
}

// PostRecv queues a receive WR on the QP's receive queue.
func (qp *QP) PostRecv(wr RecvWR) error {
	if qp.srq != nil {
		return fmt.Errorf("post recv on QP %#x: it uses an SRQ: %w", qp.qpn, ErrInvalidWR)
	}
	if st := qp.State(); st == StateReset {
		return fmt.Errorf("post recv on QP %#x in %v: %w", qp.qpn, st, ErrInvalidState)
	}
	if qp.State() == StateErr {
		// A QP in error flushes whatever is posted to it.
		if err := qp.rq.post(wr); err != nil {
			return err
		}
		return qp.call(func() { qp.flushRecv() })
	}
	return qp.rq.post(wr)
}

// transition is one allowed state change with its required and optional
// attributes per QP type (IBTA Vol 1 §10.3, the table ib_modify_qp_is_ok
// encodes).
type transition struct {
	required [4]AttrMask // indexed by QPType
	optional [4]AttrMask
}

const (
	rcPath = AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN
)

var transitions = map[[2]QPState]transition{
	{StateReset, StateInit}: {
		required: [4]AttrMask{RC: AttrAccess, UC: AttrAccess, UD: AttrQKey},
		optional: [4]AttrMask{RC: AttrPKey, UC: AttrPKey, UD: AttrPKey},
	},
	{StateInit, StateInit}: {
		optional: [4]AttrMask{RC: AttrAccess | AttrPKey, UC: AttrAccess | AttrPKey, UD: AttrQKey | AttrPKey},
	},
	{StateInit, StateRTR}: {
		required: [4]AttrMask{RC: rcPath | AttrMaxDestRdAtomic | AttrMinRNRTimer, UC: rcPath},
		optional: [4]AttrMask{RC: AttrAccess | AttrPKey, UC: AttrAccess | AttrPKey, UD: AttrQKey | AttrPKey},
	},
	{StateRTR, StateRTS}: {
		required: [4]AttrMask{RC: AttrSQPSN | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxRdAtomic, UC: AttrSQPSN, UD: AttrSQPSN},
		optional: [4]AttrMask{RC: AttrAccess | AttrMinRNRTimer, UC: AttrAccess, UD: AttrQKey},
	},
	{StateRTS, StateRTS}: {
		optional: [4]AttrMask{RC: AttrAccess | AttrMinRNRTimer, UC: AttrAccess, UD: AttrQKey},
	},
	{StateRTS, StateSQD}: {},
	{StateSQD, StateRTS}: {
		optional: [4]AttrMask{RC: AttrAccess | AttrMinRNRTimer, UC: AttrAccess, UD: AttrQKey},
	},
	{StateSQD, StateSQD}: {
		optional: [4]AttrMask{
			RC: AttrAV | AttrPathMTU | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxRdAtomic | AttrMaxDestRdAtomic | AttrMinRNRTimer | AttrAccess | AttrPKey,
			UC: AttrAV | AttrAccess | AttrPKey, UD: AttrPKey | AttrQKey,
		},
	},
	{StateSQE, StateRTS}: {
		optional: [4]AttrMask{UC: AttrAccess, UD: AttrQKey},
	},
}

// checkTransition says whether cur → next with mask is allowed for type t.
func checkTransition(t QPType, cur, next QPState, mask AttrMask) error {
	mask &^= AttrState
	if next == StateReset || next == StateErr {
		if mask != 0 {
			return fmt.Errorf("%v → %v takes no attributes, got %v: %w", cur, next, mask, ErrInvalidAttr)
		}
		return nil
	}
	tr, ok := transitions[[2]QPState{cur, next}]
	if !ok || (cur == StateSQE && t == RC) {
		return fmt.Errorf("%v QP %v → %v: %w", t, cur, next, ErrInvalidTransition)
	}
	if missing := tr.required[t] &^ mask; missing != 0 {
		return fmt.Errorf("%v QP %v → %v needs %v: %w", t, cur, next, missing, ErrInvalidAttr)
	}
	if extra := mask &^ (tr.required[t] | tr.optional[t]); extra != 0 {
		return fmt.Errorf("%v QP %v → %v does not take %v: %w", t, cur, next, extra, ErrInvalidAttr)
	}
	return nil
}

// roundPow2 rounds n up to a power of two (0 stays 0), as rxe does for the
// RD/atomic depths.
func roundPow2(n uint8) int {
	if n <= 1 {
		return int(n)
	}
	return 1 << bits.Len(uint(n-1))
}

func validateAttr(a *QPAttr, mask AttrMask, local netip.Addr) error {
	bad := func(what string, v any) error { return fmt.Errorf("%s %v: %w", what, v, ErrInvalidAttr) }
	if mask&AttrPathMTU != 0 && a.PathMTU.Bytes() == 0 {
		return bad("path MTU code", uint8(a.PathMTU))
	}
	if mask&AttrTimeout != 0 && a.Timeout > 31 {
		return bad("timeout", a.Timeout)
	}
	if mask&AttrRetryCnt != 0 && a.RetryCnt > 7 {
		return bad("retry_cnt", a.RetryCnt)
	}
	if mask&AttrRNRRetry != 0 && a.RNRRetry > 7 {
		return bad("rnr_retry", a.RNRRetry)
	}
	if mask&AttrMinRNRTimer != 0 && a.MinRNRTimer > 31 {
		return bad("min_rnr_timer", uint8(a.MinRNRTimer))
	}
	if mask&AttrMaxRdAtomic != 0 && a.MaxRdAtomic > 128 {
		return bad("max_rd_atomic", a.MaxRdAtomic)
	}
	if mask&AttrMaxDestRdAtomic != 0 && a.MaxDestRdAtomic > 128 {
		return bad("max_dest_rd_atomic", a.MaxDestRdAtomic)
	}
	if mask&AttrRQPSN != 0 && !a.RQPSN.Valid() {
		return bad("rq_psn", a.RQPSN)
	}
	if mask&AttrSQPSN != 0 && !a.SQPSN.Valid() {
		return bad("sq_psn", a.SQPSN)
	}
	if mask&AttrDestQPN != 0 && (a.DestQPN == 0 || a.DestQPN > layers.PSNMask) {
		return bad("dest QPN", a.DestQPN)
	}
	if mask&AttrAV != 0 {
		if !a.Remote.IsValid() {
			return bad("remote address", a.Remote)
		}
		if a.Remote.Unmap().Is4() != local.Unmap().Is4() {
			return fmt.Errorf("remote %v and local %v differ in address family: %w", a.Remote, local, ErrInvalidAttr)
		}
	}
	if mask&AttrPKey != 0 && a.PKey&0x7FFF != DefaultPKey&0x7FFF {
		return bad("P_Key (only the default partition exists)", fmt.Sprintf("%#x", a.PKey))
	}
	return nil
}

// modify runs on the QP goroutine.
func (qp *QP) modify(a QPAttr, mask AttrMask) error {
	next := qp.state
	if mask&AttrState != 0 {
		next = a.State
	}
	if next > StateErr {
		return fmt.Errorf("state %v: %w", next, ErrInvalidAttr)
	}
	if err := checkTransition(qp.typ, qp.state, next, mask); err != nil {
		return fmt.Errorf("modify QP %#x: %w", qp.qpn, err)
	}
	if err := validateAttr(&a, mask, qp.dev.addr.Addr()); err != nil {
		return fmt.Errorf("modify QP %#x: %w", qp.qpn, err)
	}
	at := &qp.attr
	set := func(m AttrMask, f func()) {
		if mask&m != 0 {
			f()
		}
	}
	set(AttrAccess, func() { at.Access = a.Access })
	set(AttrPathMTU, func() { at.PathMTU = a.PathMTU })
	set(AttrDestQPN, func() { at.DestQPN = a.DestQPN })
	set(AttrRQPSN, func() { at.RQPSN = a.RQPSN })
	set(AttrSQPSN, func() { at.SQPSN = a.SQPSN })
	set(AttrTimeout, func() { at.Timeout = a.Timeout })
	set(AttrRetryCnt, func() { at.RetryCnt = a.RetryCnt })
	set(AttrRNRRetry, func() { at.RNRRetry = a.RNRRetry })
	set(AttrMinRNRTimer, func() { at.MinRNRTimer = a.MinRNRTimer })
	set(AttrMaxRdAtomic, func() { at.MaxRdAtomic = a.MaxRdAtomic })
	set(AttrMaxDestRdAtomic, func() { at.MaxDestRdAtomic = a.MaxDestRdAtomic })
	set(AttrQKey, func() {
		if !qp.gsi { // QP1's Q_Key is fixed (ENDPOINT.md §1.3 step 7)
			at.QKey = a.QKey
		}
	})
	set(AttrPKey, func() { at.PKey = a.PKey })
	set(AttrAV, func() {
		at.Remote, at.HopLimit, at.TrafficClass, at.FlowLabel = a.Remote.Unmap(), a.HopLimit, a.TrafficClass, a.FlowLabel
		if at.HopLimit == 0 {
			at.HopLimit = 64
		}
	})
	if qp.typ == UD {
		// UD's "path MTU" is the port MTU: the largest the wire carries.
		at.PathMTU = layers.MTU4096
	}
	qp.mtu = at.PathMTU.Bytes()
	prev := qp.state
	qp.setState(next)
	switch {
	case next == StateReset:
		qp.req.reset()
		qp.resp.reset()
		qp.rq.drainIf(qp.srq == nil)
	case next == StateErr:
		qp.enterError()
	case prev == StateInit && next == StateRTR:
		qp.resp.start(at.RQPSN)
	case prev == StateRTR && next == StateRTS:
		qp.req.start(at.SQPSN)
	}
	if mask&AttrMaxDestRdAtomic != 0 && prev != StateInit && next >= StateRTR && next != StateErr {
		qp.resp.resize()
	}
	if mask&(AttrRetryCnt|AttrRNRRetry) != 0 {
		qp.req.retryLeft, qp.req.rnrLeft = at.RetryCnt, at.RNRRetry
	}
	return nil
}

func (qp *QP) setState(s QPState) {
	qp.state = s
	qp.stateA.Store(uint32(s))
}

// enterError moves the QP to ERR and flushes both queues (every WR
// completes with WR_FLUSH_ERR), as rxe does after a fatal error.
func (qp *QP) enterError() {
	qp.setState(StateErr)
	qp.req.flushAll()
	qp.resp.abort()
	qp.flushRecv()
}

func (qp *QP) flushRecv() {
	if qp.srq != nil || qp.state != StateErr {
		return
	}
	qp.rq.drain(func(wr recvWQE) {
		qp.recvCQ.push(WC{ID: wr.id, Status: StatusWRFlushErr, Op: WCRecv, QPN: qp.qpn})
	})
}

// run is the QP's goroutine.
func (qp *QP) run() {
	defer close(qp.exited)
	defer qp.req.stopTimers()
	for {
		if qp.req.hasWork() {
			select {
			case p := <-qp.inbox:
				qp.receive(p)
			case w := <-qp.sqIn:
				qp.req.post(w)
			case f := <-qp.ctrl:
				f()
			case <-qp.req.retryTimer.C:
				qp.req.onTimeout()
			case <-qp.req.rnrTimer.C:
				qp.req.onRNRTimer()
			case <-qp.done:
				return
			default:
				qp.req.send()
			}
		} else {
			select {
			case p := <-qp.inbox:
				qp.receive(p)
			case w := <-qp.sqIn:
				qp.req.post(w)
			case f := <-qp.ctrl:
				f()
			case <-qp.req.retryTimer.C:
				qp.req.onTimeout()
			case <-qp.req.rnrTimer.C:
				qp.req.onRNRTimer()
			case <-qp.done:
				return
			}
		}
		qp.resp.flushAck()
		qp.flush()
		if qp.typ != RC {
			qp.req.completeSent()
		}
	}
}

// receive handles a burst of packets: p and whatever else is waiting, up
// to a batch, so that ACKs for them coalesce into one.
func (qp *QP) receive(p *rxPacket) {
	qp.handle(p)
	for range txBatch - 1 {
		select {
		case p = <-qp.inbox:
			qp.handle(p)
		default:
			return
		}
	}
}

// handle applies the per-QP acceptance checks (ENDPOINT.md §1.3 steps 4-7)
// and passes the packet to the responder or the completer.
func (qp *QP) handle(p *rxPacket) {
	defer qp.dev.putRx(p)
	info := p.bth.Info()
	c := &qp.dev.c
	if info.Service != serviceOf(qp.typ) {
		c.dropQP.Add(1)
		qp.dev.dropped(p, Drop{Reason: DropQPType, Want: uint32(qp.typ)})
		return
	}
	if info.Response {
		if qp.typ != RC || (qp.state != StateRTS && qp.state != StateSQD) {
			c.dropQP.Add(1)
			qp.dev.dropped(p, Drop{Reason: DropQPState, Want: uint32(qp.state)})
			return
		}
	} else if qp.state < StateRTR || qp.state == StateErr {
		c.dropQP.Add(1)
		qp.dev.dropped(p, Drop{Reason: DropQPState, Want: uint32(qp.state)})
		return
	}
	if qp.typ != UD && p.src.Addr().Unmap() != qp.attr.Remote {
		c.dropAddr.Add(1)
		qp.dev.dropped(p, Drop{Reason: DropSourceAddr, Peer: qp.attr.Remote})
		return
	}
	if !pkeyMatch(p.bth.PKey, qp.attr.PKey) {
		c.dropPKey.Add(1)
		qp.dev.dropped(p, Drop{Reason: DropPKey, Got: uint32(p.bth.PKey), Want: uint32(qp.attr.PKey)})
		return
	}
	if qp.typ == UD && p.bth.DETH.QKey != qp.attr.QKey {
		c.dropQKey.Add(1)
		qp.dev.dropped(p, Drop{Reason: DropQKey, Got: p.bth.DETH.QKey, Want: qp.attr.QKey})
		return
	}
	c.rcvdPkts.Add(1)
	if info.Response {
		qp.req.onResponse(p)
	} else {
		qp.resp.onRequest(p)
	}
}

// pkeyMatch is the IBTA partition check rxe applies: the low 15 bits
// equal and at least one of the two keys a full member.
func pkeyMatch(a, b uint16) bool {
	return a&0x7FFF == b&0x7FFF && (a|b)&0x8000 != 0
}

// RandomPSN returns an unpredictable 24-bit starting PSN, as the tools pick
// with lrand48() & 0xFFFFFF.
func RandomPSN() layers.PSN {
	var b [4]byte
	_, _ = crand.Read(b[:])
	return layers.PSN(binary.LittleEndian.Uint32(b[:]) & layers.PSNMask)
}

// timeoutDuration is the local ACK timeout: 4.096 µs × 2^t (0: none).
func timeoutDuration(t uint8) time.Duration {
	if t == 0 {
		return 0
	}
	return time.Duration(4096) << t * time.Nanosecond
}
