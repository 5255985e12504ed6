package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibwire/ibwire/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeCaptures are the captures whose MAD frames' -V trees are compared
// with tshark 4.0's, line for line (testdata/tshark-tree/NAME.txt; the
// tshark build tag's TestTsharkTreeGoldens writes them with -update).
var treeCaptures = []string{
	"../../pcaps/rxe/rping.pcap", "../../pcaps/cm_reject.pcap", "../../pcaps/cm_sidr_ud.pcap",
	"../../pcaps/cm_native_service.pcap", "../../pcaps/mgmt_smp_sa_perf.pcap",
	// Real rxe CM exchanges: MRA, REJ (no listener, consumer, race), SIDR,
	// IPv6, DREQ/DREP.
	"../../pcaps/rxe/ucmatose.pcap", "../../pcaps/rxe/rping_mra.pcap", "../../pcaps/rxe/read_lat_cm.pcap",
	"../../pcaps/rxe/read_lat_cm_rej_race.pcap", "../../pcaps/rxe/udaddy.pcap", "../../pcaps/rxe/rping_ipv6.pcap",
	"../../pcaps/rxe/cm_rej_no_listener.pcap", "../../pcaps/rxe/ucmatose_consumer_rej.pcap",
	"../../pcaps/rxe/rdma_client_server.pcap", "../../pcaps/rxe/write_bw_cm.pcap", "../../pcaps/rxe/send_lat_cm.pcap",
	"../../pcaps/rxe/rping_segmented.pcap",
	"../../pcaps/mgmt_sa_records.pcap", "../../pcaps/mgmt_traps_classportinfo.pcap",
}

// treeDivergences is the one table of -V lines of a MAD where ibdump
// differs from tshark 4.0 on purpose, each with its reason. A rule pairs a
// tshark line with the ibdump line shown in its place; an empty pattern
// stands for a line the other tool alone shows.
var treeDivergences = []struct {
	tshark, ibdump *regexp.Regexp
	why            string
}{
	{regexp.MustCompile(`^ {8}[01. ]{39} = (Primary|Alternate) (Flow Label|Packet Rate): 0x[0-9a-f]+$`),
		regexp.MustCompile(`^ {8}[01. ]{39} = (Primary|Alternate) (Flow Label|Packet Rate): 0x[0-9a-f]+$`),
		"tshark 4.0 reads a REQ path's flow label from 3 bytes under the mask of 4 and the reserved bits and packet rate from the word's first byte (tsharkDivergences); ibdump decodes the 32-bit word as the IBTA lays it out"},
	{regexp.MustCompile(`^ {8}[01. ]{39} = Reserved: 0x[0-9a-f]+$`), regexp.MustCompile(`^ {8}[01. ]{39} = Reserved: 0x[0-9a-f]+$`),
		"the reserved bits of a REQ path's flow-label word: same tshark 4.0 misreading as the flow label"},
	{regexp.MustCompile(`^ {8}Reason: 0x[0-9a-f]{4}$`), regexp.MustCompile(`^ {8}Reason: [A-Za-z].* \(0x[0-9a-f]{4}\)$`),
		"ibdump names the REJ reason (IBTA Vol 1 Table 109), which filters can use too; tshark 4.0 shows the number only"},
	{regexp.MustCompile(`^ {16}\((S|D)GID\d+\)$`), regexp.MustCompile(`^ {16}SDGID: [0-9a-f:]+$`),
		"tshark 4.0 shows a MultiPathRecord's GIDs as text items with no value, (SGID0) ...; ibdump shows them as infiniband.multipathrecord.sdgid"},
	{regexp.MustCompile(`^ {16}\((S|D)GID\d+\)$`), nil, "the rest of those text items"},
	{trap259Malformed, trap259Field,
		"tshark 4.0 registers trap 259's DataValid as an IPv6 address but it is 2 bytes: fetching it, it reports the packet malformed and shows nothing more of the MAD; ibdump shows the trap's fields"},
	{nil, trap259Field, "the rest of trap 259's fields, which tshark 4.0 does not reach"},
	{nil, regexp.MustCompile(`^( {16}DataDetails| {8}Reserved): [0-9a-f]{72}…$`),
		"trap 259's raw DataDetails and the SMP's reserved bytes after the Notice, which tshark 4.0 does not reach either"},
}

// trap259Malformed matches the expert item tshark 4.0 shows where trap
// 259's DataDetails should be; trap259Field the trap's fields ibdump shows
// there.
var (
	trap259Malformed = regexp.MustCompile(`^ {20}\[Expert Info \(Error/Malformed\): Trying to fetch an IPv6 address with length 2\]$|` +
		`^ {24}\[(Trying to fetch an IPv6 address with length 2|Severity level: Error|Group: Malformed)\]$`)
	trap259Field = regexp.MustCompile(`^ {20}([01. ]+ = )?(LIDADDR|PORTNO|LIDADDR1|LIDADDR2|PKEY|SL|QP1|QP2|GIDADDR1|GIDADDR2|DataValid|SWLIDADDR): [0-9a-fx:]+$`)
)

// movedRIDField matches the SA record RID lines that may sit elsewhere in
// ibdump's tree than in tshark's, the same line on both sides: the
// registry has each infiniband.sa.* RID field once, in the order of the
// first record that has it (PortNum before the block numbers, as a
// PortInfoRecord has it), while tshark adds them in each record's wire
// order (a P_KeyTableRecord's BlockNum before its PortNum).
var movedRIDField = regexp.MustCompile(`^ {12}([01. ]+ = )?(PortNum|Position|BlockNum_\w+|LID|EndportLID): `)

// treeFrame is the MAD part of one frame's -V tree.
type treeFrame struct {
	number int
	lines  []string
}

// madTreeParts cuts a -V text into frames and keeps, of each MAD frame,
// the lines from the MAD header to the end of the InfiniBand tree (the CRCs
// excluded: ibdump shows them before the MAD, tshark after).
func madTreeParts(text string) []treeFrame {
	var frames []treeFrame
	number, on := 0, false
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "Frame "); ok {
			n, _, _ := strings.Cut(rest, ":")
			number, _ = strconv.Atoi(n)
			on = false
			continue
		}
		switch {
		case strings.HasPrefix(line, "    MAD Header"):
			on = true
			frames = append(frames, treeFrame{number: number})
		case on && (strings.HasPrefix(line, "    Invariant CRC") || strings.HasPrefix(line, "    Variant CRC") ||
			line == "" || line[0] != ' '):
			on = false
		}
		if on {
			f := &frames[len(frames)-1]
			f.lines = append(f.lines, line)
		}
	}
	return frames
}

// treeGoldenPath is where the tshark tree of capture is checked in.
func treeGoldenPath(capture string) string {
	return filepath.Join("testdata", "tshark-tree", strings.TrimSuffix(filepath.Base(capture), ".pcap")+".txt")
}

func readTreeGolden(t *testing.T, path string) []treeFrame {
	f, err := os.Open(path)
	require.NoError(t, err, "run go test -tags tshark ./cmd/ibdump -run TsharkTreeGoldens -update")
	defer f.Close()
	var frames []treeFrame
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if n, ok := strings.CutPrefix(line, "frame "); ok {
			num, err := strconv.Atoi(n)
			require.NoError(t, err)
			frames = append(frames, treeFrame{number: num})
			continue
		}
		require.NotEmpty(t, frames, "%s: a line before the first frame", path)
		frames[len(frames)-1].lines = append(frames[len(frames)-1].lines, line)
	}
	require.NoError(t, s.Err())
	return frames
}

// TestTreeMatchesTshark compares the MAD part of ibdump -V with tshark
// 4.0's, line for line, for every MAD frame of treeCaptures: every line
// must match or be a documented divergence (treeDivergences).
func TestTreeMatchesTshark(t *testing.T) {
	for _, c := range treeCaptures {
		t.Run(filepath.Base(c), func(t *testing.T) {
			want := readTreeGolden(t, treeGoldenPath(c))
			out, stderr, code := ibdump(t, nil, "-V", c)
			require.Zero(t, code, stderr)
			got := madTreeParts(out)
			require.Equal(t, len(want), len(got), "MAD frames")
			same, diverging, total := 0, 0, 0
			for i := range want {
				require.Equal(t, want[i].number, got[i].number)
				s, d := compareTreeLines(t, want[i], got[i])
				same, diverging, total = same+s, diverging+d, total+len(want[i].lines)
			}
			t.Logf("%s: %d/%d tshark lines the same, %d documented divergences", filepath.Base(c), same, total, diverging)
		})
	}
}

// compareTreeLines aligns a frame's lines (longest common subsequence) and
// checks that each line not in common is a documented divergence (paired
// in order, tshark's with ibdump's), or a RID line both show elsewhere; it
// returns the lines in common and those that diverge as documented.
func compareTreeLines(t *testing.T, want, got treeFrame) (same, diverging int) {
	w, g := want.lines, got.lines
	// lcs[i][j] is the common length of w[i:] and g[j:].
	lcs := make([][]int, len(w)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(g)+1)
	}
	for i := len(w) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			if w[i] == g[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var onlyW, onlyG []string
	i, j := 0, 0
	for i < len(w) || j < len(g) {
		switch {
		case i < len(w) && j < len(g) && w[i] == g[j]:
			same++
			i, j = i+1, j+1
		case j == len(g) || i < len(w) && lcs[i+1][j] >= lcs[i][j+1]:
			onlyW = append(onlyW, w[i])
			i++
		default:
			onlyG = append(onlyG, g[j])
			j++
		}
	}
	// A RID line both show, in different places (movedRIDField).
	for a := 0; a < len(onlyW); a++ {
		if !movedRIDField.MatchString(onlyW[a]) {
			continue
		}
		if b := slices.Index(onlyG, onlyW[a]); b >= 0 {
			onlyW, onlyG = slices.Delete(onlyW, a, a+1), slices.Delete(onlyG, b, b+1)
			a--
			diverging++
		}
	}
	// Pair the other lines in order, then the rest alone.
	for k := 0; k < max(len(onlyW), len(onlyG)); k++ {
		var tl, il string
		if k < len(onlyW) {
			tl = onlyW[k]
			diverging++
		}
		if k < len(onlyG) {
			il = onlyG[k]
		}
		assert.True(t, documentedDivergence(tl, il, k < len(onlyW), k < len(onlyG)),
			"frame %d: tshark %q, ibdump %q is no documented divergence", want.number, tl, il)
	}
	return same, diverging
}

func documentedDivergence(tsharkLine, ibdumpLine string, hasT, hasI bool) bool {
	for _, d := range treeDivergences {
		okT := hasT && d.tshark != nil && d.tshark.MatchString(tsharkLine) || !hasT && d.tshark == nil
		okI := hasI && d.ibdump != nil && d.ibdump.MatchString(ibdumpLine) || !hasI && d.ibdump == nil
		if okT && okI {
			return true
		}
	}
	return false
}

// madGlossaryPath holds tshark 4.0's -G fields lines (name, type, base,
// bitmask) of the MAD fields (TestTsharkMADGlossary writes it).
const madGlossaryPath = "testdata/tshark-tree/glossary-mad.tsv"

// madGlossaryField reports the fields of the MAD classes: the header, CM,
// SMP and its attributes, RMPP, SA and its records, Notice, ClassPortInfo,
// PerfMgt.
func madGlossaryField(name string) bool {
	for _, p := range []string{"infiniband.mad", "infiniband.cm.", "infiniband.smp", "infiniband.rmpp", "infiniband.sa.",
		"infiniband.nodeinfo.", "infiniband.nodedescription.", "infiniband.portinfo.", "infiniband.switchinfo.",
		"infiniband.sminfo.", "infiniband.p_keytable.", "infiniband.sltovlmappingtable.", "infiniband.vlarbitrationtable.",
		"infiniband.linearforwardingtable.", "infiniband.randomforwardingtable.", "infiniband.multicastforwardingtable.",
		"infiniband.linkspeedwidthpairstable.", "infiniband.vendordiag.", "infiniband.ledinfo.", "infiniband.pathrecord.",
		"infiniband.mcmemberrecord.", "infiniband.portcounters", "infiniband.notice.", "infiniband.trap.",
		"infiniband.classportinfo"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// glossaryColumns keeps, of -G fields' lines, those of the MAD fields as
// "name\ttype\tbase\tbitmask", sorted.
func glossaryColumns(out string) []string {
	var rows []string
	for _, line := range strings.Split(out, "\n") {
		c := strings.Split(line, "\t")
		if len(c) >= 7 && c[0] == "F" && madGlossaryField(c[2]) {
			rows = append(rows, strings.Join([]string{c[2], c[3], c[5], c[6]}, "\t"))
		}
	}
	slices.Sort(rows)
	return rows
}

// TestMADGlossaryAsTshark: ibdump -G fields gives every MAD field tshark
// 4.0 registers and ibdump has the same type, base and bitmask (header
// items FT_BYTES or FT_NONE, not FT_PROTOCOL).
func TestMADGlossaryAsTshark(t *testing.T) {
	want, err := os.ReadFile(madGlossaryPath)
	require.NoError(t, err, "run go test -tags tshark ./cmd/ibdump -run TsharkMADGlossary -update")
	out, _, code := ibdump(t, nil, "-G", "fields")
	require.Zero(t, code)
	got := map[string]string{}
	for _, r := range glossaryColumns(out) {
		name, _, _ := strings.Cut(r, "\t")
		got[name] = r
	}
	compared := 0
	for _, w := range strings.Split(strings.TrimSpace(string(want)), "\n") {
		if strings.HasPrefix(w, "#") {
			continue
		}
		name, _, _ := strings.Cut(w, "\t")
		if g, ok := got[name]; ok {
			assert.Equal(t, w, g)
			compared++
		}
	}
	assert.Greater(t, compared, 300)
}

// TestTrapTitlesAsTshark: the titles of a Notice and of its DataDetails for
// trap numbers the golden captures lack, as tshark 4.0.17 -V showed them for
// notices made from mgmt_traps_classportinfo.pcap's first by changing the
// trap number (and IsGeneric, which tshark does not read for the title).
func TestTrapTitlesAsTshark(t *testing.T) {
	for _, c := range []struct {
		trap            layers.TrapNumber
		notice, details string
	}{
		{5, "Unknown or Vendor Specific Trap Number! (0x05)", "Vendor Specific Subnet Management Trap"},
		{0, "Unknown or Vendor Specific Trap Number! (0x00)", "Vendor Specific Subnet Management Trap"},
		{64, " (Informational) <GIDADDR> is now in service", "Trap 64 DataDetails"},
		{259, " (Security) Bad P_Key, <KEY> from <LIDADDR1><GIDADDR1><QP1> to <LIDADDR2><GIDADDR2><QP2> on <SL> at switch <LIDADDR><PORTNO>",
			"Trap 259 DataDetails"},
	} {
		assert.Equal(t, c.notice, string(c.trap.AppendDescription(nil)), "trap %d", c.trap)
		assert.Equal(t, c.details, string(c.trap.AppendDetailsTitle(nil)), "trap %d", c.trap)
	}
}
