package perf

// The traffic loop shared by ibpeer write|read|send|atomic and ibpeer
// perftest: work requests posted up to a TX depth per QP, completions
// polled from one CQ, a timestamp per post and per completion (perftest's
// tposted and tcompleted), and the figures perftest derives from them.
// Also the verification patterns.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ibwire/ibwire/endpoint"
)

// Traffic is one run of the loop.
type Traffic struct {
	CQ    *endpoint.CQ                   // the send CQ of every QP in QPs
	QPs   []*endpoint.QP                 // driven round-robin
	Depth int                            // outstanding WRs per QP
	Iters int                            // WRs per QP
	Stall time.Duration                  // fail when no completion arrives for this long
	Next  func(q, i int) endpoint.SendWR // the i-th WR of QP q; the loop sets ID
}

// Times holds a run's timestamps, measured from its start: posted
// and completed in the global order of posts and of completions (what
// perftest keeps), and each WR's own post-to-completion latency, indexed
// q·iters+i.
type Times struct {
	Posted, Completed []time.Duration
	Latency           []time.Duration
}

// WCError is a completion with an error status.
type WCError struct {
	QP, WR int // the QP's index and the work request's
	WC     endpoint.WC
}

func (e *WCError) Error() string {
	s := fmt.Sprintf("QP %d (QPN %#06x), work request %d: completed %v", e.QP, e.WC.QPN, e.WR, e.WC.Status)
	if e.WC.Vendor != "" {
		s += " (" + e.WC.Vendor + ")"
	}
	return s
}

// ErrStall says that completions stopped coming.
var ErrStall = errors.New("no completion")

// RunTraffic posts cfg.Iters WRs on each QP, at most cfg.Depth outstanding
// per QP, and returns when all completed; the first completion with an
// error status, a failed post or a stall ends it with an error.
func RunTraffic(ctx context.Context, cfg Traffic) (Times, error) {
	nq := len(cfg.QPs)
	total := nq * cfg.Iters
	t := Times{
		Posted:    make([]time.Duration, 0, total),
		Completed: make([]time.Duration, 0, total),
		Latency:   make([]time.Duration, total),
	}
	posted, done := make([]int, nq), make([]int, nq)
	postAt := make([]time.Duration, total)
	wcs := make([]endpoint.WC, 64)
	stall := cfg.Stall
	if stall <= 0 {
		stall = 10 * time.Second
	}
	timer := time.NewTimer(stall)
	defer timer.Stop()
	start := time.Now()
	for len(t.Completed) < total {
		for q := range nq {
			for posted[q] < cfg.Iters && posted[q]-done[q] < cfg.Depth {
				i := posted[q]
				wr := cfg.Next(q, i)
				wr.ID = uint64(q)<<32 | uint64(i)
				now := time.Since(start)
				postAt[q*cfg.Iters+i] = now
				t.Posted = append(t.Posted, now)
				if err := cfg.QPs[q].PostSend(&wr); err != nil {
					return t, fmt.Errorf("QP %d, work request %d: %w", q, i, err)
				}
				posted[q]++
			}
		}
		n := cfg.CQ.Poll(wcs)
		if n == 0 {
			select {
			case <-cfg.CQ.Notify():
			case <-ctx.Done():
				return t, ctx.Err()
			case <-timer.C:
				return t, fmt.Errorf("%w for %v (is the peer still there?): %d of %d work requests completed", ErrStall, stall, len(t.Completed), total)
			}
			continue
		}
		now := time.Since(start)
		for _, wc := range wcs[:n] {
			q, i := int(wc.ID>>32), int(uint32(wc.ID))
			if wc.Status != endpoint.StatusSuccess {
				return t, &WCError{QP: q, WR: i, WC: wc}
			}
			if q >= nq || i >= cfg.Iters {
				return t, fmt.Errorf("completion for unknown work request %#x", wc.ID)
			}
			done[q]++
			t.Completed = append(t.Completed, now)
			t.Latency[q*cfg.Iters+i] = now - postAt[q*cfg.Iters+i]
		}
		timer.Reset(stall)
	}
	if err := cfg.CQ.Err(); err != nil {
		return t, err
	}
	return t, nil
}

// add appends r as if it had started the moment t's last completion came:
// the time between runs (verification traffic) is not counted.
func (t *Times) Add(r Times) {
	if len(r.Posted) == 0 {
		return
	}
	var off time.Duration
	if n := len(t.Completed); n > 0 {
		off = t.Completed[n-1] - r.Posted[0]
	} else {
		off = -r.Posted[0]
	}
	for _, p := range r.Posted {
		t.Posted = append(t.Posted, p+off)
	}
	for _, c := range r.Completed {
		t.Completed = append(t.Completed, c+off)
	}
}

// PeakMax is the largest run whose peak perftest computes (its -N help:
// "default with peak up to iters=20000"); above it the peak is the average.
const PeakMax = 20000

// seconds returns the run's duration as perftest takes it (last completion
// minus first post) and the best time per message: the smallest
// (tcompleted[j] − tposted[i]) / (j − i + 1) over i ≤ j, perftest's
// opt_delta.
//
// That ratio is the slope from point (i, posted[i]) to point
// (j+1, completed[j]), so for each j the best i is where the line from
// (j+1, completed[j]) touches the upper hull of the posts 0..j: the hull
// grows by one post per j and the touching point is found by bisection,
// O(n log n) in all where trying every pair was O(n²). The pair found is
// divided as perftest divides it, so the figure is the same.
func (t *Times) Seconds() (total, best float64) {
	n := min(len(t.Posted), len(t.Completed))
	if n == 0 {
		return 0, 0
	}
	total = (t.Completed[n-1] - t.Posted[0]).Seconds()
	if n > PeakMax {
		return total, total / float64(n)
	}
	return total, bestPerMessage(t.Posted[:n], t.Completed[:n]).Seconds()
}

// bestPerMessage is the smallest (c[j] − p[i]) / (j − i + 1) over
// i ≤ j < len(c), len(p) == len(c). Slopes are compared exactly, by cross
// products in int64: nanoseconds up to 10⁵ s times indices up to PeakMax
// stay far below its range.
func bestPerMessage(p, c []time.Duration) time.Duration {
	type pt struct{ x, y int64 }
	// above reports whether the slope a→b is greater than the slope c→d
	// (every x increasing along its pair).
	above := func(a, b, c, d pt) bool {
		return (b.y-a.y)*(d.x-c.x) > (d.y-c.y)*(b.x-a.x)
	}
	hull := make([]pt, 0, 64)
	bi, bj := 0, 0
	for j := range c {
		a := pt{int64(j), int64(p[j])}
		for len(hull) >= 2 && !above(hull[len(hull)-2], hull[len(hull)-1], hull[len(hull)-1], a) {
			hull = hull[:len(hull)-1] // the last vertex is on or below the chord: no longer on the upper hull
		}
		hull = append(hull, a)
		q := pt{int64(j + 1), int64(c[j])}
		// the slope hull[k]→q falls while the next vertex lies above the
		// line hull[k]→q, that is while the edge k→k+1 is steeper than k+1→q.
		lo, hi := 0, len(hull)-1
		for lo < hi {
			m := (lo + hi) / 2
			if above(hull[m], hull[m+1], hull[m+1], q) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		i := int(hull[lo].x)
		// keep the pair whose ratio is smaller: (c[j]−p[i])/(j−i+1) < best.
		if above(pt{int64(bi), int64(p[bi])}, pt{int64(bj + 1), int64(c[bj])}, pt{int64(i), int64(p[i])}, q) {
			bi, bj = i, j
		}
	}
	return (c[bj] - p[bi]) / time.Duration(bj-bi+1)
}

// bwRow turns a run of messages of size bytes into perftest's table row,
// in Gb/s or (mbps) MB/s; iters is what the row prints (per QP, as
// perftest), msgs the messages that moved in all.
func (t *Times) BWRow(size uint64, iters, msgs int, mbps bool) BWRow {
	total, best := t.Seconds()
	avg, rate := BWFigures(size, uint64(msgs), total, mbps)
	var peak float64
	if best > 0 {
		peak, _ = BWFigures(size, 1, best, mbps)
	}
	return BWRow{Bytes: size, Iterations: uint64(iters), PeakGbps: peak, AvgGbps: avg, MsgRate: rate}
}

// latencyMicros returns the per-WR latencies in microseconds.
func (t *Times) LatencyMicros() []float64 {
	us := make([]float64, len(t.Latency))
	for i, d := range t.Latency {
		us[i] = float64(d) / float64(time.Microsecond)
	}
	return us
}

// FillPattern fills b with bytes that depend on seed (a PCG stream), so
// that every message of a verified run is different from the others.
func FillPattern(b []byte, seed uint64) {
	r := rand.NewPCG(seed, 0x1b1e)
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
}

// PatternSeed names message i of QP q: the seed of its FillPattern.
func PatternSeed(q, i int) uint64 { return uint64(q)<<32 | uint64(i) }

// FirstDiff returns the offset of the first byte where got and want differ,
// or -1.
func FirstDiff(got, want []byte) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}
