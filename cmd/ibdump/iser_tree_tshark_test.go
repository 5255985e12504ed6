//go:build tshark

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTsharkISERFlagsGolden writes (-update) or checks the flag lines of
// tshark's -V tree of iser_login.pcap that TestISERFlagsMatchTshark
// compares ibdump with. The iSER dissector is left on: the capture's CM
// exchange tells tshark the connection is iSER.
func TestTsharkISERFlagsGolden(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	version, err := exec.Command("tshark", "--version").Output()
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(version), "\n")
	out, err := exec.Command("tshark", "-r", iserLogin, "-V").Output()
	require.NoError(t, err)
	got := "# " + first + "; tshark -r iser_login.pcap -V: the iSER and iSCSI flag lines of each frame, sorted\n" +
		strings.Join(iserFlagLines(string(out)), "\n") + "\n"
	if *update {
		require.NoError(t, os.WriteFile(iserFlagsGolden, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(iserFlagsGolden)
	require.NoError(t, err)
	assert.Equal(t, dropFirstLine(string(want)), dropFirstLine(got))
}
