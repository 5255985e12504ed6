package endpoint

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// The passive side of the CM: listeners, the REQs they receive, and the
// application's answer to each (Accept or Reject).

// CMRequest is what a REQ said, as a passive side sees it.
type CMRequest struct {
	Remote             netip.Addr // the IP source of the REQ
	ServiceID          layers.ServiceID
	RemoteQPN          uint32
	StartingPSN        layers.PSN // the PSN the requester expects: this side sends from it
	ResponderResources uint8
	InitiatorDepth     uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	PathMTU            layers.PathMTU
	HopLimit           uint8
	LocalCMTimeout     uint8
	// IP-CM header (valid when ServiceID is an IP-CM one).
	SrcPort uint16
	SrcIP   netip.Addr
	DstIP   netip.Addr
	// PrivateData is the consumer's private data (after the IP-CM header).
	PrivateData []byte
}

// CMListener receives the REQs for one service ID.
type CMListener struct {
	cm  *CM
	sid layers.ServiceID
	// ready has a value (or is closed, once the listener is) when queue
	// may have something for Accept.
	ready chan struct{}

	// Owned by the CM goroutine.
	queue  []*CMConn // REQs waiting for Accept, oldest first
	closed bool
}

// wake tells a waiting Accept that the queue changed.
func (l *CMListener) wake() {
	if l.closed {
		return
	}
	select {
	case l.ready <- struct{}{}:
	default:
	}
}

// close ends the listener on the CM goroutine: the REQs still queued are
// left to the caller.
func (l *CMListener) close() {
	if !l.closed {
		l.closed = true
		close(l.ready)
	}
}

func (cm *CM) onREQ(src netip.Addr, tid uint64, r *layers.CMReq) {
	key := cmRemoteKey{src, r.LocalCommID}
	if c := cm.byRemote[key]; c != nil {
		switch c.state {
		case cmReqRcvd:
			cm.sendMRA(c)
		case cmRepSent:
			// Our REP was lost: it goes again now, as one of the
			// retries the REQ allows, not one more.
			if c.retries < c.maxRetries {
				c.retries++
				cm.resend(c)
			}
		case cmTimewait:
			cm.sendREJ(src, tid, c.localID, r.LocalCommID, layers.RejStaleConnection)
		}
		return
	}
	if r.TransportServiceType != layers.CMTransportRC && r.TransportServiceType != layers.CMTransportUC {
		cm.rejectStranger(src, tid, r.LocalCommID, layers.RejInvalidTransportType)
		return
	}
	l := cm.listeners[r.ServiceID]
	if l == nil {
		// What ib_cm answers when no one listens on the service ID.
		cm.rejectStranger(src, tid, r.LocalCommID, layers.RejInvalidServiceID)
		return
	}
	if !cm.admit(src, l) {
		cm.rejectStranger(src, tid, r.LocalCommID, layers.RejNoResources)
		return
	}
	// The REP goes again after the REQ's Local CM Response Timeout, as
	// often as its Max CM Retries say (ib_cm's cm_req_handler).
	retries := min(int(r.MaxCMRetries), cm.cfg.MaxRetries)
	c := &CMConn{cm: cm, passive: true, est: make(chan struct{}), disc: make(chan struct{}),
		state: cmReqRcvd, localID: cm.newCommID(), remoteID: r.LocalCommID, tid: tid, remote: src,
		remoteQPN: r.LocalQPN, interval: cmTimeoutOf(r.LocalCMResponseTimeout), maxRetries: retries}
	// Until Accept or Reject: by then the requester, which sends its REQ
	// after each Remote CM Response Timeout (or our MRA's service
	// timeout), has given up.
	wait := max(cmTimeoutOf(r.RemoteCMResponseTimeout), cmTimeoutOf(cm.cfg.ResponseTimeout))
	c.deadline = time.Now().Add(time.Duration(retries+1) * wait)
	c.req = CMRequest{Remote: src, ServiceID: r.ServiceID, RemoteQPN: r.LocalQPN, StartingPSN: r.StartingPSN,
		ResponderResources: r.ResponderResources, InitiatorDepth: r.InitiatorDepth, RetryCount: r.RetryCount,
		RNRRetryCount: r.RNRRetryCount, PathMTU: r.PathMTU, HopLimit: r.Primary.HopLimit,
		LocalCMTimeout: r.LocalCMResponseTimeout}
	pd := r.PrivateData
	if r.ServiceID.IsIPCM() {
		h := r.IPCM
		c.req.SrcPort = h.SrcPort
		c.req.SrcIP, _ = netip.AddrFromSlice(h.SrcIP)
		c.req.DstIP, _ = netip.AddrFromSlice(h.DstIP)
		c.req.SrcIP, c.req.DstIP = c.req.SrcIP.Unmap(), c.req.DstIP.Unmap()
		pd = h.ConsumerPrivateData
	}
	c.req.PrivateData = append([]byte(nil), pd...)
	cm.conns[c.localID] = c
	cm.byRemote[key] = c
	cm.pending = append(cm.pending, c)
	cm.pendingBy[src]++
	c.counted, c.lst = true, l
	l.queue = append(l.queue, c)
	l.wake()
}

// admit makes room for a REQ from src to listener l: with the pending
// connections at CMConfig.MaxPending, or l's queue at its Backlog, it
// drops the oldest of the address holding the most of them, if that
// address holds more than src. It reports whether there is room.
func (cm *CM) admit(src netip.Addr, l *CMListener) bool {
	for {
		var from []*CMConn
		switch {
		case len(l.queue) >= cm.cfg.Backlog:
			from = l.queue
		case len(cm.pending) >= cm.cfg.MaxPending:
			from = cm.pending
		default:
			return true
		}
		// from is oldest first: the first of the largest holder is its
		// oldest.
		var victim *CMConn
		most := cm.pendingBy[src]
		for _, c := range from {
			if n := cm.pendingBy[c.remote]; n > most {
				victim, most = c, n
			}
		}
		if victim == nil {
			return false
		}
		cm.sendREJ(victim.remote, victim.tid, victim.localID, victim.remoteID, layers.RejNoResources)
		if victim.qp != nil {
			_ = victim.qp.Modify(QPAttr{State: StateErr}, AttrState)
		}
		cm.finish(victim, ErrCMBusy)
	}
}

// rejectStranger answers a REQ that gets no connection with a REJ, if a
// send slot is free beyond those kept for the connections' own messages:
// under a flood of REQs the REJs to the flood are what is lost, not a
// legitimate client's REP (the requester sends its REQ again).
func (cm *CM) rejectStranger(dst netip.Addr, tid uint64, remote uint32, reason layers.CMRejectReason) {
	cm.pollSend()
	if len(cm.sfree) <= cmReservedSlots {
		return
	}
	cm.sendREJ(dst, tid, 0, remote, reason)
}

// unpend takes a passive connection out of the pending ones (and out of
// its listener's queue) once it is established or gone.
func (cm *CM) unpend(c *CMConn) {
	if !c.counted {
		return
	}
	c.counted = false
	cm.pending = deleteConn(cm.pending, c)
	if cm.pendingBy[c.remote]--; cm.pendingBy[c.remote] <= 0 {
		delete(cm.pendingBy, c.remote)
	}
	if c.lst != nil {
		c.lst.queue = deleteConn(c.lst.queue, c)
		c.lst = nil
	}
}

// deleteConn removes c from s, keeping the order.
func deleteConn(s []*CMConn, c *CMConn) []*CMConn {
	for i, x := range s {
		if x == c {
			copy(s[i:], s[i+1:])
			s[len(s)-1] = nil
			return s[:len(s)-1]
		}
	}
	return s
}

func (cm *CM) onRTU(r *layers.CMRtu) {
	c := cm.conns[r.RemoteCommID]
	if c == nil || c.state != cmRepSent || c.remoteID != r.LocalCommID {
		return
	}
	c.pending = false
	c.state = cmEstablished
	cm.established(c)
}

// Listen receives the REQs for service ID sid (layers.IPCMServiceID makes
// RDMA CM's: port space and port).
func (cm *CM) Listen(sid layers.ServiceID) (*CMListener, error) {
	l := &CMListener{cm: cm, sid: sid, ready: make(chan struct{}, 1)}
	var err error
	if cerr := cm.do(func() {
		if _, used := cm.listeners[sid]; used {
			err = fmt.Errorf("listen on %v: %w", sid, ErrCMServiceInUse)
			return
		}
		cm.listeners[sid] = l
	}); cerr != nil {
		return nil, cerr
	}
	return l, err
}

// Accept waits for the next connection request (rdma_get_cm_event's
// CONNECT_REQUEST); answer it with CMConn.Accept or Reject.
func (l *CMListener) Accept(ctx context.Context) (*CMConn, error) {
	for {
		var c *CMConn
		var closed bool
		if err := l.cm.do(func() {
			if closed = l.closed; closed || len(l.queue) == 0 {
				return
			}
			c = l.queue[0]
			l.queue = deleteConn(l.queue, c)
			c.lst = nil
			if len(l.queue) > 0 {
				l.wake() // for another Accept
			}
		}); err != nil {
			return nil, err
		}
		switch {
		case c != nil:
			return c, nil
		case closed:
			return nil, ErrCMClosed
		}
		select {
		case <-l.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops listening; REQs waiting for Accept are rejected.
func (l *CMListener) Close() error {
	return l.cm.do(func() {
		if l.cm.listeners[l.sid] != l {
			return
		}
		delete(l.cm.listeners, l.sid)
		l.close()
		for len(l.queue) > 0 {
			c := l.queue[0]
			l.cm.sendREJ(c.remote, c.tid, c.localID, c.remoteID, layers.RejConsumerDefined)
			l.cm.finish(c, ErrCMClosed) // takes c out of the queue
		}
	})
}

// Accept answers the REQ with a REP for qp (in RESET or INIT), moves qp to
// RTS and waits for the RTU (rdma_accept, then ESTABLISHED).
func (c *CMConn) Accept(ctx context.Context, qp *QP, p CMParam) error {
	cm := c.cm
	var err error
	if cerr := cm.do(func() { err = cm.accept(c, qp, p) }); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	return c.wait(ctx)
}

func (cm *CM) accept(c *CMConn, qp *QP, p CMParam) error {
	if c.state != cmReqRcvd {
		if c.err != nil {
			return c.err
		}
		return ErrCMState
	}
	if len(p.PrivateData) > 196 {
		return fmt.Errorf("accept: %d bytes of private data, a REP holds 196: %w", len(p.PrivateData), ErrInvalidAttr)
	}
	r := &c.req
	rr, id := min(p.ResponderResources, r.InitiatorDepth), min(p.InitiatorDepth, r.ResponderResources)
	mtu := min(orDefault(p.MTU, false, layers.MTU1024), r.PathMTU)
	c.qp, c.localPSN = qp, RandomPSN()
	err := cmReadyQP(qp, ConnectAttr{Remote: c.remote, RemoteQPN: r.RemoteQPN, RemotePSN: c.localPSN,
		LocalPSN: r.StartingPSN, MTU: mtu, RetryCnt: r.RetryCount, RNRRetry: r.RNRRetryCount,
		MaxRdAtomic: id, MaxDestRdAtomic: rr, HopLimit: r.HopLimit}, rr)
	if err != nil {
		cm.sendREJ(c.remote, c.tid, c.localID, c.remoteID, layers.RejNoQP)
		cm.finish(c, err)
		return err
	}
	m := cm.newMAD(layers.CMAttrREP, c.tid)
	m.CM.REP = layers.CMRep{LocalCommID: c.localID, RemoteCommID: c.remoteID, LocalQPN: qp.QPN(),
		StartingPSN: c.localPSN, ResponderResources: rr, InitiatorDepth: id, TargetACKDelay: 15,
		RNRRetryCount: p.RNRRetryCount & 7, LocalCAGUID: cm.caGUID(), PrivateData: p.PrivateData}
	c.state = cmRepSent
	return cm.send(c.remote, m, c)
}

// Reject answers the REQ with a REJ (consumer reject, rdma_reject).
func (c *CMConn) Reject(privateData []byte) error {
	cm := c.cm
	var err error
	if cerr := cm.do(func() {
		if c.state != cmReqRcvd {
			err = ErrCMState
			return
		}
		m := cm.newMAD(layers.CMAttrREJ, c.tid)
		m.CM.REJ = layers.CMRej{LocalCommID: c.localID, RemoteCommID: c.remoteID, Reason: layers.RejConsumerDefined,
			PrivateData: privateData}
		err = cm.send(c.remote, m, nil)
		cm.finish(c, &CMRejectError{Reason: layers.RejConsumerDefined})
	}); cerr != nil {
		return cerr
	}
	return err
}
