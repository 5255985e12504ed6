package perftest

import (
	"context"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/setup"
)

// TestRun plays each test between a server and a client of this package
// over loopback, set up by TCP and by RDMA CM (-R): both print the table,
// and for what the client reports at the end the server prints the
// client's figures.
func TestRun(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	row := regexp.MustCompile(`(?m)^ [0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+\s+[0-9.]+$`)
	for _, tc := range []struct {
		verb    string
		rdmacm  bool
		qps     int
		bidir   bool
		sameRow bool
	}{
		{verb: "write", bidir: true, sameRow: true},
		{verb: "write", qps: 2, bidir: true, sameRow: true},
		{verb: "write", sameRow: true},
		{verb: "read", sameRow: true},
		{verb: "write", qps: 4, sameRow: true},
		{verb: "read", qps: 3, sameRow: true},
		{verb: "send"},
		{verb: "atomic", sameRow: true},
		{verb: "write", rdmacm: true, sameRow: true},
	} {
		name := tc.verb
		if tc.rdmacm {
			name += " -R"
		}
		if tc.qps > 1 {
			name += " -q " + strconv.Itoa(tc.qps)
		}
		if tc.bidir {
			name += " -b"
		}
		t.Run(name, func(t *testing.T) {
			size := 4096
			if tc.verb == "atomic" {
				size = 8
			}
			cfg := Config{Verb: tc.verb, Addr: netip.MustParseAddr("127.0.0.2"), Size: size, Iters: 50, MTU: 1024, Depth: 16,
				OutReads: setup.PerftestOutReads, MBps: true, Stall: 10 * time.Second, RDMACM: tc.rdmacm, QPs: tc.qps, Bidirectional: tc.bidir}
			if tc.rdmacm {
				cfg.Port = 18515 // an RDMA CM port: no kernel's choice
			}
			sout, cout := runPair(t, cfg)
			crow, srow := row.FindString(cout.String()), row.FindString(sout.String())
			require.NotEmpty(t, crow, cout.String())
			require.NotEmpty(t, srow, sout.String())
			assert.Regexp(t, `^ `+strconv.Itoa(size)+` +50 `, crow)
			if tc.sameRow {
				assert.Equal(t, crow, srow)
			}
			assert.Contains(t, sout.String(), "Waiting for client to connect")
			assert.Contains(t, cout.String(), "Mtu             : 1024[B]")
			if n := max(tc.qps, 1); n > 1 {
				// a QP message each way per QP, each QP its own part of
				// the peer's buffer
				assert.Contains(t, cout.String(), "Number of qps   : "+strconv.Itoa(n))
				for _, out := range []string{cout.String(), sout.String()} {
					assert.Len(t, regexp.MustCompile(`(?m)^ local address: `).FindAllString(out, -1), n)
					vas := regexp.MustCompile(`(?m)^ remote address: .* VAddr 0x([0-9a-f]+)$`).FindAllStringSubmatch(out, -1)
					require.Len(t, vas, n)
					seen := map[string]bool{}
					for _, va := range vas {
						seen[va[1]] = true
					}
					assert.Len(t, seen, n, "each QP writes or reads its own part")
				}
			}
		})
	}
}

// runPair runs cfg as a server on 127.0.0.2 and as its client on
// 127.0.0.1, and returns what each printed; both must succeed.
func runPair(t *testing.T, cfg Config) (sout, cout *peertest.Buffer) {
	t.Helper()
	sout, cout = &peertest.Buffer{}, &peertest.Buffer{}
	ready := make(chan netip.AddrPort, 1)
	scfg := cfg
	scfg.Ready = func(a netip.AddrPort) { ready <- a }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, scfg, sout) }()
	var at netip.AddrPort
	select {
	case at = <-ready:
	case err := <-done:
		t.Fatalf("server: %v", err)
	}
	ccfg := cfg
	ccfg.Addr, ccfg.Port, ccfg.Server = netip.MustParseAddr("127.0.0.1"), int(at.Port()), at
	require.NoError(t, Run(ctx, ccfg, cout), cout.String())
	require.NoError(t, <-done, sout.String())
	return sout, cout
}

// fakeDest is a QP message of a peer played by the test: any QPN, the GID
// of 127.0.0.1 (IPv4-mapped, as ibpeer's).
func fakeDest(qpn uint32) setup.PerftestDest {
	gid := netip.MustParseAddr("::ffff:127.0.0.1").As16()
	return setup.PerftestDest{OutReads: 1, QPN: qpn, PSN: 0x100, RKey: 1, VAddr: 0x1000, GID: gid}
}

// TestRefusesWhatItDoesNotRun plays perftest clients and servers that ask
// for what ibpeer perftest does not run, with perftest's messages in
// perftest's order: ibpeer refuses in the set-up exchange, before any
// traffic, naming what it refused, and the peer sees the connection close
// where it waits for an answer (so perftest fails there and prints no
// result).
func TestRefusesWhatItDoesNotRun(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	params := setup.PerftestParams{CycleBuffer: setup.PerftestCycleBuffer, CacheLine: setup.PerftestCacheLine, MTU: 3}
	for _, tc := range []struct {
		name   string
		verb   string
		qps    int      // ibpeer's -q (0: 1)
		server bool     // ibpeer is the server; else the client of the fake server
		qpns   []uint32 // the fake peer's QP messages, in order, before the one that must go unanswered
		last   uint32   // the QPN of the message that must go unanswered (server) / that ibpeer refuses (client)
		want   string
	}{
		{name: "client -q 4", verb: "write", server: true, qpns: []uint32{0x11, 0x12, 0x13, 0x14}, last: 0x11, want: "the peer runs 4 QPs (perftest -q 4)"},
		{name: "client -q 2", verb: "read", server: true, qpns: []uint32{0x11, 0x12}, last: 0x11, want: "the peer runs 2 QPs (perftest -q 2)"},
		{name: "client -q 3 send", verb: "send", server: true, qpns: []uint32{0x11, 0x12, 0x13}, last: 0x11, want: "the peer runs 3 QPs (perftest -q 3)"},
		// -b: perftest's three set-up handshakes, then the one it sends before its traffic
		{name: "client -b", verb: "write", server: true, qpns: []uint32{0x11, 0x11, 0x11}, last: 0x11, want: "bidirectional test (perftest -b)"},
		{name: "client -b atomic", verb: "atomic", server: true, qpns: []uint32{0x11, 0x11, 0x11}, last: 0x11, want: "bidirectional test (perftest -b)"},
		{name: "server -q 4", verb: "write", qpns: []uint32{0x21, 0x22, 0x23, 0x24}, last: 0x21, want: "the peer runs 4 QPs (perftest -q 4)"},
		{name: "-q 4 against client -q 2", verb: "write", qps: 4, server: true, qpns: []uint32{0x11, 0x12}, last: 0x11,
			want: "the peer runs 2 QPs (perftest -q 2), this side 4 (-q 4)"},
		{name: "-q 2 against server -q 3", verb: "read", qps: 2, qpns: []uint32{0x21, 0x22, 0x23}, last: 0x21,
			want: "the peer runs 3 QPs (perftest -q 3), this side 2 (-q 2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := 4096
			if tc.verb == "atomic" {
				size = 8
			}
			cfg := Config{Verb: tc.verb, Addr: netip.MustParseAddr("127.0.0.2"), Size: size, Iters: 50, MTU: 1024, Depth: 16,
				OutReads: setup.PerftestOutReads, MBps: true, Stall: 5 * time.Second, QPs: tc.qps}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var out peertest.Buffer
			done := make(chan error, 1)
			var conn net.Conn
			if tc.server {
				ready := make(chan netip.AddrPort, 1)
				cfg.Ready = func(a netip.AddrPort) { ready <- a }
				go func() { done <- Run(ctx, cfg, &out) }()
				at := <-ready
				c, err := net.Dial("tcp", at.String())
				require.NoError(t, err)
				conn = c
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(t, err)
				defer ln.Close()
				cfg.Server = ln.Addr().(*net.TCPAddr).AddrPort()
				cfg.Port = int(cfg.Server.Port())
				go func() { done <- Run(ctx, cfg, &out) }()
				c, err := ln.Accept()
				require.NoError(t, err)
				conn = c
			}
			defer conn.Close()
			p := setup.NewPerftestConn(conn, !tc.server)
			_, err := p.Open(params)
			require.NoError(t, err)
			for i, qpn := range tc.qpns {
				_, err := p.Handshake(fakeDest(qpn))
				require.NoError(t, err, "handshake %d", i+1)
			}
			_, herr := p.Handshake(fakeDest(tc.last))
			err = <-done
			require.ErrorIs(t, err, ErrRefused)
			assert.Contains(t, err.Error(), tc.want)
			if tc.server {
				// the refused message is never answered
				require.Error(t, herr)
				assert.Contains(t, herr.Error(), "peer closed after 0 of 108 bytes")
			} else {
				// ibpeer sent its message, refused the answer and closed
				require.NoError(t, herr)
				_, err := p.Handshake(fakeDest(tc.last))
				require.Error(t, err)
			}
			assert.NotRegexp(t, `(?m)^ [0-9]+ +[0-9]+ +[0-9.]+`, out.String(), "no result row")
		})
	}
}

// TestRunLatency plays each latency test between a server and a client of
// this package over loopback: the client prints perftest's latency row
// with every iteration counted; the WRITE and SEND servers print their own, the READ
// and atomic servers none (only the closing dashes); the block says
// "Latency Test", TX depth 1 on the client, no CQ moderation.
func TestRunLatency(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	row := regexp.MustCompile(`(?m)^ [0-9]+ +[0-9]+([ \t]+[0-9.]+){7}[ \t]*$`)
	for _, tc := range []struct {
		verb      string
		size      int
		cas       bool
		serverRow bool
		title     string
	}{
		{verb: "write_lat", size: 2, serverRow: true, title: "RDMA_Write Latency Test"},
		{verb: "write_lat", size: 5000, serverRow: true, title: "RDMA_Write Latency Test"},
		{verb: "read_lat", size: 2, title: "RDMA_Read Latency Test"},
		{verb: "send_lat", size: 2, serverRow: true, title: "Send Latency Test"},
		{verb: "send_lat", size: 3000, serverRow: true, title: "Send Latency Test"},
		{verb: "atomic_lat", size: 8, title: "Atomic Latency Test"},
		{verb: "atomic_lat", size: 8, cas: true, title: "Atomic Latency Test"},
	} {
		t.Run(tc.verb+"-"+strconv.Itoa(tc.size), func(t *testing.T) {
			cfg := Config{Verb: tc.verb, Addr: netip.MustParseAddr("127.0.0.2"), Size: tc.size, Iters: 40, MTU: 1024, Depth: 128,
				OutReads: setup.PerftestOutReads, CAS: tc.cas, Stall: 10 * time.Second}
			sout, cout := runPair(t, cfg)
			crow := row.FindString(cout.String())
			require.NotEmpty(t, crow, cout.String())
			assert.Regexp(t, `^ `+strconv.Itoa(tc.size)+` +40 `, crow)
			if tc.serverRow {
				assert.Regexp(t, `^ `+strconv.Itoa(tc.size)+` +40 `, row.FindString(sout.String()), sout.String())
			} else {
				assert.Empty(t, row.FindString(sout.String()), sout.String())
				assert.Regexp(t, `GID: [0-9:]+\n-+\n$`, sout.String(), "the server ends with a line of dashes")
			}
			for _, out := range []string{cout.String(), sout.String()} {
				assert.Contains(t, out, tc.title)
				assert.NotContains(t, out, "CQ Moderation")
			}
			assert.Contains(t, cout.String(), " TX depth        : 1\n")
			assert.NotContains(t, sout.String(), "TX depth")
		})
	}
}

// TestLatencyExchangeAsPerftest plays perftest 6.06's side of a READ or
// atomic latency test against ibpeer's server, message for message as a
// capture of ib_read_lat between two rxe guests shows them: the opening,
// four handshakes before the traffic, one after it, then "done". The fake
// client runs no traffic (the server takes no part in it); what must hold
// is that both ends of the exchange line up.
func TestLatencyExchangeAsPerftest(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	params := setup.PerftestParams{CycleBuffer: setup.PerftestCycleBuffer, CacheLine: setup.PerftestCacheLine, MTU: 3}
	for _, verb := range []string{"read_lat", "atomic_lat"} {
		t.Run(verb, func(t *testing.T) {
			size := 2
			if verb == "atomic_lat" {
				size = 8
			}
			cfg := Config{Verb: verb, Addr: netip.MustParseAddr("127.0.0.2"), Size: size, Iters: 50, MTU: 1024,
				OutReads: setup.PerftestOutReads, Stall: 5 * time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ready := make(chan netip.AddrPort, 1)
			cfg.Ready = func(a netip.AddrPort) { ready <- a }
			var out peertest.Buffer
			done := make(chan error, 1)
			go func() { done <- Run(ctx, cfg, &out) }()
			conn, err := net.Dial("tcp", (<-ready).String())
			require.NoError(t, err)
			defer conn.Close()
			p := setup.NewPerftestConn(conn, false)
			_, err = p.Open(params)
			require.NoError(t, err)
			for i := range 4 + 1 {
				_, err := p.Handshake(fakeDest(0x11))
				require.NoError(t, err, "handshake %d", i+1)
			}
			require.NoError(t, p.ExchangeDone())
			require.NoError(t, <-done, out.String())
			assert.Regexp(t, `GID: [0-9:]+\n-+\n$`, out.String(), "the server ends with a line of dashes, no result")
		})
	}
}

// TestStartsPingPong: which side sends first, as captures of rxe<->rxe
// runs show it (interop/testdata): ib_send_lat's client, ib_write_lat's
// server. Two ibpeers agree whichever it is, so only this pins it.
func TestStartsPingPong(t *testing.T) {
	for _, tc := range []struct {
		op     string
		server bool
		want   bool
	}{
		{"send", false, true},
		{"send", true, false},
		{"write", true, true},
		{"write", false, false},
	} {
		assert.Equal(t, tc.want, startsPingPong(tc.op, tc.server), "%s server=%v", tc.op, tc.server)
	}
}
