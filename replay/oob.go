package replay

import (
	"bytes"
	"net/netip"

	"github.com/ibwire/ibwire/endpoint"
)

// The TCP set-up messages of ibv_*_pingpong and perftest name QPNs, PSNs,
// R_Keys, VAs and GIDs too (ENDPOINT.md §2.1, §2.2); a rewrite that moved
// the RDMA traffic but left them alone would leave a capture whose set-up
// describes another connection. Both are fixed-size text, so a rewritten
// message has the same length and the TCP segment only needs its checksum
// updated. Only a message that fills a segment exactly and that endpoint's
// codec parses and re-encodes byte for byte is touched.

// oobMessage parses a set-up message: perftest's 108-byte handshake or
// pingpong's 52-byte address message.
func oobMessage(payload []byte) (perftest *endpoint.PerftestDest, pingpong *endpoint.PingpongDest) {
	switch len(payload) {
	case endpoint.PerftestDestSize:
		d, err := endpoint.ParsePerftestDest(payload)
		if err == nil && bytes.Equal(d.Marshal(), payload) {
			return &d, nil
		}
	case endpoint.PingpongDestSize:
		d, err := endpoint.ParsePingpongDest(payload)
		if err == nil && bytes.Equal(padTo(d.Marshal(), len(payload)), payload) {
			return nil, &d
		}
	}
	return nil, nil
}

func padTo(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}

// oobQPN returns the QPN a set-up message announces.
func oobQPN(payload []byte) (uint32, bool) {
	pt, pp := oobMessage(payload)
	switch {
	case pt != nil:
		return pt.QPN, true
	case pp != nil:
		return pp.QPN, true
	}
	return 0, false
}

// rewriteOOB returns the rewritten message, or nil when payload is not a
// set-up message. The announced PSN is the first of the requests the sender
// will send to its peer's QP, f.PSNSpace.
func (rw *Rewriter) rewriteOOB(f *Frame, payload []byte) []byte {
	pt, pp := oobMessage(payload)
	if pt == nil && pp == nil {
		return nil
	}
	r := rw.rules
	qpn := func(q uint32) uint32 {
		if n, ok := r.QPNs[q]; ok {
			return n
		}
		return q
	}
	psn := func(p uint32) uint32 {
		if d, ok := r.PSNShift[f.PSNSpace]; ok && f.HasPSNSpace {
			return (p + uint32(d)) & 0xFFFFFF
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
	if pt != nil {
		d := *pt
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
	d := *pp
	d.QPN, d.PSN, d.GID = qpn(d.QPN), psn(d.PSN), gid(d.GID)
	return padTo(d.Marshal(), len(payload))
}
