package rping

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/internal/peer/peertest"
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
