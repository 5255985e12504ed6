package craft_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
)

// TestCongestionCorpus checks what the DCQCN model wrote against its own
// rules, frame by frame: CNPs no closer than the receiver's interval, each
// answering the CE frame just before it; each cut by α/2 of the rate it
// found; the first frame at the new rate the first one sent at or after the
// cut, and the gap after it the new rate's.
func TestCongestionCorpus(t *testing.T) {
	for _, c := range craft.CongestionCorpus() {
		t.Run(c.Name, func(t *testing.T) {
			r, err := c.Build()
			require.NoError(t, err)
			fr := r.Trace.Frames
			require.Len(t, fr, r.DataFrames+r.VictimFrames+len(r.CNPs))
			t0 := fr[0].Time
			at := func(n int) time.Duration { return fr[n-1].Time.Sub(t0) }
			flow := c.Config.Responder.QPN
			if flow == 0 {
				flow = craft.DefaultResponder.QPN
			}
			isFlow := func(n int) bool { return fr[n-1].Info.DestQP == flow && fr[n-1].Info.Note != "CNP" }
			require.GreaterOrEqual(t, len(r.CNPs), 3)
			ce := 0
			for _, f := range r.Trace.Findings {
				if f.Kind == craft.FindingECNCE {
					ce++
					assert.True(t, isFlow(f.Frame), "only the flow is marked")
					assert.True(t, at(f.Frame) >= c.MarkFrom && at(f.Frame) < c.MarkUntil, "frame %d marked outside the window", f.Frame)
				}
			}
			assert.Equal(t, r.CEFrames, ce)
			for i, x := range r.CNPs {
				assert.Equal(t, x.At, at(x.Frame), "CNP %d time", i)
				if i > 0 {
					assert.GreaterOrEqual(t, x.At-r.CNPs[i-1].At, c.CNPInterval, "CNP %d spacing", i)
				}
				assert.InDelta(t, math.Max(x.RateBefore*(1-x.AlphaBefore/2), 1e6), x.RateAfter, 1e-6)
				require.NotZero(t, x.FirstSlow)
				assert.GreaterOrEqual(t, at(x.FirstSlow), x.Cut)
				prev := x.FirstSlow - 1
				for !isFlow(prev) {
					prev--
				}
				assert.Less(t, at(prev), x.Cut, "CNP %d: frame %d, before the cut, is the last at the old rate", i, prev)
				next := x.FirstSlow + 1
				for !isFlow(next) {
					next++
				}
				gap := at(next) - at(x.FirstSlow)
				assert.InDelta(t, float64(len(fr[x.FirstSlow-1].Data)*8)/x.RateAfter*1e9, float64(gap), 1, "CNP %d: the gap after frame %d", i, x.FirstSlow)
			}
		})
	}
}
