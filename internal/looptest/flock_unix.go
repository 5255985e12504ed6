//go:build unix

package looptest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

type fileLock interface{ release() }

type flocked struct{ f *os.File }

func (l flocked) release() {
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// lockFile flocks name in the temporary directory, polling so that it can
// give up after wait (flock itself blocks without a timeout).
func lockFile(name string, wait time.Duration) (fileLock, error) {
	path := filepath.Join(os.TempDir(), name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return flocked{f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another test process has held %s (UDP 4791 on loopback) for more than %v", path, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
