// Package looptest serializes, across test processes, the tests that bind
// UDP port 4791 on the loopback addresses.
//
// RoCEv2 has one port, so two peers on one machine take 127.0.0.1:4791 and
// 127.0.0.2:4791 (and ::1). `go test ./...` runs several packages' test
// binaries at once, and the second one to bind those addresses would fail
// or skip. Hold takes a lock on a file in the temporary directory, shared by
// every ibwire test process of the machine, for the rest of the test; a
// test that holds it may bind the addresses, and other programs' tests
// wait their turn instead of failing.
package looptest

import (
	"sync"
	"testing"
	"time"
)

// Wait is how long Hold waits for another process to finish with the
// addresses before it fails the test.
const Wait = 10 * time.Minute

// LockName is the file, in os.TempDir, whose lock stands for the addresses.
const LockName = "ibwire-loopback-4791.lock"

// Hold takes the machine-wide lock for the rest of tb (released by
// tb.Cleanup). Within one process the lock is counted, so nested or
// successive tests of one package do not wait for each other.
func Hold(tb testing.TB) {
	tb.Helper()
	unlock, err := Lock(Wait)
	if err != nil {
		tb.Fatalf("looptest: %v", err)
	}
	tb.Cleanup(unlock)
}

var (
	mu   sync.Mutex
	held int      // holders in this process
	lock fileLock // the locked file while held > 0
)

// Lock takes the machine-wide lock, waiting at most wait, and returns the
// function that releases it (once, however often it is called).
func Lock(wait time.Duration) (unlock func(), err error) {
	mu.Lock()
	defer mu.Unlock()
	if held == 0 {
		if lock, err = lockFile(LockName, wait); err != nil {
			return nil, err
		}
	}
	held++
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if held--; held == 0 {
				lock.release()
				lock = nil
			}
		})
	}, nil
}
