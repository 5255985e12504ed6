package replay

import (
	"net/netip"

	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// The TCP set-up messages of ibv_*_pingpong and perftest name QPNs, PSNs,
// R_Keys, VAs and GIDs too (ENDPOINT.md §2.1, §2.2); a rewrite that moved
// the RDMA traffic but left them alone would leave a capture whose set-up
// describes another connection. Both are fixed-size text, so a rewritten
// message has the same length and the TCP segment only needs its checksum
// updated. Only a segment that setup.Recognize takes for exactly one
// message is touched.

// oobQPN returns the QPN a set-up message announces.
func oobQPN(payload []byte) (uint32, bool) {
	switch kind, pp, pt := setup.Recognize(payload); kind {
	case setup.Perftest:
		return pt.QPN, true
	case setup.Pingpong:
		return pp.QPN, true
	}
	return 0, false
}

// rewriteOOB returns the rewritten message, or nil when payload is not a
// set-up message. The announced PSN is the first of the requests the sender
// will send to its peer's QP, f.PSNSpace.
func (rw *Rewriter) rewriteOOB(f *Frame, payload []byte) []byte {
	kind, pp, pt := setup.Recognize(payload)
	if kind == setup.NotSetup {
		return nil
	}
	r := rw.rules
	qpn := func(q uint32) uint32 {
		if n, ok := r.QPNs[q]; ok {
			return n
		}
		return q
	}
	psn := func(p layers.PSN) layers.PSN {
		if d, ok := r.PSNShift[f.PSNSpace]; ok && f.HasPSNSpace {
			return p.Add(d)
		}
		return p
	}
	gid := func(g [16]byte) [16]byte {
		a := netip.AddrFrom16(g)
		if n, ok := r.Addrs[a.Unmap()]; ok {
			return n.As16()
		}
		return g
	}
	if kind == setup.Perftest {
		d := pt
		d.QPN, d.PSN, d.GID = qpn(d.QPN), psn(d.PSN), gid(d.GID)
		if k, ok := r.RKeys[d.RKey]; ok {
			d.RKey = k
		}
		for _, v := range r.VAs {
			if v.contains(d.VAddr) {
				d.VAddr = d.VAddr - v.From + v.To
				break
			}
		}
		return d.Marshal()
	}
	d := pp
	d.QPN, d.PSN, d.GID = qpn(d.QPN), psn(d.PSN), gid(d.GID)
	return d.Marshal()
}
