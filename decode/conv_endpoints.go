package decode

import (
	"sort"

	"github.com/ibwire/ibwire/layers"
)

// EndpointRow is one address (IP, GID or LID) of -z endpoints,gid.
type EndpointRow struct {
	Endpoint
	TxPackets, RxPackets uint64
	TxBytes, RxBytes     uint64
	QPs                  int // distinct QPs the endpoint received on
	CNPsSent, CNPsRecv   uint64
}

// EndpointStat totals IB traffic per endpoint. Memory grows with the
// endpoints and their QPs.
type EndpointStat struct {
	m map[Endpoint]*endpointAcc
}

type endpointAcc struct {
	EndpointRow
	qps map[uint32]struct{}
}

// Add counts p when it is an IB transport packet.
func (s *EndpointStat) Add(p *Packet) {
	b := p.BTH()
	if b == nil {
		return
	}
	if s.m == nil {
		s.m = map[Endpoint]*endpointAcc{}
	}
	src, dst := p.Endpoints()
	src.Addr, dst.Addr = src.Addr.Unmap(), dst.Addr.Unmap()
	tx, rx := s.acc(src), s.acc(dst)
	tx.TxPackets++
	tx.TxBytes += uint64(p.Length)
	rx.RxPackets++
	rx.RxBytes += uint64(p.Length)
	rx.qps[b.DestQP] = struct{}{}
	if b.Opcode.Service() == layers.ServiceCNP {
		tx.CNPsSent++
		rx.CNPsRecv++
	}
}

func (s *EndpointStat) acc(e Endpoint) *endpointAcc {
	a, ok := s.m[e]
	if !ok {
		a = &endpointAcc{EndpointRow: EndpointRow{Endpoint: e}, qps: map[uint32]struct{}{}}
		s.m[e] = a
	}
	return a
}

// Rows returns the endpoints, in address order.
func (s *EndpointStat) Rows() []EndpointRow {
	out := make([]EndpointRow, 0, len(s.m))
	for _, a := range s.m {
		r := a.EndpointRow
		r.QPs = len(a.qps)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoint.Less(out[j].Endpoint) })
	return out
}
