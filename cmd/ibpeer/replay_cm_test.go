package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestReplayCompareCM plays the requester halves of rxe's write_bw,
// read_bw and atomic_fadd captures against an in-process ibpeer perftest
// -R server: the set-up QP and the data QP connected by RDMA CM over the
// UDP wire the requests use, the binary QP messages as SENDs, the requests
// remapped to the QPN, R_Key and VA the server announced and to the PSN
// RDMA CM gave the data QP. The server must end cleanly (it checks its QP
// is still in RTS and waits for the data QP's DREQ), and the answers must
// have the captured structure.
func TestReplayCompareCM(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name, verb, capture string
		extra               []string // replay's
		port                int      // the server's -p (0: perftest's default)
		captured            int      // responses
		want                []string
	}{
		{name: "write_bw", verb: "write", capture: "write_bw.pcap", captured: 200,
			want: []string{"played 800 requests", "compare: 200 responses captured, "}},
		{name: "write_bw, WRITEs read back", verb: "write", capture: "write_bw.pcap", captured: 200, extra: []string{"--payload"},
			want: []string{"played 800 requests", ": the 4096 bytes the capture's WRITEs left are there\n"}},
		{name: "read_bw", verb: "read", capture: "read_bw.pcap", captured: 800,
			want: []string{"played 200 requests", "compare: 800 responses captured, 800 received; no differences"}},
		{name: "atomic_fadd, perftest-cm on port 18600", verb: "atomic", capture: "atomic_fadd.pcap", port: 18600, captured: 200,
			extra: []string{"--setup", "perftest-cm", "--oob", ":18600"},
			want:  []string{"played 200 requests", "compare: 200 responses captured, 200 received; no differences"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, cli := fmt.Sprintf("127.81.%d.2", i), fmt.Sprintf("127.81.%d.1", i)
			args := []string{tt.verb, "-R", "--addr", srv}
			if tt.port != 0 {
				args = append(args, "-p", fmt.Sprint(tt.port))
			}
			s := runPerftestServer(t, args...)
			rargs := []string{"replay", "--compare", "--to", srv, "--from", cli, "--setup", "cm", "--timeout", "2s"}
			code, stdout, stderr := ibpeer(append(append(rargs, tt.extra...), rxe+tt.capture)...)
			serr := <-s.done
			require.Equal(t, exitOK, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, s.out.String())
			require.NoError(t, serr, "server:\n%s", s.out.String())
			assert.Contains(t, s.out.String(), " rdma_cm QPs\t : ON\n")
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
			t.Logf("%d of %d responses received", ackSummary(t, stdout, tt.captured), tt.captured)
			assert.Contains(t, stdout, "+++ live "+srv+":4791, responder QPN ")
		})
	}
}

// TestReplayCompareCMFailures: a server whose MTU is not the capture's is
// refused with the fix, and the server, disconnected, ends instead of
// waiting; with nobody answering the REQ the set-up gives up in time.
func TestReplayCompareCMFailures(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Run("MTU", func(t *testing.T) {
		s := runPerftestServer(t, "write", "-R", "-m", "512", "--addr", "127.81.9.2")
		done := s.done
		code, _, stderr := ibpeer("replay", "--compare", "--to", "127.81.9.2", "--from", "127.81.9.1", "--setup", "cm", rxe+"write_bw.pcap")
		assert.Equal(t, exitError, code)
		assert.Contains(t, stderr, "ibpeer replay: set-up: the peer's active MTU is 512, the capture's path MTU 1024: give the peer -m 1024")
		select {
		case err := <-done:
			assert.Error(t, err, "the server lost its client")
		case <-time.After(10 * time.Second):
			t.Fatal("the server still waits for the client replay left")
		}
	})
}

// TestReplayCompareCMDataQP: a perftest -R capture holds two RC
// connections set up by RDMA CM between the same two ports: perftest's
// set-up QP (its exchange as SENDs both ways), then the data QP. --setup
// cm plays the data QP unless --conv says otherwise; played, the set-up
// QP's SENDs met a READ server's empty receive queue. The capture is
// ibpeer perftest read -R -n 10 -s 2048 on loopback (tcpdump -i lo).
func TestReplayCompareCMDataQP(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := runPerftestServer(t, "read", "-R", "--addr", "127.81.20.2")
	code, stdout, stderr := ibpeer("replay", "--compare", "--to", "127.81.20.2", "--from", "127.81.20.1", "--setup", "cm", "--timeout", "2s",
		"testdata/perftest_R_read.pcap")
	serr := <-s.done
	require.Equal(t, exitOK, code, "report:\n%s\nstderr:\n%s\nserver:\n%s", stdout, stderr, s.out.String())
	require.NoError(t, serr, "server:\n%s", s.out.String())
	assert.Contains(t, stdout, "compare: played 10 requests of conversation 3 ")
	ackSummary(t, stdout, 10)
	// The server prints the client's report: what the play did, not a
	// row of zeros.
	row := perfRow(t, s.out.String())
	assert.True(t, strings.HasPrefix(row, " 2048       10               0.00 "), "row %q", row)
}
