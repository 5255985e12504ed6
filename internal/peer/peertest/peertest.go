// Package peertest holds what the tests of ibpeer's programs share: the
// loopback ports they run peers on and a writer their goroutines may share.
//
// A program's tests run a server and a client in one process over UDP
// 4791 on loopback addresses. NeedLoopbackPorts takes internal/looptest's
// machine-wide lock for the test, so that no other package's test binds
// those ports meanwhile, and checks that the two addresses the tests use
// are free. Buffer collects what a program writes from several goroutines
// while the test reads it.
package peertest

import (
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/looptest"
)

// NeedLoopbackPorts takes looptest's machine-wide lock on UDP 4791 of the
// loopback addresses for the rest of the test (other packages' tests that
// bind them wait meanwhile, and it waits for theirs), then skips the test
// when 127.0.0.1:4791 or 127.0.0.2:4791 is still taken by something else.
// Under .ci/run (IBWIRE_CI set) it fails instead: there the ports must be
// free, and a test that skipped would pass without having run.
func NeedLoopbackPorts(t *testing.T) {
	t.Helper()
	looptest.Hold(t)
	for _, a := range []string{"127.0.0.1:4791", "127.0.0.2:4791"} {
		w, err := endpoint.ListenUDP(netip.MustParseAddrPort(a))
		if err != nil {
			if os.Getenv("IBWIRE_CI") != "" {
				t.Fatalf("loopback UDP %s unavailable but IBWIRE_CI is set: %v", a, err)
			}
			t.Skipf("loopback UDP %s unavailable: %v", a, err)
		}
		w.Close()
	}
}

// Buffer is an io.Writer safe for a program's goroutines, read by String.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
