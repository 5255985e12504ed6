package decode

import (
	"math/bits"
	"slices"
	"time"
)

// Histogram keeps a distribution of durations in bounded memory: the first
// Exact samples exactly, then log-linear buckets (16 per power of two, a
// relative error under 4.5%). Min, max, count and sum stay exact. The zero
// value keeps LatencyExact samples exactly, so every view of the same
// samples (-z latency, -z conv,qp, their JSON, ibtui) gives the same
// percentiles.
type Histogram struct {
	// Exact is how many samples are kept exactly before bucketing (default
	// LatencyExact).
	Exact   int
	samples []time.Duration
	buckets []uint32
	count   uint64
	sum     time.Duration
	min     time.Duration
	max     time.Duration
}

// LatencyExact is how many samples a Histogram keeps exactly by default:
// 8 KiB per connection (more made the analysis of many connections slower
// by a fifth, their samples no longer in cache).
const LatencyExact = 1024

const (
	histSub     = 16 // buckets per power of two
	histSubBits = 4
	histBuckets = 64 * histSub
)

// Add records d (negative durations count as 0).
func (h *Histogram) Add(d time.Duration) {
	d = max(d, 0)
	if h.count == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.count++
	h.sum += d
	if h.buckets == nil {
		limit := h.Exact
		if limit <= 0 {
			limit = LatencyExact
		}
		if len(h.samples) < limit {
			h.samples = append(h.samples, d)
			return
		}
		h.buckets = make([]uint32, histBuckets)
		for _, s := range h.samples {
			h.buckets[histIndex(s)]++
		}
		h.samples = nil
	}
	h.buckets[histIndex(d)]++
}

// histIndex maps a duration to its bucket: values below 16 ns get a bucket
// each, larger ones 16 buckets per power of two.
func histIndex(d time.Duration) int {
	u := uint64(d)
	if u < histSub {
		return int(u)
	}
	e := bits.Len64(u) - 1 - histSubBits // shift that leaves 5 significant bits
	return (e+1)*histSub + int(u>>uint(e)&(histSub-1))
}

// histValue is the middle of bucket i.
func histValue(i int) time.Duration {
	if i < histSub {
		return time.Duration(i)
	}
	e := i/histSub - 1
	lo := uint64(histSub+i%histSub) << uint(e)
	return time.Duration(lo + (uint64(1)<<uint(e))/2)
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.count }

// Min, Max and Mean are exact.
func (h *Histogram) Min() time.Duration { return h.min }

// Max is the largest sample.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the average sample.
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return h.sum / time.Duration(h.count)
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) by the nearest-rank method,
// the one percentile definition of every ibwire view: the smallest sample
// with at least q of all samples at or below it (rank ⌈q·n⌉ of the n
// sorted samples). It is exact while the samples are kept, else the middle
// of the bucket that holds that rank.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	rank := uint64(q*float64(h.count) + 0.999999999)
	rank = min(max(rank, 1), h.count)
	if h.buckets == nil {
		s := slices.Clone(h.samples)
		slices.Sort(s)
		return s[rank-1]
	}
	var seen uint64
	for i, n := range h.buckets {
		seen += uint64(n)
		if seen >= rank {
			return min(max(histValue(i), h.min), h.max)
		}
	}
	return h.max
}

// LatencyStat gathers request latencies by operation (-z latency): READ
// request to last response, atomic to ATOMIC ACK, SEND and WRITE to the ACK
// that covers them, and the RTT of every ACK.
type LatencyStat struct {
	ops [NumOpClasses]Histogram
	all Histogram
	rtt Histogram
}

// NewLatencyStat returns a table that keeps up to LatencyExact samples
// exactly per row.
func NewLatencyStat() *LatencyStat { return &LatencyStat{} }

// Latency is one request answered.
type Latency struct {
	Op                OpClass
	D                 time.Duration
	Request, Response uint32 // frames
	Conv              uint32
}

// AddLatency counts one answered request.
func (s *LatencyStat) AddLatency(l Latency) {
	s.ops[l.Op%NumOpClasses].Add(l.D)
	s.all.Add(l.D)
}

// Add counts the ACK RTT of p, if it has one.
func (s *LatencyStat) Add(p *Packet) {
	if a := &p.Analysis; a.Info&InfoAckRTT != 0 {
		s.rtt.Add(a.AckRTT)
	}
}

// LatencyRow is one row of -z latency.
type LatencyRow struct {
	Name string
	*Histogram
}

// Rows returns a row per operation seen, then "all", then "ACK RTT".
func (s *LatencyStat) Rows() []LatencyRow {
	var out []LatencyRow
	for op := OpClassSend; op < NumOpClasses; op++ {
		if s.ops[op].Count() > 0 {
			out = append(out, LatencyRow{op.String(), &s.ops[op]})
		}
	}
	return append(out, LatencyRow{"all requests", &s.all}, LatencyRow{"ACK RTT", &s.rtt})
}
