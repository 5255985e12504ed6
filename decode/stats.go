package decode

import (
	"net/netip"
)

// Endpoint is an IB endpoint address: an IP address for RoCEv2, a GID for
// RoCEv1 and routed IB, a LID for local IB.
type Endpoint struct {
	Addr netip.Addr // zero for LID-addressed endpoints
	LID  uint16
}

func (e Endpoint) String() string {
	if e.Addr.IsValid() {
		return e.Addr.String()
	}
	return "LID " + itoa(uint64(e.LID))
}

// Less orders endpoints for stable output.
func (e Endpoint) Less(o Endpoint) bool {
	if c := e.Addr.Compare(o.Addr); c != 0 {
		return c < 0
	}
	return e.LID < o.LID
}

// Endpoints returns the source and destination of an IB packet.
func (p *Packet) Endpoints() (src, dst Endpoint) {
	h := p.Headers
	switch {
	case p.has&hasIPv4 != 0:
		src.Addr, _ = netip.AddrFromSlice(ipv4Bytes(h.IPv4.SrcIP))
		dst.Addr, _ = netip.AddrFromSlice(ipv4Bytes(h.IPv4.DstIP))
	case p.has&hasIPv6 != 0:
		src.Addr, _ = netip.AddrFromSlice(h.IPv6.SrcIP)
		dst.Addr, _ = netip.AddrFromSlice(h.IPv6.DstIP)
	case p.has&hasGRH != 0:
		src.Addr, _ = netip.AddrFromSlice(h.GRH.SGID)
		dst.Addr, _ = netip.AddrFromSlice(h.GRH.DGID)
	case p.has&hasLRH != 0:
		src.LID, dst.LID = h.LRH.SLID, h.LRH.DLID
	}
	return src, dst
}

// FlowKey identifies one direction of a QP conversation: who sends, to whom,
// and the destination QP. A QP number alone is not unique: each host
// numbers its own.
type FlowKey struct {
	Src, Dst Endpoint
	DestQP   uint32
}
