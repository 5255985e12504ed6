package correlate

import (
	"context"
	"errors"
	"fmt"
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
	// redundant: it was sent after the responder had said it received its
	// PSN (a go-back-N copy behind the ACK): nothing would resend it if it
	// were lost, so no resend can be asked for as evidence.
	redundant bool
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

	// Clock samples against point 0, per point.
	clk []clockStats
	// Attribution. A flow the heads did not show keeps its first
	// transmissions in pending until its path is known, and counts its
	// losses before the first point in lostBeforePath meanwhile.
	pending              []*group
	lostBeforePath       int
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
	cfg Config
	n   int
	rep *Report // nil in the first matching, over the heads
	fix []clockFix
	in  []stream
	// heads are the points' next sightings, valid until the point's next
	// advance, and at their corrected times.
	heads  []*sighting
	at     []int64
	live   []bool
	fifo   []*group
	fifoAt int
	flows  map[flowID]*flow
	// byAddrs lists the flows by source and destination (address and
	// LID: native IB without a GRH has no address), to pair
	// the directions of a connection.
	byAddrs map[hosts][]*flow
	order   []*flow
	free    []*group
	// slab, slabTimes and slabFrames are what is left of the last groups
	// allocated (newGroup).
	slab       []group
	slabTimes  []int64
	slabFrames []int
	paths      map[flowID][]int
	// pairPaths holds a path per source and destination address, for the
	// flows the heads did not show.
	pairPaths map[hosts][]int

	origin     int64
	haveOrigin bool
	// sampling: the clock samples are gathered (always in the first
	// matching; in the second when the captures outlast their heads, to
	// refine the clocks and find the paths of flows that start later).
	sampling bool
	sinceFix int     // sightings since the clocks were last estimated
	bucket   []int64 // clock slice width per point, ns
	sight    Sighting
	clocks   []Clock
}

// refineEvery is how many sightings past the heads the second matching
// takes between two estimates of the clocks.
const refineEvery = 1 << 16

// pathAfter is how many transmissions of a flow that starts after the
// heads wait for its path to be inferred from their times.
const pathAfter = 256

func newMatcher(cfg Config, rep *Report, fix []clockFix) *matcher {
	n := len(cfg.Points)
	m := &matcher{
		cfg: cfg, n: n, rep: rep, fix: fix, sampling: rep == nil,
		heads: make([]*sighting, n), at: make([]int64, n), live: make([]bool, n),
		flows: make(map[flowID]*flow), byAddrs: make(map[hosts][]*flow),
	}
	m.bucket = make([]int64, n)
	for i := range m.bucket {
		m.bucket[i] = int64(time.Microsecond)
	}
	return m
}

// inheritPaths takes the paths the first matching inferred.
func (m *matcher) inheritPaths(first *matcher) {
	m.origin, m.haveOrigin = first.origin, first.haveOrigin
	m.paths = make(map[flowID][]int, len(first.order))
	m.pairPaths = make(map[hosts][]int)
	for _, fl := range first.order {
		path := first.inferPath(fl)
		m.paths[fl.id] = path
		if len(path) > 1 {
			m.pairPaths[fl.id.hosts()] = path
		}
	}
}

// run matches the points' streams until they end or ctx is done.
func (m *matcher) run(ctx context.Context, in []stream) error {
	m.in = in
	for i := range in {
		if err := m.advance(i); err != nil {
			return err
		}
	}
	window := int64(m.cfg.Window)
	for {
		p := -1
		var t int64
		for i := range m.in {
			if !m.live[i] {
				continue
			}
			if ti := m.at[i]; p < 0 || ti < t {
				p, t = i, ti
			}
		}
		if p < 0 {
			break
		}
		if m.sinceFix++; m.sinceFix&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if m.sampling && m.rep != nil && m.sinceFix >= refineEvery {
				m.fix, m.sinceFix = clockFixes(m.estimateClocks(), m.origin), 0
				for i, h := range m.heads {
					if m.live[i] {
						m.at[i] = m.fix[i].apply(h.raw)
					}
				}
			}
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
		if h := m.heads[p]; h.data != nil && m.cfg.Merge != nil && m.rep != nil {
			if err := m.merge(p, h, t); err != nil {
				return err
			}
		}
		if h := m.heads[p]; !h.other {
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
	if m.rep != nil && m.sampling {
		m.estimateClocks()
		for _, fl := range m.order {
			if fl.path == nil {
				m.settle(fl)
			}
		}
	}
	return nil
}

func (m *matcher) advance(p int) error {
	s, err := m.in[p].next()
	if err == nil {
		m.heads[p], m.at[p], m.live[p] = s, m.fix[p].apply(s.raw), true
		return nil
	}
	m.live[p] = false
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (m *matcher) flowFor(s *sighting) *flow {
	if fl, ok := m.flows[s.flow]; ok {
		return fl
	}
	fl := &flow{
		id: s.flow, key: s.flowKey(), index: len(m.order),
		ring:     make([]*group, psnSpan),
		pointMax: make([]uint32, m.n),
	}
	if m.sampling {
		fl.clk = make([]clockStats, m.n)
	}
	if m.rep != nil {
		if path := m.pathOf(s.flow); path != nil || !m.sampling {
			m.setPath(fl, path)
		}
		// Else a flow the heads did not show: its path waits for the times
		// of its first transmissions (settle).
	}
	m.flows[s.flow] = fl
	addrs := s.flow.hosts()
	m.byAddrs[addrs] = append(m.byAddrs[addrs], fl)
	m.order = append(m.order, fl)
	return fl
}

// setPath sets fl's path, all the points in order when none is known.
func (m *matcher) setPath(fl *flow, path []int) {
	if path == nil {
		for i := 0; i < m.n; i++ {
			path = append(path, i)
		}
	}
	fl.path = path
	fl.pos = make([]int, m.n)
	for i := range fl.pos {
		fl.pos[i] = -1
	}
	for j, p := range fl.path {
		fl.pos[p] = j
	}
	fl.losses = make([]int, len(fl.path)+1)
	fl.losses[0] = fl.lostBeforePath
	fl.drops = make([]int, m.n)
	fl.hops = make([]hopStats, max(len(fl.path)-1, 0))
}

// settle infers the path of a flow the heads did not show from the times
// of its transmissions so far, and attributes them.
func (m *matcher) settle(fl *flow) {
	if m.clocks == nil {
		m.estimateClocks()
	}
	m.setPath(fl, m.inferPath(fl))
	for _, g := range fl.pending {
		m.attribute(g)
		g.fl = nil
		m.free = append(m.free, g)
	}
	fl.pending = nil
}

// sightAt matches a packet seen at point p at corrected time t with the
// transmission nearest in time that p has not seen yet, or starts one.
func (m *matcher) sightAt(p int, s *sighting, t int64) {
	bit := uint64(1) << p
	fl := m.flowFor(s)
	fl.seen |= bit
	id := identity{flow: int32(fl.index), psn: s.psn, icrc: s.icrc, opcode: s.opcode, icrcKnown: s.icrcKnown}
	var best *group
	var bestD int64
	for g := fl.ring[id.psn%psnSpan]; g != nil && g.open; g = g.olderOpen {
		if !g.id.matches(id) || g.seen&bit != 0 {
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
	if !best.id.icrcKnown && id.icrcKnown {
		// A cut copy started the transmission; a whole one names its ICRC.
		best.id.icrc, best.id.icrcKnown = id.icrc, true
	}
	best.seen |= bit
	if s.marked {
		best.ce |= bit
	}
	best.raw[p], best.fixed[p], best.frame[p] = s.raw, t, s.frame
	if s.data != nil && m.cfg.Frames && (!best.hasData || fl.pos != nil && fl.pos[p] >= 0 && (fl.pos[best.point] < 0 || fl.pos[p] < fl.pos[best.point])) {
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
		g = m.newGroup()
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

// groupSlab is how many groups are allocated at a time: a flow's PSN
// history alone holds psnSpan of them, and few allocations make less work
// for the garbage collector.
const groupSlab = 256

// newGroup takes a fresh group from the current slab.
func (m *matcher) newGroup() *group {
	if len(m.slab) == 0 {
		m.slab = make([]group, groupSlab)
		m.slabTimes = make([]int64, 2*m.n*groupSlab)
		m.slabFrames = make([]int, m.n*groupSlab)
	}
	n := m.n
	g := &m.slab[0]
	g.raw, g.fixed, g.frame = m.slabTimes[:n:n], m.slabTimes[n:2*n:2*n], m.slabFrames[:n:n]
	m.slab, m.slabTimes, m.slabFrames = m.slab[1:], m.slabTimes[2*n:], m.slabFrames[n:]
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
			switch {
			case prev != nil && fl.losses == nil:
				fl.lostBeforePath++
			case prev != nil:
				fl.losses[0]++
			default:
				fl.reorderedBeforeFirst++
			}
		}
	}
	backwards := fl.have && !psnBefore(fl.maxPSN, psn)
	// A PSN the responder already said it received is asked again for
	// another reason (a READ whose responses were lost, a timeout after a
	// lost ACK): not a loss of the request.
	received := fl.haveReceived && !psnBefore(fl.received, psn)
	g.redundant = received
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
	if m.sampling {
		m.sampleClocks(g)
	}
	if fl := g.fl; m.rep != nil && fl.path == nil {
		fl.pending = append(fl.pending, g)
		if len(fl.pending) >= pathAfter {
			m.settle(fl)
		}
		return
	}
	if m.rep != nil {
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

// pathOf is the path the first matching found for a flow, or else that of
// another flow between the same addresses (the reverse of the other
// direction's if need be): flows between two hosts take one route.
func (m *matcher) pathOf(id flowID) []int {
	if p, ok := m.paths[id]; ok && len(p) > 1 {
		return p
	}
	if p, ok := m.pairPaths[id.hosts()]; ok {
		return p
	}
	if p, ok := m.pairPaths[id.hosts().reverse()]; ok {
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
	err := m.cfg.Merge(p, capture.Packet{Number: s.frame, Time: time.Unix(0, at), Length: s.length,
		LinkType: s.linkType, Interface: p, Data: s.data})
	if err != nil {
		pt := m.cfg.Points[p]
		return fmt.Errorf("point %s (%s), packet %d: %w", pt.Name, pt.Path, s.frame, err)
	}
	return nil
}

// noteReceived takes a response's word that the responder received the
// requests up to a PSN, for the other direction of its connection.
func (m *matcher) noteReceived(fl *flow, s *sighting) {
	req := fl.paired
	if req == nil {
		for _, f := range m.byAddrs[s.flow.hosts().reverse()] {
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
		p := uint32(layers.PSN(psn).Add(d))
		if g := fl.ring[p%psnSpan]; g != nil && g.id.psn == p && g.seen&last == 0 && retransmittable(g.id.opcode) {
			return true
		}
		if p == fl.maxPSN {
			break
		}
	}
	return false
}
