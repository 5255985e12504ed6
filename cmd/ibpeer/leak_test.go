package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any test leaves a goroutine behind: every
// mode runs an endpoint with its own goroutines, and a mode that returns
// while one still runs would keep a socket open in a long-lived process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
