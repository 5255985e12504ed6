package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestTrafficTimes(t *testing.T) {
	ms := time.Millisecond
	// Four messages posted at 0, 1, 2, 3 ms: the first three complete 10 ms
	// after their post, the last one 2 ms after the third.
	tt := trafficTimes{posted: []time.Duration{0, ms, 2 * ms, 3 * ms}, completed: []time.Duration{10 * ms, 11 * ms, 12 * ms, 14 * ms}}
	total, best := tt.seconds()
	assert.InDelta(t, 0.014, total, 1e-12)
	// best (completed[j] - posted[i])/(j-i+1): i=0, j=3 gives 14/4 = 3.5 ms.
	assert.InDelta(t, 0.0035, best, 1e-12)
	row := tt.bwRow(125000, 4, 4, false)
	assert.InDelta(t, 125000*4*8/0.014/1e9, row.AvgGbps, 1e-9)
	assert.InDelta(t, 125000*8/0.0035/1e9, row.PeakGbps, 1e-9)
	assert.InDelta(t, 4/0.014/1e6, row.MsgRate, 1e-12)
	mb := tt.bwRow(1<<20, 4, 4, true)
	assert.InDelta(t, 4/0.014, mb.AvgGbps, 1e-9, "MB/s")

	// A second run appended starts where the first ended.
	tt.add(trafficTimes{posted: []time.Duration{100 * ms, 101 * ms}, completed: []time.Duration{105 * ms, 106 * ms}})
	assert.Equal(t, []time.Duration{0, ms, 2 * ms, 3 * ms, 14 * ms, 15 * ms}, tt.posted)
	assert.Equal(t, []time.Duration{10 * ms, 11 * ms, 12 * ms, 14 * ms, 19 * ms, 20 * ms}, tt.completed)

	var empty trafficTimes
	total, best = empty.seconds()
	assert.Zero(t, total)
	assert.Zero(t, best)
	assert.Equal(t, perfBWRow{Bytes: 8, Iterations: 0}, empty.bwRow(8, 0, 0, false))
}

func TestPatternAndDiff(t *testing.T) {
	a, b := make([]byte, 1001), make([]byte, 1001)
	fillPattern(a, patternSeed(0, 1))
	fillPattern(b, patternSeed(0, 1))
	assert.Equal(t, a, b)
	assert.Equal(t, -1, firstDiff(a, b))
	fillPattern(b, patternSeed(1, 1))
	assert.NotEqual(t, a, b)
	b = append([]byte(nil), a...)
	b[777] ^= 1
	assert.Equal(t, 777, firstDiff(b, a))
	assert.Equal(t, 10, firstDiff(a[:10], a))
}
