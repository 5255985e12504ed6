//go:build !unix

package looptest

import "time"

type fileLock interface{ release() }

type noLock struct{}

func (noLock) release() {}

// lockFile has no cross-process lock to take where flock does not exist:
// tests there run one package at a time or skip when a port is taken.
func lockFile(string, time.Duration) (fileLock, error) { return noLock{}, nil }
