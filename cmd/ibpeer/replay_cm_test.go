package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"testing"

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
			var errb bytes.Buffer
			j, code := parsePerftest(args, io.Discard, &errb)
			require.NotNil(t, j, "exit %d: %s", code, errb.String())
			ready := make(chan netip.AddrPort, 1)
			j.ready = func(a netip.AddrPort) { ready <- a }
			var sout syncBuffer
			done := make(chan error, 1)
			go func() { done <- j.run(context.Background(), &sout) }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("server did not start: %v", err)
			}
			rargs := []string{"replay", "--compare", "--to", srv, "--from", cli, "--setup", "cm", "--timeout", "2s"}
			code, stdout, stderr := ibpeer(append(append(rargs, tt.extra...), rxe+tt.capture)...)
			serr := <-done
			require.Equal(t, exitOK, code, "summary:\n%s\nstderr:\n%s\nserver:\n%s", summaryLines(stdout), stderr, sout.String())
			require.NoError(t, serr, "server:\n%s", sout.String())
			assert.Contains(t, sout.String(), " rdma_cm QPs\t : ON\n")
			for _, w := range tt.want {
				assert.Contains(t, stdout, w)
			}
			t.Logf("%d of %d responses received", ackSummary(t, stdout, tt.captured), tt.captured)
			assert.Contains(t, stdout, "+++ live "+srv+":4791, responder QPN ")
		})
	}
}
