package output_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// TestRateGraphPFCBands: the pauses of a drawn direction's priority (and
// 802.3x PAUSEs) are shaded, those of other priorities and those whose
// durations are unknown are not.
func TestRateGraphPFCBands(t *testing.T) {
	const us = time.Microsecond
	rows := []decode.DCQCNRow{{Priority: 3, Interval: 100 * us, Bins: []decode.DCQCNBin{
		{Start: 0, Packets: 10, Bytes: 12500}, {Start: 100 * us, Packets: 5, Bytes: 6250}}}}
	pause := []decode.PFCInterval{{Start: 20 * us, End: 60 * us}}
	tests := []struct {
		name  string
		pfc   []decode.PFCRow
		bands int
	}{
		{"its priority", []decode.PFCRow{{Priority: 3, DurationsKnown: true, Intervals: pause}}, 1},
		{"another priority", []decode.PFCRow{{Priority: 5, DurationsKnown: true, Intervals: pause}}, 0},
		{"PAUSE: every priority", []decode.PFCRow{{Priority: decode.PFCAll, DurationsKnown: true, Intervals: pause}}, 1},
		{"no link speed", []decode.PFCRow{{Priority: 3, Intervals: pause}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, output.NewRateGraph().WriteSVG(&b, "t", rows, tt.pfc))
			assert.Equal(t, tt.bands, strings.Count(b.String(), "<title>PFC pause"))
			assert.Equal(t, tt.bands > 0, strings.Contains(b.String(), "shaded: PFC pause"))
			// 12500 bytes in 100 µs: 1000 Mb/s, the axis' top.
			assert.Contains(t, b.String(), ">1000</text>")
		})
	}
}
