//go:build tshark

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsharkNoHeuristics are the payload heuristics regen.sh disables too:
// they would claim MAD payloads.
var tsharkNoHeuristics = []string{"--disable-protocol", "rpcordma", "--disable-protocol", "nvme-rdma",
	"--disable-protocol", "iser", "--disable-protocol", "smb_direct", "--disable-protocol", "infiniband_sdp",
	"--disable-protocol", "lnet", "--disable-protocol", "fcoib", "--disable-protocol", "smc",
	"--disable-protocol", "drbd", "--disable-protocol", "eoib"}

// TestTsharkTreeGoldens renders tshark -V of every MAD frame of
// treeCaptures and checks the checked-in goldens say the same (-update
// rewrites them): they are what the untagged TestTreeMatchesTshark trusts.
func TestTsharkTreeGoldens(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	version, err := exec.Command("tshark", "--version").Output()
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(version), "\n")
	for _, c := range treeCaptures {
		t.Run(filepath.Base(c), func(t *testing.T) {
			capture, extra := tsharkReadable(t, c)
			args := append([]string{"-r", capture, "-V"}, extra...)
			out, err := exec.Command("tshark", append(args, tsharkNoHeuristics...)...).Output()
			require.NoError(t, err)
			header := first + "; tshark -r " + filepath.Base(c) + " -V (payload heuristics disabled): the MAD part of each MAD frame"
			got := formatTreeGolden(header, madTreeParts(string(out)))
			path := treeGoldenPath(c)
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run with -update to create it")
			assert.Equal(t, dropFirstLine(string(want)), dropFirstLine(got), path)
		})
	}
}

// tsharkReadable returns a capture tshark 4.0 can read and the options it
// needs: a LINKTYPE_INFINIBAND (247) capture is copied with user DLT 147 in
// its header and that DLT mapped to the InfiniBand dissector, as regen.sh does.
func tsharkReadable(t *testing.T, capture string) (string, []string) {
	data, err := os.ReadFile(capture)
	require.NoError(t, err)
	if len(data) < 24 || data[20] != 247 || data[21] != 0 {
		return capture, nil
	}
	cp := append([]byte(nil), data...)
	cp[20] = 147
	path := filepath.Join(t.TempDir(), filepath.Base(capture))
	require.NoError(t, os.WriteFile(path, cp, 0o644))
	return path, []string{"-o", `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`}
}

// TestTsharkMADGlossary writes tshark 4.0's -G fields columns of the MAD
// fields (-update), or checks the checked-in ones still hold.
func TestTsharkMADGlossary(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	out, err := exec.Command("tshark", "-G", "fields").Output()
	require.NoError(t, err)
	version, err := exec.Command("tshark", "--version").Output()
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(version), "\n")
	got := "# " + first + "; tshark -G fields: name, type, base, bitmask of the MAD fields\n" +
		strings.Join(glossaryColumns(string(out)), "\n") + "\n"
	if *update {
		require.NoError(t, os.WriteFile(madGlossaryPath, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(madGlossaryPath)
	require.NoError(t, err)
	assert.Equal(t, dropFirstLine(string(want)), dropFirstLine(got))
}

// formatTreeGolden writes frames as the golden files hold them: a header
// line, then "frame N" before each frame's lines.
func formatTreeGolden(header string, frames []treeFrame) string {
	var b strings.Builder
	b.WriteString("# " + header + "\n")
	for _, f := range frames {
		fmt.Fprintf(&b, "frame %d\n", f.number)
		for _, l := range f.lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
