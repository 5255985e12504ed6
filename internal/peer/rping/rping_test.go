package rping

import (
	"context"
	"encoding/binary"
	"io"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/layers"
)

// The first pings exactly as rping printed them against rxe
// (interop/testdata/rxe_rping.pcap's run).
func TestRpingFormat(t *testing.T) {
	b := make([]byte, 64)
	Fill(b, 0, 65)
	assert.Equal(t, "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr\x00", string(b))
	Fill(b, 9, 74)
	assert.Equal(t, "rdma-ping-9: JKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyzA\x00", string(b))
}

// TestRun plays rping's loop between a server and a client of this package
// on two loopback addresses: what each prints with -v, pings validated.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		size, count int
	}{
		{"64-byte pings", 64, 3},
		{"pings of two packets each way", 5000, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peertest.NeedLoopbackPorts(t)
			defer goleak.VerifyNone(t)
			srv, cli := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
			listening := make(chan struct{})
			var so, se, ce peertest.Buffer
			scfg := Config{Server: true, Local: srv, Port: DefaultPort, Size: tc.size, Verbose: true, Validate: true,
				Stderr: &se, Listening: func() { close(listening) }}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Run(ctx, scfg, &so) }()
			select {
			case <-listening:
			case err := <-done:
				t.Fatalf("server: %v, %s", err, se.String())
			}
			var co strings.Builder
			ccfg := Config{Local: cli, Remote: srv, Port: DefaultPort, Size: tc.size, Count: tc.count, Verbose: true, Validate: true, Stderr: &ce}
			require.NoError(t, Run(ctx, ccfg, &co), ce.String())
			require.NoError(t, <-done, se.String())
			var wantC, wantS strings.Builder
			for i := range tc.count {
				b := make([]byte, tc.size)
				Fill(b, i, byte(65+i%58))
				wantC.WriteString("ping data: " + string(b[:tc.size-1]) + "\n")
				wantS.WriteString("server ping data: " + string(b[:tc.size-1]) + "\n")
			}
			assert.Equal(t, wantC.String(), co.String())
			assert.Equal(t, wantS.String(), so.String())
		})
	}
}

// TestDisconnectWithoutDREP: the server's DREP never arrives (lost, and
// the peer gone, as in interop run 20261126T040606Z of peer_rping_loss_gs);
// the client still ends within disconnectWait, as rping's rdma_disconnect
// does not wait for it, instead of the CM's 15 DREQs 4.3 s apart.
func TestDisconnectWithoutDREP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dreps := 0
		var mu sync.Mutex
		wa, wb := wiretest.NewPair(wiretest.Config{Drop: func(_, _ netip.AddrPort, p []byte) bool {
			// BTH 12, DETH 8, then the MAD: its attribute ID at 16
			if len(p) < 12+8+18 || p[0] != 0x64 || binary.BigEndian.Uint16(p[12+8+16:]) != uint16(layers.CMAttrDREP) {
				return false
			}
			mu.Lock()
			dreps++
			mu.Unlock()
			return true
		}})
		srv, cli := wa.LocalAddr().Addr(), wb.LocalAddr().Addr()
		wire := func(w endpoint.Wire) func(netip.Addr) (endpoint.Wire, error) {
			return func(netip.Addr) (endpoint.Wire, error) { return w, nil }
		}
		listening := make(chan struct{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		done := make(chan error, 1)
		scfg := Config{Server: true, Local: srv, Port: DefaultPort, Size: 64, Validate: true, Wire: wire(wa), Listening: func() { close(listening) }}
		go func() { done <- Run(ctx, scfg, io.Discard) }()
		<-listening
		start := time.Now()
		ccfg := Config{Local: cli, Remote: srv, Port: DefaultPort, Size: 64, Count: 3, Validate: true, Wire: wire(wb)}
		require.NoError(t, Run(ctx, ccfg, io.Discard))
		took := time.Since(start)
		require.NoError(t, <-done)
		mu.Lock()
		defer mu.Unlock()
		require.NotZero(t, dreps, "the server answered the DREQ, and that DREP was lost")
		assert.LessOrEqual(t, took, disconnectWait+time.Second, "the client waited for the DREP")
	})
}
