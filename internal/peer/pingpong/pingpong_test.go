package pingpong

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// ppAddrs are pingpong's tests' loopback addresses (127.77.0.0/16).
func ppAddrs(n int) (server, client string) { return peertest.Addrs(77, n) }

// A server of another transport drops the client's packets and says why
// on stderr, once per second however many arrive. (The RC client retries
// for ever: retry_cnt 7 is unlimited on rxe, so the tool hangs too.)
func TestPingpongMismatchDiagnosed(t *testing.T) {
	srvIP, cliIP := ppAddrs(100)
	port := peertest.FreeTCPPort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var srvOut, cliOut, cliErr bytes.Buffer
	var srvErr peertest.Buffer
	listening := make(chan struct{})
	srvDone, cliDone := make(chan error, 1), make(chan error, 1)
	go func() {
		cfg := Config{Type: endpoint.UD, Addr: netip.MustParseAddr(srvIP), Port: port, Size: 1024, RXDepth: 16, Iters: 5,
			Listening: func(net.Addr) { close(listening) }}
		cfg.Stderr = &srvErr
		srvDone <- Run(ctx, cfg, &srvOut)
	}()
	<-listening
	go func() {
		cfg := Config{Type: endpoint.RC, Addr: netip.MustParseAddr(cliIP), Host: srvIP, Port: port, Size: 1024,
			MTU: 3, RXDepth: 16, Iters: 5}
		cfg.Stderr = &cliErr
		cliDone <- Run(ctx, cfg, &cliOut)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for srvErr.String() == "" && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(1200 * time.Millisecond)
	cancel()
	require.ErrorIs(t, <-srvDone, context.Canceled)
	require.ErrorIs(t, <-cliDone, context.Canceled)
	assert.Contains(t, cliOut.String(), "  remote address: LID 0x0000, QPN 0x000011")
	assert.Empty(t, cliErr.String())
	lines := strings.Split(strings.TrimSuffix(srvErr.String(), "\n"), "\n")
	// The first report within a tick, one a second later, the rest at exit.
	assert.GreaterOrEqual(t, len(lines), 2, "%s", srvErr.String())
	assert.LessOrEqual(t, len(lines), 3, "%s", srvErr.String())
	re := regexp.MustCompile(`^ibpeer: dropped \d+ packets? from ` + regexp.QuoteMeta(cliIP) +
		`: RC_SEND_ONLY to QPN 0x000011, a UD QP \(do both sides run the same transport: --rc, --uc, --ud\?\)$`)
	for _, l := range lines {
		assert.Regexp(t, re, l)
	}
}

// A tool run without -g sends GID ::; the server says so and falls back to
// the set-up connection's address.
func TestPingpongZeroGID(t *testing.T) {
	srvIP, _ := ppAddrs(101)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var srvOut, srvErr peertest.Buffer
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		cfg := Config{Type: endpoint.RC, Addr: netip.MustParseAddr(srvIP), Port: 0, Size: 64, MTU: 3, RXDepth: 4, Iters: 1,
			Listening: func(a net.Addr) { addr <- a }}
		cfg.Stderr = &srvErr
		done <- Run(ctx, cfg, &srvOut)
	}()
	port := (<-addr).(*net.TCPAddr).Port
	conn, err := net.Dial("tcp", net.JoinHostPort(srvIP, strconv.Itoa(port)))
	require.NoError(t, err)
	remote, err := setup.PingpongClient(conn, setup.PingpongDest{QPN: 0x99, PSN: 0x1234})
	require.NoError(t, err)
	conn.Close()
	assert.Equal(t, uint32(0x11), remote.QPN)
	// The server has read "done" once it prints the remote address.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(srvOut.String(), "remote address") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Contains(t, srvOut.String(), "  remote address: LID 0x0000, QPN 0x000099, PSN 0x001234, GID ::\n")
	assert.Equal(t, "ibpeer pingpong: the peer sent GID :: (run the tool with -g <RoCEv2 GID index>); using 127.0.0.1\n", srvErr.String())
}

// TestPingpongListensOnAddr: the server's TCP set-up port binds --addr,
// not the wildcard, so it starts beside an ibpeer serve (or another
// pingpong server) that has the same port on another address of the
// machine (issue 17), and nobody reaches it through another address.
func TestPingpongListensOnAddr(t *testing.T) {
	srvIP, otherIP := ppAddrs(103)
	other, err := net.Listen("tcp", net.JoinHostPort(otherIP, "0"))
	require.NoError(t, err)
	defer other.Close()
	port := other.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var srvOut, srvErr bytes.Buffer
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		cfg := Config{Type: endpoint.RC, Addr: netip.MustParseAddr(srvIP), Port: port, Size: 64, MTU: 3, RXDepth: 4, Iters: 1,
			Listening: func(a net.Addr) { addr <- a }}
		cfg.Stderr = &srvErr
		done <- Run(ctx, cfg, &srvOut)
	}()
	select {
	case a := <-addr:
		assert.Equal(t, net.JoinHostPort(srvIP, strconv.Itoa(port)), a.String())
	case err := <-done:
		t.Fatalf("the server did not listen beside %v: %v; stderr %q", other.Addr(), err, srvErr.String())
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestPingpongStatusStrings(t *testing.T) {
	assert.Equal(t, "transport retry counter exceeded", statusStr(endpoint.StatusRetryExcErr))
	assert.Equal(t, "Work Request Flushed Error", statusStr(endpoint.StatusWRFlushErr))
	assert.Equal(t, "unknown", statusStr(endpoint.Status(99)))
}

// TestRun plays each tool's exchange between a server and a client of this
// package: both report every exchange, and each side's remote address line
// is the other's local one.
func TestRun(t *testing.T) {
	for i, typ := range []endpoint.QPType{endpoint.RC, endpoint.UC, endpoint.UD} {
		t.Run(typ.String(), func(t *testing.T) {
			srvIP, cliIP := ppAddrs(110 + i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			addr := make(chan net.Addr, 1)
			var srvOut, srvErr peertest.Buffer
			done := make(chan error, 1)
			cfg := Config{Type: typ, Addr: netip.MustParseAddr(srvIP), Size: 256, MTU: layers.MTU1024, RXDepth: 8, Iters: 5,
				Stderr: &srvErr, Listening: func(a net.Addr) { addr <- a }}
			go func() { done <- Run(ctx, cfg, &srvOut) }()
			port := (<-addr).(*net.TCPAddr).Port
			var cliOut, cliErr peertest.Buffer
			cfg.Addr, cfg.Host, cfg.Port, cfg.Stderr, cfg.Listening = netip.MustParseAddr(cliIP), srvIP, port, &cliErr, nil
			require.NoError(t, Run(ctx, cfg, &cliOut), cliErr.String())
			require.NoError(t, <-done, srvErr.String())
			addrLine := regexp.MustCompile(`(?m)^\s+(local|remote) address: +(.*)$`)
			lines := func(out string) map[string]string {
				m := map[string]string{}
				for _, l := range addrLine.FindAllStringSubmatch(out, -1) {
					// ibv_ud_pingpong writes "PSN 0x...: GID" in its local line.
					m[l[1]] = strings.Replace(l[2], ": GID", ", GID", 1)
				}
				return m
			}
			s, c := lines(srvOut.String()), lines(cliOut.String())
			require.Len(t, s, 2, srvOut.String())
			require.Len(t, c, 2, cliOut.String())
			assert.Equal(t, s["local"], c["remote"])
			assert.Equal(t, c["local"], s["remote"])
			for _, out := range []string{srvOut.String(), cliOut.String()} {
				assert.Contains(t, out, fmt.Sprintf("%d bytes in ", 5*256*2))
				assert.Contains(t, out, "5 iters in ")
			}
		})
	}
}

// TestRunSRQ plays ibv_srq_pingpong between two ibpeers: each side's QPs
// (their local lines) are the other's remote lines, in order, and both
// report the iterations counted across the QPs; with more QPs than
// iterations some QPs never send again after the first round; a server
// with more QPs than its client (-q 16 against -q 4) leaves the rest
// unconnected and lists them with the zero records, as the tool does.
func TestRunSRQ(t *testing.T) {
	for i, tc := range []struct{ numQP, cliQP, iters, rxDepth, size int }{
		{numQP: 16, iters: 1000, rxDepth: 500, size: 64},
		{numQP: 4, iters: 3, rxDepth: 8, size: 4096},
		{numQP: 1, iters: 50, rxDepth: 1, size: 1},
		{numQP: 16, cliQP: 4, iters: 200, rxDepth: 500, size: 100},
	} {
		t.Run(fmt.Sprintf("%d QPs %d iters", tc.numQP, tc.iters), func(t *testing.T) {
			srvIP, cliIP := ppAddrs(120 + i)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			addr := make(chan net.Addr, 1)
			var srvOut, srvErr peertest.Buffer
			done := make(chan error, 1)
			cfg := Config{Type: endpoint.RC, SRQ: true, NumQP: tc.numQP, Addr: netip.MustParseAddr(srvIP), Size: tc.size,
				MTU: layers.MTU1024, RXDepth: tc.rxDepth, Iters: tc.iters, Stderr: &srvErr, Listening: func(a net.Addr) { addr <- a }}
			go func() { done <- Run(ctx, cfg, &srvOut) }()
			port := (<-addr).(*net.TCPAddr).Port
			var cliOut, cliErr peertest.Buffer
			cfg.Addr, cfg.Host, cfg.Port, cfg.Stderr, cfg.Listening = netip.MustParseAddr(cliIP), srvIP, port, &cliErr, nil
			if tc.cliQP != 0 {
				cfg.NumQP = tc.cliQP
			}
			require.NoError(t, Run(ctx, cfg, &cliOut), cliErr.String())
			require.NoError(t, <-done, srvErr.String())
			addrLine := regexp.MustCompile(`(?m)^  (local|remote) address: +(.*)$`)
			lines := func(out string) (local, remote []string) {
				for _, l := range addrLine.FindAllStringSubmatch(out, -1) {
					if l[1] == "local" {
						local = append(local, l[2])
					} else {
						remote = append(remote, l[2])
					}
				}
				return local, remote
			}
			sl, sr := lines(srvOut.String())
			cl, cr := lines(cliOut.String())
			require.Len(t, sl, tc.numQP, srvOut.String())
			if tc.cliQP != 0 {
				assert.Equal(t, sl[:tc.cliQP], cr)
				assert.Equal(t, cl, sr[:tc.cliQP])
				for _, r := range sr[tc.cliQP:] {
					assert.Equal(t, "LID 0x0000, QPN 0x000000, PSN 0x000000, GID ::", r)
				}
				assert.Contains(t, srvErr.String(), "the peer has 4 QPs, this side 16: QP[4] to QP[15] stay unconnected")
			} else {
				assert.Equal(t, sl, cr)
				assert.Equal(t, cl, sr)
			}
			for _, out := range []string{srvOut.String(), cliOut.String()} {
				assert.Contains(t, out, fmt.Sprintf("%d bytes in ", tc.iters*tc.size*2))
				assert.Contains(t, out, fmt.Sprintf("%d iters in ", tc.iters))
			}
		})
	}
}
