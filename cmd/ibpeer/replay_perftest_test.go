package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/internal/peer/peertest"
)

// TestReplayComparePerftest plays rxe's captures against an in-process
// ibpeer perftest server through --setup perftest, the default: perftest's
// TCP exchange (versions, buffer sizes, MTU, three QP messages) gives the
// QPN, R_Key and VA, and the closing steps (end-of-test handshake, reports,
// closing handshake, done) let the server end cleanly. perftest's region
// holds random bytes, so only write_bw's --payload can pass: the WRITEs'
// span is read back.
func TestReplayComparePerftest(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	tests := []struct {
		name, verb, capture string
		args                []string
		captured            int
		want                []string
		row                 string // the server's result row: bytes and iterations
	}{
		{name: "read_bw, default set-up", verb: "read", capture: "read_bw.pcap", captured: 800,
			want: []string{"played 200 requests", "compare: 800 responses captured, 800 received; no differences"}, row: " 4096       200        "},
		{name: "write_bw with payload", verb: "write", capture: "write_bw.pcap", captured: 200,
			args: []string{"--setup", "perftest", "--payload"},
			want: []string{"played 800 requests", ": the 4096 bytes the capture's WRITEs left are there\n"}, row: " 4096       200        "},
		{name: "atomic_fadd", verb: "atomic", capture: "atomic_fadd.pcap", captured: 200, args: []string{"--setup", "perftest"},
			want: []string{"played 200 requests", "compare: 200 responses captured, 200 received; no differences"}, row: " 8          200        "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			port, wait := startPerftestServer(t, tt.verb)
			args := []string{"replay", "--compare", "--to", "127.0.0.2", "--oob", fmt.Sprintf("127.0.0.2:%d", port), "--timeout", "2s"}
			code, stdout, stderr := ibpeer(append(append(args, tt.args...), rxe+tt.capture)...)
			sout, serr := wait()
			require.Equal(t, exitOK, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, sout)
			require.NoError(t, serr, "server:\n%s", sout)
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
			t.Logf("%d of %d responses received", ackSummary(t, stdout, tt.captured), tt.captured)
			// The server prints the client's report, as perftest does:
			// replay reports the messages it played, their size and the
			// average rate of the play (no peak: 0.00, as perftest -N).
			row := perfRow(t, sout)
			assert.True(t, strings.HasPrefix(row, tt.row), "row %q", row)
			f := strings.Fields(row)
			require.Len(t, f, 5)
			assert.Equal(t, "0.00", f[2], "peak")
			avg, err := strconv.ParseFloat(f[3], 64)
			require.NoError(t, err)
			assert.Positive(t, avg, "average")
		})
	}
}

// TestReplayComparePerftestMTU: a perftest server whose MTU is smaller
// than the capture's would drop its full-size packets; replay refuses
// with the fix instead.
func TestReplayComparePerftestMTU(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	port, wait := startPerftestServer(t, "write", "-m", "512")
	code, _, stderr := ibpeer("replay", "--compare", "--to", "127.0.0.2", "--oob", fmt.Sprintf("127.0.0.2:%d", port), rxe+"write_bw.pcap")
	_, serr := wait()
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "ibpeer replay: set-up: the peer's active MTU is 512, the capture's path MTU 1024: give the peer -m 1024")
	assert.Error(t, serr, "the server lost its client")
}
