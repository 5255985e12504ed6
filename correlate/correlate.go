package correlate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// DefaultWindow is how long a packet waits at the other points for its
// copies: it must exceed the largest one-way delay between two points plus
// what is left of the clock error, and stay below the time a sender takes to
// retransmit.
const DefaultWindow = 20 * time.Millisecond

// MaxPoints is the most capture points one run correlates.
const MaxPoints = 64

// psnSpan is how many PSNs back a retransmission may reach and still find
// the record of its original: go-back-N never reaches back further than the
// sender's outstanding window, which rxe keeps far below this.
const psnSpan = 1024

// headPackets is how many packets of each capture are held in memory
// before the matching starts: the clocks and the paths are estimated from
// them (and kept refining on the rest).
const headPackets = 1 << 14

// Point is one capture point: a name for reports and the capture file.
type Point struct {
	Name string
	Path string
}

// Config says what to correlate and how.
type Config struct {
	// Points are the captures, at least two; the first is the clock
	// reference.
	Points []Point
	// Window is the matching window; 0 means DefaultWindow.
	Window time.Duration
	// NoClockFix measures delays on the clocks as captured; the clocks are
	// still estimated, and matching still uses the estimate.
	NoClockFix bool
	// Decode adjusts decoding (DC, extra RoCEv2 ports).
	Decode decode.Options
	// Merge, when set, receives every frame of every capture (transport
	// packet or not) once, in the order of the corrected
	// clocks, with its point and its time (corrected unless NoClockFix): a
	// merged capture, one interface per point. Its Data is valid during the
	// call only.
	Merge func(point int, p capture.Packet) error
	// Packet, when set, receives every transport packet once its fate is
	// known: at the latest when the matching window has passed, or,
	// for one missing downstream, when its retransmission shows or its PSN
	// falls out of reach. The Sighting is reused after the call.
	Packet func(*Sighting)
	// Frames makes each Sighting carry the frame of the first point that saw
	// the packet, which costs a copy of up to psnSpan (1024) frames per flow.
	Frames bool
}

// Run correlates the captures of cfg.Points and reports where each packet
// was seen, lost or dropped and how long each hop took. It reads each capture
// once; cancelling ctx stops the reading and returns ctx's error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	n := len(cfg.Points)
	if n < 2 {
		return nil, errors.New("correlate: at least two capture points are needed")
	}
	if n > MaxPoints {
		return nil, fmt.Errorf("correlate: %d capture points, at most %d", n, MaxPoints)
	}
	seenNames := map[string]bool{}
	for _, p := range cfg.Points {
		if seenNames[p.Name] {
			return nil, fmt.Errorf("correlate: two capture points are named %q", p.Name)
		}
		seenNames[p.Name] = true
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	rep := &Report{Window: cfg.Window, ClockFixed: !cfg.NoClockFix, Points: make([]PointReport, n)}
	for i, p := range cfg.Points {
		rep.Points[i] = PointReport{Name: p.Name, File: p.Path}
	}
	keep := cfg.Merge != nil || cfg.Frames && cfg.Packet != nil
	done := make(chan struct{})
	var srcs []*source
	var feeds []*feed
	defer func() {
		close(done)
		for _, f := range feeds {
			<-f.exited
		}
		for _, s := range srcs {
			s.close()
		}
	}()
	for i, p := range cfg.Points {
		s, err := openSource(i, p, cfg.Decode, &rep.Points[i])
		if err != nil {
			return nil, err
		}
		s.keep = keep
		srcs = append(srcs, s)
		feeds = append(feeds, startFeed(s, done))
	}
	// The head of each capture, held in memory, gives the clocks and the
	// paths before the matching that attributes starts on it.
	heads := make([]*head, n)
	for i, f := range feeds {
		h, err := readHead(ctx, f, keep)
		if err != nil {
			return nil, err
		}
		heads[i] = h
	}
	first := newMatcher(cfg, nil, linearClocks(coarseOffsets(heads)))
	streams := make([]stream, n)
	for i, h := range heads {
		streams[i] = &replay{s: h.s, err: h.err}
	}
	if err := first.run(ctx, streams); err != nil {
		return nil, err
	}
	clocks := first.estimateClocks()
	m := newMatcher(cfg, rep, clockFixes(clocks, first.origin))
	m.inheritPaths(first)
	m.clocks = clocks
	whole := true
	for i, h := range heads {
		whole = whole && h.whole
		streams[i] = &replay{s: h.s, rest: feeds[i]}
		heads[i] = nil
	}
	// When the captures outlast their heads, the second matching goes on
	// estimating the clocks, and its estimate from every packet replaces
	// the heads'.
	m.sampling = !whole
	if err := m.run(ctx, streams); err != nil {
		return nil, err
	}
	clocks = m.clocks
	for i := range rep.Points {
		rep.Points[i].Clock = clocks[i]
	}
	m.report()
	return rep, nil
}

// clockFix turns a point's reading into the reference clock's:
// t = origin + (raw - origin - offset) / (1 + drift).
type clockFix struct {
	offset float64 // ns
	drift  float64 // fraction
	origin int64
}

func (c clockFix) apply(raw int64) int64 {
	d := float64(raw-c.origin) - c.offset
	if c.drift != 0 {
		d /= 1 + c.drift
	}
	return c.origin + int64(d)
}

func linearClocks(offsets []int64) []clockFix {
	fix := make([]clockFix, len(offsets))
	for i, o := range offsets {
		fix[i] = clockFix{offset: float64(o)}
	}
	return fix
}

func clockFixes(clocks []Clock, origin int64) []clockFix {
	fix := make([]clockFix, len(clocks))
	for i, c := range clocks {
		fix[i] = clockFix{offset: float64(c.Offset), drift: c.DriftPPM / 1e6, origin: origin}
	}
	return fix
}

// coarseOffsets aligns each point's clock with the first point's to within
// a delay or so, from the heads of the captures, so the first matching can
// pair packets within the window: the median time difference of the
// packets both heads hold.
func coarseOffsets(heads []*head) []int64 {
	offsets := make([]int64, len(heads))
	// The ICRC is left out of the key: a point that cut its frames has
	// none, and the first copy of a PSN at each point is what is paired.
	type prefixKey struct {
		flow   flowID
		psn    uint32
		opcode uint8
	}
	key := func(s *sighting) prefixKey { return prefixKey{s.flow, s.psn, s.opcode} }
	first := make(map[prefixKey]int64)
	for _, s := range heads[0].transport() {
		if _, ok := first[key(s)]; !ok {
			first[key(s)] = s.raw
		}
	}
	for p := 1; p < len(heads); p++ {
		var diffs []int64
		seen := make(map[prefixKey]bool)
		for _, s := range heads[p].transport() {
			if t0, ok := first[key(s)]; ok && !seen[key(s)] {
				seen[key(s)] = true
				diffs = append(diffs, s.raw-t0)
			}
		}
		if len(diffs) > 0 {
			sort.Slice(diffs, func(i, j int) bool { return diffs[i] < diffs[j] })
			offsets[p] = diffs[len(diffs)/2]
		}
	}
	return offsets
}

// psnBefore reports whether a comes before b in PSN order.
func psnBefore(a, b uint32) bool { return layers.PSN(a).Less(layers.PSN(b)) }
