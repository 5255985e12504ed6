package perftest

import (
	"context"
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
		sameRow bool
	}{
		{verb: "write", sameRow: true},
		{verb: "read", sameRow: true},
		{verb: "send"},
		{verb: "atomic", sameRow: true},
		{verb: "write", rdmacm: true, sameRow: true},
	} {
		name := tc.verb
		if tc.rdmacm {
			name += " -R"
		}
		t.Run(name, func(t *testing.T) {
			size := 4096
			if tc.verb == "atomic" {
				size = 8
			}
			cfg := Config{Verb: tc.verb, Addr: netip.MustParseAddr("127.0.0.2"), Size: size, Iters: 50, MTU: 1024, Depth: 16,
				OutReads: setup.PerftestOutReads, MBps: true, Stall: 10 * time.Second, RDMACM: tc.rdmacm}
			if tc.rdmacm {
				cfg.Port = 18515 // an RDMA CM port: no kernel's choice
			}
			ready := make(chan netip.AddrPort, 1)
			scfg := cfg
			scfg.Ready = func(a netip.AddrPort) { ready <- a }
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var sout, cout peertest.Buffer
			done := make(chan error, 1)
			go func() { done <- Run(ctx, scfg, &sout) }()
			var at netip.AddrPort
			select {
			case at = <-ready:
			case err := <-done:
				t.Fatalf("server: %v", err)
			}
			ccfg := cfg
			ccfg.Addr, ccfg.Port, ccfg.Server = netip.MustParseAddr("127.0.0.1"), int(at.Port()), at
			require.NoError(t, Run(ctx, ccfg, &cout), cout.String())
			require.NoError(t, <-done, sout.String())
			crow, srow := row.FindString(cout.String()), row.FindString(sout.String())
			require.NotEmpty(t, crow, cout.String())
			require.NotEmpty(t, srow, sout.String())
			assert.Regexp(t, `^ `+strconv.Itoa(size)+` +50 `, crow)
			if tc.sameRow {
				assert.Equal(t, crow, srow)
			}
			assert.Contains(t, sout.String(), "Waiting for client to connect")
			assert.Contains(t, cout.String(), "Mtu             : 1024[B]")
		})
	}
}
