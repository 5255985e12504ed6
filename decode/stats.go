package decode

import (
	"net/netip"
	"sort"
	"time"
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

// FlowCounts are the totals of one direction.
type FlowCounts struct {
	Packets     int
	Bytes       int // frame bytes on the wire
	FirstSeen   time.Duration
	LastSeen    time.Duration
	PayloadSize int
}

// QPFlows counts packets and bytes per QP direction (-z conv,qp before the
// analysis pairs the directions). Its memory grows with the number of QP
// directions, not with the capture.
type QPFlows struct {
	flows map[FlowKey]*FlowCounts
}

// NewQPFlows returns an empty table.
func NewQPFlows() *QPFlows { return &QPFlows{flows: map[FlowKey]*FlowCounts{}} }

// Add counts an IB packet; other packets are ignored.
func (q *QPFlows) Add(p *Packet) {
	b := p.BTH()
	if b == nil {
		return
	}
	src, dst := p.Endpoints()
	k := FlowKey{Src: src, Dst: dst, DestQP: b.DestQP}
	c, ok := q.flows[k]
	if !ok {
		c = &FlowCounts{FirstSeen: p.RelTime}
		q.flows[k] = c
	}
	c.Packets++
	c.Bytes += p.Length
	c.PayloadSize += len(b.PacketPayload())
	c.LastSeen = p.RelTime
}

// Flow is one row of QPFlows.
type Flow struct {
	FlowKey
	FlowCounts
}

// Flows returns the directions ordered by first appearance.
func (q *QPFlows) Flows() []Flow {
	out := make([]Flow, 0, len(q.flows))
	for k, c := range q.flows {
		out = append(out, Flow{k, *c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FirstSeen != out[j].FirstSeen {
			return out[i].FirstSeen < out[j].FirstSeen
		}
		if out[i].Src != out[j].Src {
			return out[i].Src.Less(out[j].Src)
		}
		return out[i].DestQP < out[j].DestQP
	})
	return out
}
