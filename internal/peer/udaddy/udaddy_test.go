package udaddy

import (
	"context"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/peertest"
)

// What udaddy prints for a test that went through (udaddy.c's lines).
const (
	serverOut = "udaddy: starting server\nreceiving data transfers\nsending replies\ndata transfers complete\n" +
		"test complete\nreturn status 0\n"
	clientOut = "udaddy: starting client\nudaddy: connecting\ninitiating data transfers\nreceiving data transfers\n" +
		"data transfers complete\ntest complete\nreturn status 0\n"
)

// TestRun plays udaddy's test between a server and a client of this
// package over loopback UDP: SIDR_REQ/SIDR_REP on QP1, then the datagrams
// each way, with what each side prints.
func TestRun(t *testing.T) {
	for i, tc := range []struct {
		name                     string
		connections, count, size int
		serverOut, clientOut     string
	}{
		{name: "udaddy's defaults", connections: 1, count: 10, size: 100, serverOut: serverOut, clientOut: clientOut},
		{name: "3 connections, 50 datagrams of 1024 bytes", connections: 3, count: 50, size: 1024, serverOut: serverOut, clientOut: clientOut},
		{name: "no messages", connections: 2, count: 0, size: 0,
			serverOut: "udaddy: starting server\ntest complete\nreturn status 0\n",
			clientOut: "udaddy: starting client\nudaddy: connecting\ntest complete\nreturn status 0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			srv, cli := peertest.Addrs(81, 10+i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var so, se, co, ce peertest.Buffer
			listening := make(chan struct{})
			scfg := Config{Local: netip.MustParseAddr(srv), Port: DefaultPort, Connections: tc.connections, Count: tc.count,
				Size: tc.size, Stderr: &se, Listening: func() { close(listening) }}
			done := make(chan error, 1)
			go func() { done <- Run(ctx, scfg, &so) }()
			<-listening
			ccfg := scfg
			ccfg.Local, ccfg.Server, ccfg.Stderr, ccfg.Listening = netip.MustParseAddr(cli), netip.MustParseAddr(srv), &ce, nil
			require.NoError(t, Run(ctx, ccfg, &co), "client: %s%s", co.String(), ce.String())
			require.NoError(t, <-done, "server: %s%s", so.String(), se.String())
			assert.Equal(t, tc.clientOut, co.String())
			assert.Equal(t, tc.serverOut, so.String())
		})
	}
}

// TestClientFailures: what udaddy's client prints when the SIDR_REP
// refuses the service, when nothing answers, and when a datagram would not
// fit the port's MTU; each returns a non-zero status.
func TestClientFailures(t *testing.T) {
	// Where nothing answers, the wait is the point: 1 ms and one retry.
	// Where the server answers, the answer ends the wait, so a long one
	// costs nothing and a loaded machine cannot turn a refusal into a
	// timeout.
	quick := endpoint.CMConfig{ResponseTimeout: 8, MaxRetries: 1}    // 1 ms, one retry
	patient := endpoint.CMConfig{ResponseTimeout: 16, MaxRetries: 3} // 268 ms, three retries
	for i, tc := range []struct {
		name       string
		serverPort uint16 // 0: no server at all
		size, mtu  int
		cm         endpoint.CMConfig
		want       string
	}{
		{name: "service not served", serverPort: DefaultPort + 1, size: 100, cm: patient,
			want: "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: -22\ntest complete\nreturn status -22\n"},
		{name: "no answer", size: 100, cm: quick,
			want: "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: -110\ntest complete\nreturn status -110\n"},
		{name: "datagram over the MTU", serverPort: DefaultPort, size: 2000, mtu: 1024, cm: patient,
			want: "udaddy: message_size 2000 is larger than active mtu 1024\ntest complete\nreturn status -22\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			srv, cli := peertest.Addrs(82, 10+i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if tc.serverPort != 0 {
				listening := make(chan struct{})
				sctx, stop := context.WithCancel(ctx)
				done := make(chan error, 1)
				go func() {
					done <- Run(sctx, Config{Local: netip.MustParseAddr(srv), Port: tc.serverPort, Connections: 1, Count: 1,
						Size: 100, Listening: func() { close(listening) }}, &peertest.Buffer{})
				}()
				<-listening
				defer func() {
					stop()
					<-done
				}()
			}
			var co peertest.Buffer
			err := Run(ctx, Config{Local: netip.MustParseAddr(cli), Server: netip.MustParseAddr(srv), Port: DefaultPort,
				Connections: 1, Count: 10, Size: tc.size, ActiveMTU: tc.mtu, CM: tc.cm}, &co)
			require.ErrorIs(t, err, ErrFailed)
			assert.Equal(t, "udaddy: starting client\nudaddy: connecting\n"+tc.want, co.String())
		})
	}
}

// TestEcho: serve --cm's udaddy server answers udaddy clients one after
// another, with one connection or several, up to the 4096-byte MTU, and
// drops nothing.
func TestEcho(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv, cli := peertest.Addrs(83, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dev, cm, err := device.OpenCM(netip.MustParseAddr(srv), nil, false, endpoint.CMConfig{}, io.Discard)
	require.NoError(t, err)
	defer dev.Close()
	defer cm.Close()
	ectx, stop := context.WithCancel(ctx)
	type result struct {
		dropped int
		err     error
	}
	done := make(chan result, 1)
	echo, err := NewEcho(dev.Device, cm, DefaultPort)
	require.NoError(t, err)
	go func() {
		d, err := echo.Run(ectx)
		done <- result{d, err}
	}()
	for i, tc := range []struct{ connections, count, size int }{{1, 10, 100}, {3, 40, 1024}, {2, 5, 4096}} {
		var co, ce peertest.Buffer
		cfg := Config{Local: netip.MustParseAddr(cli), Server: netip.MustParseAddr(srv), Port: DefaultPort,
			Connections: tc.connections, Count: tc.count, Size: tc.size, ActiveMTU: 4096, Stderr: &ce}
		require.NoError(t, Run(ctx, cfg, &co), "client %d: %s%s", i, co.String(), ce.String())
		assert.Equal(t, clientOut, co.String())
	}
	stop()
	r := <-done
	require.NoError(t, r.err)
	assert.Zero(t, r.dropped)
}
