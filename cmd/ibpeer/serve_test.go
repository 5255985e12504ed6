package main

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

func TestServeUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"serve", "-h"}, exitOK, "server -> client  62 bytes", ""},
		{"help mentions why", []string{"serve", "-h"}, exitOK, "still parses", ""},
		{"help flags", []string{"serve", "-h"}, exitOK, "-mr-size", ""},
		{"help exit status", []string{"serve", "-h"}, exitOK, "\nExit status: 0 when stopped by SIGINT or SIGTERM, 1 when it cannot serve\n", ""},
		{"no addr", []string{"serve"}, exitUsage, "", "give --addr IP"},
		{"bad addr", []string{"serve", "--addr", "nowhere"}, exitUsage, "", `--addr "nowhere": not an IP address`},
		{"bad mtu", []string{"serve", "--addr", "127.0.0.2", "--mtu", "1500"}, exitUsage, "", "--mtu: MTU 1500"},
		{"small region", []string{"serve", "--addr", "127.0.0.2", "--mr-size", "4"}, exitUsage, "", "--mr-size 4"},
		{"recv", []string{"serve", "--addr", "127.0.0.2", "--recv", "0"}, exitUsage, "", "--recv 0"},
		{"argument", []string{"serve", "--addr", "127.0.0.2", "x"}, exitUsage, "", `unexpected argument "x"`},
		{"port", []string{"serve", "--addr", "127.0.0.2", "--port", "70000"}, exitUsage, "", "--port 70000"},
		{"help max-conns", []string{"serve", "-h"}, exitOK, "-max-conns int", ""},
		{"help refusal", []string{"serve", "-h"}, exitOK, `"refused a set-up
connection from ADDR: 64 connections held (--max-conns 64)"`, ""},
		{"max-conns", []string{"serve", "--addr", "127.0.0.2", "--max-conns", "0"}, exitUsage, "", "--max-conns 0: want 1-65536"},
		{"cm help max-conns", []string{"serve", "--cm", "7471", "-h"}, exitOK, "--max-conns M      connection requests in progress", ""},
		{"cm max-conns below connections", []string{"serve", "--cm", "7471", "--bind", "127.0.0.2", "--connections", "8", "--max-conns", "4"},
			exitUsage, "", "--max-conns 4: want 8 (--connections) to 65536"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ibpeer(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Contains(t, stdout, tt.stdout)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestServeCannotServe: a TCP set-up port already taken is exit status 1
// with the reason, as serve -h says.
func TestServeCannotServe(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	code, _, stderr := ibpeer("serve", "--addr", "127.0.0.2", "--port", fmt.Sprint(port))
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "ibpeer serve: set-up listener: ")
	assert.Contains(t, stderr, "address already in use")
}

// bwRowRE matches a perftest bandwidth row (what the interop scenarios
// look for).
var bwRowRE = regexp.MustCompile(`(?m)^ [0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+\s+[0-9.]+$`)

// latRowRE matches a perftest latency row.
var latRowRE = regexp.MustCompile(`(?m)^ 8 +200 +[0-9.]+ +[0-9.]+ +[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+[ \t]*$`)

func TestServeAndClients(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	srv := servetest.Start(t, nil)
	to := srv.TCP.String()
	tests := []struct {
		name  string
		args  []string
		want  []string
		match *regexp.Regexp
	}{
		{"write", []string{"write", "--size", "65536", "--iters", "100"}, []string{"RDMA_Write BW Test", "TX depth        : 128"}, bwRowRE},
		{"read", []string{"read", "--size", "65536", "--iters", "100"}, []string{"RDMA_Read BW Test", "Outstand reads  : 16"}, bwRowRE},
		{"send", []string{"send", "--size", "65536", "--iters", "100"}, []string{"Send BW Test"}, bwRowRE},
		{"atomic", []string{"atomic", "--iters", "100"}, []string{"Atomic BW Test"}, bwRowRE},
		{"write verify", []string{"write", "--size", "65536", "--iters", "100", "--verify"},
			[]string{"verified: 100 WRITEs of 65536 bytes on 1 QPs, read back from the server, byte-exact"}, bwRowRE},
		{"read verify", []string{"read", "--size", "100000", "--iters", "30", "--verify"},
			[]string{"verified: 30 READs of 100000 bytes on 1 QPs, compared with what was written there, byte-exact"}, bwRowRE},
		{"send verify", []string{"send", "--size", "5000", "--iters", "100", "--verify"},
			[]string{"verified: 100 SENDs of 5000 bytes on 1 QPs, read back from the server's receive buffers, byte-exact"}, bwRowRE},
		{"fetch-add verify", []string{"atomic", "--iters", "300", "--verify"},
			[]string{"verified: 300 FETCH_ADDs on 1 QPs returned 0, 1, 2, … in order and left each server word at 300"}, bwRowRE},
		{"cmp-swap verify", []string{"atomic", "-A", "CMP_AND_SWAP", "--iters", "300", "--verify"},
			[]string{"verified: 300 CMP_SWAPs on 1 QPs returned 0, 1, 2, … in order and left each server word at 300"}, bwRowRE},
		{"write qps 2", []string{"write", "--size", "4096", "--iters", "200", "--qps", "2", "--verify"},
			[]string{"Number of qps   : 2", "verified: 400 WRITEs of 4096 bytes on 2 QPs"}, bwRowRE},
		{"send qps 2", []string{"send", "--size", "4096", "--iters", "200", "--qps", "2", "--verify"},
			[]string{"verified: 400 SENDs of 4096 bytes on 2 QPs"}, bwRowRE},
		{"atomic qps 2", []string{"atomic", "--iters", "100", "--qps", "2", "--verify"},
			[]string{"verified: 200 FETCH_ADDs on 2 QPs"}, bwRowRE},
		{"write loss", []string{"write", "--size", "8192", "--iters", "100", "--verify", "--loss", "0.05", "--seed", "7"},
			[]string{"verified: 100 WRITEs", "(seed 7):"}, bwRowRE},
		{"read loss reorder dup", []string{"read", "--size", "8192", "--iters", "100", "--verify", "--loss", "0.05", "--reorder", "0.05", "--dup", "0.05"},
			[]string{"verified: 100 READs", "(seed 1):"}, bwRowRE},
		{"send loss", []string{"send", "--size", "8192", "--iters", "100", "--verify", "--loss", "0.05"},
			[]string{"verified: 100 SENDs"}, bwRowRE},
		{"atomic loss", []string{"atomic", "--iters", "200", "--verify", "--loss", "0.05", "--dup", "0.05"},
			[]string{"verified: 200 FETCH_ADDs"}, bwRowRE},
		{"latency", []string{"read", "--size", "8", "--iters", "200", "--lat"},
			[]string{"RDMA_Read Latency Test", "TX depth        : 1", "99% percentile[usec]"}, latRowRE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(tt.args, "--addr", "127.0.0.1", "--to", to)
			code, stdout, stderr := ibpeer(args...)
			require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, stdout)
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
			assert.Regexp(t, tt.match, stdout)
			assert.Contains(t, stdout, "GID: 00:00:00:00:00:00:00:00:00:00:255:255:127:00:00:02")
		})
	}
	out := srv.Stop(t)
	assert.Contains(t, out, "ibpeer serve: GID ::ffff:127.0.0.2, RoCEv2 on 127.0.0.2:4791")
	assert.Contains(t, out, "conn 1 from 127.0.0.1:")
	assert.Contains(t, out, "conn 3 closed: 100 SENDs received (6553600 bytes), QP RTS")
	assert.Regexp(t, `ibpeer serve: stopped after 2[0-9] connections; packets sent [0-9]+, received [0-9]+; dropped: 0 short, 0 address, 0 QP, 0 ICRC`, out)
}

func TestClientFailures(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	client := func(to netip.AddrPort, args ...string) (int, string, string) {
		return ibpeer(append([]string{args[0], "--addr", "127.0.0.1", "--to", to.String(), "--timeout", "5s"}, args[1:]...)...)
	}

	t.Run("no server", func(t *testing.T) {
		code, _, stderr := client(netip.MustParseAddrPort("127.0.0.2:1"), "write", "--iters", "10")
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "ibpeer write: QP 0: set-up with 127.0.0.2:1:")
		assert.Contains(t, stderr, "connection refused (is ibpeer serve running there?)")
	})
	t.Run("wrong rkey", func(t *testing.T) {
		srv := servetest.Start(t, func(c *serve.Config) { c.Region = func(r *setup.ServeRegion) { r.RKey ^= 0x100 } })
		code, _, stderr := client(srv.TCP, "write", "--iters", "10")
		out := srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "ibpeer write: QP 0 (QPN 0x000011), work request 0: completed REM_ACCESS_ERR")
		assert.Contains(t, out, "QP failed")
	})
	t.Run("server gone", func(t *testing.T) {
		// The server stops 300 ms after it handed out its region.
		served := make(chan struct{}, 1)
		srv := servetest.Start(t, func(c *serve.Config) {
			c.Region = func(*setup.ServeRegion) { served <- struct{}{} }
		})
		go func() {
			<-served
			time.Sleep(300 * time.Millisecond)
			srv.Cancel()
		}()
		// retry_cnt 7 retries for ever (rxe's rule): the stall timeout ends it.
		code, _, stderr := client(srv.TCP, "write", "--iters", "1000000", "--timeout", "1s")
		srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Regexp(t, `^ibpeer write: no completion for 1s \(is the peer still there\?\): [0-9]+ of 1000000 work requests completed\n$`, stderr)
	})
	t.Run("verify catches a misplaced SEND", func(t *testing.T) {
		// The server says its receive buffers are half as long as they
		// are: the second SEND is read back from the wrong place.
		srv := servetest.Start(t, func(c *serve.Config) { c.Region = func(r *setup.ServeRegion) { r.RecvLen /= 2 } })
		code, _, stderr := client(srv.TCP, "send", "--size", "4096", "--iters", "4", "--verify")
		srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Regexp(t, `ibpeer send: verify: QP 0 message 1 \(4096 bytes, server VA 0x[0-9a-f]+\): byte 0 is 0x[0-9a-f]+, want 0x[0-9a-f]+`, stderr)
	})
	t.Run("mtu mismatch", func(t *testing.T) {
		srv := servetest.Start(t, nil)
		code, _, stderr := client(srv.TCP, "read", "--mtu", "4096", "--iters", "10")
		srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "--mtu 4096: the server's QPs use MTU 1024 (its --mtu); both sides must use the same")
	})
	t.Run("too big for the region", func(t *testing.T) {
		srv := servetest.Start(t, nil)
		code, _, stderr := client(srv.TCP, "write", "--size", "2000000", "--iters", "10")
		srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "--size 2000000: the server's region has 1048576 bytes (ibpeer serve --mr-size)")
	})
	t.Run("send too big for a receive buffer", func(t *testing.T) {
		srv := servetest.Start(t, nil)
		code, _, stderr := client(srv.TCP, "send", "--size", "70000", "--iters", "10")
		srv.Stop(t)
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "--size 70000: the server's receive buffers hold 65536 bytes")
	})
}

func TestClientUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
	}{
		{"write help", []string{"write", "-h"}, exitOK, []string{"usage: ibpeer write --addr IP --to HOST[:PORT]", "RDMA WRITEs", "-verify", "-loss", "-reorder", "-dup", "-seed", "-lat", "-tx-depth", "-qps", "-mtu", "Exit status: 0 when every completion succeeded"}, ""},
		{"read help", []string{"help", "read"}, exitOK, []string{"usage: ibpeer read", "RDMA READs", "99% and 99.9% percentiles"}, ""},
		{"send help", []string{"send", "-h"}, exitOK, []string{"message n lands in buffer n mod C"}, ""},
		{"atomic help", []string{"atomic", "-h"}, exitOK, []string{"CMP_AND_SWAP", "  -A string"}, ""},
		{"top-level help", []string{"-h"}, exitOK, []string{"serve", "write", "read", "send", "atomic", "perftest"}, ""},
		{"no addr", []string{"write", "--to", "127.0.0.2"}, exitUsage, nil, "give --addr IP"},
		{"no to", []string{"write", "--addr", "127.0.0.1"}, exitUsage, nil, "give --to HOST"},
		{"bad to", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2:x"}, exitUsage, nil, `--to "127.0.0.2:x"`},
		{"loss", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--loss", "1.5"}, exitUsage, nil, "--loss 1.5: want a probability"},
		{"dup NaN", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--dup", "NaN"}, exitUsage, nil, "--dup NaN"},
		{"iters", []string{"read", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--iters", "0"}, exitUsage, nil, "--iters 0"},
		{"size", []string{"send", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--size", "0"}, exitUsage, nil, "--size 0"},
		{"atomic size", []string{"atomic", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--size", "16"}, exitUsage, nil, "atomics move 8 bytes"},
		{"atomic op", []string{"atomic", "--addr", "127.0.0.1", "--to", "127.0.0.2", "-A", "SWAP"}, exitUsage, nil, `-A "SWAP"`},
		{"mtu", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--mtu", "1000"}, exitUsage, nil, "--mtu: MTU 1000"},
		{"qps", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--qps", "0"}, exitUsage, nil, "--qps 0"},
		{"depth", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "--tx-depth", "0"}, exitUsage, nil, "--tx-depth 0"},
		{"argument", []string{"write", "--addr", "127.0.0.1", "--to", "127.0.0.2", "extra"}, exitUsage, nil, `unexpected argument "extra"`},
		{"unknown flag", []string{"read", "--bogus"}, exitUsage, nil, "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ibpeer(tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			for _, s := range tt.stdout {
				assert.Contains(t, stdout, s)
			}
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestPcap: --pcap on both sides records every packet with IP and UDP
// headers under which each ICRC verifies, as ibdump --check requires.
func TestPcap(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	spath, cpath := filepath.Join(dir, "server.pcap"), filepath.Join(dir, "client.pcap")
	srv := servetest.Start(t, func(c *serve.Config) { c.Pcap = spath })
	code, stdout, stderr := ibpeer("write", "--addr", "127.0.0.1", "--to", srv.TCP.String(), "--size", "8192", "--iters", "50",
		"--verify", "--loss", "0.05", "--pcap", cpath)
	out := srv.Stop(t)
	require.Equal(t, exitOK, code, stderr)
	for _, f := range []struct {
		path, log string
	}{{cpath, stdout}, {spath, out}} {
		frames := peertest.ReadFrames(t, f.path)
		assert.Contains(t, f.log, fmt.Sprintf("%s: %d packets sent and received\n", f.path, len(frames)))
		require.Greater(t, len(frames), 400, "50 WRITEs of 8 packets, their READs back and the ACKs")
		for i, p := range frames {
			require.Equal(t, layers.LinkTypeRaw, p.LinkType)
			got, want, err := layers.VerifyICRC(layers.EncapRoCEv2IPv4, p.Data)
			require.NoError(t, err, "frame %d", i+1)
			require.Equal(t, want, got, "frame %d of %s: ICRC", i+1, f.path)
		}
	}
}

// TestServePlainPingpongClient: a client that knows only ibv_rc_pingpong's
// exchange gets a valid 52-byte answer, may hang up without reading the
// region, and the server goes on serving.
func TestServePlainPingpongClient(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	srv := servetest.Start(t, nil)
	c, err := net.Dial("tcp", srv.TCP.String())
	require.NoError(t, err)
	gid := netip.MustParseAddr("127.0.0.1").As16()
	remote, err := setup.PingpongClient(c, setup.PingpongDest{QPN: 0x77, PSN: 0x123456, GID: gid})
	require.NoError(t, err)
	c.Close()
	// The client is done once its "done" is written; the server's handler
	// may not have read it yet, and a server stopped before then reports
	// the exchange cut short (1 run in 30, when the read client below was
	// quick). Wait for the server to finish with this connection.
	require.Eventually(t, func() bool { return strings.Contains(srv.Out.String(), "conn 1 closed") },
		10*time.Second, 5*time.Millisecond, "the server never finished conn 1: %s", srv.Out.String())
	assert.Equal(t, netip.MustParseAddr("::ffff:127.0.0.2").As16(), remote.GID)
	assert.Equal(t, uint32(0x11), remote.QPN)
	assert.LessOrEqual(t, remote.PSN, uint32(0xFFFFFF))

	code, stdout, stderr := ibpeer("read", "--addr", "127.0.0.1", "--to", srv.TCP.String(), "--size", "4096", "--iters", "20", "--verify")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "verified: 20 READs")
	out := srv.Stop(t)
	assert.Contains(t, out, "conn 1 from 127.0.0.1:")
	assert.Contains(t, out, "client QPN 0x000077 PSN 0x123456 GID 127.0.0.1; served by QPN 0x000011")
	assert.Contains(t, out, "conn 1 closed: 0 SENDs received (0 bytes), QP RTS")
	assert.Contains(t, out, "conn 2 closed")
}

// TestServeMaxConns: set-up connections beyond --max-conns are closed at
// once with a line saying so, and none of them gets a region; those held
// are dropped at the set-up deadline; then a client runs.
func TestServeMaxConns(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	const maxConns, deadline = 4, 2 * time.Second
	var mu sync.Mutex
	peak := 0
	srv := servetest.Start(t, func(c *serve.Config) {
		c.MaxConns, c.SetupTimeout = maxConns, deadline
		c.Held = func(n int) {
			mu.Lock()
			peak = max(peak, n)
			mu.Unlock()
		}
	})
	hello := setup.PingpongDest{QPN: 0x11, PSN: 0x22, GID: endpoint.GIDOf(netip.MustParseAddr("127.0.0.1"))}.Marshal()
	tests := []struct {
		name  string
		hello bool // the client sends its address, then never "done"
	}{
		{name: "silent clients"},
		{name: "clients that stop after their address", hello: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			closedAfter := make(chan time.Duration, 3*maxConns)
			for range 3 * maxConns {
				c, err := net.Dial("tcp", srv.TCP.String())
				require.NoError(t, err)
				defer c.Close()
				if tc.hello {
					_, err = c.Write(hello)
					require.NoError(t, err)
				}
				go func() {
					c.SetReadDeadline(time.Now().Add(3 * deadline))
					_, _ = io.Copy(io.Discard, c)
					closedAfter <- time.Since(start)
				}()
			}
			refused, dropped := 0, 0
			for range 3 * maxConns {
				switch d := <-closedAfter; {
				case d < deadline/2:
					refused++
				case d >= deadline && d < 2*deadline:
					dropped++
				default:
					t.Errorf("a connection closed after %v", d)
				}
			}
			assert.Equal(t, 2*maxConns, refused, "closed at once")
			assert.Equal(t, maxConns, dropped, "closed at the set-up deadline")
		})
	}
	code, stdout, stderr := ibpeer("write", "--addr", "127.0.0.1", "--to", srv.TCP.String(), "--iters", "10", "--verify")
	require.Equal(t, exitOK, code, "stderr: %s\nstdout: %s", stderr, stdout)
	out := srv.Stop(t)
	mu.Lock()
	assert.LessOrEqual(t, peak, maxConns, "regions held at once")
	mu.Unlock()
	assert.Regexp(t, `refused a set-up connection from 127\.0\.0\.1:[0-9]+: 4 connections held \(--max-conns 4\)`, out)
	assert.Regexp(t, `conn [0-9]+ from 127\.0\.0\.1:[0-9]+: set-up not finished within 2s, dropped`, out)
}
