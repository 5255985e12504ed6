package decode

import (
	"net/netip"

	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// maxSetup bounds the CM transactions and TCP exchanges remembered while
// waiting for their answer.
const maxSetup = 1024

// cmTID names a CM transaction: its TransactionID and the side that began it.
type cmTID struct {
	tid uint64
	by  Endpoint
}

// cmReq is what a REQ said, kept until its REP.
type cmReq struct {
	qpn   uint32
	psn   layers.PSN
	mtu   int
	svc   layers.ServiceType
	sid   uint64
	frame uint32
	// The contract's values (analysis_cm.go).
	retry, rnrRetry uint8
	pkey            uint16
	tclass, sl      uint8
	flowLabel       uint32
}

// cmConv remembers the conversation a transaction set up or takes down.
type cmConv struct {
	c  *conv
	id uint32
}

type cmTable struct {
	reqs  map[cmTID]cmReq
	convs map[cmTID]cmConv // after REP (until RTU) and after DREQ (until DREP)
	sidr  map[cmTID]cmReq
	reps  map[cmTID]uint32 // the frame of each REP, by its REQ's transaction, until RTU
	mras  map[cmTID]cmMRA  // by the transaction of the message the MRA acknowledged
	dreqs map[cmTID]cmDREQ // until DREP
}

func (t *cmTable) init() {
	if t.reqs == nil {
		t.reqs, t.convs, t.sidr = map[cmTID]cmReq{}, map[cmTID]cmConv{}, map[cmTID]cmReq{}
		t.reps, t.mras, t.dreqs = map[cmTID]uint32{}, map[cmTID]cmMRA{}, map[cmTID]cmDREQ{}
	}
	// Bounded: a capture full of unanswered CM transactions forgets them.
	for _, m := range []int{len(t.reqs), len(t.convs), len(t.sidr), len(t.reps), len(t.mras), len(t.dreqs)} {
		if m > maxSetup {
			clear(t.reqs)
			clear(t.convs)
			clear(t.sidr)
			clear(t.reps)
			clear(t.mras)
			clear(t.dreqs)
			return
		}
	}
}

// live returns the conversation if it is still followed.
func (cc cmConv) live() *conv {
	if cc.c != nil && cc.c.next != nil && cc.c.id == cc.id {
		return cc.c
	}
	return nil
}

// cmMessage follows a CM MAD on QP1: REQ/REP pair a connection (both QPNs,
// starting PSNs, MTU, service ID), RTU establishes it, DREQ/DREP and REJ end
// it, SIDR_REQ/SIDR_REP name a UD QP.
func (a *Analyzer) cmMessage(p *Packet, d *direction) {
	t := &a.cm
	t.init()
	m := &p.Headers.MAD
	cm := &m.CM
	src, dst := d.flow.Src, d.flow.Dst
	switch cm.AttributeID {
	case layers.CMAttrREQ:
		svc := layers.ServiceRC
		switch cm.REQ.TransportServiceType {
		case layers.CMTransportUC:
			svc = layers.ServiceUC
		case layers.CMTransportRD:
			svc = layers.ServiceRD
		case layers.CMTransportExtended:
			svc = layers.ServiceXRC
		}
		q := &cm.REQ
		k := cmTID{m.TransactionID, src}
		a.cmResent(k, layers.CMMRAedREQ, d.conv.id)
		a.markNVMeCM(p, uint64(q.ServiceID))
		t.reqs[k] = cmReq{qpn: q.LocalQPN, psn: q.StartingPSN,
			mtu: q.PathMTU.Bytes(), svc: svc, sid: uint64(q.ServiceID), frame: a.frame,
			retry: q.RetryCount, rnrRetry: q.RNRRetryCount, pkey: q.PKey, tclass: q.Primary.TrafficClass,
			sl: q.Primary.SL, flowLabel: q.Primary.FlowLabel}
	case layers.CMAttrMRA:
		// The MRA's receiver sent the message it acknowledges.
		k := cmTID{m.TransactionID, dst}
		var ref uint32
		switch cm.MRA.MessageMRAed {
		case layers.CMMRAedREQ:
			ref = t.reqs[k].frame
		case layers.CMMRAedREP:
			k.by = src // the REP answered src's REQ
			ref = t.reps[k]
			k.by = dst
		}
		a.cmMRASent(k, &cm.MRA, ref, d.conv.id)
	case layers.CMAttrREP:
		k := cmTID{m.TransactionID, dst}
		a.cmResent(cmTID{m.TransactionID, src}, layers.CMMRAedREP, d.conv.id)
		req, ok := t.reqs[k]
		if !ok {
			return
		}
		a.markNVMeCM(p, req.sid)
		delete(t.reqs, k)
		t.reps[k] = a.frame
		// dst sent the REQ: it is A.
		ab := FlowKey{Src: dst, Dst: src, DestQP: cm.REP.LocalQPN}
		ba := FlowKey{Src: src, Dst: dst, DestQP: req.qpn}
		c, s := a.announce(ab, ba, PairedCM)
		c.svc, c.serviceID, c.mtu = req.svc, req.sid, req.mtu
		c.startPSN[s], c.startPSN[1-s] = req.psn, cm.REP.StartingPSN
		c.hasStart[s], c.hasStart[1-s] = true, true
		c.state = ConvConnecting
		c.ended = false
		// Both sides on one address with one QPN (a loopback capture of
		// rping): the directions are one to the analysis, so no packet
		// can be told to be the active side's or the passive's.
		if keyOf(ab) != keyOf(ba) {
			a.cmBind(c, s, &req, &cm.REP, ab)
		}
		t.convs[k] = cmConv{c, c.id}
	case layers.CMAttrRTU:
		k := cmTID{m.TransactionID, src}
		if c := t.convs[k].live(); c != nil {
			c.state = ConvEstablished
			a.finding(Finding{Kind: FindCMConnect, Frame: a.frame, Conv: c.id})
		}
		delete(t.convs, k)
		delete(t.reps, k)
	case layers.CMAttrREJ:
		// The passive side rejects a REQ; the active side rejects a REP
		// (or gives up on its REQ). The REJ's sender is the active side
		// when the transaction is keyed by it: it sent the REQ.
		k := cmTID{m.TransactionID, dst}
		by := uint8(2) // passive
		if _, ok := t.reqs[k]; !ok && t.convs[k].live() == nil {
			if _, mine := t.reqs[cmTID{m.TransactionID, src}]; mine || t.convs[cmTID{m.TransactionID, src}].live() != nil {
				k, by = cmTID{m.TransactionID, src}, 1
			}
		}
		p.Analysis.CM = &cmRejBy[by]
		delete(t.reps, k)
		if req, ok := t.reqs[k]; ok {
			a.markNVMeCM(p, req.sid)
			delete(t.reqs, k)
			a.finding(Finding{Kind: FindCMReject, Sub: cmRejSub(cm.REJ.Reason, by), Frame: a.frame, Ref: req.frame, Conv: d.conv.id})
		} else if c := t.convs[k].live(); c != nil {
			a.markNVMeCM(p, c.serviceID)
			c.state, c.ended = ConvRejected, true
			delete(t.convs, k)
			var rep uint32 // the REP rejected
			if c.cm != nil {
				rep = c.cm.REPFrame
			}
			a.finding(Finding{Kind: FindCMReject, Sub: cmRejSub(cm.REJ.Reason, by), Frame: a.frame, Ref: rep, Conv: c.id})
		} else {
			p.Analysis.CM = nil
		}
	case layers.CMAttrDREQ:
		k := FlowKey{Src: src, Dst: dst, DestQP: cm.DREQ.RemoteQPN}
		var c *conv
		if e := a.findDir(k, 0); e != nil {
			c = e.conv
		} else if e, ok := a.expect[keyOf(k)]; ok {
			c = e.c
		}
		if c != nil {
			c.state = ConvClosing
			t.convs[cmTID{m.TransactionID, src}] = cmConv{c, c.id}
		}
		// A DREQ sent again: the first had no DREP within its timeout.
		dk := cmTID{m.TransactionID, src}
		if first, ok := t.dreqs[dk]; ok {
			a.finding(Finding{Kind: FindCMDREQUnanswered, Frame: a.frame, Ref: first.frame, Conv: first.conv})
		} else if c != nil {
			t.dreqs[dk] = cmDREQ{frame: a.frame, conv: c.id}
		}
	case layers.CMAttrDREP:
		k := cmTID{m.TransactionID, dst}
		delete(t.dreqs, k)
		// When both sides send a DREQ at once, each is answered: the
		// second DREP ends nothing more.
		if c := t.convs[k].live(); c != nil && c.state != ConvClosed {
			c.state, c.ended = ConvClosed, true
			a.finding(Finding{Kind: FindCMDisconnect, Frame: a.frame, Conv: c.id})
		}
		delete(t.convs, k)
	case layers.CMAttrSIDRReq:
		t.sidr[cmTID{m.TransactionID, src}] = cmReq{sid: uint64(cm.SIDRReq.ServiceID), frame: a.frame}
	case layers.CMAttrSIDRRep:
		k := cmTID{m.TransactionID, dst}
		req, ok := t.sidr[k]
		if !ok {
			return
		}
		delete(t.sidr, k)
		if cm.SIDRRep.Status != 0 {
			return
		}
		ab := FlowKey{Src: dst, Dst: src, DestQP: cm.SIDRRep.QPN}
		ab.Src.Addr, ab.Dst.Addr = ab.Src.Addr.Unmap(), ab.Dst.Addr.Unmap()
		if a.findDir(ab, 0) == nil {
			if _, ok := a.expect[keyOf(ab)]; !ok {
				c := a.newConv()
				c.svc, c.serviceID, c.pairedBy = layers.ServiceUD, req.sid, PairedCM
				c.keys[0], c.hasKey[0] = ab, true
				a.expect[keyOf(ab)] = expectation{c, 0}
			}
		}
	}
}

// oobTable remembers the first half of each out-of-band TCP exchange.
type oobTable struct {
	halves map[tcpPair]oobHalf
}

// tcpPair names a TCP connection, lower address:port first.
type tcpPair struct{ lo, hi netip.AddrPort }

// oobHalf is one side's message: who sent it and the QP it describes.
type oobHalf struct {
	from netip.AddrPort
	addr netip.Addr
	qpn  uint32
	psn  layers.PSN
	done bool
}

// tcp looks for the out-of-band exchange of ibv_*_pingpong and perftest:
// a TCP segment that is exactly one of their QP messages (setup.Recognize).
func (a *Analyzer) tcp(p *Packet) {
	h, ok := oobHalfOf(p.Headers.TCP.Payload)
	if !ok {
		return
	}
	src, dst := p.Endpoints()
	h.from = netip.AddrPortFrom(src.Addr, uint16(p.Headers.TCP.SrcPort))
	to := netip.AddrPortFrom(dst.Addr, uint16(p.Headers.TCP.DstPort))
	if !h.addr.IsValid() || h.addr.IsUnspecified() {
		h.addr = src.Addr
	}
	h.addr = h.addr.Unmap()
	k := tcpPair{h.from, to}
	if k.hi.Compare(k.lo) < 0 {
		k.lo, k.hi = k.hi, k.lo
	}
	t := &a.oob
	if t.halves == nil || len(t.halves) > maxSetup {
		t.halves = map[tcpPair]oobHalf{}
	}
	first, ok := t.halves[k]
	switch {
	case !ok:
		t.halves[k] = h
		return
	case first.done || first.from == h.from:
		return
	}
	first.done = true
	t.halves[k] = first
	// The side that wrote first is the client: A.
	ab := FlowKey{Src: Endpoint{Addr: first.addr}, Dst: Endpoint{Addr: h.addr}, DestQP: h.qpn}
	ba := FlowKey{Src: Endpoint{Addr: h.addr}, Dst: Endpoint{Addr: first.addr}, DestQP: first.qpn}
	c, s := a.announce(ab, ba, PairedOOB)
	c.startPSN[s], c.startPSN[1-s] = first.psn, h.psn
	c.hasStart[s], c.hasStart[1-s] = true, true
	a.finding(Finding{Kind: FindOOBExchange, Frame: a.frame, Conv: c.id})
}

// oobHalfOf reads the QP a pingpong or perftest message announces.
func oobHalfOf(pl []byte) (oobHalf, bool) {
	var h oobHalf
	var gid [16]byte
	switch kind, pp, pt := setup.Recognize(pl); kind {
	case setup.Pingpong:
		h.qpn, h.psn, gid = pp.QPN, pp.PSN, pp.GID
	case setup.Perftest:
		h.qpn, h.psn, gid = pt.QPN, pt.PSN, pt.GID
	default:
		return h, false
	}
	h.addr = netip.AddrFrom16(gid)
	return h, true
}

// markNVMeCM marks a CM message of a connection to service sid whose
// private data NVMe-oF defines (a REQ, REP or REJ of port 4420), unless
// NVMe-oF decoding is off.
func (a *Analyzer) markNVMeCM(p *Packet, sid uint64) {
	if !a.opts.NoULP && isNVMeServiceID(sid) {
		p.Analysis.Info |= InfoNVMeCM
	}
}
