//go:build tshark

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTsharkRegenerates runs tshark (installed by .ci/run) on every capture
// whose decoding is checked in, and checks that it still says the same: the
// checked-in files are what the untagged differential test trusts.
func TestTsharkRegenerates(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	out := t.TempDir()
	tsvs, err := filepath.Glob("testdata/tshark/*.tsv")
	require.NoError(t, err)
	var caps []string
	for _, tsv := range tsvs {
		name := strings.TrimSuffix(filepath.Base(tsv), ".tsv")
		c := captureFor(t, name)
		if strings.Contains(name, "linktype147") {
			c = strings.Replace(c, "linktype247", "linktype147-userdlt", 1)
		}
		caps = append(caps, c)
	}
	cmd := exec.Command("testdata/tshark/regen.sh", "testdata/tshark/fields.txt", out)
	cmd.Args = append(cmd.Args, caps...)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Run())
	for _, tsv := range tsvs {
		want, err := os.ReadFile(tsv)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, filepath.Base(tsv)))
		require.NoError(t, err)
		// The first line names the tshark version and command; the rest must match.
		assert.Equal(t, dropFirstLine(string(want)), dropFirstLine(string(got)), tsv)
	}
}

// TestTsharkExtraPcaps compares ibdump with tshark on the third-party
// captures of IBWIRE_EXTRA_PCAPS, decoded by tshark on the spot (their
// decodings are not checked in: the captures carry no licence).
func TestTsharkExtraPcaps(t *testing.T) {
	dir := os.Getenv("IBWIRE_EXTRA_PCAPS")
	if dir == "" {
		t.Skip("IBWIRE_EXTRA_PCAPS not set")
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	caps, err := filepath.Glob(filepath.Join(dir, "*.pcap"))
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command("testdata/tshark/regen.sh", "testdata/tshark/fields.txt", out)
	cmd.Args = append(cmd.Args, caps...)
	require.NoError(t, cmd.Run())
	for _, c := range caps {
		name := strings.TrimSuffix(filepath.Base(c), ".pcap")
		t.Run(name, func(t *testing.T) {
			compareWithTshark(t, c, filepath.Join(out, name+".tsv"))
		})
	}
}

func dropFirstLine(s string) string {
	_, rest, _ := strings.Cut(s, "\n")
	return rest
}
