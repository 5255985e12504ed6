package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iserFlagsGolden holds, frame by frame, the flag lines of tshark 4.0's
// -V tree of iser_login.pcap (iser_tree_tshark_test.go writes it).
var iserFlagsGolden = filepath.Join("testdata", "tshark-tree", "iser_login.flags.txt")

// iserFlagTitles are the bit fields of the iSER header and the iSCSI BHS
// whose -V lines tshark draws as bit patterns ("1... .... = F: Final PDU in
// sequence").
var iserFlagTitles = map[string]bool{"Opcode": true, "WSV": true, "RSV": true, "REJ": true, "I": true, "F": true,
	"R": true, "W": true, "Attr": true, "o": true, "u": true, "O": true, "U": true, "C": true, "T": true, "CSG": true,
	"NSG": true, "A": true, "S": true, "ISID_t": true, "ISID_a": true}

var bitLine = regexp.MustCompile(`^[.01]{4} [.01]{4} = ([A-Za-z_]+): `)

// iserFlagLines are a -V tree's flag lines in the iSER and iSCSI parts of
// each frame, without their indentation: the bit fields iserFlagTitles
// names and the flags bytes' "Flags: ..." lines. tshark 4.0 files a SCSI
// Command's and a SCSI Response's flags byte, with its bits, at the root
// of the tree after the iSCSI part: those lines count too, and each
// frame's lines are sorted, so that the test compares what the lines say,
// not where they stand.
func iserFlagLines(tree string) []string {
	var out, frame []string
	number, on := 0, false
	flush := func() {
		sort.Strings(frame)
		for _, l := range frame {
			out = append(out, strconv.Itoa(number)+": "+l)
		}
		frame = frame[:0]
	}
	for _, line := range strings.Split(tree, "\n") {
		if rest, ok := strings.CutPrefix(line, "Frame "); ok {
			flush()
			n, _, _ := strings.Cut(rest, ":")
			number, _ = strconv.Atoi(n)
			on = false
			continue
		}
		if line != "" && line[0] != ' ' {
			on = line == "iSCSI Extensions for RDMA" || line == "iSCSI" || strings.HasPrefix(line, "iSCSI (") ||
				strings.HasPrefix(line, "Flags: ")
		}
		if !on {
			continue
		}
		l := strings.TrimLeft(line, " ")
		if m := bitLine.FindStringSubmatch(l); m != nil && iserFlagTitles[m[1]] || strings.HasPrefix(l, "Flags: ") {
			frame = append(frame, l)
		}
	}
	flush()
	return out
}

// TestISERFlagsMatchTshark: ibdump -V draws the iSER header's flags and
// the iSCSI BHS's flag bits, login stages and ISID type as tshark 4.0
// does, line for line: every flag line of every frame tshark decodes in
// iser_login.pcap (the captures without the CM exchange tshark does not
// decode as iSER at all).
func TestISERFlagsMatchTshark(t *testing.T) {
	want, err := os.ReadFile(iserFlagsGolden)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(want)), "\n")
	require.True(t, strings.HasPrefix(lines[0], "# "), "the golden's header")
	lines = lines[1:]
	require.Greater(t, len(lines), 500)
	out, errOut, code := ibdump(t, nil, "-V", "-r", iserLogin)
	require.Zero(t, code, errOut)
	got := iserFlagLines(out)
	// ibdump decodes a few PDUs tshark does not (a SEND FIRST's capsule
	// tshark leaves after its first packet): compare tshark's frames.
	frames := map[string]bool{}
	for _, l := range lines {
		n, _, _ := strings.Cut(l, ":")
		frames[n] = true
	}
	var mine []string
	for _, l := range got {
		if n, _, _ := strings.Cut(l, ":"); frames[n] {
			mine = append(mine, l)
		}
	}
	assert.Equal(t, lines, mine)
}
