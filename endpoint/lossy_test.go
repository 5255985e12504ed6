package endpoint_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// bulkSize is what TestLossyBulk moves by each of WRITE, READ and SEND;
// -short and the race detector move 4 MiB.
const bulkSize = 64 << 20

const bulkMessage = 1 << 20

var lossy = wiretest.Faults{Loss: 0.05, Reorder: 0.05, Duplicate: 0.05, Delay: 2 * time.Microsecond, ReorderWindow: 20 * time.Microsecond}

// runWindowed posts n WRs built by mk, keeping up to depth outstanding,
// and checks every completion is SUCCESS.
func runWindowed(t *testing.T, qp *endpoint.QP, cq *endpoint.CQ, n, depth int, mk func(i int) endpoint.SendWR) []endpoint.WC {
	t.Helper()
	var all []endpoint.WC
	posted := 0
	for len(all) < n {
		for posted < n && posted-len(all) < depth {
			wr := mk(posted)
			require.NoError(t, qp.PostSend(&wr))
			posted++
		}
		wcs := waitWCsOr(t, cq, 1, func() string { return qp.DebugString() })
		requireSuccess(t, wcs)
		all = append(all, wcs...)
	}
	return all
}

func TestLossyBulk(t *testing.T) {
	size := bulkSize
	if testing.Short() || raceEnabled {
		size = 4 << 20
	}
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{AtoB: lossy, BtoA: lossy, Seed: 7},
			peerOpts{typ: endpoint.RC, memSize: size, maxSend: 64, maxRecv: 64}, layers.MTU4096)
		defer a.close(t)
		defer b.close(t)
		msgs := size / bulkMessage
		start := time.Now()

		// WRITE a → b.
		fillRandom(a.mem, 1)
		runWindowed(t, a.qp, a.scq, msgs, 16, func(i int) endpoint.SendWR {
			return endpoint.SendWR{ID: uint64(i), Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(i*bulkMessage, bulkMessage)},
				RemoteAddr: b.mr.Addr() + uint64(i*bulkMessage), RKey: b.mr.RKey()}
		})
		require.True(t, equalBytes(a.mem, b.mem), "WRITE moved the bytes exactly")

		// READ b → a.
		fillRandom(b.mem, 2)
		runWindowed(t, a.qp, a.scq, msgs, 16, func(i int) endpoint.SendWR {
			return endpoint.SendWR{ID: uint64(i), Op: endpoint.WRRead, SGL: []endpoint.SGE{a.mr.SGE(i*bulkMessage, bulkMessage)},
				RemoteAddr: b.mr.Addr() + uint64(i*bulkMessage), RKey: b.mr.RKey()}
		})
		require.True(t, equalBytes(a.mem, b.mem), "READ moved the bytes exactly")

		// SEND a → b into posted receives.
		fillRandom(a.mem, 3)
		received := 0
		for i := range msgs {
			require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: uint64(i), SGL: []endpoint.SGE{b.mr.SGE(i*bulkMessage, bulkMessage)}}))
		}
		runWindowed(t, a.qp, a.scq, msgs, 16, func(i int) endpoint.SendWR {
			return endpoint.SendWR{ID: uint64(i), Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(i*bulkMessage, bulkMessage)}}
		})
		for _, wc := range waitWCs(t, b.rcq, msgs) {
			require.Equal(t, endpoint.StatusSuccess, wc.Status)
			require.Equal(t, uint64(received), wc.ID, "receives complete in order")
			require.Equal(t, uint32(bulkMessage), wc.ByteLen)
			received++
		}
		require.True(t, equalBytes(a.mem, b.mem), "SEND moved the bytes exactly")
		a.guardsIntact(t)
		b.guardsIntact(t)
		st := a.wire.Stats()
		t.Logf("%d MiB ×3 in %v virtual; a→b written %d lost %d dup %d reordered %d; retries %d, seq NAKs %d",
			size>>20, time.Since(start), st.Written, st.Lost, st.Duplicated, st.Reordered,
			a.dev.Counters().CompleterRetryErr, b.dev.Counters().OutOfSeqRequest)
		require.NotZero(t, st.Lost)
		require.NotZero(t, st.Duplicated)
		require.NotZero(t, st.Reordered)
	})
}

func equalBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLossyAtomics runs 10,000 FETCH_ADD and CMP_SWAP over a lossy link
// and checks every returned value and the final memory against a model:
// the responder executes them in PSN order, exactly once each, replaying
// duplicates from its cache.
func TestLossyAtomics(t *testing.T) {
	const n = 10000
	const words = 4
	synctest.Test(t, func(t *testing.T) {
		a, b := pair(t, wiretest.Config{AtoB: lossy, BtoA: lossy, Seed: 11},
			peerOpts{typ: endpoint.RC, memSize: 8*n + 64, maxSend: 64}, layers.MTU1024)
		defer a.close(t)
		defer b.close(t)
		rng := rand.New(rand.NewPCG(5, 6))
		type op struct {
			fetchAdd   bool
			word       int
			cmpAdd     uint64
			swap       uint64
			wantResult uint64
		}
		model := make([]uint64, words)
		ops := make([]op, n)
		for i := range ops {
			o := op{fetchAdd: rng.IntN(2) == 0, word: rng.IntN(words)}
			cur := model[o.word]
			o.wantResult = cur
			if o.fetchAdd {
				o.cmpAdd = uint64(rng.IntN(1000))
				model[o.word] = cur + o.cmpAdd
			} else {
				// Half the swaps match, half do not.
				o.cmpAdd = cur
				if rng.IntN(2) == 0 {
					o.cmpAdd = cur + 1
				}
				o.swap = rng.Uint64()
				if o.cmpAdd == cur {
					model[o.word] = o.swap
				}
			}
			ops[i] = o
		}
		wcs := runWindowed(t, a.qp, a.scq, n, 32, func(i int) endpoint.SendWR {
			o := ops[i]
			wr := endpoint.SendWR{ID: uint64(i), Op: endpoint.WRCompareSwap, CompareAdd: o.cmpAdd, Swap: o.swap,
				SGL: []endpoint.SGE{a.mr.SGE(8*i, 8)}, RemoteAddr: b.mr.Addr() + uint64(8*o.word), RKey: b.mr.RKey()}
			if o.fetchAdd {
				wr.Op = endpoint.WRFetchAdd
			}
			return wr
		})
		require.Len(t, wcs, n)
		for i, o := range ops {
			require.Equal(t, o.wantResult, a.mr.LoadUint64(8*i), "atomic %d result", i)
		}
		for w := range words {
			require.Equal(t, model[w], b.mr.LoadUint64(8*w), "word %d", w)
		}
		for _, w := range []*wiretest.Wire{a.wire, b.wire} {
			st := w.Stats()
			require.NotZero(t, st.Lost, "lost")
			require.NotZero(t, st.Duplicated, "duplicated")
			require.NotZero(t, st.Reordered, "reordered")
		}
		a.guardsIntact(t)
		b.guardsIntact(t)
	})
}
