package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"time"
)

// Default safety cap: what a replay sends unless --top lifts it. 10,000
// packets/s and 100 Mb/s keep a mistaken command from flooding a link
// (tcpreplay's default, "as captured", can be line rate) while leaving room
// for every capture in pcaps/ to play at its own pace.
const (
	DefaultCapPPS  = 10000
	DefaultCapMbps = 100
)

// DefaultSpin is how close to a deadline the pacer stops sleeping. Go's
// timers wake a sleeper up to a millisecond late when the process has
// nothing else to wake for (a 50 µs sleep measured 1.03 ms at p50 on the
// 2-core test machine, a 1 ms sleep 1.08 ms), so the last 1.2 ms before each
// send are spent yielding in a loop: precise, at the price of one busy core
// while packets are less than that apart.
const DefaultSpin = 1200 * time.Microsecond

// PaceOptions say how fast frames go out. At most one of Speed, PPS, Mbps
// and Top applies, in that order of precedence reversed: Top, then Mbps,
// then PPS, then the captured timing scaled by Speed.
type PaceOptions struct {
	Speed float64 // multiply the captured rate (2 = twice as fast); 0 means 1
	PPS   float64 // fixed packet rate
	Mbps  float64 // fixed bit rate (frame bytes × 8)
	Top   bool    // as fast as possible, in batches; lifts the cap
	Loop  int     // play the frames this many times (0 means 1)

	// CapPPS and CapMbps are the safety cap (0: none); Top ignores them.
	CapPPS, CapMbps float64
	// Spin is how long before a deadline the pacer stops sleeping and
	// yields in a loop instead; 0 means DefaultSpin.
	Spin time.Duration
	// Batch is how many frames one Send gets under Top (0 means 64).
	Batch int
}

// Summary is what a paced run did.
type Summary struct {
	Packets, Bytes int64
	Skipped        int64 // frames the sender cannot carry, not sent
	Elapsed        time.Duration
	// AskedPPS is the rate the options asked for (captured: the capture's
	// own average rate times Speed; 0 for Top); AchievedPPS is measured
	// from the first send to the last.
	AskedPPS, AchievedPPS float64
	AchievedMbps          float64
	Capped                bool // the safety cap slowed the run down
	// Pacing error: how late each send was against its schedule (Paced
	// is false under Top, which has no schedule).
	Paced                          bool
	ErrP50, ErrP90, ErrP99, ErrMax time.Duration
}

// Write prints the summary the way tcpreplay's statistics read.
func (s *Summary) Write(w io.Writer) {
	fmt.Fprintf(w, "Actual: %d packets (%d bytes) sent in %.6f seconds\n", s.Packets, s.Bytes, s.Elapsed.Seconds())
	asked := "unpaced (--top)"
	if s.AskedPPS > 0 {
		asked = fmt.Sprintf("%.1f pps asked", s.AskedPPS)
	}
	fmt.Fprintf(w, "Rated: %.1f pps, %.3f Mb/s; %s", s.AchievedPPS, s.AchievedMbps, asked)
	if s.AskedPPS > 0 && s.AchievedPPS > 0 {
		fmt.Fprintf(w, " (%+.2f%%)", (s.AchievedPPS/s.AskedPPS-1)*100)
	}
	fmt.Fprintln(w)
	if s.Capped {
		fmt.Fprintf(w, "Capped: the safety cap slowed sending; --cap-pps/--cap-mbps raise it, --top lifts it\n")
	}
	if s.Paced {
		fmt.Fprintf(w, "Pacing error: p50 %v p90 %v p99 %v max %v\n", s.ErrP50, s.ErrP90, s.ErrP99, s.ErrMax)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "Skipped: %d frames the sender cannot carry\n", s.Skipped)
	}
}

// Play sends the selected frames of c that s accepts, paced by opts, and
// returns what it did. It stops early, with ctx's error, when ctx ends.
func Play(ctx context.Context, c *Capture, s Sender, opts PaceOptions) (Summary, error) {
	var frames []Frame
	var sum Summary
	for i := range c.Frames {
		f := &c.Frames[i]
		if !f.Selected {
			continue
		}
		if !s.Accepts(f) {
			sum.Skipped++
			continue
		}
		frames = append(frames, *f)
	}
	loops := max(opts.Loop, 1)
	sum.Skipped *= int64(loops)
	if len(frames) == 0 {
		return sum, errors.New("no frames to send")
	}
	sched := newSchedule(frames, opts)
	sum.AskedPPS = sched.askedPPS
	spin := opts.Spin
	if spin == 0 {
		spin = DefaultSpin
	}
	batch := 1
	if opts.Top {
		batch = opts.Batch
		if batch <= 0 {
			batch = 64
		}
	}
	lates := make([]time.Duration, 0, min(len(frames)*loops, 1<<20))
	start := time.Now()
	var first, last time.Time
	var lastBytes int
	for loop := 0; loop < loops; loop++ {
		for i := 0; i < len(frames); {
			if err := ctx.Err(); err != nil {
				sum.finish(start, first, last, lastBytes, lates)
				return sum, err
			}
			n := 1
			if opts.Top {
				n = min(batch, len(frames)-i)
			} else {
				due := start.Add(sched.next(&frames[i]))
				if wait := time.Until(due); wait > spin {
					time.Sleep(wait - spin)
				}
				for time.Now().Before(due) {
					runtime.Gosched()
				}
				if len(lates) < cap(lates) {
					lates = append(lates, time.Since(due))
				}
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			sent, err := s.Send(frames[i : i+n])
			for _, f := range frames[i : i+sent] {
				sum.Packets++
				sum.Bytes += int64(len(f.Data))
				lastBytes = len(f.Data)
			}
			last = now
			if err != nil {
				sum.finish(start, first, last, lastBytes, lates)
				return sum, err
			}
			i += n
		}
	}
	sum.Capped = sched.capped
	sum.finish(start, first, last, lastBytes, lates)
	return sum, nil
}

// finish works out the rates and the pacing-error percentiles.
func (s *Summary) finish(start, first, last time.Time, lastBytes int, lates []time.Duration) {
	s.Elapsed = time.Since(start)
	if s.Packets > 1 && last.After(first) {
		// Rates over the intervals between sends: n packets span n-1 gaps.
		span := last.Sub(first).Seconds()
		s.AchievedPPS = float64(s.Packets-1) / span
		s.AchievedMbps = float64(s.Bytes-int64(lastBytes)) * 8 / span / 1e6
	}
	if len(lates) == 0 {
		return
	}
	s.Paced = true
	slices.Sort(lates)
	pct := func(p float64) time.Duration {
		return lates[min(len(lates)-1, int(math.Ceil(p*float64(len(lates))))-1)]
	}
	s.ErrP50, s.ErrP90, s.ErrP99, s.ErrMax = pct(0.50), pct(0.90), pct(0.99), lates[len(lates)-1]
}

// schedule hands out each frame's due time, as an offset from the start.
type schedule struct {
	opts     PaceOptions
	t0       time.Time     // first frame's capture time
	base     time.Duration // offset of the current loop (captured pacing)
	loopSpan time.Duration // one loop's captured length, scaled
	speed    float64
	n        int // frames handed out
	bits     float64
	prev     time.Duration // the previous frame's due time
	prevBits float64
	capped   bool
	askedPPS float64
	perLoop  int
}

func newSchedule(frames []Frame, opts PaceOptions) *schedule {
	s := &schedule{opts: opts, t0: frames[0].Time, speed: opts.Speed, perLoop: len(frames), prev: -1}
	if s.speed <= 0 {
		s.speed = 1
	}
	span := frames[len(frames)-1].Time.Sub(s.t0)
	if len(frames) > 1 {
		// A loop starts one average gap after the previous one ended.
		span += span / time.Duration(len(frames)-1)
	}
	s.loopSpan = time.Duration(float64(span) / s.speed)
	switch {
	case opts.Top:
	case opts.Mbps > 0:
		var bytes int
		for _, f := range frames {
			bytes += len(f.Data)
		}
		s.askedPPS = opts.Mbps * 1e6 / 8 / (float64(bytes) / float64(len(frames)))
	case opts.PPS > 0:
		s.askedPPS = opts.PPS
	case s.loopSpan > 0:
		s.askedPPS = float64(len(frames)) / s.loopSpan.Seconds()
	}
	return s
}

// next returns the due time of f, the next frame in sending order.
func (s *schedule) next(f *Frame) time.Duration {
	var due time.Duration
	bits := float64(len(f.Data) * 8)
	switch {
	case s.opts.Mbps > 0:
		due = time.Duration(s.bits / (s.opts.Mbps * 1e6) * 1e9)
	case s.opts.PPS > 0:
		due = time.Duration(float64(s.n) / s.opts.PPS * 1e9)
	default:
		if s.n > 0 && s.n%s.perLoop == 0 {
			s.base += s.loopSpan
		}
		due = s.base + time.Duration(float64(f.Time.Sub(s.t0))/s.speed)
	}
	// The cap is a least spacing after the previous frame.
	if s.prev >= 0 && !s.opts.Top {
		var gap time.Duration
		if s.opts.CapPPS > 0 {
			gap = time.Duration(1e9 / s.opts.CapPPS)
		}
		if s.opts.CapMbps > 0 {
			gap = max(gap, time.Duration(s.prevBits/(s.opts.CapMbps*1e6)*1e9))
		}
		if earliest := s.prev + gap; due < earliest {
			// Within a rounding of the asked rate is not the cap's doing.
			if earliest-due > time.Microsecond {
				s.capped = true
			}
			due = earliest
		}
	}
	s.n++
	s.bits += bits
	s.prev, s.prevBits = due, bits
	return due
}
