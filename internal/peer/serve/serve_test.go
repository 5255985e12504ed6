package serve

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/setup"
)

// TestRun: a client of the set-up exchange gets the server's QP, then the
// region its Config describes; the server says what it served and, once
// stopped, what it counted.
func TestRun(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	cfg := Config{Addr: netip.MustParseAddr("127.0.0.2"), MRSize: 1 << 20, MTU: 2048, Recv: 8}
	ready := make(chan netip.AddrPort, 1)
	cfg.Ready = func(a netip.AddrPort) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out peertest.Buffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, &out) }()
	var tcp netip.AddrPort
	select {
	case tcp = <-ready:
	case err := <-done:
		t.Fatalf("serve did not start: %v", err)
	}
	c, err := net.Dial("tcp", tcp.String())
	require.NoError(t, err)
	remote, err := setup.PingpongClient(c, setup.PingpongDest{QPN: 0x77, PSN: 0x123456, GID: netip.MustParseAddr("127.0.0.1").As16()})
	require.NoError(t, err)
	reg, ok, err := setup.ReadServeRegion(c)
	require.NoError(t, err)
	require.True(t, ok)
	c.Close()
	assert.Equal(t, netip.MustParseAddr("::ffff:127.0.0.2").As16(), remote.GID)
	assert.Equal(t, uint64(cfg.MRSize), reg.Size)
	assert.Equal(t, cfg.MTU, reg.MTU)
	assert.Equal(t, cfg.Recv, reg.RecvCount)
	assert.Equal(t, uint32(cfg.MRSize/cfg.Recv), reg.RecvLen)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "conn 1 closed") },
		10*time.Second, 5*time.Millisecond, "the server never finished conn 1: %s", out.String())
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "each connection gets an RC QP (MTU 2048) and a 1048576-byte region with 8 receive buffers of 131072 bytes")
	assert.Contains(t, out.String(), "client QPN 0x000077 PSN 0x123456 GID 127.0.0.1; served by QPN")
	assert.Contains(t, out.String(), "ibpeer serve: stopped after 1 connections")
}

// TestRunRefusesNonIBMTU: a Config whose MTU is not an IB MTU is refused
// before a socket is opened, with what it wants; a connection would
// otherwise be served with no valid path MTU.
func TestRunRefusesNonIBMTU(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := Config{Addr: netip.MustParseAddr("127.0.0.2"), MRSize: 1 << 20, MTU: 1500, Recv: 8}
	err := Run(context.Background(), cfg, &peertest.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MTU 1500: want 256, 512, 1024, 2048 or 4096")
}
