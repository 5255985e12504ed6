package endpoint

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// RDMA CM over QP1 (ENDPOINT.md §2.3): the IB CM messages REQ, REP, RTU,
// REJ, MRA, DREQ and DREP that Linux's ib_cm sends for librdmacm (rping,
// ucmatose, perftest -R), as UD SENDs from QP1 to QP1 with Q_Key
// 0x80010000. The message layouts are package layers'; this file is the
// state machine of both sides.
//
// PSNs follow what Linux does on the wire (pcaps/rxe/rping.pcap): the
// Starting PSN of a REQ or REP is the PSN its sender expects to receive,
// so each side sends from the PSN of the other side's message.

// CM errors.
var (
	// ErrCMTimeout: the peer did not answer a REQ, REP or DREQ within
	// the retries.
	ErrCMTimeout = errors.New("endpoint: CM: no answer from the peer (timeout)")
	// ErrCMClosed: the connection manager was closed.
	ErrCMClosed = errors.New("endpoint: CM closed")
	// ErrCMState: the operation does not fit the connection's state.
	ErrCMState = errors.New("endpoint: CM: operation not allowed in this connection state")
	// ErrCMServiceInUse: another listener has the service ID.
	ErrCMServiceInUse = errors.New("endpoint: CM: service ID already listened on")
	// ErrCMBusy: a pending passive connection was dropped to make room
	// for another address's REQ (CMConfig.MaxPending).
	ErrCMBusy = errors.New("endpoint: CM: connection request dropped: too many pending, another address's REQ took its place")
)

// CMRejectError is a REJ from the peer.
type CMRejectError struct {
	Reason      layers.CMRejectReason
	PrivateData []byte
}

func (e *CMRejectError) Error() string {
	return fmt.Sprintf("endpoint: CM: rejected by the peer: %v (%d)", e.Reason, uint16(e.Reason))
}

// CMConfig tunes a connection manager; zero fields take Linux's values.
type CMConfig struct {
	// ResponseTimeout is the CM response timeout code put in REQs (4.096
	// µs × 2^n; default 20, 4.3 s, as ib_cm): how long the peer waits for
	// this side, and how long this side waits before it sends a REQ
	// again.
	ResponseTimeout uint8
	// MaxRetries is how often a REQ, REP or DREQ is sent again (default
	// 15, ib_cm's max CM retries). A passive side sends its REP again as
	// often as the REQ's Max CM Retries say, and no more than this.
	MaxRetries int
	// Backlog is how many REQs may wait for a listener's Accept (default
	// 16).
	Backlog int
	// MaxPending bounds the passive connections between their REQ and
	// their RTU, waiting for Accept or for the RTU (default
	// DefaultCMMaxPending). A REQ that finds them all taken (or its
	// listener's Backlog full) is answered REJ "no resources", unless
	// another address holds more of them than the REQ's sender: then that
	// address's oldest is dropped (REJ "no resources" to it, ErrCMBusy to
	// the application) to make room, so that one address sending REQs it
	// never completes cannot keep the others out.
	MaxPending int
}

// DefaultCMMaxPending is CMConfig.MaxPending's default.
const DefaultCMMaxPending = 64

// CMParam is what one side of a connection offers (rdma_conn_param).
type CMParam struct {
	// ResponderResources is how many RDMA READ/atomic requests this side
	// serves at once; InitiatorDepth how many it issues.
	ResponderResources uint8
	InitiatorDepth     uint8
	// RetryCount and RNRRetryCount are the retries the peer's QP should
	// use (7: unlimited in rxe).
	RetryCount    uint8
	RNRRetryCount uint8
	// MTU is the largest path MTU this side accepts (default 1024).
	MTU layers.PathMTU
	// PrivateData goes after the IP-CM header of a REQ (at most 56
	// bytes) or at the start of a REP (at most 196).
	PrivateData []byte
}

// DefaultCMParam is what rping asks for: 1 responder resource, initiator
// depth 1, retry and RNR retry 7, MTU 1024.
func DefaultCMParam() CMParam {
	return CMParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7, MTU: layers.MTU1024}
}

// cmState is a connection's CM state (ib_cm's, reduced).
type cmState uint8

const (
	cmReqSent cmState = iota + 1
	cmReqRcvd
	cmRepSent
	cmEstablished
	cmDreqSent
	cmTimewait
	cmClosed
	cmSIDRSent // an active SIDR_REQ waiting for its SIDR_REP
)

// cmFlushWait bounds how long Close waits for posted MADs to leave.
const cmFlushWait = 200 * time.Millisecond

// cmTimewait is how long a finished connection is remembered, so that a
// DREQ sent again gets its DREP again.
const cmTimewaitDur = 2 * time.Second

// CMConn is one connection of a connection manager, active or passive.
type CMConn struct {
	cm      *CM
	passive bool
	req     CMRequest // passive: the REQ; active: what was asked
	est     chan struct{}
	disc    chan struct{}

	// Owned by the CM goroutine.
	state      cmState
	localID    uint32
	remoteID   uint32
	tid        uint64
	qp         *QP
	remote     netip.Addr
	remoteQPN  uint32
	qkey       uint32     // SIDR: the Q_Key resolved
	localPSN   layers.PSN // what this side expects to receive
	peerPD     []byte
	err        error
	pend       [layers.MADLength]byte
	pending    bool
	deadline   time.Time
	interval   time.Duration
	retries    int
	mraSent    bool
	estClosed  bool
	discClosed bool
	// maxRetries is how often the pending message is sent again: the
	// REQ's Max CM Retries on the passive side (at most
	// CMConfig.MaxRetries), CMConfig.MaxRetries on the active side.
	maxRetries int
	// counted: the connection is in CM.pending (passive, before the
	// RTU); lst is the listener whose queue holds it until Accept.
	counted bool
	lst     *CMListener
}

// Remote is the peer's IP address.
func (c *CMConn) Remote() netip.Addr { return c.req.Remote }

// Request is the REQ of a passive connection (for an active one: what it
// asked for).
func (c *CMConn) Request() CMRequest { return c.req }

// QP is the connection's QP (nil before Accept).
func (c *CMConn) QP() *QP {
	var qp *QP
	_ = c.cm.do(func() { qp = c.qp })
	return qp
}

// PeerPrivateData is the private data of the peer's REP (active side).
func (c *CMConn) PeerPrivateData() []byte {
	var pd []byte
	_ = c.cm.do(func() { pd = c.peerPD })
	return pd
}

// Disconnected is closed once the connection ended: the peer's DREQ, the
// answer to this side's, or a failure.
func (c *CMConn) Disconnected() <-chan struct{} { return c.disc }

// CM is a connection manager: the device's GSI QP (QP1) and one goroutine
// that sends, receives and retransmits the CM MADs of every connection.
type CM struct {
	dev      *Device
	cfg      CMConfig
	pd       *PD
	qp       *QP
	scq, rcq *CQ
	rbuf     []byte
	rmr      *MR
	sbuf     []byte
	smr      *MR

	cmds     chan func()
	done     chan struct{}
	exited   chan struct{}
	stopOnce sync.Once

	// Owned by the CM goroutine.
	sfree     []int
	conns     map[uint32]*CMConn
	byRemote  map[cmRemoteKey]*CMConn
	listeners map[layers.ServiceID]*CMListener
	sidr      map[layers.ServiceID]SIDRService
	in        layers.MAD
	out       layers.MAD
	sb        gopacket.SerializeBuffer
	// Each CQ is polled into its own buffer: answering a received MAD
	// reclaims send slots (pollSend) in the middle of a receive batch.
	swcs, rwcs [16]WC
	timer      *time.Timer
	hiTID      uint32
	// pending holds the passive connections between REQ and RTU, oldest
	// first (at most cfg.MaxPending); pendingBy counts them by address.
	pending   []*CMConn
	pendingBy map[netip.Addr]int
}

type cmRemoteKey struct {
	addr netip.Addr
	id   uint32
}

const (
	// cmRecvSlots absorbs a burst of MADs (a flood of REQs) while the
	// CM goroutine works: beyond, QP1 drops them, a legitimate REQ among
	// them too (its requester sends it again after its timeout, 4.3 s).
	cmRecvSlots = 1024
	cmSendSlots = 64
	// cmReservedSlots are the send slots that answers to strangers (a
	// REJ to a REQ that gets no connection) leave to the connections'
	// own messages (REP, RTU, MRA, DREQ, DREP).
	cmReservedSlots = cmSendSlots / 4
	cmRecvSlot      = layers.GRHLength + layers.MADLength
)

// NewCM opens the connection manager of dev: it creates the GSI QP (QP1),
// which a device has at most one of.
func NewCM(dev *Device, cfg CMConfig) (*CM, error) {
	if cfg.ResponseTimeout == 0 {
		cfg.ResponseTimeout = 20
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 15
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = 16
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultCMMaxPending
	}
	cm := &CM{
		dev: dev, cfg: cfg, pd: dev.AllocPD(),
		scq: dev.CreateCQ(cmSendSlots), rcq: dev.CreateCQ(cmRecvSlots),
		rbuf: make([]byte, cmRecvSlots*cmRecvSlot), sbuf: make([]byte, cmSendSlots*layers.MADLength),
		cmds: make(chan func()), done: make(chan struct{}), exited: make(chan struct{}),
		conns: map[uint32]*CMConn{}, byRemote: map[cmRemoteKey]*CMConn{}, listeners: map[layers.ServiceID]*CMListener{},
		sidr: map[layers.ServiceID]SIDRService{}, pendingBy: map[netip.Addr]int{},
		sb: gopacket.NewSerializeBuffer(),
	}
	var b [4]byte
	_, _ = crand.Read(b[:])
	cm.hiTID = binary.BigEndian.Uint32(b[:])
	var err error
	if cm.rmr, err = cm.pd.RegMR(cm.rbuf, AccessLocalWrite); err != nil {
		return nil, err
	}
	if cm.smr, err = cm.pd.RegMR(cm.sbuf, 0); err != nil {
		return nil, err
	}
	cm.qp, err = cm.pd.CreateQP(QPConfig{Type: UD, GSI: true, SendCQ: cm.scq, RecvCQ: cm.rcq,
		MaxSendWR: cmSendSlots, MaxRecvWR: cmRecvSlots})
	if err != nil {
		return nil, fmt.Errorf("CM: %w", err)
	}
	if err := cm.qp.Connect(ConnectAttr{QKey: layers.GSIQKey}); err != nil {
		cm.qp.Destroy()
		return nil, fmt.Errorf("CM: %w", err)
	}
	for i := range cmRecvSlots {
		if err := cm.postRecv(i); err != nil {
			cm.qp.Destroy()
			return nil, fmt.Errorf("CM: %w", err)
		}
	}
	for i := range cmSendSlots {
		cm.sfree = append(cm.sfree, i)
	}
	cm.timer = time.NewTimer(time.Hour)
	cm.timer.Stop()
	go cm.run()
	return cm, nil
}

// Close ends every connection's CM state (without messages), stops the
// goroutine and destroys the GSI QP. The connections' QPs are the
// application's.
func (cm *CM) Close() error {
	cm.stopOnce.Do(func() { close(cm.done) })
	<-cm.exited
	return cm.qp.Destroy()
}

// do runs f on the CM goroutine and waits for it.
func (cm *CM) do(f func()) error {
	done := make(chan struct{})
	select {
	case cm.cmds <- func() { f(); close(done) }:
	case <-cm.exited:
		return ErrCMClosed
	}
	<-done
	return nil
}

func (cm *CM) postRecv(slot int) error {
	return cm.qp.PostRecv(RecvWR{ID: uint64(slot), SGL: []SGE{cm.rmr.SGE(slot*cmRecvSlot, cmRecvSlot)}})
}

func (cm *CM) run() {
	defer close(cm.exited)
	defer cm.timer.Stop()
	for {
		select {
		case <-cm.done:
			cm.shutdown()
			return
		case f := <-cm.cmds:
			f()
		case <-cm.rcq.Notify():
			cm.pollRecv()
		case <-cm.scq.Notify():
			cm.pollSend()
		case <-cm.timer.C:
			cm.expire(time.Now())
		}
		cm.arm()
	}
}

func (cm *CM) shutdown() {
	// Let the last messages (a DREP, an RTU) leave before the GSI QP goes.
	flush := time.NewTimer(cmFlushWait)
	defer flush.Stop()
	cm.pollSend()
wait:
	for len(cm.sfree) < cmSendSlots {
		select {
		case <-cm.scq.Notify():
			cm.pollSend()
		case <-flush.C:
			break wait
		}
	}
	for _, c := range cm.conns {
		cm.finish(c, ErrCMClosed)
	}
	for _, l := range cm.listeners {
		l.close()
	}
	cm.listeners = nil
}

func (cm *CM) pollSend() {
	for {
		n := cm.scq.Poll(cm.swcs[:])
		if n == 0 {
			return
		}
		for _, wc := range cm.swcs[:n] {
			cm.sfree = append(cm.sfree, int(wc.ID))
		}
	}
}

func (cm *CM) pollRecv() {
	for {
		n := cm.rcq.Poll(cm.rwcs[:])
		if n == 0 {
			return
		}
		for _, wc := range cm.rwcs[:n] {
			slot := int(wc.ID)
			if wc.Status == StatusSuccess && int(wc.ByteLen) >= cmRecvSlot {
				b := cm.rbuf[slot*cmRecvSlot : (slot+1)*cmRecvSlot]
				// The responder writes the GRH (fillGRH): it always names
				// the sender.
				if src, ok := GRHSource(b[:layers.GRHLength]); ok {
					cm.handle(src, b[layers.GRHLength:])
				}
			}
			if wc.Status != StatusWRFlushErr {
				_ = cm.postRecv(slot)
			}
		}
	}
}

// HandleMAD processes one received MAD from src as if QP1 had delivered
// it (for tests and fuzzing).
func (cm *CM) HandleMAD(src netip.Addr, mad []byte) error {
	b := make([]byte, layers.MADLength)
	copy(b, mad)
	return cm.do(func() { cm.handle(src, b) })
}

// handle decodes one MAD and runs the state machine. Nothing in it may
// panic on what the network sends.
func (cm *CM) handle(src netip.Addr, b []byte) {
	m := &cm.in
	if err := m.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		return
	}
	if m.BaseVersion != 1 || m.MgmtClass != layers.MgmtClassCM || m.ClassVersion != 2 || m.Method != layers.MethodSend {
		return
	}
	switch layers.CMAttribute(m.AttributeID) {
	case layers.CMAttrREQ:
		cm.onREQ(src, m.TransactionID, &m.CM.REQ)
	case layers.CMAttrREP:
		cm.onREP(src, &m.CM.REP)
	case layers.CMAttrRTU:
		cm.onRTU(&m.CM.RTU)
	case layers.CMAttrREJ:
		cm.onREJ(&m.CM.REJ)
	case layers.CMAttrMRA:
		cm.onMRA(&m.CM.MRA)
	case layers.CMAttrDREQ:
		cm.onDREQ(src, m.TransactionID, &m.CM.DREQ)
	case layers.CMAttrDREP:
		cm.onDREP(&m.CM.DREP)
	case layers.CMAttrSIDRReq:
		cm.onSIDRReq(src, m.TransactionID, &m.CM.SIDRReq)
	case layers.CMAttrSIDRRep:
		cm.onSIDRRep(&m.CM.SIDRRep)
	}
}

// newCommID returns an unused local communication ID.
func (cm *CM) newCommID() uint32 {
	var b [4]byte
	for {
		_, _ = crand.Read(b[:])
		id := binary.BigEndian.Uint32(b[:])
		if _, used := cm.conns[id]; id != 0 && !used {
			return id
		}
	}
}

// cmTimeoutOf converts a CM timeout code to a duration (4.096 µs × 2^n),
// clamped to 2^24 (about a minute).
func cmTimeoutOf(code uint8) time.Duration {
	return time.Duration(4096<<min(code, 24)) * time.Nanosecond
}

func (cm *CM) onREJ(r *layers.CMRej) {
	c := cm.conns[r.RemoteCommID]
	if c == nil {
		return
	}
	switch c.state {
	case cmReqSent, cmRepSent, cmReqRcvd:
		if c.state != cmReqSent && c.remoteID != r.LocalCommID {
			return
		}
		if c.qp != nil {
			_ = c.qp.Modify(QPAttr{State: StateErr}, AttrState)
		}
		cm.finish(c, &CMRejectError{Reason: r.Reason, PrivateData: append([]byte(nil), r.PrivateData...)})
	}
}

func (cm *CM) onMRA(r *layers.CMMra) {
	c := cm.conns[r.RemoteCommID]
	if c == nil || !c.pending {
		return
	}
	if (c.state == cmReqSent && r.MessageMRAed == 0) || (c.state == cmRepSent && r.MessageMRAed == 1) {
		// The peer got it and needs time: wait for its service timeout
		// before sending again.
		c.deadline = time.Now().Add(cmTimeoutOf(r.ServiceTimeout) + c.interval)
	}
}

func (cm *CM) onDREQ(src netip.Addr, tid uint64, r *layers.CMDreq) {
	c := cm.conns[r.RemoteCommID]
	if c == nil || c.remoteID != r.LocalCommID {
		// ib_cm answers a DREQ for a connection it does not know.
		cm.sendDREP(src, tid, r.RemoteCommID, r.LocalCommID)
		return
	}
	switch c.state {
	case cmEstablished, cmRepSent, cmDreqSent, cmTimewait:
		cm.sendDREP(c.remote, tid, c.localID, c.remoteID)
		if c.state != cmTimewait {
			if c.qp != nil {
				_ = c.qp.Modify(QPAttr{State: StateErr}, AttrState)
			}
			cm.established(c) // an RTU lost before the DREQ
			cm.timewait(c)
		}
	}
}

func (cm *CM) onDREP(r *layers.CMDrep) {
	c := cm.conns[r.RemoteCommID]
	if c == nil || c.state != cmDreqSent || c.remoteID != r.LocalCommID {
		return
	}
	cm.timewait(c)
}

// established wakes whoever waits for the connection.
func (cm *CM) established(c *CMConn) {
	cm.unpend(c)
	if !c.estClosed {
		c.estClosed = true
		close(c.est)
	}
}

// timewait ends a connection: it is remembered a while for repeated DREQs.
func (cm *CM) timewait(c *CMConn) {
	c.state = cmTimewait
	c.pending = false
	c.deadline = time.Now().Add(cmTimewaitDur)
	if !c.discClosed {
		c.discClosed = true
		close(c.disc)
	}
}

// finish fails or ends a connection and forgets it.
func (cm *CM) finish(c *CMConn, err error) {
	if c.err == nil {
		c.err = err
	}
	c.state = cmClosed
	c.pending = false
	cm.unpend(c)
	delete(cm.conns, c.localID)
	if k := (cmRemoteKey{c.remote, c.remoteID}); cm.byRemote[k] == c {
		delete(cm.byRemote, k)
	}
	if !c.estClosed {
		c.estClosed = true
		close(c.est)
	}
	if !c.discClosed {
		c.discClosed = true
		close(c.disc)
	}
}

// arm sets the timer to the earliest deadline.
func (cm *CM) arm() {
	var first time.Time
	for _, c := range cm.conns {
		if (c.pending || c.state == cmTimewait || c.state == cmReqRcvd) && (first.IsZero() || c.deadline.Before(first)) {
			first = c.deadline
		}
	}
	cm.timer.Stop()
	if !first.IsZero() {
		cm.timer.Reset(max(time.Until(first), 0))
	}
}

// expire retransmits what is due and gives up after the connection's
// retries.
func (cm *CM) expire(now time.Time) {
	for _, c := range cm.conns {
		if c.deadline.After(now) {
			continue
		}
		switch {
		case c.state == cmTimewait:
			cm.finish(c, nil)
		case c.state == cmReqRcvd:
			// Never accepted nor rejected: the requester gave up by now.
			cm.sendREJ(c.remote, c.tid, c.localID, c.remoteID, layers.RejTimeout)
			cm.finish(c, ErrCMTimeout)
		case !c.pending:
		case c.retries >= c.maxRetries:
			switch c.state {
			case cmDreqSent:
				cm.timewait(c)
			case cmRepSent:
				cm.sendREJ(c.remote, c.tid, c.localID, c.remoteID, layers.RejTimeout)
				fallthrough
			default:
				if c.qp != nil {
					_ = c.qp.Modify(QPAttr{State: StateErr}, AttrState)
				}
				cm.finish(c, ErrCMTimeout)
			}
		default:
			c.retries++
			cm.resend(c)
		}
	}
}

// resend posts the connection's pending message again.
func (cm *CM) resend(c *CMConn) {
	cm.post(c.remote, c.pend[:])
	c.deadline = time.Now().Add(c.interval)
}

// setPending keeps b as the message to retransmit until answered.
func (cm *CM) setPending(c *CMConn, b []byte) {
	copy(c.pend[:], b)
	c.pending, c.retries = true, 0
	c.deadline = time.Now().Add(c.interval)
}

// newMAD starts a CM MAD for the send path.
func (cm *CM) newMAD(attr layers.CMAttribute, tid uint64) *layers.MAD {
	cm.out = layers.MAD{BaseVersion: 1, MgmtClass: layers.MgmtClassCM, ClassVersion: 2, Method: layers.MethodSend,
		AttributeID: uint16(attr), TransactionID: tid}
	return &cm.out
}

// build serializes m; the bytes are valid until the next build.
func (cm *CM) build(m *layers.MAD) ([]byte, error) {
	if err := cm.sb.Clear(); err != nil {
		return nil, err
	}
	if err := gopacket.SerializeLayers(cm.sb, gopacket.SerializeOptions{}, m.SerializableLayers()...); err != nil {
		return nil, err
	}
	return cm.sb.Bytes(), nil
}

// post sends a 256-byte MAD to QP1 at dst; without a free send slot the
// MAD is lost, as on a busy wire (retransmission covers it).
func (cm *CM) post(dst netip.Addr, mad []byte) {
	cm.pollSend()
	if len(cm.sfree) == 0 {
		return
	}
	slot := cm.sfree[len(cm.sfree)-1]
	copy(cm.sbuf[slot*layers.MADLength:(slot+1)*layers.MADLength], mad)
	wr := SendWR{ID: uint64(slot), Op: WRSend, SGL: []SGE{cm.smr.SGE(slot*layers.MADLength, layers.MADLength)},
		Dest: UDDest{Addr: dst, QPN: 1, QKey: layers.GSIQKey}}
	if cm.qp.PostSend(&wr) == nil {
		cm.sfree = cm.sfree[:len(cm.sfree)-1]
	}
}

// send builds m and posts it; with c set, it is also the message c
// retransmits until answered.
func (cm *CM) send(dst netip.Addr, m *layers.MAD, c *CMConn) error {
	b, err := cm.build(m)
	if err != nil {
		return err
	}
	if c != nil {
		cm.setPending(c, b)
	}
	cm.post(dst, b)
	return nil
}

func (cm *CM) sendREJ(dst netip.Addr, tid uint64, local, remote uint32, reason layers.CMRejectReason) {
	m := cm.newMAD(layers.CMAttrREJ, tid)
	m.CM.REJ = layers.CMRej{LocalCommID: local, RemoteCommID: remote, MessageRejected: 0, Reason: reason}
	_ = cm.send(dst, m, nil)
}

func (cm *CM) sendMRA(c *CMConn) {
	m := cm.newMAD(layers.CMAttrMRA, c.tid)
	m.CM.MRA = layers.CMMra{LocalCommID: c.localID, RemoteCommID: c.remoteID, MessageMRAed: 0,
		ServiceTimeout: cm.cfg.ResponseTimeout}
	c.mraSent = true
	_ = cm.send(c.remote, m, nil)
}

func (cm *CM) sendDREP(dst netip.Addr, tid uint64, local, remote uint32) {
	m := cm.newMAD(layers.CMAttrDREP, tid)
	m.CM.DREP = layers.CMDrep{LocalCommID: local, RemoteCommID: remote}
	_ = cm.send(dst, m, nil)
}

// caGUID is the CA GUID this side puts in REQ and REP: its address in an
// EUI-64 shape (locally administered).
func (cm *CM) caGUID() uint64 {
	a := cm.dev.GID()
	return 0x0200_0000_0000_0000 | uint64(binary.BigEndian.Uint32(a[12:16]))<<8 | 1
}

// InitQP moves a QP in RESET to INIT, as rdma_create_qp does, so that
// receives may be posted before the connection exists.
func InitQP(qp *QP) error {
	if qp.State() != StateReset {
		return nil
	}
	return qp.Modify(QPAttr{State: StateInit, Access: AccessRemoteWrite | AccessRemoteRead | AccessRemoteAtomic},
		AttrState|AttrAccess)
}

// cmReadyQP brings qp (RESET or INIT) to RTS with what the CM exchange
// gave. The remote access follows the responder resources, as ib_cm does:
// with none, only WRITE.
func cmReadyQP(qp *QP, a ConnectAttr, responderResources uint8) error {
	if err := InitQP(qp); err != nil {
		return err
	}
	access := AccessRemoteWrite
	if responderResources > 0 {
		access |= AccessRemoteRead | AccessRemoteAtomic
	}
	attr := QPAttr{State: StateRTR, Access: access, PathMTU: orDefault(a.MTU, false, layers.MTU1024),
		DestQPN: a.RemoteQPN, RQPSN: a.RemotePSN, MinRNRTimer: 12, MaxDestRdAtomic: a.MaxDestRdAtomic,
		Remote: a.Remote, HopLimit: orDefault(a.HopLimit, false, 64)}
	mask := AttrState | AttrAccess | AttrMinRNRTimer | AttrMaxDestRdAtomic | rcPath
	if qp.Type() == UC {
		mask = AttrState | AttrAccess | rcPath
	}
	if err := qp.Modify(attr, mask); err != nil {
		return err
	}
	attr = QPAttr{State: StateRTS, SQPSN: a.LocalPSN, Timeout: 14, RetryCnt: a.RetryCnt, RNRRetry: a.RNRRetry,
		MaxRdAtomic: a.MaxRdAtomic}
	mask = AttrState | AttrSQPSN | AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrMaxRdAtomic
	if qp.Type() == UC {
		mask = AttrState | AttrSQPSN
	}
	return qp.Modify(attr, mask)
}

// wait blocks until the connection is established or failed.
func (c *CMConn) wait(ctx context.Context) error {
	select {
	case <-c.est:
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	if cerr := c.cm.do(func() { err = c.err }); cerr != nil {
		return cerr
	}
	return err
}

// Disconnect ends an established connection (rdma_disconnect): the QP
// goes to the error state, a DREQ goes out and Disconnect waits for the
// DREP (or the retries). After the peer's DREQ it returns at once.
func (c *CMConn) Disconnect(ctx context.Context) error {
	cm := c.cm
	var err error
	if cerr := cm.do(func() {
		switch c.state {
		case cmTimewait, cmClosed, cmDreqSent:
			return
		case cmEstablished, cmRepSent:
		default:
			err = ErrCMState
			return
		}
		if c.qp != nil {
			_ = c.qp.Modify(QPAttr{State: StateErr}, AttrState)
		}
		m := cm.newMAD(layers.CMAttrDREQ, c.tid)
		m.CM.DREQ = layers.CMDreq{LocalCommID: c.localID, RemoteCommID: c.remoteID, RemoteQPN: c.remoteQPN}
		c.state = cmDreqSent
		err = cm.send(c.remote, m, c)
	}); cerr != nil {
		return nil
	}
	if err != nil {
		return err
	}
	select {
	case <-c.disc:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SIDRService is what a SIDR_REQ for a service resolves to: a UD QP and
// its Q_Key.
type SIDRService struct {
	QPN  uint32
	QKey uint32
	// Requests, when set, hears of each SIDR_REQ answered (a resent one
	// too: its RequestID repeats), when it has room: the CM never waits
	// for its reader. A server that counts its clients (udaddy's) reads it.
	Requests chan<- SIDRRequest
}

// SIDRRequest is a SIDR_REQ a served service answered.
type SIDRRequest struct {
	Src       netip.Addr
	RequestID uint32
}

// RDMAUDPQKey is the Q_Key RDMA CM gives UD QPs of the UDP port space
// (RDMA_UDP_QKEY).
const RDMAUDPQKey = 0x01234567

// ServeSIDR answers the SIDR_REQs for service sid (for RDMA CM's UDP port
// space: layers.IPCMServiceID(layers.PortSpaceUDP, port)) with svc; a
// zero svc stops answering (SIDR_REPs then say the service is not
// supported).
func (cm *CM) ServeSIDR(sid layers.ServiceID, svc SIDRService) error {
	return cm.do(func() {
		if svc == (SIDRService{}) {
			delete(cm.sidr, sid)
			return
		}
		cm.sidr[sid] = svc
	})
}

func (cm *CM) onSIDRReq(src netip.Addr, tid uint64, r *layers.CMSidrReq) {
	m := cm.newMAD(layers.CMAttrSIDRRep, tid)
	rep := layers.CMSidrRep{RequestID: r.RequestID, ServiceID: r.ServiceID, Status: layers.SIDRServiceNotSupported}
	svc, ok := cm.sidr[r.ServiceID]
	if ok {
		rep.Status, rep.QPN, rep.QKey = layers.SIDRValid, svc.QPN, svc.QKey
	}
	m.CM.SIDRRep = rep
	if cm.send(src, m, nil) == nil && ok && svc.Requests != nil {
		select {
		case svc.Requests <- SIDRRequest{Src: src, RequestID: r.RequestID}:
		default:
		}
	}
}

func (cm *CM) onSIDRRep(r *layers.CMSidrRep) {
	c := cm.conns[r.RequestID]
	if c == nil || c.state != cmSIDRSent {
		return
	}
	if r.Status != layers.SIDRValid {
		cm.finish(c, &SIDRError{Status: r.Status})
		return
	}
	c.remoteQPN, c.qkey = r.QPN, r.QKey
	cm.finish(c, nil)
}

// SIDRError is a SIDR_REP whose status is not "QPN valid".
type SIDRError struct{ Status layers.CMSIDRStatus }

func (e *SIDRError) Error() string {
	return fmt.Sprintf("endpoint: CM: SIDR: %v (%d)", e.Status, uint8(e.Status))
}

// ResolveSIDR asks dst which UD QPN and Q_Key serve sid (SIDR_REQ, then
// the SIDR_REP; rdma_resolve_route and rdma_connect of the UDP port
// space). The request is sent again on the CM's response timeout.
func (cm *CM) ResolveSIDR(ctx context.Context, dst netip.Addr, sid layers.ServiceID, privateData []byte) (SIDRService, error) {
	if sid.IsIPCM() && len(privateData) > layers.MADDataLength-16-layers.IPCMHeaderLength {
		return SIDRService{}, fmt.Errorf("resolve: %d bytes of private data: %w", len(privateData), ErrInvalidAttr)
	}
	c := &CMConn{cm: cm, est: make(chan struct{}), disc: make(chan struct{}), remote: dst.Unmap(),
		interval: cmTimeoutOf(cm.cfg.ResponseTimeout), maxRetries: cm.cfg.MaxRetries}
	var err error
	if cerr := cm.do(func() {
		c.localID, c.state = cm.newCommID(), cmSIDRSent
		c.tid = uint64(cm.hiTID)<<32 | uint64(c.localID)
		m := cm.newMAD(layers.CMAttrSIDRReq, c.tid)
		req := layers.CMSidrReq{RequestID: c.localID, PKey: DefaultPKey, ServiceID: sid}
		if sid.IsIPCM() {
			var b [2]byte
			_, _ = crand.Read(b[:])
			h := layers.IPCMHeader{Valid: true, IPVersion: 4, SrcPort: 32768 + binary.BigEndian.Uint16(b[:])%28232,
				ConsumerPrivateData: privateData}
			src := cm.dev.Addr().Addr().Unmap()
			if src.Is4() && c.remote.Is4() {
				s, d := src.As4(), c.remote.As4()
				h.SrcIP, h.DstIP = s[:], d[:]
			} else {
				s, d := src.As16(), c.remote.As16()
				h.IPVersion, h.SrcIP, h.DstIP = 6, s[:], d[:]
			}
			req.IPCM = h
		} else {
			req.PrivateData = privateData
		}
		m.CM.SIDRReq = req
		cm.conns[c.localID] = c
		err = cm.send(c.remote, m, c)
	}); cerr != nil {
		return SIDRService{}, cerr
	}
	if err != nil {
		return SIDRService{}, err
	}
	if err := c.wait(ctx); err != nil {
		if ctx.Err() != nil {
			_ = cm.do(func() { cm.finish(c, ctx.Err()) })
		}
		return SIDRService{}, err
	}
	var svc SIDRService
	_ = cm.do(func() { svc = SIDRService{QPN: c.remoteQPN, QKey: c.qkey} })
	return svc, nil
}
