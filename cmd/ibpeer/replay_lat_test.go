package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/craftcmd"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
)

// craftLat writes a latency test's conversation as craft makes it: n
// messages of op, each posted once the one before completed, at path MTU
// mtu. It returns the capture's path.
func craftLat(t *testing.T, mtu, n int, op craft.Op) string {
	t.Helper()
	op.Wait = true
	ops := make([]craft.Op, n)
	for i := range ops {
		ops[i] = op
	}
	path := filepath.Join(t.TempDir(), "lat.pcap")
	require.NoError(t, craftcmd.Run(context.Background(), craftcmd.Config{Craft: craft.Config{MTU: mtu}, Ops: ops, Format: capture.FormatPcap, Out: path}, io.Discard))
	return path
}

var (
	latWrite = craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(2, 1), VA: 0x7f0000001000, RKey: 0x1234}
	latRead  = craft.Op{Kind: craft.OpRead, Data: craft.Pattern(2, 1), VA: 0x7f0000001000, RKey: 0x1234}
	latSend  = craft.Op{Kind: craft.OpSend, Data: craft.Pattern(2, 1)}
)

// TestReplayCompareLatencyAgainstServe plays latency-test conversations
// (ib_write_lat, ib_read_lat, ib_send_lat: 2-byte messages, one at a
// time) against a default ibpeer serve, as a user would:
// ibpeer serve --addr 127.0.0.2, then ibpeer replay --compare --to
// 127.0.0.2 --setup pingpong FILE. A capture of single-packet messages
// cannot tell the path MTU; any MTU at which they are single packets
// answers the same, so serve's 1024 must do.
func TestReplayCompareLatencyAgainstServe(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		mtu  int // the captured connection's
		op   craft.Op
	}{
		{"write_lat at MTU 1024", 1024, latWrite},
		{"read_lat at MTU 1024", 1024, latRead},
		{"send_lat at MTU 1024", 1024, latSend},
		{"write_lat at MTU 256", 256, latWrite},
		{"send_lat at MTU 4096", 4096, latSend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcap := craftLat(t, tt.mtu, 20, tt.op)
			srv := servetest.Start(t, nil)
			code, stdout, stderr := ibpeer("replay", "--compare", "--to", "127.0.0.2", "--oob", srv.TCP.String(),
				"--setup", "pingpong", "--timeout", "2s", pcap)
			out := srv.Stop(t)
			require.Equal(t, exitOK, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, out)
			assert.Contains(t, stdout, "compare: played 20 requests")
			ackSummary(t, stdout, 20)
		})
	}
}

// TestReplayCompareMTURange: a peer whose MTU would segment the captured
// messages otherwise is refused, and the refusal names the MTUs that
// would do; a peer at any of them is accepted, through each set-up that
// learns the peer's MTU.
func TestReplayCompareMTURange(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	// 300-byte WRITEs are single packets at 512 and more, two at 256.
	writes300 := craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(300, 1), VA: 0x7f0000001000, RKey: 0x1234}
	tests := []struct {
		name    string
		setup   string // pingpong (ibpeer serve) or perftest (ibpeer perftest write)
		peerMTU int
		op      craft.Op
		code    int
		want    string // in stderr when refused
	}{
		{name: "serve at 256 refused", setup: "pingpong", peerMTU: 256, op: writes300, code: exitError,
			want: "ibpeer replay: set-up: the peer's QPs use path MTU 256; the captured messages segment the same only at path MTUs 512 to 4096: start ibpeer serve with --mtu 512"},
		{name: "serve at 512", setup: "pingpong", peerMTU: 512, op: writes300, code: exitOK},
		{name: "serve at 4096", setup: "pingpong", peerMTU: 4096, op: writes300, code: exitOK},
		{name: "perftest at 256 refused", setup: "perftest", peerMTU: 256, op: writes300, code: exitError,
			want: "ibpeer replay: set-up: the peer's active MTU is 256; the captured messages segment the same only at path MTUs 512 to 4096: give the peer -m 512"},
		{name: "perftest at 512", setup: "perftest", peerMTU: 512, op: writes300, code: exitOK},
		{name: "perftest at 2048, 2-byte WRITEs", setup: "perftest", peerMTU: 2048, op: latWrite, code: exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcap := craftLat(t, 1024, 10, tt.op)
			args := []string{"replay", "--compare", "--to", "127.0.0.2", "--setup", tt.setup, "--timeout", "2s"}
			var stop func() string
			if tt.setup == "pingpong" {
				srv := servetest.Start(t, func(c *serve.Config) { c.MTU = tt.peerMTU })
				args = append(args, "--oob", srv.TCP.String())
				stop = func() string { return srv.Stop(t) }
			} else {
				port, wait := startPerftestServer(t, "write", "-m", fmt.Sprint(tt.peerMTU))
				args = append(args, "--oob", fmt.Sprintf("127.0.0.2:%d", port))
				stop = func() string { out, _ := wait(); return out }
			}
			code, stdout, stderr := ibpeer(append(args, pcap)...)
			out := stop()
			require.Equal(t, tt.code, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, out)
			if tt.want != "" {
				assert.Contains(t, stderr, tt.want)
				return
			}
			ackSummary(t, stdout, 10)
		})
	}
}

// TestReplayCompareRNRNak: a peer whose receive queue ran out answers
// RNR NAK. The report says so on its first line, with the fix, not after
// a diff; the player sends the request again after the NAK's timer, as a
// requester does, so a peer that catches up passes, and one that never
// does fails.
func TestReplayCompareRNRNak(t *testing.T) {
	pcap := craftLat(t, 1024, 10, latSend)
	c, err := replay.Load(pcap, replay.LoadOptions{})
	require.NoError(t, err)
	plan, err := replay.NewPlan(c, 0, 0)
	require.NoError(t, err)
	rnr := func(dg []byte) []byte {
		dg[12] = byte(layers.MakeRNRNakSyndrome(1))
		return dg
	}
	tests := []struct {
		name   string
		mutate func(n int, dg []byte) []byte
		code   int
		first  string
		more   string
	}{
		{"once", func(n int, dg []byte) []byte {
			if n == 3 {
				return rnr(dg)
			}
			return dg
		}, exitOK, "compare: peer sent RNR NAK 1 time (its receive queue was empty): post more receive buffers on the peer's QP\n",
			"compare: 10 responses captured, 10 received; no differences\n"},
		{"always", func(n int, dg []byte) []byte {
			if binary.BigEndian.Uint32(dg[12:])&0xFFFFFF == 3 { // MSN 3
				return rnr(dg)
			}
			return dg
		}, exitError, "compare: peer sent RNR NAK 8 times (its receive queue was empty): post more receive buffers on the peer's QP\n",
			"compare: the player gave up on the request of frame "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.7:0"))
			require.NoError(t, err)
			done := captureResponder(t, w, plan, 0x4242, false, tt.mutate)
			code, stdout, stderr := ibpeer("replay", "--compare", "--to", w.LocalAddr().String(), "--from", "127.0.0.8:0",
				"--setup", "manual", "--peer-qpn", "0x4242", "--timeout", "2s", pcap)
			require.NoError(t, w.Close())
			<-done
			assert.Equal(t, tt.code, code, "stdout:\n%s\nstderr: %s", stdout, stderr)
			first, _, _ := strings.Cut(stdout, "\n")
			assert.Equal(t, tt.first, first+"\n")
			assert.Contains(t, stdout, tt.more)
		})
	}
}

// TestReplayCompareLatencyCaptures is issue 17's check on real captures:
// rxe<->rxe ib_write_lat, ib_read_lat and ib_send_lat (2-byte messages,
// path MTU 1024, 200 iterations; both sides are requesters in write_lat
// and send_lat), each side played against a default ibpeer serve as a
// user would type it, with no difference. rxe resent a few SENDs and
// WRITEs on its timer without loss: each is played once and answered once.
func TestReplayCompareLatencyCaptures(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	const dir = "../../interop/testdata/"
	tests := []struct {
		capture string
		args    []string
		seed    bool // start the region with the capture's image (READ data)
		want    []string
	}{
		{capture: "rxe_write_lat.pcap.gz", args: []string{"--setup", "pingpong", "--side", "a", "--payload"},
			want: []string{"compare: left out 2 retransmitted requests", ": the 2 bytes the capture's WRITEs left are there\n"}},
		{capture: "rxe_write_lat.pcap.gz", args: []string{"--setup", "pingpong", "--side", "b", "--payload"},
			want: []string{": the 2 bytes the capture's WRITEs left are there\n"}},
		{capture: "rxe_read_lat.pcap.gz", args: []string{"--setup", "pingpong"}},
		{capture: "rxe_read_lat.pcap.gz", args: []string{"--setup", "pingpong", "--payload"}, seed: true},
		{capture: "rxe_send_lat.pcap.gz", args: []string{"--setup", "pingpong", "--side", "a"}},
		{capture: "rxe_send_lat.pcap.gz", args: []string{"--setup", "pingpong", "--side", "b"}, want: []string{"compare: left out 3 retransmitted requests"}},
		// No --setup, as a user types it: serve does not answer
		// perftest's exchange, and replay turns to serve's.
		{capture: "rxe_write_lat.pcap.gz",
			want: []string{"compare: the peer did not answer perftest's set-up within 1s; it answered ibpeer serve's (--setup pingpong)\n"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(append([]string{tt.capture}, tt.args...), " "), func(t *testing.T) {
			var image []byte
			if tt.seed {
				img := filepath.Join(t.TempDir(), "region.bin")
				code, _, stderr := ibpeer("replay", "--image", img, dir+tt.capture)
				require.Equal(t, exitOK, code, stderr)
				var err error
				image, err = os.ReadFile(img)
				require.NoError(t, err)
			}
			srv := servetest.Start(t, func(c *serve.Config) { c.Image = image })
			args := append([]string{"replay", "--compare", "--to", "127.0.0.2", "--oob", srv.TCP.String()}, tt.args...)
			code, stdout, stderr := ibpeer(append(args, dir+tt.capture)...)
			out := srv.Stop(t)
			require.Equal(t, exitOK, code, "report:\n%s\nstderr:\n%s\nserver:\n%s", stdout, stderr, out)
			assert.Contains(t, stdout, "compare: played 200 requests")
			ackSummary(t, stdout, 200)
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
		})
	}
}

// TestReplaySetupFallbackFails: without --setup, a peer that answers
// neither perftest's exchange nor serve's is reported with both tried.
func TestReplaySetupFallbackFails(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		// Says nothing to perftest's version message; reads the
		// pingpong message and hangs up.
		first, err := ln.Accept()
		if err != nil {
			return
		}
		defer first.Close()
		second, err := ln.Accept()
		if err != nil {
			return
		}
		io.ReadFull(second, make([]byte, 52))
		second.Close()
	}()
	code, _, stderr := ibpeer("replay", "--compare", "--to", "127.0.0.9:0", "--from", "127.0.0.10:0", "--oob", ln.Addr().String(),
		rxe+"write_bw.pcap")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "ibpeer replay: set-up: the peer did not answer perftest's first message within 1s, and ibpeer serve's exchange (--setup pingpong) failed: ")
}
