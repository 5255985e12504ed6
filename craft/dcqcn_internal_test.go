package craft

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestReactionPoint follows the rate by hand through the paper's rules: a
// cut by α/2 with α = 1, then five fast-recovery steps halving the
// distance to the target, then additive increase (timer only), and with
// both counters past F, hyper increase.
func TestReactionPoint(t *testing.T) {
	const us = time.Microsecond
	tests := []struct {
		name  string
		p     DCQCN
		cuts  int   // CNPs at time 0
		bytes []int // sent before each timer step (0: none)
		want  []float64
	}{
		{"timer only", DCQCN{LineRate: 1000, MinRate: 1, IncreaseTimer: 10 * us, AlphaTimer: time.Hour, AI: 10, HAI: 100, ByteCounter: 1 << 40},
			1, make([]int, 7),
			// 500 → fast recovery towards 1000 five times, then additive: Rt 1010 capped at 1000.
			[]float64{750, 875, 937.5, 968.75, 984.375, 992.1875, 996.09375}},
		{"hyper", DCQCN{LineRate: 10000, MinRate: 1, IncreaseTimer: 10 * us, AlphaTimer: time.Hour, AI: 10, HAI: 100, ByteCounter: 100, FastRecovery: 1},
			2, []int{100, 100, 100},
			// Two cuts: Rt 5000, Rc 2500 (α stays 1). Each step: a byte
			// event (j) then a timer event (i). F = 1.
			// j=1,i=0: max<1? no (1): additive Rt 5000+10, Rc (5010+2500)/2 = 3755
			// i=1,j=1: min>1? no: additive Rt 5020, Rc 4387.5
			// j=2,i=1: additive Rt 5030, Rc 4708.75; i=2,j=2: hyper Rt 5030+200, Rc 4969.375
			// j=3,i=2: hyper Rt 5230+200, Rc 5199.6875; i=3: Rt 5430+300, Rc 5464.84375
			[]float64{4387.5, 4969.375, 5464.84375}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReactionPoint(tt.p.withDefaults())
			rate := tt.p.LineRate
			for range tt.cuts {
				r.cut(0)
				rate /= 2
				assert.Equal(t, rate, r.rc, "α = 1: the rate halves")
				assert.InDelta(t, 1, r.alpha, 1e-12, "α = (1-g)·1 + g")
			}
			for i, want := range tt.want {
				r.sent(tt.bytes[i])
				r.advance(time.Duration(i+1) * 10 * us)
				assert.Equal(t, want, r.rc, "step %d", i+1)
			}
		})
	}
}

// TestReactionPointAlphaDecays: with no CNP for n periods of K, α = (1-g)^n.
func TestReactionPointAlphaDecays(t *testing.T) {
	r := newReactionPoint(DCQCN{IncreaseTimer: time.Hour, AlphaTimer: 55 * time.Microsecond}.withDefaults())
	r.cut(0)
	r.advance(55 * time.Microsecond) // the cut's own period: α stays
	assert.Equal(t, 1.0, r.alpha)
	r.advance(4 * 55 * time.Microsecond)
	g := 1.0 / 256
	assert.InDelta(t, (1-g)*(1-g)*(1-g), r.alpha, 1e-12)
}
