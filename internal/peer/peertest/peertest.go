// Package peertest holds what the tests of ibpeer's programs share: the
// loopback ports they run peers on and a writer their goroutines may share.
//
// A program's tests run a server and a client in one process over UDP
// 4791 on loopback addresses. NeedLoopbackPorts takes internal/looptest's
// machine-wide lock for the test, so that no other package's test binds
// those ports meanwhile, and checks that the two addresses the tests use
// are free; Addrs gives a test addresses of its own instead. Buffer collects
// what a program writes from several goroutines while the test reads it;
// ReadFrames reads back a capture a program wrote.
package peertest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ibwire/ibwire/capture"
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

// Addrs returns a server and a client address of their own inside
// 127.block.0.0/16 (127.block.n.1 and 127.block.n.2), so that tests which
// do not take the lock do not meet other tests' UDP 4791 sockets: each
// program's tests use a block of their own, each test its own n.
func Addrs(block, n int) (server, client string) {
	return fmt.Sprintf("127.%d.%d.1", block, n), fmt.Sprintf("127.%d.%d.2", block, n)
}

// FreeTCPPort returns a TCP port nobody listens on right now.
func FreeTCPPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

// ReadFrames reads a capture file back, each frame's bytes its own.
func ReadFrames(t *testing.T, path string) []capture.Packet {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ps []capture.Packet
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			return ps
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Data = append([]byte(nil), p.Data...)
		ps = append(ps, p)
	}
}
