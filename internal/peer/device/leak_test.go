package device

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// device's reporter, a pair's delivery).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
