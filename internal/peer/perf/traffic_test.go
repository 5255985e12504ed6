package perf

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
