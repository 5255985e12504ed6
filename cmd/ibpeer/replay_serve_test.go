package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
)

// TestReplayCompareAgainstServe is issue 9's end-to-end check: the
// requester halves of rxe's write_bw, read_bw and atomic_fadd captures,
// played against a live ibpeer serve that learned nothing but the
// capture's own region image (for READs and atomics), get the answers the
// capture holds, payload included, and the WRITEs leave their data in the
// zeroed region. The set-up is ibpeer serve's own (pingpong exchange, then its
// region message), so replay learns the R_Key and VA from the peer.
func TestReplayCompareAgainstServe(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	tests := []struct {
		name    string
		capture string
		seed    bool // start the region with the capture's image
		mrSize  int
		mtu     int
		code    int
		stdout  []string // what the report must say
		stderr  string
		clean   int // a clean report of this many captured responses (ackSummary)
	}{
		// Not seeded: the region starts zeroed, and --payload reads the
		// span the WRITEs cover back after the play.
		{name: "write_bw", capture: "write_bw.pcap", mtu: 1024, code: exitOK,
			stdout: []string{"played 800 requests", "200 responses captured", "no differences",
				"compare: read back the 4096 bytes the WRITEs span at va 0x", ": the 4096 bytes the capture's WRITEs left are there\n"}, clean: 200},
		{name: "read_bw", capture: "read_bw.pcap", seed: true, mtu: 1024, code: exitOK,
			stdout: []string{"played 200 requests", "800 responses captured, 800 received; no differences"}, clean: 800},
		{name: "atomic_fadd", capture: "atomic_fadd.pcap", seed: true, mtu: 1024, code: exitOK,
			stdout: []string{"played 200 requests", "200 responses captured, 200 received; no differences"}, clean: 200},
		// Without the image the READ data cannot match: the payload
		// comparison must notice, while the structure still agrees.
		{name: "read_bw unseeded", capture: "read_bw.pcap", mtu: 1024, code: exitError,
			stdout: []string{"800 responses captured, 800 received; 1 difference", "+live #1     RC_RDMA_READ_RESPONSE_FIRST psn +0 ACK credits=unlimited msn 1 len 1024 data crc32 0x",
				" (to frame 22)\n+live #2     RC_RDMA_READ_RESPONSE_MIDDLE psn +1 len 1024 data crc32 0x"}},
		{name: "atomic_fadd unseeded", capture: "atomic_fadd.pcap", mtu: 1024, code: exitError,
			stdout: []string{"200 responses captured, 200 received; 1 difference", "+live #1     RC_ATOMIC_ACKNOWLEDGE psn +0 ACK credits=unlimited msn 1 len 0 orig 0x0 (to frame 22)\n"}},
		{name: "MTU differs", capture: "write_bw_mtu4096.pcap", seed: true, mtu: 1024, code: exitError,
			stderr: "the peer's QPs use path MTU 1024, the capture 4096: start ibpeer serve with --mtu 4096"},
		{name: "region too small", capture: "read_bw.pcap", seed: false, mrSize: 2048, mtu: 1024, code: exitError,
			stderr: "the peer's region has 2048 bytes, the captured requests touch 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pcap := rxe + tt.capture
			var image []byte
			if tt.seed {
				img := filepath.Join(t.TempDir(), "region.bin")
				code, _, stderr := ibpeer("replay", "--image", img, pcap)
				require.Equal(t, exitOK, code, stderr)
				var err error
				image, err = os.ReadFile(img)
				require.NoError(t, err)
			}
			srv := servetest.Start(t, func(c *serve.Config) {
				c.Image, c.MTU = image, tt.mtu
				if tt.mrSize != 0 {
					c.MRSize, c.Recv = tt.mrSize, 1
				}
			})
			code, stdout, stderr := ibpeer("replay", "--compare", "--to", "127.0.0.2", "--oob", srv.TCP.String(),
				"--setup", "pingpong", "--payload", "--timeout", "2s", pcap)
			out := srv.Stop(t)
			assert.Equal(t, tt.code, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, out)
			for _, s := range tt.stdout {
				assert.True(t, strings.Contains(stdout, s), "want %q in the report; its summary:\n%s", s, summaryLines(stdout))
			}
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
			}
			if tt.clean > 0 {
				t.Logf("%d of %d responses received", ackSummary(t, stdout, tt.clean), tt.clean)
			}
			if tt.seed {
				assert.Contains(t, out, "every region starts with the")
			}
		})
	}
}

// summaryLines keeps the compare report's own lines, not the diff's.
func summaryLines(report string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(report, "\n") {
		if strings.HasPrefix(l, "compare:") || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestServeImageFlag checks --image's validation.
func TestServeImageFlag(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	require.NoError(t, os.WriteFile(big, make([]byte, 4097), 0o644))
	code, _, stderr := ibpeer("serve", "--addr", "127.0.0.2", "--mr-size", "4096", "--image", big)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "4097 bytes do not fit a region of --mr-size 4096")
	code, _, stderr = ibpeer("serve", "--addr", "127.0.0.2", "--image", filepath.Join(dir, "missing.bin"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--image:")
	assert.Contains(t, stderr, "missing.bin")
}

// TestServeSaysWhyItDrops: packets for a QP the server never set up are
// dropped, and the server says so with the cause, as every mode does.
func TestServeSaysWhyItDrops(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	srv := servetest.Start(t, nil)
	code, _, stderr := ibpeer("replay", "--to", "127.0.0.2", "--pps", "5000", "-c", "50", rxe+"write_bw.pcap")
	require.Equal(t, exitOK, code, stderr)
	// replay is done when its datagrams are sent, not when the server has
	// read them: stopped at once, the server closed with all 50 still in
	// its socket and reported "received 0" (1 run in 15). The first drop
	// is reported as it happens, so wait for it.
	require.Eventually(t, func() bool { return strings.Contains(srv.Out.String(), "ibpeer: dropped ") },
		10*time.Second, 5*time.Millisecond, "the server never reported a drop: %s", srv.Out.String())
	out := srv.Stop(t)
	assert.Contains(t, out, "ibpeer: dropped ")
	assert.Contains(t, out, " packets from 127.0.0.1: unknown destination QPN 0x000011 (no such QP; was the set-up exchange answered?)")
}
