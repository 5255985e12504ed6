package endpoint_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

func fillRandom(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

func TestSmallOps(t *testing.T) {
	for _, mtu := range []layers.PathMTU{layers.MTU256, layers.MTU1024, layers.MTU4096} {
		t.Run(mtu.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := pair(t, wiretest.Config{}, peerOpts{typ: endpoint.RC}, mtu)
				defer a.close(t)
				defer b.close(t)
				const n = 10000
				fillRandom(a.mem[:n], 1)
				// WRITE a → b.
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite,
					SGL: []endpoint.SGE{a.mr.SGE(0, n)}, RemoteAddr: b.mr.Addr() + 100, RKey: b.mr.RKey()}))
				wcs := waitWCs(t, a.scq, 1)
				requireSuccess(t, wcs)
				require.Equal(t, endpoint.WCWrite, wcs[0].Op)
				require.Equal(t, a.mem[:n], b.mem[100:100+n])

				// READ it back into a's second half.
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRRead,
					SGL: []endpoint.SGE{a.mr.SGE(20000, 5000), a.mr.SGE(30000, n-5000)}, RemoteAddr: b.mr.Addr() + 100, RKey: b.mr.RKey()}))
				wcs = waitWCs(t, a.scq, 1)
				requireSuccess(t, wcs)
				require.Equal(t, a.mem[:5000], a.mem[20000:25000])
				require.Equal(t, a.mem[5000:n], a.mem[30000:30000+n-5000])

				// SEND with immediate b → a.
				require.NoError(t, a.qp.PostRecv(endpoint.RecvWR{ID: 7, SGL: []endpoint.SGE{a.mr.SGE(40000, 20000)}}))
				fillRandom(b.mem[:3000], 2)
				require.NoError(t, b.qp.PostSend(&endpoint.SendWR{ID: 3, Op: endpoint.WRSendWithImm, Imm: 0xdeadbeef,
					SGL: []endpoint.SGE{b.mr.SGE(0, 3000)}}))
				requireSuccess(t, waitWCs(t, b.scq, 1))
				rwc := waitWCs(t, a.rcq, 1)
				requireSuccess(t, rwc)
				require.Equal(t, endpoint.WC{ID: 7, Op: endpoint.WCRecv, QPN: a.qp.QPN(), ByteLen: 3000, WithImm: true, Imm: 0xdeadbeef}, rwc[0])
				require.Equal(t, b.mem[:3000], a.mem[40000:43000])

				// Atomics.
				a.mr.StoreUint64(60000, 40)
				require.NoError(t, b.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRFetchAdd, CompareAdd: 2,
					SGL: []endpoint.SGE{b.mr.SGE(8, 8)}, RemoteAddr: a.mr.Addr() + 60000, RKey: a.mr.RKey()}))
				require.NoError(t, b.qp.PostSend(&endpoint.SendWR{ID: 5, Op: endpoint.WRCompareSwap, CompareAdd: 42, Swap: 7,
					SGL: []endpoint.SGE{b.mr.SGE(16, 8)}, RemoteAddr: a.mr.Addr() + 60000, RKey: a.mr.RKey()}))
				requireSuccess(t, waitWCs(t, b.scq, 2))
				require.Equal(t, uint64(40), b.mr.LoadUint64(8))
				require.Equal(t, uint64(42), b.mr.LoadUint64(16))
				require.Equal(t, uint64(7), a.mr.LoadUint64(60000))
				a.guardsIntact(t)
				b.guardsIntact(t)
			})
		})
	}
}
