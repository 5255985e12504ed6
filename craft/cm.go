package craft

import (
	"errors"
	"fmt"
	"math/bits"
	"net"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Communication management (IBTA Vol 1 §12): MADs of class 0x07 sent as UD
// SEND_ONLY packets from QP1 to QP1 with Q_Key 0x80010000, the way the
// Linux kernel's ib_cm does for RDMA CM (rping, ucmatose).

// CMOptions are the values of a CM exchange that Config does not give.
type CMOptions struct {
	// ServiceID names the service; 0 is RDMA CM's TCP port 7471 (ucmatose)
	// for a connection and its UDP port 7471 for SIDR.
	ServiceID layers.ServiceID
	// SrcPort is the active side's port in the IP-CM header; 0: 48809.
	SrcPort uint16
	// PrivateData is the consumer's private data after the IP-CM header.
	PrivateData []byte
	// REPPrivateData is the private data of the responder's REP.
	REPPrivateData []byte
	// CommIDs of the requester (active) and responder (passive) sides; 0
	// derives them from the QPNs.
	LocalCommID, RemoteCommID uint32
	// Delay is the time between a message and its answer; 0: 50 µs.
	Delay time.Duration
	// Contract overrides what the REQ and REP negotiate.
	Contract CMContract
	// MRA, when set, makes the responder answer the REQ with an MRA
	// before its REP.
	MRA *CMMRA
	// RequesterRejects makes Reject's REJ come from the requester, which
	// rejects the responder's REP; else the responder rejects the REQ.
	RequesterRejects bool
}

// CMContract is what a REQ and REP negotiate; nil fields keep the
// defaults: READ/atomic depths of the Config's MaxRdAtomic, retry counts of
// 7, the Config's MTU, P_Key, traffic class (DSCP << 2), flow label and SL.
// Traffic that breaks these is crafted with the Config (a larger MTU, other
// path values) or with Faults (retries, RNR NAKs).
type CMContract struct {
	// REQResponderResources and REQInitiatorDepth are the REQ's; the REP's
	// bind: the requester may have REPResponderResources READ/atomic
	// requests outstanding, the responder REPInitiatorDepth.
	REQResponderResources, REQInitiatorDepth *uint8
	REPResponderResources, REPInitiatorDepth *uint8
	// RetryCount is the REQ's (both sides); RNRRetryCount the REQ's (the
	// responder's sender) and REPRNRRetryCount the REP's (the requester's).
	RetryCount, RNRRetryCount, REPRNRRetryCount *uint8
	// PathMTU is the REQ's path MTU in bytes; 0: the Config's MTU.
	PathMTU      int
	PKey         *uint16
	TrafficClass *uint8
	FlowLabel    *uint32
	SL           *uint8
}

// CMMRA is an MRA the responder sends for the REQ.
type CMMRA struct {
	// ServiceTimeout is the MRA's 5-bit field: 4.096 µs × 2^n.
	ServiceTimeout uint8
	// Resend, when positive, makes the requester send its REQ again that
	// long after the MRA: before the service timeout it does not honour it.
	Resend time.Duration
}

func or[T any](p *T, def T) T {
	if p != nil {
		return *p
	}
	return def
}

// cmState is what the two CM agents remember between messages.
type cmState struct {
	local, remote uint32 // communication IDs of the requester and the responder
	tid           uint64 // transaction ID of the exchange (REQ, REP, RTU, REJ)
	delay         time.Duration
	connected     bool
}

// defaultCMPort is ucmatose's port, 7471.
const defaultCMPort = 7471

func (c *Conn) cmBegin(o CMOptions) {
	st := &c.cm
	st.local, st.remote = o.LocalCommID, o.RemoteCommID
	if st.local == 0 {
		st.local = 0x10000000 | c.cfg.Requester.QPN
	}
	if st.remote == 0 {
		st.remote = 0x20000000 | c.cfg.Responder.QPN
	}
	// ib_cm forms a TID from its agent's high part and the local comm ID
	// (which it keeps in network order): the REQ's TID, echoed by the answers.
	st.tid = 2<<32 | uint64(bits.ReverseBytes32(st.local))
	st.delay = o.Delay
	if st.delay == 0 {
		st.delay = DefaultCMDelay
	}
}

func (o *CMOptions) service(ps layers.PortSpace) layers.ServiceID {
	if o.ServiceID != 0 {
		return o.ServiceID
	}
	return layers.IPCMServiceID(ps, defaultCMPort)
}

// ipcm returns the IP-CM header of the REQ or SIDR_REQ for service sid.
func (c *Conn) ipcm(o *CMOptions, sid layers.ServiceID) layers.IPCMHeader {
	if !sid.IsIPCM() {
		return layers.IPCMHeader{}
	}
	port := o.SrcPort
	if port == 0 {
		port = 48809
	}
	h := layers.IPCMHeader{Valid: true, IPVersion: 4, SrcPort: port, SrcIP: c.cfg.Requester.IPv4.To4(),
		DstIP: c.cfg.Responder.IPv4.To4(), ConsumerPrivateData: o.PrivateData}
	if c.cfg.Encap == RoCEv2IPv6 {
		h.IPVersion, h.SrcIP, h.DstIP = 6, c.cfg.Requester.IPv6, c.cfg.Responder.IPv6
	}
	return h
}

// gid returns the GID an endpoint has in CM paths: RoCEv2 uses its IP
// address (IPv4-mapped), the others its GID.
func (c *Conn) gid(e *Endpoint) net.IP {
	switch c.cfg.Encap {
	case RoCEv2:
		return e.IPv4.To16()
	case RoCEv2IPv6:
		return e.IPv6
	}
	return e.GID
}

// request builds the REQ of a connection.
func (c *Conn) request(o *CMOptions) *layers.MAD {
	cfg := c.cfg
	m := layers.NewCMMAD(layers.CMAttrREQ, c.cm.tid)
	k := &o.Contract
	mtuBytes := cfg.MTU
	if k.PathMTU != 0 {
		mtuBytes = k.PathMTU
	}
	mtu, _ := layers.PathMTUOf(mtuBytes)
	sid := o.service(layers.PortSpaceTCP)
	path := layers.CMPath{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: c.gid(&cfg.Requester),
		RemoteGID: c.gid(&cfg.Responder), FlowLabel: or(k.FlowLabel, cfg.FlowLabel), TrafficClass: or(k.TrafficClass, cfg.DSCP<<2),
		HopLimit: cfg.HopLimit, SL: or(k.SL, cfg.SL), LocalACKTimeout: 19}
	if cfg.Encap.Native() {
		path.LocalLID, path.RemoteLID, path.SubnetLocal = cfg.Requester.LID, cfg.Responder.LID, !cfg.Encap.HasGRH()
	}
	transport := layers.CMTransportRC
	if cfg.Service == layers.ServiceUC {
		transport = layers.CMTransportUC
	}
	depth := c.depth()
	m.CM.REQ = layers.CMReq{LocalCommID: c.cm.local, ServiceID: sid, LocalCAGUID: cfg.Requester.GUID,
		LocalQPN: cfg.Requester.QPN, ResponderResources: or(k.REQResponderResources, depth),
		InitiatorDepth: or(k.REQInitiatorDepth, depth), RemoteCMResponseTimeout: 20,
		TransportServiceType: transport, StartingPSN: c.psn, LocalCMResponseTimeout: 20, RetryCount: or(k.RetryCount, 7),
		PKey: or(k.PKey, cfg.PKey), PathMTU: mtu, RNRRetryCount: or(k.RNRRetryCount, 7), MaxCMRetries: 15, Primary: path,
		IPCM: c.ipcm(o, sid)}
	if !sid.IsIPCM() {
		m.CM.REQ.PrivateData = o.PrivateData
	}
	return m
}

// depth is the READ/atomic depth the crafted peers negotiate: what the
// requester model keeps outstanding (Config.MaxRdAtomic, at most 255).
func (c *Conn) depth() uint8 { return uint8(min(c.cfg.MaxRdAtomic, 255)) }

// reply builds the REP of a connection.
func (c *Conn) reply(o *CMOptions) *layers.MAD {
	k, depth := &o.Contract, c.depth()
	rep := layers.NewCMMAD(layers.CMAttrREP, c.cm.tid)
	rep.CM.REP = layers.CMRep{LocalCommID: c.cm.remote, RemoteCommID: c.cm.local, LocalQPN: c.cfg.Responder.QPN,
		StartingPSN: c.cfg.Responder.PSN, ResponderResources: or(k.REPResponderResources, depth),
		InitiatorDepth: or(k.REPInitiatorDepth, depth), TargetACKDelay: 15,
		RNRRetryCount: or(k.REPRNRRetryCount, 7), LocalCAGUID: c.cfg.Responder.GUID, PrivateData: o.REPPrivateData}
	return rep
}

// cmSend appends a CM MAD sent by side from, then waits the CM delay.
func (c *Conn) cmSend(from Side, m *layers.MAD, what string) error {
	payload, err := m.Bytes()
	if err != nil {
		return fmt.Errorf("craft: %s: %w", what, err)
	}
	psn := c.gsiPSN[from]
	c.gsiPSN[from] = psn.Add(1)
	p := Packet{From: from, Payload: payload, UDPSrcPort: layers.RXEUDSourcePort(1),
		BTH: layers.BTH{Opcode: opUDSend, PKey: c.cfg.PKey, DestQP: 1, PSN: psn,
			DETH: layers.DETH{QKey: layers.GSIQKey, SrcQP: 1}}}
	f, err := c.b.Build(p, c.Now())
	if err != nil {
		return err
	}
	f.Info.Note = "CM " + what
	c.trace.Frames = append(c.trace.Frames, f)
	c.now += c.cm.delay
	return nil
}

// Connect appends a CM connection: REQ from the requester, REP from the
// responder, RTU from the requester. The QPNs and starting PSNs are those of
// the Config and the Conn's clock.
func (c *Conn) Connect(o CMOptions) error {
	if c.cfg.Service == layers.ServiceUD {
		return errors.New("craft: UD QPs resolve services with SIDR, they do not connect")
	}
	c.cmBegin(o)
	req := c.request(&o)
	if err := c.cmSend(Requester, req, "REQ"); err != nil {
		return err
	}
	if err := c.mra(&o, req); err != nil {
		return err
	}
	if err := c.cmSend(Responder, c.reply(&o), "REP"); err != nil {
		return err
	}
	rtu := layers.NewCMMAD(layers.CMAttrRTU, c.cm.tid)
	rtu.CM.RTU = layers.CMRtu{LocalCommID: c.cm.local, RemoteCommID: c.cm.remote}
	if err := c.cmSend(Requester, rtu, "RTU"); err != nil {
		return err
	}
	c.cm.connected = true
	return nil
}

// mra appends the MRA of o, if any, for REQ req, and the REQ sent again
// when o says so.
func (c *Conn) mra(o *CMOptions, req *layers.MAD) error {
	if o.MRA == nil {
		return nil
	}
	if o.MRA.ServiceTimeout > 31 {
		return fmt.Errorf("craft: MRA service timeout %d does not fit 5 bits", o.MRA.ServiceTimeout)
	}
	reqFrame := len(c.trace.Frames)
	m := layers.NewCMMAD(layers.CMAttrMRA, c.cm.tid)
	m.CM.MRA = layers.CMMra{LocalCommID: c.cm.remote, RemoteCommID: c.cm.local, MessageMRAed: layers.CMMRAedREQ,
		ServiceTimeout: o.MRA.ServiceTimeout}
	if err := c.cmSend(Responder, m, "MRA"); err != nil {
		return err
	}
	mraFrame := len(c.trace.Frames)
	c.trace.Findings = append(c.trace.Findings, Finding{Frame: mraFrame, Kind: FindingCMMRA, Ref: reqFrame,
		Detail: fmt.Sprintf("service timeout %d: %v", o.MRA.ServiceTimeout, layers.CMTimeout(o.MRA.ServiceTimeout))})
	if o.MRA.Resend <= 0 {
		return nil
	}
	c.now += o.MRA.Resend - c.cm.delay
	if err := c.cmSend(Requester, req, "REQ (sent again)"); err != nil {
		return err
	}
	if o.MRA.Resend < layers.CMTimeout(o.MRA.ServiceTimeout) {
		c.trace.Findings = append(c.trace.Findings, Finding{Frame: len(c.trace.Frames), Kind: FindingCMMRAIgnored, Ref: mraFrame,
			Detail: fmt.Sprintf("REQ sent again after %v", o.MRA.Resend)})
	}
	return nil
}

// Reject appends a rejected connection: the responder rejects the REQ
// with reason, or, when o.RequesterRejects, the requester
// rejects the responder's REP.
func (c *Conn) Reject(o CMOptions, reason layers.CMRejectReason) error {
	if c.cfg.Service == layers.ServiceUD {
		return errors.New("craft: UD QPs resolve services with SIDR, they do not connect")
	}
	c.cmBegin(o)
	if err := c.cmSend(Requester, c.request(&o), "REQ"); err != nil {
		return err
	}
	rej := layers.NewCMMAD(layers.CMAttrREJ, c.cm.tid)
	if o.RequesterRejects {
		if err := c.cmSend(Responder, c.reply(&o), "REP"); err != nil {
			return err
		}
		rej.CM.REJ = layers.CMRej{LocalCommID: c.cm.local, RemoteCommID: c.cm.remote, Reason: reason,
			MessageRejected: layers.CMRejectedREP}
		return c.cmSend(Requester, rej, fmt.Sprintf("REJ (%v)", reason))
	}
	rej.CM.REJ = layers.CMRej{LocalCommID: c.cm.remote, RemoteCommID: c.cm.local, Reason: reason}
	return c.cmSend(Responder, rej, fmt.Sprintf("REJ (%v)", reason))
}

// Disconnect appends a DREQ from the requester and the responder's DREP.
func (c *Conn) Disconnect() error {
	if !c.cm.connected {
		return errors.New("craft: disconnect without a connection")
	}
	dreq := layers.NewCMMAD(layers.CMAttrDREQ, c.cm.tid)
	dreq.CM.DREQ = layers.CMDreq{LocalCommID: c.cm.local, RemoteCommID: c.cm.remote, RemoteQPN: c.cfg.Responder.QPN}
	if err := c.cmSend(Requester, dreq, "DREQ"); err != nil {
		return err
	}
	drep := layers.NewCMMAD(layers.CMAttrDREP, c.cm.tid)
	drep.CM.DREP = layers.CMDrep{LocalCommID: c.cm.remote, RemoteCommID: c.cm.local}
	c.cm.connected = false
	return c.cmSend(Responder, drep, "DREP")
}

// DisconnectUnanswered appends a DREQ from the requester that no DREP
// answers; resend > 0 sends it again that long after.
func (c *Conn) DisconnectUnanswered(resend time.Duration) error {
	if !c.cm.connected {
		return errors.New("craft: disconnect without a connection")
	}
	dreq := layers.NewCMMAD(layers.CMAttrDREQ, c.cm.tid)
	dreq.CM.DREQ = layers.CMDreq{LocalCommID: c.cm.local, RemoteCommID: c.cm.remote, RemoteQPN: c.cfg.Responder.QPN}
	if err := c.cmSend(Requester, dreq, "DREQ"); err != nil {
		return err
	}
	first := len(c.trace.Frames)
	c.cm.connected = false
	c.trace.Findings = append(c.trace.Findings, Finding{Frame: first, Kind: FindingCMDREQUnanswered, Detail: "no DREP by the end"})
	if resend <= 0 {
		return nil
	}
	c.now += resend - c.cm.delay
	if err := c.cmSend(Requester, dreq, "DREQ (sent again)"); err != nil {
		return err
	}
	c.trace.Findings = append(c.trace.Findings, Finding{Frame: len(c.trace.Frames), Kind: FindingCMDREQUnanswered, Ref: first,
		Detail: "the first DREQ had no DREP"})
	return nil
}

// ResolveService appends a SIDR_REQ from the requester and the SIDR_REP
// that gives it the responder's UD QPN and Q_Key.
func (c *Conn) ResolveService(o CMOptions) error {
	c.cmBegin(o)
	sid := o.service(layers.PortSpaceUDP)
	req := layers.NewCMMAD(layers.CMAttrSIDRReq, c.cm.tid)
	req.CM.SIDRReq = layers.CMSidrReq{RequestID: c.cm.local, PKey: c.cfg.PKey, ServiceID: sid, IPCM: c.ipcm(&o, sid)}
	if !sid.IsIPCM() {
		req.CM.SIDRReq.PrivateData = o.PrivateData
	}
	if err := c.cmSend(Requester, req, "SIDR_REQ"); err != nil {
		return err
	}
	rep := layers.NewCMMAD(layers.CMAttrSIDRRep, c.cm.tid)
	rep.CM.SIDRRep = layers.CMSidrRep{RequestID: c.cm.local, Status: layers.SIDRValid, QPN: c.cfg.Responder.QPN,
		ServiceID: sid, QKey: c.cfg.QKey}
	return c.cmSend(Responder, rep, "SIDR_REP")
}
