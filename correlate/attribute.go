package correlate

import (
	"time"

	"github.com/ibwire/ibwire/capture"
)

// attribute settles the fate of one transmission along its flow's path:
// the points that missed it, the segment it was lost on, the delays of the
// hops that saw it at both ends.
func (m *matcher) attribute(g *group) {
	fl := g.fl
	fl.packets++
	path := fl.path
	seen := func(j int) bool { return g.seen&(1<<path[j]) != 0 }
	last := -1
	for j := len(path) - 1; j >= 0; j-- {
		if seen(j) {
			last = j
			break
		}
	}
	var dropped uint64
	lostAfter := -1
	if last >= 0 {
		for j := 0; j < last; j++ {
			if !seen(j) {
				dropped |= 1 << path[j]
			}
		}
		switch {
		case last < len(path)-1 && (g.retransmitted || g.redundant || !retransmittable(g.id.opcode)):
			lostAfter = last + 1
		case last < len(path)-1:
			for j := last + 1; j < len(path); j++ {
				dropped |= 1 << path[j]
			}
		case g.burst:
			lostAfter = len(path)
		}
	}
	if lostAfter >= 0 {
		fl.losses[lostAfter]++
	}
	for p := 0; p < m.n; p++ {
		if dropped&(1<<p) != 0 {
			fl.drops[p]++
			m.rep.Points[p].CaptureDrops++
		}
	}
	times := g.fixed
	if m.cfg.NoClockFix {
		times = g.raw
	}
	for j := 1; j < len(path); j++ {
		a, b := path[j-1], path[j]
		if !seen(j-1) || !seen(j) {
			continue
		}
		h := &fl.hops[j-1]
		d := time.Duration(times[b] - times[a])
		if d < 0 {
			h.negative++
		}
		h.delay.Add(d)
		if g.late&(1<<b) != 0 && g.late&(1<<a) == 0 {
			h.reordered++
		}
		if g.ce&(1<<b) != 0 && g.ce&(1<<a) == 0 {
			h.marked++
		}
	}
	if m.cfg.Packet != nil {
		m.emit(g, times, dropped, lostAfter)
	}
}

func (m *matcher) emit(g *group, times []int64, dropped uint64, lostAfter int) {
	s := &m.sight
	if len(s.Frames) != m.n {
		s.Frames, s.Times, s.Dropped = make([]int, m.n), make([]time.Time, m.n), make([]bool, m.n)
	}
	s.Flow, s.PSN, s.Opcode, s.Copy = g.fl.key, g.id.psn, g.id.opcode, g.copy
	for p := 0; p < m.n; p++ {
		s.Frames[p] = g.frame[p]
		s.Times[p] = time.Time{}
		if g.seen&(1<<p) != 0 {
			s.Times[p] = time.Unix(0, times[p]).UTC()
		}
		s.Dropped[p] = dropped&(1<<p) != 0
	}
	s.LostAfter, s.LostOn = lostAfter, ""
	if lostAfter >= 0 {
		s.LostOn = m.segmentName(g.fl, lostAfter)
	}
	s.Path, s.Point, s.Frame = g.fl.path, g.point, capture.Packet{}
	if g.hasData {
		s.Frame = capture.Packet{Number: g.frame[g.point], Time: time.Unix(0, times[g.point]).UTC(), Length: g.length,
			LinkType: g.linkType, Interface: g.point, Data: g.data}
	}
	m.cfg.Packet(s)
}

// segmentName names segment j of fl's path: "sender → A", "A → B",
// "B → receiver".
func (m *matcher) segmentName(fl *flow, j int) string {
	from, to := "sender", "receiver"
	if j > 0 {
		from = m.cfg.Points[fl.path[j-1]].Name
	}
	if j < len(fl.path) {
		to = m.cfg.Points[fl.path[j]].Name
	}
	return from + " → " + to
}

// report fills the flows of the report.
func (m *matcher) report() {
	for _, fl := range m.order {
		fr := FlowReport{
			Src: fl.key.Src.String(), Dst: fl.key.Dst.String(), DestQP: fl.key.DestQP,
			Packets:              fl.packets,
			ReorderedBeforeFirst: fl.reorderedBeforeFirst,
		}
		for _, p := range fl.path {
			fr.Path = append(fr.Path, m.cfg.Points[p].Name)
			fr.CaptureDrops = append(fr.CaptureDrops, fl.drops[p])
		}
		for j, n := range fl.losses {
			fr.Segments = append(fr.Segments, Segment{Name: m.segmentName(fl, j), Losses: n})
		}
		for j := range fl.hops {
			h := &fl.hops[j]
			fr.Hops = append(fr.Hops, Hop{
				From: fr.Path[j], To: fr.Path[j+1],
				Delay: h.delay.Summarize(), Negative: h.negative, Reordered: h.reordered, Marked: h.marked,
			})
		}
		m.rep.Flows = append(m.rep.Flows, fr)
	}
}
