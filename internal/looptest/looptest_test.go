package looptest

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHoldExcludesOtherProcesses runs this test binary again as a child
// that tries to take the lock while the parent holds it: the child must
// time out, and succeed once the parent has let go.
func TestHoldExcludesOtherProcesses(t *testing.T) {
	if os.Getenv("LOOPTEST_CHILD") != "" {
		_, err := Lock(300 * time.Millisecond)
		if err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	child := func() int {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHoldExcludesOtherProcesses$")
		cmd.Env = append(os.Environ(), "LOOPTEST_CHILD=1")
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	}
	unlock, err := Lock(Wait)
	require.NoError(t, err)
	again, err := Lock(time.Millisecond)
	require.NoError(t, err, "the same process takes it again without waiting")
	again()
	assert.Equal(t, 3, child(), "another process must not get the lock while this one holds it")
	unlock()
	unlock() // a second call does nothing
	assert.Equal(t, 0, child(), "another process gets the lock once it is free")
}
