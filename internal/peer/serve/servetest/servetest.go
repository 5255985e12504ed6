// Package servetest runs ibpeer serve in a test: the server most of
// ibpeer's clients are tested against.
package servetest

import (
	"context"
	"net/netip"
	"testing"

	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/internal/peer/serve"
)

// Server is an ibpeer serve run by a test.
type Server struct {
	TCP    netip.AddrPort   // its set-up listener
	Out    *peertest.Buffer // what it printed
	cancel context.CancelFunc
	done   chan error
}

// Start runs an ibpeer serve on 127.0.0.2 with its TCP port chosen
// by the kernel, a 1 MiB region and MTU 1024 unless change says otherwise,
// and returns once it listens.
func Start(t *testing.T, change func(*serve.Config)) *Server {
	t.Helper()
	cfg := serve.Config{Addr: netip.MustParseAddr("127.0.0.2"), Port: 0, MRSize: 1 << 20, MTU: 1024, Recv: 16}
	if change != nil {
		change(&cfg)
	}
	ready := make(chan netip.AddrPort, 1)
	cfg.Ready = func(a netip.AddrPort) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{Out: &peertest.Buffer{}, cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- serve.Run(ctx, cfg, s.Out) }()
	select {
	case s.TCP = <-ready:
	case err := <-s.done:
		cancel()
		t.Fatalf("serve did not start: %v", err)
	}
	return s
}

// Cancel stops the server as SIGINT does, without waiting for it.
func (s *Server) Cancel() { s.cancel() }

// Stop ends the server as SIGINT does and returns its output.
func (s *Server) Stop(t *testing.T) string {
	t.Helper()
	s.cancel()
	if err := <-s.done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	return s.Out.String()
}
