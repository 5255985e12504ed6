package main

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestMTUHelpers(t *testing.T) {
	// The kernel's rule (rxe_net.c, eth_mtu_int_to_enum): the largest IB
	// MTU not above the netdev MTU less 80 bytes of headers. Below 336 the
	// kernel finds none; ibpeer still needs one and takes 256.
	for _, tt := range []struct{ netdev, ib int }{
		{1500, 1024}, {9000, 4096}, {65536, 4096}, {576, 256}, {300, 256}, {335, 256}, {336, 256},
		{2048, 1024}, {2100, 1024}, {2127, 1024}, {2128, 2048}, {4175, 2048}, {4176, 4096},
	} {
		assert.Equal(t, tt.ib, ibMTUBelow(tt.netdev), "netdev MTU %d", tt.netdev)
	}
	assert.Equal(t, 4096, activeMTU(netip.MustParseAddr("127.0.0.1")), "loopback")
	assert.Equal(t, 4096, activeMTU(netip.MustParseAddr("127.0.0.2")), "inside lo's 127.0.0.0/8")
	assert.Equal(t, 1024, activeMTU(netip.MustParseAddr("192.0.2.1")), "no interface: 1024")
	m, err := pathMTU(2048)
	require.NoError(t, err)
	assert.Equal(t, 2048, m.Bytes())
	_, err = pathMTU(1500)
	assert.EqualError(t, err, "MTU 1500: want 256, 512, 1024, 2048 or 4096")
}
