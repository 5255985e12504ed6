package endpoint_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when any test, example or benchmark leaves a
// goroutine behind: synctest only sees goroutines inside its bubble, and
// many tests here (the drop handler, the CM's and the UDP wire's
// allocation tests, packetwire, ICRC, oob, the examples) run outside one.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
