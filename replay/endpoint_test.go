package replay

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// endpointResponder is a real endpoint RC QP with one memory region behind
// a UDP wire, set up as a server would after the out-of-band exchange.
type endpointResponder struct {
	t    *testing.T
	dev  *endpoint.Device
	mr   *endpoint.MR
	qp   *endpoint.QP
	psn  layers.PSN
	mtu  layers.PathMTU
	peer netip.Addr
}

// Exchange connects the QP to the player and announces it.
func (r *endpointResponder) Exchange(_ context.Context, local Dest) (Dest, error) {
	err := r.qp.Connect(endpoint.ConnectAttr{Remote: r.peer, RemoteQPN: local.QPN, RemotePSN: local.PSN,
		LocalPSN: r.psn, MTU: r.mtu, MaxDestRdAtomic: 128, MaxRdAtomic: 128})
	if err != nil {
		return Dest{}, err
	}
	return Dest{QPN: r.qp.QPN(), PSN: r.psn, RKey: r.mr.RKey(), VA: r.mr.Addr()}, nil
}

// mtuCode turns a path MTU in bytes into its code.
func mtuCode(n int) layers.PathMTU {
	for c := layers.MTU256; c <= layers.MTU4096; c++ {
		if c.Bytes() >= n {
			return c
		}
	}
	return layers.MTU4096
}

// TestCompareAgainstEndpoint plays the requester halves of the rxe
// captures against the project's own endpoint responder over UDP on
// loopback, its region seeded from the capture for READs and atomics (the
// data READs found, the values atomics found) and filled with another
// pattern for WRITEs: the responses must match the captured ones in
// structure and, with Payload, in data, and the WRITEs must leave the
// region as the capture shows it.
func TestCompareAgainstEndpoint(t *testing.T) {
	for _, name := range []string{"write_bw.pcap", "read_bw.pcap", "atomic_fadd.pcap"} {
		t.Run(name, func(t *testing.T) {
			p := loadPlan(t, name)
			// Both wires own port 4791, where RoCEv2 responses go; the
			// addresses are unusual so no other test's wire shares them.
			srv, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.9.1:4791"))
			require.NoError(t, err)
			cli, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.9.2:4791"))
			require.NoError(t, err)
			dev := endpoint.NewDevice(srv)
			defer dev.Close()
			pd := dev.AllocPD()
			region := make([]byte, max(p.RegionLen, 8))
			write := name == "write_bw.pcap"
			if write {
				// The WRITEs must put the capture's data there: start with
				// a pattern the capture does not have.
				for i := range region {
					region[i] = 0x5a
				}
				require.NotEqual(t, p.Image(), region[:p.RegionLen])
			} else {
				copy(region, p.Image()) // what the READs and atomics must find
			}
			mr, err := pd.RegMR(region, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite|endpoint.AccessRemoteRead|endpoint.AccessRemoteAtomic)
			require.NoError(t, err)
			cq := dev.CreateCQ(4096)
			qp, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq})
			require.NoError(t, err)
			r := &endpointResponder{t: t, dev: dev, mr: mr, qp: qp, psn: 0x123456,
				mtu: mtuCode(p.MTU), peer: cli.LocalAddr().Addr()}
			peer := NewWirePeer(cli, srv.LocalAddr())
			defer peer.Close()
			res, err := Compare(context.Background(), p, r, peer, CompareOptions{Payload: true, Timeout: 2 * time.Second, Linger: 20 * time.Millisecond})
			require.NoError(t, err)
			var out strings.Builder
			res.WriteDiff(&out, "endpoint")
			res.WriteSummary(&out)
			assert.False(t, res.Differ(), "%s", out.String())
			t.Logf("%s: %d responses captured, %d from the endpoint", name, len(res.Captured), len(res.Live))
			// The region ends as the capture says the responder's did: the
			// WRITE data landed where it was sent (READs change nothing;
			// atomics leave each word at its last value plus one add).
			if write {
				require.NotNil(t, res.Readback)
				assert.Equal(t, Readback{VA: mr.Addr(), Len: int(p.RegionLen), Checked: int(p.RegionLen), FirstWrong: -1}, *res.Readback)
				require.NoError(t, qp.Destroy()) // its goroutine wrote the region: join it first
				require.NoError(t, dev.Close())
				assert.Equal(t, p.Image(), mr.Bytes()[:p.RegionLen])
			}
		})
	}
}
