package correlate

import (
	"errors"
	"io"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// group is one transmission of a packet: its sightings at the points.
type group struct {
	id    identity
	fl    *flow
	copy  int
	first int64 // corrected time of its first sighting
	seen  uint64
	late  uint64 // points where it arrived after a later PSN of its flow
	raw   []int64
	fixed []int64
	frame []int
	// sameKey links the open groups of one identity.
	sameKey *group
	open    bool
	// evicted: a newer group took its PSN's slot while it was open.
	evicted bool
	// retransmitted: a later copy of its PSN was sent; burst: that copy
	// started a go-back-N burst.
	retransmitted, burst bool
}

// flow is one direction of a connection.
type flow struct {
	key   decode.FlowKey
	index int
	seen  uint64 // points that saw it
	// path lists the points along its path, upstream first; pos maps a
	// point to its place there, -1 when off the path.
	path []int
	pos  []int
	// ring holds the latest transmission of each recent PSN.
	ring []*group

	have, inBurst bool
	maxPSN        uint32
	pendingFresh  *group // an out-of-order first sighting, judged by the next
	pointMax      []uint32
	pointHave     uint64

	// Pass 1: clock samples against point 0, per point.
	clk []clockStats
	// Pass 2: attribution.
	packets              int
	losses               []int // per segment
	drops                []int // per point
	hops                 []hopStats
	reorderedBeforeFirst int
}

type hopStats struct {
	delay     decode.Histogram
	negative  int
	reordered int
}

type matcher struct {
	cfg    Config
	n      int
	rep    *Report // nil in the first pass
	fix    []clockFix
	srcs   []*source
	heads  []sighting
	live   []bool
	open   map[identity]*group
	fifo   []*group
	fifoAt int
	flows  map[decode.FlowKey]*flow
	order  []*flow
	free   []*group
	paths  map[decode.FlowKey][]int

	origin     int64
	haveOrigin bool
	bucket     []int64 // pass 1: clock slice width per point, ns
	sight      Sighting
	clocks     []Clock
}

func newMatcher(cfg Config, rep *Report, fix []clockFix) *matcher {
	n := len(cfg.Points)
	m := &matcher{
		cfg: cfg, n: n, rep: rep, fix: fix,
		heads: make([]sighting, n), live: make([]bool, n),
		open:  make(map[identity]*group),
		flows: make(map[decode.FlowKey]*flow),
	}
	m.bucket = make([]int64, n)
	for i := range m.bucket {
		m.bucket[i] = int64(time.Microsecond)
	}
	return m
}

// inheritPaths takes the paths the first pass inferred.
func (m *matcher) inheritPaths(first *matcher) {
	m.origin, m.haveOrigin = first.origin, first.haveOrigin
	m.paths = make(map[decode.FlowKey][]int, len(first.order))
	for _, fl := range first.order {
		m.paths[fl.key] = first.inferPath(fl)
	}
}

func (m *matcher) run() error {
	defer func() {
		for _, s := range m.srcs {
			s.close()
		}
	}()
	for i, p := range m.cfg.Points {
		var pr *PointReport
		if m.rep != nil {
			pr = &m.rep.Points[i]
		}
		s, err := openSource(i, p, m.cfg.Decode, pr)
		if err != nil {
			return err
		}
		m.srcs = append(m.srcs, s)
		if err := m.advance(i); err != nil {
			return err
		}
	}
	window := int64(m.cfg.Window)
	for {
		p := -1
		var t int64
		for i := range m.srcs {
			if !m.live[i] {
				continue
			}
			if ti := m.fix[i].apply(m.heads[i].raw); p < 0 || ti < t {
				p, t = i, ti
			}
		}
		if p < 0 {
			break
		}
		if !m.haveOrigin {
			m.origin, m.haveOrigin = t, true
		}
		for m.fifoAt < len(m.fifo) && m.fifo[m.fifoAt].first+window < t {
			m.close(m.fifo[m.fifoAt])
			m.fifo[m.fifoAt] = nil
			m.fifoAt++
		}
		if m.fifoAt > 4096 && m.fifoAt*2 > len(m.fifo) {
			m.fifo = append(m.fifo[:0], m.fifo[m.fifoAt:]...)
			m.fifoAt = 0
		}
		m.sightAt(p, &m.heads[p], t)
		if err := m.advance(p); err != nil {
			return err
		}
	}
	for ; m.fifoAt < len(m.fifo); m.fifoAt++ {
		m.close(m.fifo[m.fifoAt])
	}
	m.fifo = nil
	for _, fl := range m.order {
		if pf := fl.pendingFresh; pf != nil {
			fl.pendingFresh = nil
			fl.reorderedBeforeFirst++
		}
		for i, g := range fl.ring {
			if g != nil {
				fl.ring[i] = nil
				m.release(g)
			}
		}
	}
	return nil
}

func (m *matcher) advance(p int) error {
	err := m.srcs[p].next(&m.heads[p])
	if errors.Is(err, io.EOF) {
		m.live[p] = false
		return nil
	}
	m.live[p] = err == nil
	return err
}

func (m *matcher) flowFor(key decode.FlowKey) *flow {
	if fl, ok := m.flows[key]; ok {
		return fl
	}
	fl := &flow{
		key: key, index: len(m.order),
		ring:     make([]*group, psnSpan),
		pointMax: make([]uint32, m.n),
	}
	if m.rep == nil {
		fl.clk = make([]clockStats, m.n)
	} else {
		fl.path = m.paths[key]
		if fl.path == nil {
			for i := 0; i < m.n; i++ {
				fl.path = append(fl.path, i)
			}
		}
		fl.pos = make([]int, m.n)
		for i := range fl.pos {
			fl.pos[i] = -1
		}
		for j, p := range fl.path {
			fl.pos[p] = j
		}
		fl.losses = make([]int, len(fl.path)+1)
		fl.drops = make([]int, m.n)
		fl.hops = make([]hopStats, max(len(fl.path)-1, 0))
	}
	m.flows[key] = fl
	m.order = append(m.order, fl)
	return fl
}

// sightAt matches a packet seen at point p at corrected time t with the
// transmission nearest in time that p has not seen yet, or starts one.
func (m *matcher) sightAt(p int, s *sighting, t int64) {
	bit := uint64(1) << p
	fl := m.flowFor(s.id.flow)
	fl.seen |= bit
	var best *group
	var bestD int64
	for g := m.open[s.id]; g != nil; g = g.sameKey {
		if g.seen&bit != 0 {
			continue
		}
		d := t - g.first
		if d < 0 {
			d = -d
		}
		if d <= int64(m.cfg.Window) && (best == nil || d < bestD) {
			best, bestD = g, d
		}
	}
	if best == nil {
		best = m.create(s.id, fl, t)
	}
	best.seen |= bit
	best.raw[p], best.fixed[p], best.frame[p] = s.raw, t, s.frame
	psn := s.id.psn
	if fl.pointHave&bit != 0 && psnBefore(psn, fl.pointMax[p]) {
		if best.copy == 1 {
			best.late |= bit
		}
	} else {
		fl.pointMax[p] = psn
		fl.pointHave |= bit
	}
}

func (m *matcher) create(id identity, fl *flow, t int64) *group {
	var g *group
	if k := len(m.free); k > 0 {
		g, m.free = m.free[k-1], m.free[:k-1]
		raw, fixed, frame := g.raw, g.fixed, g.frame
		clear(raw)
		clear(fixed)
		clear(frame)
		*g = group{raw: raw, fixed: fixed, frame: frame}
	} else {
		g = &group{raw: make([]int64, m.n), fixed: make([]int64, m.n), frame: make([]int, m.n)}
	}
	g.id, g.fl, g.first, g.open, g.copy = id, fl, t, true, 1
	g.sameKey = m.open[id]
	m.open[id] = g
	m.fifo = append(m.fifo, g)

	slot := &fl.ring[id.psn%psnSpan]
	prev := *slot
	if prev != nil && prev.id.psn != id.psn {
		*slot = nil
		m.evict(prev)
		prev = nil
	}
	if prev != nil {
		g.copy = prev.copy + 1
	}
	m.judge(g, prev)
	if prev != nil {
		m.evict(prev)
	}
	*slot = g
	return g
}

// judge reads what a new transmission says about the ones before it: a
// repeat of a PSN means the earlier copy was retransmitted, and one that
// starts a go-back-N burst names the packet the receiver missed; a PSN
// that no point saw before, arriving behind later ones, was either lost
// before the first point (the next transmission repeats a PSN: go-back-N
// is under way) or overtaken.
func (m *matcher) judge(g, prev *group) {
	if !retransmittable(g.id.opcode) {
		return
	}
	fl := g.fl
	psn := g.id.psn
	if pf := fl.pendingFresh; pf != nil {
		fl.pendingFresh = nil
		if m.rep != nil {
			if prev != nil {
				fl.losses[0]++
			} else {
				fl.reorderedBeforeFirst++
			}
		}
	}
	backwards := fl.have && !psnBefore(fl.maxPSN, psn)
	burst := backwards && !fl.inBurst
	if prev != nil {
		prev.retransmitted = true
		prev.burst = prev.burst || burst
	} else if backwards {
		fl.pendingFresh = g
	}
	if backwards {
		fl.inBurst = true
	} else {
		fl.maxPSN, fl.inBurst = psn, false
	}
	fl.have = true
}

// evict takes g out of its PSN's slot: released now if its window has
// passed, else when it has.
func (m *matcher) evict(g *group) {
	if g.open {
		g.evicted = true
		return
	}
	m.release(g)
}

// close ends g's matching window.
func (m *matcher) close(g *group) {
	g.open = false
	head := m.open[g.id]
	if head == g {
		if g.sameKey == nil {
			delete(m.open, g.id)
		} else {
			m.open[g.id] = g.sameKey
		}
	} else {
		for h := head; h != nil; h = h.sameKey {
			if h.sameKey == g {
				h.sameKey = g.sameKey
				break
			}
		}
	}
	g.sameKey = nil
	if g.evicted {
		m.release(g)
	}
}

// release settles g's fate once nothing more can be learnt about it.
func (m *matcher) release(g *group) {
	if m.rep == nil {
		m.sampleClocks(g)
	} else {
		m.attribute(g)
	}
	g.fl = nil
	m.free = append(m.free, g)
}

// retransmittable reports whether a sender sends packets of this opcode
// again when they are lost: requests and READ responses. Acknowledgements
// are not resent (a later one covers them) and CNPs are not either.
func retransmittable(op uint8) bool {
	info := layers.Opcode(op).Info()
	return info.IsRequest() || info.Operation == layers.OpRDMAReadResponse
}
