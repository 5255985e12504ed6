//go:build linux

package endpoint_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/layers"
)

// TestOverUDPWire runs the transport over two kernel UDP socket wires on
// 127.0.0.1:4791 and 127.0.0.2:4791: WRITE, READ, SEND and FETCH_ADD,
// byte-exact, with the ICRCs the UDP wire fills and checks.
//
// The kernel socket orders a remote write before its completion, but the
// race detector cannot see that edge inside one process: fence() makes
// one with a round trip through the responder QP's goroutine.
func TestOverUDPWire(t *testing.T) {
	defer goleak.VerifyNone(t)
	looptest.Hold(t)
	wa, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.1:4791"))
	if err != nil {
		t.Skipf("loopback UDP 4791 unavailable: %v", err)
	}
	wb, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.2:4791"))
	if err != nil {
		wa.Close()
		t.Skipf("loopback UDP 4791 unavailable: %v", err)
	}
	const size = 1 << 20
	a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC, memSize: 2 * size}), newPeer(t, wb, peerOpts{typ: endpoint.RC, memSize: 2 * size})
	defer b.close(t)
	defer a.close(t)
	connect(t, a, b, layers.MTU4096, nil)

	fillRandom(a.mem[:size], 21)
	require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, size)},
		RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
	requireSuccess(t, waitWCs(t, a.scq, 1))
	fence(t, b.qp)
	require.True(t, equalBytes(a.mem[:size], b.mem[:size]))

	require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRRead, SGL: []endpoint.SGE{a.mr.SGE(size, size)},
		RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
	requireSuccess(t, waitWCs(t, a.scq, 1))
	require.True(t, equalBytes(a.mem[:size], a.mem[size:]))

	require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 3, SGL: []endpoint.SGE{b.mr.SGE(size, 10000)}}))
	require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 4, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 10000)}}))
	requireSuccess(t, waitWCs(t, a.scq, 1))
	requireSuccess(t, waitWCs(t, b.rcq, 1))
	fence(t, b.qp)
	require.Equal(t, a.mem[:10000], b.mem[size:size+10000])

	b.mr.StoreUint64(0, 5)
	require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 5, Op: endpoint.WRFetchAdd, CompareAdd: 3, SGL: []endpoint.SGE{a.mr.SGE(0, 8)},
		RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
	requireSuccess(t, waitWCs(t, a.scq, 1))
	require.Equal(t, uint64(5), a.mr.LoadUint64(0))
	require.Equal(t, uint64(8), b.mr.LoadUint64(0))
	require.Zero(t, a.dev.Counters().DropICRC)
	require.Zero(t, b.dev.Counters().DropICRC)
	a.guardsIntact(t)
	b.guardsIntact(t)
}

// fence waits for qp's goroutine to run once: everything it did before is
// then visible to the caller.
func fence(t *testing.T, qp *endpoint.QP) {
	t.Helper()
	_, err := qp.Query()
	require.NoError(t, err)
}
