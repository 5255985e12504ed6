package endpoint_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// peer is one endpoint of a test: a device over a wiretest wire, a PD, CQs,
// a QP and a memory region with guard bands around it.
type peer struct {
	dev  *endpoint.Device
	pd   *endpoint.PD
	scq  *endpoint.CQ
	rcq  *endpoint.CQ
	qp   *endpoint.QP
	mr   *endpoint.MR
	all  []byte // guard ‖ region ‖ guard
	mem  []byte // the registered region
	wire *wiretest.Wire
	psn  layers.PSN
}

const guardLen = 64
const guardByte = 0xA5

type peerOpts struct {
	typ     endpoint.QPType
	memSize int
	access  endpoint.Access
	maxSend int
	maxRecv int
	srq     bool
	cqSize  int
}

func newPeer(t testing.TB, w endpoint.Wire, o peerOpts) *peer {
	t.Helper()
	if o.memSize == 0 {
		o.memSize = 1 << 16
	}
	if o.access == 0 {
		o.access = endpoint.AccessLocalWrite | endpoint.AccessRemoteWrite | endpoint.AccessRemoteRead | endpoint.AccessRemoteAtomic
	}
	if o.cqSize == 0 {
		o.cqSize = 4096
	}
	p := &peer{dev: endpoint.NewDevice(w)}
	p.wire, _ = w.(*wiretest.Wire)
	p.pd = p.dev.AllocPD()
	p.scq, p.rcq = p.dev.CreateCQ(o.cqSize), p.dev.CreateCQ(o.cqSize)
	cfg := endpoint.QPConfig{Type: o.typ, SendCQ: p.scq, RecvCQ: p.rcq, MaxSendWR: o.maxSend, MaxRecvWR: o.maxRecv}
	if o.srq {
		cfg.SRQ = p.pd.CreateSRQ(max(o.maxRecv, 256))
	}
	var err error
	p.qp, err = p.pd.CreateQP(cfg)
	require.NoError(t, err)
	// 8-byte alignment of the region comes from the allocation; the guard
	// length keeps it.
	p.all = make([]byte, guardLen+o.memSize+guardLen)
	for i := range p.all {
		p.all[i] = guardByte
	}
	p.mem = p.all[guardLen : guardLen+o.memSize]
	clear(p.mem)
	p.mr, err = p.pd.RegMR(p.mem, o.access)
	require.NoError(t, err)
	p.psn = endpoint.RandomPSN()
	return p
}

// guardsIntact checks that nothing wrote outside the region.
func (p *peer) guardsIntact(t testing.TB) {
	t.Helper()
	for i := 0; i < guardLen; i++ {
		require.Equal(t, byte(guardByte), p.all[i], "guard byte %d before the region", i)
		require.Equal(t, byte(guardByte), p.all[len(p.all)-1-i], "guard byte %d after the region", i)
	}
}

func connect(t testing.TB, a, b *peer, mtu layers.PathMTU, tweak func(*endpoint.ConnectAttr)) {
	t.Helper()
	ca := endpoint.ConnectAttr{Remote: b.dev.Addr().Addr(), RemoteQPN: b.qp.QPN(), RemotePSN: b.psn, LocalPSN: a.psn, MTU: mtu}
	cb := endpoint.ConnectAttr{Remote: a.dev.Addr().Addr(), RemoteQPN: a.qp.QPN(), RemotePSN: a.psn, LocalPSN: b.psn, MTU: mtu}
	if tweak != nil {
		tweak(&ca)
		tweak(&cb)
	}
	require.NoError(t, a.qp.Connect(ca))
	require.NoError(t, b.qp.Connect(cb))
}

// pair makes two connected peers over a wiretest pair.
func pair(t testing.TB, cfg wiretest.Config, o peerOpts, mtu layers.PathMTU) (a, b *peer) {
	t.Helper()
	wa, wb := wiretest.NewPair(cfg)
	a, b = newPeer(t, wa, o), newPeer(t, wb, o)
	connect(t, a, b, mtu, nil)
	return a, b
}

func (p *peer) close(t testing.TB) {
	t.Helper()
	require.NoError(t, p.dev.Close())
}

// waitWCs collects n completions from cq, failing after a (virtual) hour.
func waitWCs(t testing.TB, cq *endpoint.CQ, n int) []endpoint.WC {
	t.Helper()
	return waitWCsOr(t, cq, n, func() string { return "" })
}

// waitWCsOr is waitWCs with a description of the state on failure.
func waitWCsOr(t testing.TB, cq *endpoint.CQ, n int, state func() string) []endpoint.WC {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	out := make([]endpoint.WC, 0, n)
	buf := make([]endpoint.WC, 64)
	for len(out) < n {
		k, err := cq.Wait(ctx, buf[:min(len(buf), n-len(out))])
		if err != nil {
			require.NoError(t, err, "waiting for completion %d of %d: %s", len(out)+1, n, state())
		}
		out = append(out, buf[:k]...)
	}
	return out
}

func requireSuccess(t testing.TB, wcs []endpoint.WC) {
	t.Helper()
	for i, wc := range wcs {
		require.Equal(t, endpoint.StatusSuccess, wc.Status, "completion %d: %v", i, wc)
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
