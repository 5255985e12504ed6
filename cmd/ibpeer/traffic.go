package main

// The traffic loop shared by ibpeer write|read|send|atomic and ibpeer
// perftest: work requests posted up to a TX depth per QP, completions
// polled from one CQ, a timestamp per post and per completion (perftest's
// tposted and tcompleted), and the figures perftest derives from them.
// Also the fault-injecting wire of --loss/--reorder/--dup, the recording
// wire of --pcap and the verification patterns.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ibwire/ibwire/endpoint"
)

// trafficConfig is one run of the loop.
type trafficConfig struct {
	cq    *endpoint.CQ                   // the send CQ of every QP in qps
	qps   []*endpoint.QP                 // driven round-robin
	depth int                            // outstanding WRs per QP
	iters int                            // WRs per QP
	stall time.Duration                  // fail when no completion arrives for this long
	next  func(q, i int) endpoint.SendWR // the i-th WR of QP q; the loop sets ID
}

// trafficTimes holds a run's timestamps, measured from its start: posted
// and completed in the global order of posts and of completions (what
// perftest keeps), and each WR's own post-to-completion latency, indexed
// q·iters+i.
type trafficTimes struct {
	posted, completed []time.Duration
	latency           []time.Duration
}

// wcError is a completion with an error status.
type wcError struct {
	q, i int
	wc   endpoint.WC
}

func (e *wcError) Error() string {
	s := fmt.Sprintf("QP %d (QPN %#06x), work request %d: completed %v", e.q, e.wc.QPN, e.i, e.wc.Status)
	if e.wc.Vendor != "" {
		s += " (" + e.wc.Vendor + ")"
	}
	return s
}

// errStall says that completions stopped coming.
var errStall = errors.New("no completion")

// runTraffic posts cfg.iters WRs on each QP, at most cfg.depth outstanding
// per QP, and returns when all completed; the first completion with an
// error status, a failed post or a stall ends it with an error.
func runTraffic(ctx context.Context, cfg trafficConfig) (trafficTimes, error) {
	nq := len(cfg.qps)
	total := nq * cfg.iters
	t := trafficTimes{
		posted:    make([]time.Duration, 0, total),
		completed: make([]time.Duration, 0, total),
		latency:   make([]time.Duration, total),
	}
	posted, done := make([]int, nq), make([]int, nq)
	postAt := make([]time.Duration, total)
	wcs := make([]endpoint.WC, 64)
	stall := cfg.stall
	if stall <= 0 {
		stall = 10 * time.Second
	}
	timer := time.NewTimer(stall)
	defer timer.Stop()
	start := time.Now()
	for len(t.completed) < total {
		for q := range nq {
			for posted[q] < cfg.iters && posted[q]-done[q] < cfg.depth {
				i := posted[q]
				wr := cfg.next(q, i)
				wr.ID = uint64(q)<<32 | uint64(i)
				now := time.Since(start)
				postAt[q*cfg.iters+i] = now
				t.posted = append(t.posted, now)
				if err := cfg.qps[q].PostSend(&wr); err != nil {
					return t, fmt.Errorf("QP %d, work request %d: %w", q, i, err)
				}
				posted[q]++
			}
		}
		n := cfg.cq.Poll(wcs)
		if n == 0 {
			select {
			case <-cfg.cq.Notify():
			case <-ctx.Done():
				return t, ctx.Err()
			case <-timer.C:
				return t, fmt.Errorf("%w for %v (is the peer still there?): %d of %d work requests completed", errStall, stall, len(t.completed), total)
			}
			continue
		}
		now := time.Since(start)
		for _, wc := range wcs[:n] {
			q, i := int(wc.ID>>32), int(uint32(wc.ID))
			if wc.Status != endpoint.StatusSuccess {
				return t, &wcError{q: q, i: i, wc: wc}
			}
			if q >= nq || i >= cfg.iters {
				return t, fmt.Errorf("completion for unknown work request %#x", wc.ID)
			}
			done[q]++
			t.completed = append(t.completed, now)
			t.latency[q*cfg.iters+i] = now - postAt[q*cfg.iters+i]
		}
		timer.Reset(stall)
	}
	if err := cfg.cq.Err(); err != nil {
		return t, err
	}
	return t, nil
}

// add appends r as if it had started the moment t's last completion came:
// the time between runs (verification traffic) is not counted.
func (t *trafficTimes) add(r trafficTimes) {
	if len(r.posted) == 0 {
		return
	}
	var off time.Duration
	if n := len(t.completed); n > 0 {
		off = t.completed[n-1] - r.posted[0]
	} else {
		off = -r.posted[0]
	}
	for _, p := range r.posted {
		t.posted = append(t.posted, p+off)
	}
	for _, c := range r.completed {
		t.completed = append(t.completed, c+off)
	}
}

// perfPeakMax is the largest run whose peak perftest computes (its -N help:
// "default with peak up to iters=20000"); above it the peak is the average.
const perfPeakMax = 20000

// seconds returns the run's duration as perftest takes it (last completion
// minus first post) and the best time per message: the smallest
// (tcompleted[j] − tposted[i]) / (j − i + 1) over i ≤ j, perftest's
// opt_delta.
func (t *trafficTimes) seconds() (total, best float64) {
	n := min(len(t.posted), len(t.completed))
	if n == 0 {
		return 0, 0
	}
	total = (t.completed[n-1] - t.posted[0]).Seconds()
	if n > perfPeakMax {
		return total, total / float64(n)
	}
	bestD := t.completed[0] - t.posted[0]
	for i := range n {
		for j := i; j < n; j++ {
			if d := (t.completed[j] - t.posted[i]) / time.Duration(j-i+1); d < bestD {
				bestD = d
			}
		}
	}
	return total, bestD.Seconds()
}

// bwRow turns a run of messages of size bytes into perftest's table row,
// in Gb/s or (mbps) MB/s; iters is what the row prints (per QP, as
// perftest), msgs the messages that moved in all.
func (t *trafficTimes) bwRow(size uint64, iters, msgs int, mbps bool) perfBWRow {
	total, best := t.seconds()
	avg, rate := perfBWFigures(size, uint64(msgs), total, mbps)
	var peak float64
	if best > 0 {
		peak, _ = perfBWFigures(size, 1, best, mbps)
	}
	return perfBWRow{Bytes: size, Iterations: uint64(iters), PeakGbps: peak, AvgGbps: avg, MsgRate: rate}
}

// latencyMicros returns the per-WR latencies in microseconds.
func (t *trafficTimes) latencyMicros() []float64 {
	us := make([]float64, len(t.latency))
	for i, d := range t.latency {
		us[i] = float64(d) / float64(time.Microsecond)
	}
	return us
}

// fillPattern fills b with bytes that depend on seed (a PCG stream), so
// that every message of a verified run is different from the others.
func fillPattern(b []byte, seed uint64) {
	r := rand.NewPCG(seed, 0x1b1e)
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
}

// firstDiff returns the offset of the first byte where got and want differ,
// or -1.
func firstDiff(got, want []byte) int {
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
