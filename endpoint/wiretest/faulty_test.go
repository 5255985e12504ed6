package wiretest_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
)

// recordWire remembers the number (two payload bytes) of every datagram
// written.
type recordWire struct {
	endpoint.Wire // nil: only WriteBatch is called
	got           []int
}

func (w *recordWire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	for _, d := range dgs {
		w.got = append(w.got, int(binary.BigEndian.Uint16(d.Payload)))
	}
	return len(dgs), nil
}

// sendThrough writes n datagrams numbered 0, 1, … in batches of batch
// through a FaultyWire and returns what reached the inner wire.
func sendThrough(t *testing.T, f wiretest.Faults, seed uint64, n, batch int) ([]int, *wiretest.FaultyWire) {
	t.Helper()
	rec := &recordWire{}
	fw, err := wiretest.NewFaulty(rec, f, seed)
	require.NoError(t, err)
	for i := 0; i < n; i += batch {
		var dgs []endpoint.Datagram
		for k := i; k < min(i+batch, n); k++ {
			dgs = append(dgs, endpoint.Datagram{Payload: binary.BigEndian.AppendUint16(nil, uint16(k))})
		}
		sent, err := fw.WriteBatch(dgs)
		require.NoError(t, err)
		require.Equal(t, len(dgs), sent, "every datagram counts as sent")
	}
	return rec.got, fw
}

func TestFaulty(t *testing.T) {
	t.Run("clean", func(t *testing.T) {
		got, fw := sendThrough(t, wiretest.Faults{}, 1, 200, 7)
		require.Len(t, got, 200)
		for i, b := range got {
			require.Equal(t, i, b)
		}
		assert.Equal(t, "faults on 200 datagrams sent (seed 1): 0 dropped, 0 reordered, 0 duplicated", fw.Summary())
	})
	t.Run("loss", func(t *testing.T) {
		got, fw := sendThrough(t, wiretest.Faults{Loss: 0.1}, 3, 10000, 16)
		st := fw.Stats()
		assert.Equal(t, uint64(10000)-uint64(len(got)), st.Lost)
		assert.InDelta(t, 1000, st.Lost, 150, "about 10%% lost")
		for i := 1; i < len(got); i++ {
			require.NotEqual(t, got[i-1], got[i], "nothing duplicated")
		}
		again, _ := sendThrough(t, wiretest.Faults{Loss: 0.1}, 3, 10000, 16)
		assert.Equal(t, got, again, "the same seed drops the same datagrams")
		other, _ := sendThrough(t, wiretest.Faults{Loss: 0.1}, 4, 10000, 16)
		assert.NotEqual(t, got, other)
	})
	t.Run("reorder", func(t *testing.T) {
		got, fw := sendThrough(t, wiretest.Faults{Reorder: 0.2}, 5, 1000, 8)
		st := fw.Stats()
		assert.InDelta(t, 150, st.Reordered, 60)
		swaps := 0
		for i := 1; i < len(got); i++ {
			if got[i] < got[i-1] {
				swaps++
			}
		}
		held := 0
		if fw.Holding() {
			held = 1
		}
		assert.Equal(t, int(st.Reordered), swaps+held, "each held datagram comes right after the next one")
		assert.Len(t, got, 1000-held)
	})
	t.Run("dup", func(t *testing.T) {
		got, fw := sendThrough(t, wiretest.Faults{Duplicate: 0.3}, 9, 1000, 32)
		st := fw.Stats()
		assert.Len(t, got, 1000+int(st.Duplicated))
		assert.InDelta(t, 300, st.Duplicated, 60)
		assert.Equal(t, uint64(len(got)), st.Delivered)
	})
	t.Run("corrupt and delay are a pair's", func(t *testing.T) {
		for _, f := range []wiretest.Faults{{Corrupt: 0.1}, {Delay: 1}} {
			_, err := wiretest.NewFaulty(&recordWire{}, f, 1)
			require.ErrorContains(t, err, "need a Pair")
		}
	})
}
