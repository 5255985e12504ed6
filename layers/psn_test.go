package layers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

func TestPSNArithmeticAcrossTheWrap(t *testing.T) {
	tests := []struct {
		p, q layers.PSN
		diff int
	}{
		{0, 0, 0},
		{1, 0, 1},
		{0, 1, -1},
		{0, 0xFFFFFF, 1},
		{0xFFFFFF, 0, -1},
		{5, 0xFFFFFA, 11},
		{0xFFFFFA, 5, -11},
		{0x7FFFFF, 0, 0x7FFFFF},
		{0x800000, 0, -0x800000},
		{0, 0x800000, -0x800000},
		{0x123456, 0x123455, 1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.diff, tt.p.Diff(tt.q), "%v - %v", tt.p, tt.q)
		assert.Equal(t, tt.p, tt.q.Add(tt.diff), "%v + %d", tt.q, tt.diff)
		assert.Equal(t, tt.diff < 0, tt.p.Less(tt.q))
	}
}

// TestPSNExhaustive checks Add and Diff for every PSN against steps that
// cross the wrap, and that Less is a strict order within half the space.
func TestPSNExhaustive(t *testing.T) {
	steps := []int{0, 1, -1, 2, -2, 255, -256, 1 << 20, -(1 << 20), 0x7FFFFF, -0x800000}
	for p := layers.PSN(0); p <= layers.PSNMask; p++ {
		for _, n := range steps {
			q := p.Add(n)
			if !q.Valid() {
				t.Fatalf("%v.Add(%d) = %v is not 24-bit", p, n, q)
			}
			if q.Diff(p) != n {
				t.Fatalf("%v.Add(%d).Diff(%v) = %d", p, n, p, q.Diff(p))
			}
			// Exactly half the space apart, both PSNs are "before" the
			// other; Diff picks the negative side.
			if n != -0x800000 && (n > 0) != p.Less(q) {
				t.Fatalf("%v.Less(%v) with step %d", p, q, n)
			}
		}
	}
	assert.Equal(t, layers.PSN(0), layers.PSN(layers.PSNMask).Add(1))
	assert.Equal(t, layers.PSN(layers.PSNMask), layers.PSN(0).Add(-1))
}

func TestPSNWindowClassifies(t *testing.T) {
	type step struct {
		psn    layers.PSN
		status layers.PSNStatus
		gap    int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"in order across the wrap", []step{
			{0xFFFFFE, layers.PSNFirst, 0}, {0xFFFFFF, layers.PSNInOrder, 0}, {0, layers.PSNInOrder, 0}, {1, layers.PSNInOrder, 0}}},
		{"gap then holes filled late, then duplicates", []step{
			{0xFFFFFD, layers.PSNFirst, 0}, {1, layers.PSNAhead, 3}, {0xFFFFFF, layers.PSNLate, 2},
			{0xFFFFFF, layers.PSNDuplicate, 2}, {1, layers.PSNDuplicate, 0}, {0, layers.PSNLate, 1}, {2, layers.PSNInOrder, 0}}},
		{"retransmission of everything (go-back-N)", []step{
			{10, layers.PSNFirst, 0}, {11, layers.PSNInOrder, 0}, {12, layers.PSNInOrder, 0},
			{10, layers.PSNDuplicate, 2}, {11, layers.PSNDuplicate, 1}, {12, layers.PSNDuplicate, 0}, {13, layers.PSNInOrder, 0}}},
		{"too old to remember", []step{
			{0, layers.PSNFirst, 0}, {layers.PSNWindowSize + 5, layers.PSNAhead, layers.PSNWindowSize + 4},
			{2, layers.PSNTooOld, layers.PSNWindowSize + 3}}},
		{"a jump beyond the window forgets the old bits", []step{
			{100, layers.PSNFirst, 0}, {101, layers.PSNInOrder, 0}, {101 + 3*layers.PSNWindowSize, layers.PSNAhead, 3*layers.PSNWindowSize - 1},
			{101 + 2*layers.PSNWindowSize + 1, layers.PSNLate, layers.PSNWindowSize - 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w layers.PSNWindow
			for i, s := range tt.steps {
				// ObserveNext takes the in-order PSN as Observe does and
				// leaves the window as it was for any other.
				before, next := w, w
				inOrder := next.ObserveNext(s.psn)
				st, gap := w.Observe(s.psn)
				require.Equal(t, s.status, st, "step %d psn %v", i, s.psn)
				require.Equal(t, s.gap, gap, "step %d psn %v", i, s.psn)
				require.Equal(t, s.status == layers.PSNInOrder, inOrder, "step %d psn %v", i, s.psn)
				if inOrder {
					require.Equal(t, w, next, "step %d psn %v", i, s.psn)
				} else {
					require.Equal(t, before, next, "step %d psn %v", i, s.psn)
				}
			}
		})
	}
}

// TestPSNWindowExhaustiveWrap walks a window over every PSN twice: each one
// is first in order, then a duplicate while it is still remembered.
func TestPSNWindowExhaustiveWrap(t *testing.T) {
	var w layers.PSNWindow
	start := layers.PSN(layers.PSNMask - 1000)
	st, _ := w.Observe(start)
	require.Equal(t, layers.PSNFirst, st)
	for i := 1; i <= 1<<24; i++ {
		p := start.Add(i)
		if st, gap := w.Observe(p); st != layers.PSNInOrder || gap != 0 {
			t.Fatalf("psn %v: %v %d", p, st, gap)
		}
		if i%4099 == 0 {
			back := p.Add(-(i % layers.PSNWindowSize))
			if st, _ := w.Observe(back); st != layers.PSNDuplicate {
				t.Fatalf("psn %v again: %v", back, st)
			}
			require.True(t, w.Seen(back))
		}
	}
	h, ok := w.Highest()
	require.True(t, ok)
	assert.Equal(t, start, h, "a full lap of 2^24 PSNs ends where it started")
}

func FuzzPSNWindow(f *testing.F) {
	f.Add(uint32(0), []byte{1, 2, 3, 250, 7})
	f.Add(uint32(layers.PSNMask), []byte{1, 0x80, 0xFF, 1})
	f.Fuzz(func(t *testing.T, start uint32, deltas []byte) {
		var w layers.PSNWindow
		p := layers.PSN(start & layers.PSNMask)
		w.Observe(p)
		seen := map[layers.PSN]bool{p: true}
		for _, d := range deltas {
			p = p.Add(int(int8(d)) * 37)
			h, _ := w.Highest()
			st, _ := w.Observe(p)
			switch st {
			case layers.PSNInOrder:
				require.Equal(t, h.Add(1), p)
			case layers.PSNAhead:
				require.True(t, h.Less(p))
			case layers.PSNLate:
				require.False(t, seen[p], "late but seen before")
			case layers.PSNDuplicate:
				require.True(t, seen[p], "duplicate never seen")
			}
			seen[p] = true
			nh, _ := w.Highest()
			require.False(t, nh.Less(h), "highest went back")
		}
	})
}
