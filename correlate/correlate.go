package correlate

import (
	"errors"
	"fmt"
	"io"
	"os"
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

// coarsePrefix is how many transport packets of each capture the coarse
// clock alignment reads before the first pass.
const coarsePrefix = 1 << 16

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
	// packet or not) in the second pass, in the order of the corrected
	// clocks, with its point and its time (corrected unless NoClockFix): a
	// merged capture, one interface per point. Its Data is valid during the
	// call only.
	Merge func(point int, p capture.Packet) error
	// Packet, when set, receives every packet of the second pass once its
	// fate is known: at the latest when the matching window has passed, or,
	// for one missing downstream, when its retransmission shows or its PSN
	// falls out of reach. The Sighting is reused after the call.
	Packet func(*Sighting)
	// Frames makes each Sighting carry the frame of the first point that saw
	// the packet, which costs a copy of up to psnSpan (1024) frames per flow.
	Frames bool
}

// Run correlates the captures of cfg.Points and reports where each packet
// was seen, lost or dropped and how long each hop took.
func Run(cfg Config) (*Report, error) {
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
	coarse, err := coarseOffsets(cfg)
	if err != nil {
		return nil, err
	}
	// Pass 1: match on coarsely aligned clocks, estimate the clocks.
	m1 := newMatcher(cfg, nil, linearClocks(coarse))
	m1.sample = firstPassSample(cfg.Points)
	if err := m1.run(); err != nil {
		return nil, err
	}
	clocks := m1.estimateClocks()
	// Pass 2: match on corrected clocks and attribute.
	rep := &Report{Window: cfg.Window, ClockFixed: !cfg.NoClockFix, Points: make([]PointReport, n)}
	for i, p := range cfg.Points {
		rep.Points[i] = PointReport{Name: p.Name, File: p.Path, Clock: clocks[i]}
	}
	m2 := newMatcher(cfg, rep, clockFixes(clocks, m1.origin))
	m2.inheritPaths(m1)
	if err := m2.run(); err != nil {
		return nil, err
	}
	m2.report()
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
// a delay or so, from the first packets of each capture, so the first pass
// can match within the window: the median time difference of the packets
// both prefixes hold.
func coarseOffsets(cfg Config) ([]int64, error) {
	offsets := make([]int64, len(cfg.Points))
	ref, err := openSource(0, cfg.Points[0], cfg.Decode, nil)
	if err != nil {
		return nil, err
	}
	type prefixKey struct {
		flow      flowID
		psn, icrc uint32
		opcode    uint8
	}
	key := func(s *sighting) prefixKey { return prefixKey{s.flow, s.psn, s.icrc, s.opcode} }
	first := make(map[prefixKey]int64)
	var s sighting
	for i := 0; i < coarsePrefix; i++ {
		if err := ref.next(&s); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			ref.close()
			return nil, err
		}
		if _, ok := first[key(&s)]; !ok {
			first[key(&s)] = s.raw
		}
	}
	ref.close()
	for p := 1; p < len(cfg.Points); p++ {
		src, err := openSource(p, cfg.Points[p], cfg.Decode, nil)
		if err != nil {
			return nil, err
		}
		var diffs []int64
		seen := make(map[prefixKey]bool)
		for i := 0; i < coarsePrefix; i++ {
			if err := src.next(&s); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				src.close()
				return nil, err
			}
			if t0, ok := first[key(&s)]; ok && !seen[key(&s)] {
				seen[key(&s)] = true
				diffs = append(diffs, s.raw-t0)
			}
		}
		src.close()
		if len(diffs) > 0 {
			sort.Slice(diffs, func(i, j int) bool { return diffs[i] < diffs[j] })
			offsets[p] = diffs[len(diffs)/2]
		}
	}
	return offsets, nil
}

// sampleBytes is how much capture the first pass follows in full: beyond
// it, one packet in so many (chosen by ICRC, so the same packets at every
// point) is enough for the clocks, and the first pass costs less.
const sampleBytes = 16 << 20

// firstPassSample is the first pass's sampling for the largest capture.
func firstPassSample(points []Point) uint32 {
	var largest int64
	for _, p := range points {
		if st, err := os.Stat(p.Path); err == nil {
			largest = max(largest, st.Size())
		}
	}
	return uint32(min(1+largest/sampleBytes, 16))
}

// psnBefore reports whether a comes before b in PSN order.
func psnBefore(a, b uint32) bool { return layers.PSN(a).Diff(layers.PSN(b)) < 0 }
