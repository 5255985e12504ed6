package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckData runs verdict.sh's check_data on a capture Linux rxe made
// (ib_write_bw, 4096-byte WRITEs): a buffer holding what the WRITEs carried
// passes, one with two bytes changed fails at the first of them, a missing
// dump fails. The buffer is built with ibpeer replay --image, the same
// command check_data runs, so the test checks the comparison, and the
// changed copy shows it can fail.
func TestCheckData(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "ibpeer"), "../cmd/ibpeer")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	const pcap = "../pcaps/rxe/write_bw.pcap"
	good := filepath.Join(dir, "good.bin")
	out, err = exec.Command(filepath.Join(dir, "ibpeer"), "replay", "--image", good, pcap).CombinedOutput()
	require.NoError(t, err, "%s", out)
	region, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Len(t, region, 4096)
	// ibpeer's buffer is twice the message, as perftest's: the rest is its own.
	region = append(region, make([]byte, 4096)...)
	require.NoError(t, os.WriteFile(good, region, 0o644))
	bad := filepath.Join(dir, "bad.bin")
	changed := append([]byte(nil), region...)
	changed[2000] ^= 0xFF
	changed[2001] ^= 0x01
	require.NoError(t, os.WriteFile(bad, changed, 0o644))

	for _, tc := range []struct{ name, region, want string }{
		{"equal", good, "notes=data: the 4096 bytes the capture shows written equal ibpeer's buffer\n"},
		{"changed", bad, "why=data: the capture's bytes and ibpeer's buffer differ from byte 2001 of 4096 on\n"},
		{"no dump", filepath.Join(dir, "none.bin"), "why=data: ibpeer left no buffer dump"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			script := `BIN=$1; why=(); notes=(); . ./verdict.sh; check_data "$2" "$3" "$4"
for w in "${why[@]}"; do echo "why=$w"; done; for n in "${notes[@]}"; do echo "notes=$n"; done`
			out, err := exec.Command("bash", "-c", script, "bash", dir, pcap, tc.region, work).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.True(t, strings.HasPrefix(string(out), tc.want), "got %q", out)
			assert.Equal(t, 1, strings.Count(string(out), "\n"), "one verdict line: %q", out)
		})
	}
}
