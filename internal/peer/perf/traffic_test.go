package perf

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTrafficTimes(t *testing.T) {
	ms := time.Millisecond
	// Four messages posted at 0, 1, 2, 3 ms: the first three complete 10 ms
	// after their post, the last one 2 ms after the third.
	tt := Times{Posted: []time.Duration{0, ms, 2 * ms, 3 * ms}, Completed: []time.Duration{10 * ms, 11 * ms, 12 * ms, 14 * ms}}
	total, best := tt.Seconds()
	assert.InDelta(t, 0.014, total, 1e-12)
	// best (completed[j] - posted[i])/(j-i+1): i=0, j=3 gives 14/4 = 3.5 ms.
	assert.InDelta(t, 0.0035, best, 1e-12)
	row := tt.BWRow(125000, 4, 4, false)
	assert.InDelta(t, 125000*4*8/0.014/1e9, row.AvgGbps, 1e-9)
	assert.InDelta(t, 125000*8/0.0035/1e9, row.PeakGbps, 1e-9)
	assert.InDelta(t, 4/0.014/1e6, row.MsgRate, 1e-12)
	mb := tt.BWRow(1<<20, 4, 4, true)
	assert.InDelta(t, 4/0.014, mb.AvgGbps, 1e-9, "MB/s")

	// A second run appended starts where the first ended.
	tt.Add(Times{Posted: []time.Duration{100 * ms, 101 * ms}, Completed: []time.Duration{105 * ms, 106 * ms}})
	assert.Equal(t, []time.Duration{0, ms, 2 * ms, 3 * ms, 14 * ms, 15 * ms}, tt.Posted)
	assert.Equal(t, []time.Duration{10 * ms, 11 * ms, 12 * ms, 14 * ms, 19 * ms, 20 * ms}, tt.Completed)

	var empty Times
	total, best = empty.Seconds()
	assert.Zero(t, total)
	assert.Zero(t, best)
	assert.Equal(t, BWRow{Bytes: 8, Iterations: 0}, empty.BWRow(8, 0, 0, false))
}

func TestPatternAndDiff(t *testing.T) {
	a, b := make([]byte, 1001), make([]byte, 1001)
	FillPattern(a, PatternSeed(0, 1))
	FillPattern(b, PatternSeed(0, 1))
	assert.Equal(t, a, b)
	assert.Equal(t, -1, FirstDiff(a, b))
	FillPattern(b, PatternSeed(1, 1))
	assert.NotEqual(t, a, b)
	b = append([]byte(nil), a...)
	b[777] ^= 1
	assert.Equal(t, 777, FirstDiff(b, a))
	assert.Equal(t, 10, FirstDiff(a[:10], a))
}

// quadraticBest is perftest's opt_delta as Seconds computed it before it
// kept a hull: every pair i ≤ j.
func quadraticBest(p, c []time.Duration) time.Duration {
	n := min(len(p), len(c))
	best := c[0] - p[0]
	for i := range n {
		for j := i; j < n; j++ {
			if d := (c[j] - p[i]) / time.Duration(j-i+1); d < best {
				best = d
			}
		}
	}
	return best
}

func TestTimesSecondsMatchesQuadratic(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	tests := []struct {
		name        string
		n, maxGap   int
		lat, jitter time.Duration
		unordered   bool // completions in any order relative to posts
	}{
		{"one", 1, 10, 5, 3, false},
		{"steady", 50, 2, 100, 1, false},
		{"bursty ns", 400, 1000, 2000, 5000, false},
		{"depth 1 ms", 300, 1_000_000, 3_000_000, 2_000_000, false},
		{"equal stamps", 200, 1, 0, 2, false},
		{"arbitrary", 300, 1 << 20, 1 << 20, 1 << 30, true},
		{"long seconds", 2000, 50_000_000, 1_000_000_000, 3_000_000_000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 20 {
				p := make([]time.Duration, tc.n)
				c := make([]time.Duration, tc.n+round%2) // one more completion sometimes: n is the shorter
				var at time.Duration
				for i := range p {
					at += time.Duration(rng.IntN(tc.maxGap + 1))
					p[i] = at
				}
				for j := range c {
					if tc.unordered {
						c[j] = time.Duration(rng.Int64N(int64(tc.jitter))) - tc.jitter/4
						continue
					}
					c[j] = p[min(j, tc.n-1)] + tc.lat + time.Duration(rng.Int64N(int64(tc.jitter)+1))
					if j > 0 {
						c[j] = max(c[j], c[j-1]) // completions in their global order
					}
				}
				tt := Times{Posted: p, Completed: c}
				total, best := tt.Seconds()
				want := quadraticBest(p, c)
				require.Equal(t, want.Seconds(), best, "round %d", round)
				require.Equal(t, (c[tc.n-1] - p[0]).Seconds(), total, "round %d", round)
			}
		})
	}
}

func BenchmarkTimesSeconds(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := PeakMax
	p, c := make([]time.Duration, n), make([]time.Duration, n)
	var at time.Duration
	for i := range p {
		at += time.Duration(rng.IntN(2000))
		p[i] = at
		c[i] = at + 50_000 + time.Duration(rng.IntN(10_000))
		if i > 0 {
			c[i] = max(c[i], c[i-1])
		}
	}
	tt := Times{Posted: p, Completed: c}
	for b.Loop() {
		tt.Seconds()
	}
}
