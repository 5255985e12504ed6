//go:build tshark

// This test re-checks the known answers against tshark itself where it is
// installed (go test -tags tshark ./dfilter); the ordinary tests only read
// the answers recorded in match_test.go.
package dfilter_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/dfilter"
)

// tsharkFrames runs tshark's display filter over file and returns the
// matching frame numbers.
func tsharkFrames(t *testing.T, file, expr string) []int {
	args := []string{"-r", file, "-Y", expr, "-T", "fields", "-e", "frame.number"}
	if strings.HasSuffix(file, "derived-ib-native-linktype247.pcap") {
		// tshark 4.0 cannot open link type 247; the user-DLT copy holds the same frames.
		file = strings.Replace(file, "linktype247", "linktype147-userdlt", 1)
		args = append([]string{"-o", `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`}, args...)
		args[3] = file
	}
	out, err := exec.Command("tshark", args...).Output()
	require.NoError(t, err, "tshark %q", args)
	var frames []int
	for _, l := range strings.Fields(string(out)) {
		n, err := strconv.Atoi(l)
		require.NoError(t, err)
		frames = append(frames, n)
	}
	return frames
}

func tsharkExpr(c filterCase) string {
	if c.tshark == "=" {
		return dfilter.MustCompile(c.expr).String()
	}
	return c.tshark
}

func TestTsharkAgrees(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed")
	}
	checked := 0
	for _, c := range vectorCases {
		if c.tshark == "" {
			continue
		}
		assert.Equal(t, c.frames, tsharkFrames(t, vectors+"scapy-rocev2.pcap", tsharkExpr(c)), c.expr)
		checked++
	}
	for _, c := range captureCases {
		if c.tshark == "" {
			continue
		}
		got := tsharkFrames(t, "../"+c.file, tsharkExpr(c.filterCase))
		if c.frames != nil || c.count == 0 {
			assert.Equal(t, c.frames, got, "%s on %s", c.expr, c.file)
		} else {
			assert.Len(t, got, c.count, "%s on %s", c.expr, c.file)
		}
		checked++
	}
	t.Logf("%d filters checked against tshark", checked)
}
