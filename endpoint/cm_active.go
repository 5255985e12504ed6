package endpoint

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/layers"
)

// The active side of RDMA CM (rdma_connect): a REQ for one of our QPs, the
// peer's REP (or REJ, or MRA asking for time), our RTU; what both sides
// share (timers, retries, disconnection) is in cm.go, the passive side in
// cm_passive.go.

func (cm *CM) onREP(src netip.Addr, r *layers.CMRep) {
	c := cm.conns[r.RemoteCommID]
	if c == nil || c.passive {
		return
	}
	if c.state == cmEstablished && c.remoteID == r.LocalCommID {
		cm.sendRTU(c) // our RTU was lost
		return
	}
	if c.state != cmReqSent {
		return
	}
	c.remoteID, c.remoteQPN = r.LocalCommID, r.LocalQPN
	cm.byRemote[cmRemoteKey{c.remote, c.remoteID}] = c
	c.peerPD = append([]byte(nil), r.PrivateData...)
	mtu := c.req.PathMTU
	err := cmReadyQP(c.qp, ConnectAttr{Remote: c.remote, RemoteQPN: r.LocalQPN, RemotePSN: c.localPSN,
		LocalPSN: r.StartingPSN, MTU: mtu, RetryCnt: c.req.RetryCount, RNRRetry: r.RNRRetryCount,
		MaxRdAtomic: r.ResponderResources, MaxDestRdAtomic: min(r.InitiatorDepth, c.req.ResponderResources),
		HopLimit: 64}, c.req.ResponderResources)
	if err != nil {
		cm.sendREJ(c.remote, c.tid, c.localID, c.remoteID, layers.RejNoQP)
		cm.finish(c, err)
		return
	}
	c.pending = false
	c.state = cmEstablished
	cm.sendRTU(c)
	cm.established(c)
}

func (cm *CM) sendRTU(c *CMConn) {
	m := cm.newMAD(layers.CMAttrRTU, c.tid)
	m.CM.RTU = layers.CMRtu{LocalCommID: c.localID, RemoteCommID: c.remoteID}
	_ = cm.send(c.remote, m, nil)
}

// Connect is the active side (rdma_connect): it sends a REQ for qp (in
// RESET or INIT) to service sid at dst, waits for the REP (a REJ fails
// with *CMRejectError, an MRA extends the wait), moves qp to RTS and
// sends the RTU. srcPort is the IP-CM header's source port (0 picks one).
func (cm *CM) Connect(ctx context.Context, qp *QP, dst netip.Addr, sid layers.ServiceID, srcPort uint16, p CMParam) (*CMConn, error) {
	if sid.IsIPCM() && len(p.PrivateData) > layers.MADDataLength-140-layers.IPCMHeaderLength {
		return nil, fmt.Errorf("connect: %d bytes of private data, 56 fit after the IP-CM header: %w", len(p.PrivateData), ErrInvalidAttr)
	}
	if srcPort == 0 {
		var b [2]byte
		_, _ = crand.Read(b[:])
		srcPort = 32768 + binary.BigEndian.Uint16(b[:])%28232
	}
	c := &CMConn{cm: cm, est: make(chan struct{}), disc: make(chan struct{}), remote: dst.Unmap(), qp: qp,
		interval: cmTimeoutOf(cm.cfg.ResponseTimeout), maxRetries: cm.cfg.MaxRetries}
	c.req = CMRequest{Remote: c.remote, ServiceID: sid, RemoteQPN: qp.QPN(), ResponderResources: p.ResponderResources,
		InitiatorDepth: p.InitiatorDepth, RetryCount: p.RetryCount & 7, RNRRetryCount: p.RNRRetryCount & 7,
		PathMTU: orDefault(p.MTU, false, layers.MTU1024), HopLimit: 64, LocalCMTimeout: cm.cfg.ResponseTimeout,
		SrcPort: srcPort, SrcIP: cm.dev.Addr().Addr().Unmap(), DstIP: c.remote}
	if err := InitQP(qp); err != nil {
		return nil, err
	}
	var err error
	if cerr := cm.do(func() { err = cm.connect(c, p) }); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	if err := c.wait(ctx); err != nil {
		if ctx.Err() != nil {
			_ = cm.do(func() { cm.finish(c, ctx.Err()) })
		}
		return nil, err
	}
	return c, nil
}

func (cm *CM) connect(c *CMConn, p CMParam) error {
	c.localID, c.localPSN, c.state = cm.newCommID(), RandomPSN(), cmReqSent
	c.tid = uint64(cm.hiTID)<<32 | uint64(c.localID)
	r := &c.req
	local := cm.dev.GID()
	remote := GIDOf(c.remote)
	m := cm.newMAD(layers.CMAttrREQ, c.tid)
	req := layers.CMReq{LocalCommID: c.localID, ServiceID: r.ServiceID, LocalCAGUID: cm.caGUID(),
		LocalQPN: c.qp.QPN(), ResponderResources: r.ResponderResources, InitiatorDepth: r.InitiatorDepth,
		RemoteCMResponseTimeout: cm.cfg.ResponseTimeout, TransportServiceType: layers.CMTransportRC,
		StartingPSN: c.localPSN, LocalCMResponseTimeout: cm.cfg.ResponseTimeout, RetryCount: r.RetryCount,
		PKey: DefaultPKey, PathMTU: r.PathMTU, RNRRetryCount: r.RNRRetryCount, MaxCMRetries: uint8(min(cm.cfg.MaxRetries, 15)),
		Primary: layers.CMPath{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: local[:], RemoteGID: remote[:],
			HopLimit: 64, LocalACKTimeout: 19}}
	if c.qp.Type() == UC {
		req.TransportServiceType = layers.CMTransportUC
	}
	if r.ServiceID.IsIPCM() {
		h := layers.IPCMHeader{Valid: true, IPVersion: 4, SrcPort: r.SrcPort, ConsumerPrivateData: p.PrivateData}
		if r.SrcIP.Is4() && r.DstIP.Is4() {
			s, d := r.SrcIP.As4(), r.DstIP.As4()
			h.SrcIP, h.DstIP = s[:], d[:]
		} else {
			s, d := r.SrcIP.As16(), r.DstIP.As16()
			h.IPVersion, h.SrcIP, h.DstIP = 6, s[:], d[:]
		}
		req.IPCM = h
	} else {
		req.PrivateData = p.PrivateData
	}
	m.CM.REQ = req
	cm.conns[c.localID] = c
	return cm.send(c.remote, m, c)
}
