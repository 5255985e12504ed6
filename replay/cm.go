package replay

import (
	"encoding/binary"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// CM messages on QP1 announce QPNs, starting PSNs, path LIDs and GIDs and,
// for RDMA CM, the IP addresses in the IP-CM header of the private data
// (IBTA Vol 1 §12.6, Annex A11). A rewrite that moved the connection but
// left them alone would leave a capture whose CM exchange describes another
// connection, so they follow the same rules. The offsets are layers' (CMReq,
// CMRep, CMSidrRep, CMPath, IPCMHeader); everything sits inside the ICRC,
// which the rewrite recomputes anyway.

// cmAnnouncement returns the QPN a CM REQ or REP announces (the sender's
// own), for working out whose request stream its starting PSN begins.
func cmAnnouncement(p *decode.Packet) (uint32, bool) {
	h := p.Headers
	if !p.HasMAD() || h.MAD.MgmtClass != layers.MgmtClassCM {
		return 0, false
	}
	switch h.MAD.CM.AttributeID {
	case layers.CMAttrREQ:
		return h.MAD.CM.REQ.LocalQPN, true
	case layers.CMAttrREP:
		return h.MAD.CM.REP.LocalQPN, true
	}
	return 0, false
}

// rewriteCM patches the CM message of a QP1 MAD in place.
func (rw *Rewriter) rewriteCM(f *Frame, h *layers.Parser, put func([]byte, []byte, ...*diffs)) {
	if h.MAD.MgmtClass != layers.MgmtClassCM || len(h.MAD.Payload) < 232 {
		return
	}
	r := rw.rules
	d := h.MAD.Payload
	var buf [4]byte
	qpn := func(b []byte) {
		if n, ok := r.QPNs[get24(b)]; ok {
			put24(buf[:3], n)
			put(b, buf[:3])
		}
	}
	psn := func(b []byte) {
		if s, ok := r.PSNShift[f.PSNSpace]; ok && f.HasPSNSpace {
			put24(buf[:3], uint32(layers.PSN(get24(b)).Add(s)))
			put(b, buf[:3])
		}
	}
	lid := func(b []byte) {
		if n, ok := r.LIDs[binary.BigEndian.Uint16(b)]; ok {
			binary.BigEndian.PutUint16(buf[:2], n)
			put(b, buf[:2])
		}
	}
	path := func(p []byte) { // CMPath
		lid(p[0:2])
		lid(p[2:4])
		rw.addr(p[4:20], put)
		rw.addr(p[20:36], put)
	}
	ipcm := func(pd []byte, serviceID layers.ServiceID) {
		if !serviceID.IsIPCM() || len(pd) < layers.IPCMHeaderLength {
			return
		}
		if pd[1]>>4 == 4 {
			rw.addr(pd[16:20], put)
			rw.addr(pd[32:36], put)
		} else {
			rw.addr(pd[4:20], put)
			rw.addr(pd[20:36], put)
		}
	}
	switch h.MAD.CM.AttributeID {
	case layers.CMAttrREQ:
		qpn(d[32:35])
		psn(d[44:47])
		path(d[52:96])
		path(d[96:140])
		ipcm(d[140:232], h.MAD.CM.REQ.ServiceID)
	case layers.CMAttrREP:
		qpn(d[12:15])
		psn(d[20:23])
	case layers.CMAttrSIDRReq:
		ipcm(d[16:232], h.MAD.CM.SIDRReq.ServiceID)
	case layers.CMAttrSIDRRep:
		qpn(d[8:11])
	}
}

func get24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }
