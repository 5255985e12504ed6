package bw_test

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/bw"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
)

// TestRun runs each client, verified, against an ibpeer serve of package
// serve over loopback, and reads its report: the table row says how much
// moved, --verify what it checked.
func TestRun(t *testing.T) {
	peertest.NeedLoopbackPorts(t)
	defer goleak.VerifyNone(t)
	srv := servetest.Start(t, nil)
	to := srv.TCP
	ctx := context.Background()
	for _, tc := range []struct {
		op         string
		size, qps  int
		faults     wiretest.Faults
		verified   string
		faultsLine bool
	}{
		{op: "write", size: 4096, qps: 2, verified: "verified: 40 WRITEs"},
		{op: "read", size: 3000, qps: 1, verified: "verified: 20 READs"},
		{op: "send", size: 1024, qps: 1, verified: "verified: 20 SENDs"},
		{op: "atomic", size: 8, qps: 1, verified: "verified: 20 FETCH_ADDs"},
		{op: "write", size: 8192, qps: 1, faults: wiretest.Faults{Loss: 0.05}, verified: "verified: 20 WRITEs", faultsLine: true},
	} {
		t.Run(fmt.Sprintf("%s %d bytes, %d QPs, loss %v", tc.op, tc.size, tc.qps, tc.faults.Loss), func(t *testing.T) {
			var out, errb peertest.Buffer
			cfg := bw.Config{Op: tc.op, Addr: netip.MustParseAddr("127.0.0.1"), To: to, Size: tc.size, Iters: 20,
				QPs: tc.qps, Depth: 8, Verify: true, Faults: tc.faults, Seed: 1, Stall: 10 * time.Second, Stderr: &errb}
			require.NoError(t, bw.Run(ctx, cfg, &out), "stderr: %s\nstdout: %s", errb.String(), out.String())
			row := regexp.MustCompile(`(?m)^ (\d+)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s*$`).FindStringSubmatch(out.String())
			require.NotNil(t, row, out.String())
			assert.Equal(t, fmt.Sprint(tc.size), row[1], "bytes")
			assert.Equal(t, "20", row[2], "iterations, per QP as perftest counts them")
			assert.Contains(t, out.String(), tc.verified)
			assert.Equal(t, tc.faultsLine, regexp.MustCompile(`faults on \d+ datagrams sent \(seed 1\): \d+ dropped`).MatchString(out.String()))
		})
	}
	srv.Stop(t)
}
