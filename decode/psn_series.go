package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// PSNMark is what a point of a PSN series shows. Marks rank by value: where
// several points share a place too small to show them all (a cell of a
// text plot), the highest wins.
type PSNMark uint8

// Marks, least important first. A retransmission outranks a CNP, a NAK a
// retransmission, and an RNR NAK a NAK: it is the rarer and more specific
// finding, and a sequence NAK and retransmissions usually share its place.
const (
	MarkRequest PSNMark = iota
	MarkResponse
	MarkCNP
	MarkRetransmission
	MarkNAK
	MarkRNRNAK
	NumPSNMarks
)

// MarkOf is the mark of an analysed packet with a BTH: a CNP, an RNR NAK, a
// NAK or a retransmission by what the analysis found, else a request or a
// response.
func MarkOf(p *Packet, info *layers.OpcodeInfo) PSNMark {
	a := &p.Analysis
	switch {
	case info.Service == layers.ServiceCNP || a.Has(FindCNP):
		return MarkCNP
	case a.Has(FindRNRNAK):
		return MarkRNRNAK
	case a.Has(FindNAK):
		return MarkNAK
	case a.Has(FindRetransmission):
		return MarkRetransmission
	case info.Response:
		return MarkResponse
	}
	return MarkRequest
}

// PSNPoint is one packet of a PSN series.
type PSNPoint struct {
	T     time.Duration // since the capture's first frame
	Frame uint32
	// PSN is the packet's place on the unwrapped line of the request
	// direction it belongs to (a response, the one it answers): the line
	// starts at the first PSN it saw on the wire and does not wrap at 2^24.
	// A CNP, which carries no PSN of the connection, sits at the place of
	// the point before it.
	PSN      int64
	Dir      uint8 // the packet's direction (Analysis.Dir)
	Line     uint8 // the request direction whose line PSN is on
	Response bool  // the opcode is a response's
	Mark     PSNMark
}

// PSNSeries is a connection's PSN against time (Wireshark's tcptrace graph
// for RDMA): one unwrapped PSN line per request direction, responses on the
// line of the requests they answer. The caller chooses the packets.
type PSNSeries struct {
	Points []PSNPoint
	have   [4]bool
	last   [4]layers.PSN
	pos    [4]int64
	lastY  int64
}

// Point places an analysed packet with a BTH on its line and returns it,
// without keeping it.
func (s *PSNSeries) Point(p *Packet) PSNPoint {
	b := p.BTH()
	info := b.Info()
	a := &p.Analysis
	pt := PSNPoint{T: p.RelTime, Frame: uint32(p.Number), Dir: a.Dir, Response: info.Response, Mark: MarkOf(p, info)}
	if pt.Mark == MarkCNP {
		pt.PSN = s.lastY
		return pt
	}
	line := a.Dir
	if info.Response {
		line = 3 - a.Dir
	}
	line &= 3
	pt.Line = line
	psn := b.PSN
	if !s.have[line] {
		s.have[line], s.last[line], s.pos[line] = true, psn, int64(psn)
	}
	s.pos[line] += int64(psn.Diff(s.last[line]))
	s.last[line] = psn
	s.lastY = s.pos[line]
	pt.PSN = s.pos[line]
	return pt
}

// Add places p and keeps it.
func (s *PSNSeries) Add(p *Packet) { s.Points = append(s.Points, s.Point(p)) }

// WirePSN is the PSN on the wire at a place of an unwrapped line.
func WirePSN(v int64) layers.PSN {
	const space = 1 << 24
	return layers.PSN((v%space + space) % space)
}
