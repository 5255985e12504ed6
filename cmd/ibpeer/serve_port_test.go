package main

import (
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/internal/peer/serve/servetest"
)

// TestServeTwiceFails: a second ibpeer serve on an address where one
// already serves exits 1 and names the address and UDP 4791, as serve -h
// promises, rather than binding beside the first and taking half of its
// clients' datagrams (issue 17).
func TestServeTwiceFails(t *testing.T) {
	looptest.Hold(t)
	const ip = "127.81.21.1"
	first := servetest.Start(t, func(c *serve.Config) { c.Addr = netip.MustParseAddr(ip) })
	defer first.Stop(t)

	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.code, r.stdout, r.stderr = ibpeer("serve", "--addr", ip, "--port", "0")
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		// It serves: stop it as a user would (runServe catches SIGINT).
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		r = <-done
		t.Fatalf("the second serve ran until SIGINT (exit %d): %s%s", r.code, r.stdout, r.stderr)
	}
	assert.Equal(t, exitError, r.code)
	assert.Empty(t, r.stdout)
	assert.Contains(t, r.stderr, "ibpeer serve: endpoint: listen udp "+ip+":4791: address in use")
}
