package correlate

import (
	"errors"
	"io"
	"time"

	"github.com/ibwire/ibwire/capture"
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
	ce    uint64 // points where it carried a congestion mark
	raw   []int64
	fixed []int64
	frame []int
	// data, length and linkType are the first sighting's frame, kept when
	// Config.Frames asks; point is where it was seen.
	data     []byte
	length   int
	linkType layers.LinkType
	point    int
	hasData  bool
	// olderOpen links the open groups of a PSN slot, newest first; newer
	// is the link's other end.
	olderOpen, newer *group
	open             bool
	// evicted: a newer group took its PSN's slot while it was open.
	evicted bool
	// retransmitted: a later copy of its PSN was sent; burst: that copy
	// started a go-back-N burst.
	retransmitted, burst bool
}

// flow is one direction of a connection.
type flow struct {
	id    flowID
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
	// paired is the other direction of the connection, found when one of
	// its responses names a PSN this flow sent; received is the last PSN
	// its responses say the responder received.
	paired       *flow
	received     uint32
	haveReceived bool
	pointMax     []uint32
	pointHave    uint64
	pointCount   []int // packets seen per point

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
	marked    int
}

type matcher struct {
	cfg    Config
	n      int
	rep    *Report // nil in the first pass
	fix    []clockFix
	srcs   []*source
	feeds  []*feed
	heads  []sighting
	live   []bool
	fifo   []*group
	fifoAt int
	flows  map[flowID]*flow
	// byAddrs lists the flows by source and destination address, to pair
	// the directions of a connection.
	byAddrs map[[2][16]byte][]*flow
	order   []*flow
	free    []*group
	paths   map[flowID][]int
	// pairPaths holds a path per source and destination address, for the
	// flows the first pass's sampling missed.
	pairPaths map[[2][16]byte][]int

	// sample: the first pass follows one packet in sample (by ICRC, so the
	// same ones at every point), besides each flow's first packets.
	sample     uint32
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
		flows: make(map[flowID]*flow), byAddrs: make(map[[2][16]byte][]*flow),
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
	m.paths = make(map[flowID][]int, len(first.order))
	m.pairPaths = make(map[[2][16]byte][]int)
	for _, fl := range first.order {
		path := first.inferPath(fl)
		m.paths[fl.id] = path
		if len(path) > 1 {
			m.pairPaths[[2][16]byte{fl.id.src, fl.id.dst}] = path
		}
	}
}

func (m *matcher) run() error {
	done := make(chan struct{})
	defer func() {
		close(done)
		for _, f := range m.feeds {
			<-f.exited
		}
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
		s.sample = m.sample
		s.keep = m.rep != nil && (m.cfg.Merge != nil || m.cfg.Frames && m.cfg.Packet != nil)
		m.srcs = append(m.srcs, s)
		m.feeds = append(m.feeds, startFeed(s, done))
	}
	for i := range m.feeds {
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
		if h := &m.heads[p]; h.data != nil && m.cfg.Merge != nil {
			if err := m.merge(p, h, t); err != nil {
				return err
			}
		}
		if h := &m.heads[p]; !h.other && (m.sample <= 1 || m.sampled(p, h)) {
			m.sightAt(p, h, t)
		}
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
	err := m.feeds[p].next(&m.heads[p])
	if errors.Is(err, io.EOF) {
		m.live[p] = false
		return nil
	}
	m.live[p] = err == nil
	return err
}

func (m *matcher) flowFor(s *sighting) *flow {
	if fl, ok := m.flows[s.flow]; ok {
		return fl
	}
	fl := &flow{
		id: s.flow, key: s.key, index: len(m.order),
		ring:       make([]*group, psnSpan),
		pointMax:   make([]uint32, m.n),
		pointCount: make([]int, m.n),
	}
	if m.rep == nil {
		fl.clk = make([]clockStats, m.n)
	} else {
		fl.path = m.pathOf(s.flow)
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
	m.flows[s.flow] = fl
	addrs := [2][16]byte{s.flow.src, s.flow.dst}
	m.byAddrs[addrs] = append(m.byAddrs[addrs], fl)
	m.order = append(m.order, fl)
	return fl
}

// sightAt matches a packet seen at point p at corrected time t with the
// transmission nearest in time that p has not seen yet, or starts one.
func (m *matcher) sightAt(p int, s *sighting, t int64) {
	bit := uint64(1) << p
	fl := m.flowFor(s)
	fl.seen |= bit
	fl.pointCount[p]++
	id := identity{flow: int32(fl.index), psn: s.psn, icrc: s.icrc, opcode: s.opcode}
	var best *group
	var bestD int64
	for g := fl.ring[id.psn%psnSpan]; g != nil && g.open; g = g.olderOpen {
		if g.id != id || g.seen&bit != 0 {
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
		best = m.create(id, fl, t)
		if s.hasReceived {
			m.noteReceived(fl, s)
		}
	}
	best.seen |= bit
	if s.marked {
		best.ce |= bit
	}
	best.raw[p], best.fixed[p], best.frame[p] = s.raw, t, s.frame
	if s.data != nil && m.cfg.Frames && (!best.hasData || fl.pos[p] >= 0 && (fl.pos[best.point] < 0 || fl.pos[p] < fl.pos[best.point])) {
		// The frame of the point furthest upstream that saw it.
		best.data = append(best.data[:0], s.data...)
		best.length, best.linkType, best.point, best.hasData = s.length, s.linkType, p, true
	}
	psn := s.psn
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
		raw, fixed, frame, data := g.raw, g.fixed, g.frame, g.data
		clear(raw)
		clear(fixed)
		clear(frame)
		*g = group{raw: raw, fixed: fixed, frame: frame, data: data[:0]}
	} else {
		g = &group{raw: make([]int64, m.n), fixed: make([]int64, m.n), frame: make([]int, m.n)}
	}
	g.id, g.fl, g.first, g.open, g.copy = id, fl, t, true, 1
	m.fifo = append(m.fifo, g)

	slot := &fl.ring[id.psn%psnSpan]
	prev := *slot
	if prev != nil && prev.open {
		g.olderOpen, prev.newer = prev, g
	}
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
	// A PSN the responder already said it received is asked again for
	// another reason (a READ whose responses were lost, a timeout after a
	// lost ACK): not a loss of the request.
	received := fl.haveReceived && !psnBefore(fl.received, psn)
	burst := backwards && !fl.inBurst && !received
	if prev != nil {
		prev.retransmitted = true
		prev.burst = prev.burst || burst && !m.explained(fl, psn)
	} else if backwards && !received {
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
	// Groups close in the order they opened, so g is the oldest open one of
	// its slot.
	if g.newer != nil {
		g.newer.olderOpen = nil
		g.newer = nil
	}
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

// alwaysSampled is how many packets of each flow at each point the first
// pass follows whatever the sampling, so that every flow gets its path.
const alwaysSampled = 256

// sampled reports whether the first pass follows this packet.
func (m *matcher) sampled(p int, s *sighting) bool {
	if s.icrc%m.sample == 0 {
		return true
	}
	return m.flowFor(s).pointCount[p] < alwaysSampled
}

// pathOf is the path the first pass found for a flow, or else that of
// another flow between the same addresses (the reverse of the other
// direction's if need be): flows between two hosts take one route.
func (m *matcher) pathOf(id flowID) []int {
	if p, ok := m.paths[id]; ok && len(p) > 1 {
		return p
	}
	if p, ok := m.pairPaths[[2][16]byte{id.src, id.dst}]; ok {
		return p
	}
	if p, ok := m.pairPaths[[2][16]byte{id.dst, id.src}]; ok {
		rev := make([]int, len(p))
		for i, v := range p {
			rev[len(p)-1-i] = v
		}
		return rev
	}
	return m.paths[id]
}

// merge hands a frame to Config.Merge.
func (m *matcher) merge(p int, s *sighting, t int64) error {
	at := t
	if m.cfg.NoClockFix {
		at = s.raw
	}
	return m.cfg.Merge(p, capture.Packet{Number: s.frame, Time: time.Unix(0, at), Length: s.length,
		LinkType: s.linkType, Interface: p, Data: s.data})
}

// noteReceived takes a response's word that the responder received the
// requests up to a PSN, for the other direction of its connection.
func (m *matcher) noteReceived(fl *flow, s *sighting) {
	req := fl.paired
	if req == nil {
		for _, f := range m.byAddrs[[2][16]byte{s.flow.dst, s.flow.src}] {
			if g := f.ring[s.psn%psnSpan]; g != nil && g.id.psn == s.psn && f.paired == nil {
				req, f.paired, fl.paired = f, fl, f
				break
			}
		}
		if req == nil {
			return
		}
	}
	if !req.haveReceived || psnBefore(req.received, s.received) {
		req.received, req.haveReceived = s.received, true
	}
}

// explained reports whether a go-back-N burst from psn is explained by a
// loss already located: a packet between psn and the highest PSN sent that
// the last point of the path missed. A sender resends from the oldest
// unacknowledged packet, which need not be the lost one (a lost last
// packet of a message, found by the timeout, sends the whole message
// again).
func (m *matcher) explained(fl *flow, psn uint32) bool {
	if m.rep == nil || len(fl.path) == 0 {
		return false
	}
	last := uint64(1) << fl.path[len(fl.path)-1]
	for d := 0; d < psnSpan; d++ {
		p := (psn + uint32(d)) & 0xFFFFFF
		if g := fl.ring[p%psnSpan]; g != nil && g.id.psn == p && g.seen&last == 0 && retransmittable(g.id.opcode) {
			return true
		}
		if p == fl.maxPSN {
			break
		}
	}
	return false
}
