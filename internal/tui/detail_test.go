package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// TestFieldSpans checks the bytes found for fields of a RoCEv2 RDMA WRITE
// (Ethernet 14 bytes, IPv4 20, UDP 8, then the BTH at 42).
func TestFieldSpans(t *testing.T) {
	m := loadModel(t, writeLoss, "")
	p, err := newReader(m).packet(100)
	require.NoError(t, err)
	nodes := output.TreeNodes(p)
	spans := fieldSpans(p.Input, decode.Options{}, nodes)
	find := func(name string) byteSpan {
		for i, n := range nodes {
			if n.Field.Name == name {
				return spans[i]
			}
		}
		t.Fatalf("no field %s in the tree", name)
		return byteSpan{}
	}
	tests := []struct {
		field  string
		lo, hi int
	}{
		{"eth.dst", 0, 6},
		{"eth.src", 6, 12},
		{"eth.type", 12, 14},
		{"ip.ttl", 22, 23},
		{"ip.src", 26, 30},
		{"ip.dst", 30, 34},
		{"udp.dstport", 36, 38},
		{"infiniband.bth.opcode", 42, 43},
		{"infiniband.bth.p_key", 44, 46},
		{"infiniband.bth.destqp", 47, 50},
		{"infiniband.bth.psn", 51, 54},
		{"infiniband.invariant.crc", len(p.Data) - 4, len(p.Data)},
		{"infiniband", 42, len(p.Data)},
	}
	for _, tc := range tests {
		assert.Equal(t, byteSpan{tc.lo, tc.hi}, find(tc.field), tc.field)
	}
	// Fields the frame's bytes do not hold have none.
	assert.True(t, find("frame.number").empty())
}

// TestBytesAndFieldsSelectEachOther drives the tree to a field and checks
// the hex highlight, then puts the hex cursor on a byte and checks the
// field selected.
func TestBytesAndFieldsSelectEachOther(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.keys("100G")
	h.waitFor("Frame 100:")
	h.keys("<tab>", strings.Repeat("j", 9))
	h.waitFor("Destination Queue Pair")
	h.waitUntil(func(u *UI) bool {
		i := u.currentNode()
		return i >= 0 && u.detail.nodes[i].Field.Name == "infiniband.bth.destqp" && u.hex.span == byteSpan{47, 50}
	}, "the destination QP's bytes are highlighted")
	// The hex pane: the cursor is on the field's first byte; four bytes on
	// is the PSN's first byte.
	h.keys("<tab>", "llll")
	h.waitUntil(func(u *UI) bool {
		i := u.currentNode()
		return u.hex.cursor == 51 && i >= 0 && u.detail.nodes[i].Field.Name == "infiniband.bth.psn"
	}, "byte 51 selects the PSN")
	// A click on a byte does the same: byte 0x24 (the UDP destination port) at line 2.
	var x, y int
	h.waitUntil(func(u *UI) bool { x, y, _, _ = u.hex.GetInnerRect(); return true }, "the hex pane's place")
	h.sim.InjectMouse(x+6+4*3, y+2, tcell.Button1, tcell.ModNone)
	h.sim.InjectMouse(x+6+4*3, y+2, tcell.ButtonNone, tcell.ModNone)
	h.waitUntil(func(u *UI) bool {
		i := u.currentNode()
		return u.hex.cursor == 0x24 && i >= 0 && u.detail.nodes[i].Field.Name == "udp.dstport"
	}, "a click on byte 0x24 selects udp.dstport")
}

// TestApplyAsFilter makes filters from a tree field and a QP row.
func TestApplyAsFilter(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.keys("100G", "<tab>", strings.Repeat("j", 9))
	h.waitFor("Destination Queue Pair")
	h.keys("a")
	h.waitFor("filter: infiniband.bth.destqp == 0x000011", "displayed")
	h.keys("C")
	h.waitFor("[ QPs ]")
	h.keys("<enter>")
	s := h.waitFor("filter: ibwire.analysis.conv_id == 1", "2202 displayed")
	assert.Contains(t, s, "[ Packets ]")
}

// TestApplyConvAliases: on rc_cnp_ecn.pcap the first CNP (frame 7) comes
// before the analysis pairs the two directions, so its packet carries an id
// the connection later absorbs. Applying the connection, from that packet
// or from its QP table row, shows all 13 packets, the CNP included.
func TestApplyConvAliases(t *testing.T) {
	m := loadModel(t, cnpECN, "")
	cs := m.Conversations()
	require.Len(t, cs, 1)
	require.NotEmpty(t, cs[0].Aliases, "the CNP's id is an alias")
	_, mk := m.analysisOf(7)
	require.NotEqual(t, cs[0].ID, mk.conv(), "frame 7 carries the alias")
	require.True(t, cs[0].HasID(mk.conv()))
	want := convFilter(&cs[0])
	assert.Equal(t, "ibwire.analysis.conv_id in {1 2}", want)

	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"packet", []string{"7G", "a"}},
		{"QP row", []string{"C", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, cnpECN, "", 120, 40)
			h.waitFor("Frame 1:")
			h.keys(tc.keys...)
			h.waitUntil(func(u *UI) bool {
				st := u.m.Status()
				return st.Filter == want && !st.Filtering && st.Displayed == 13
			}, "the connection's 13 packets")
			h.waitFor("filter: "+want, "13 displayed")
		})
	}
}

// TestFilterBar checks the live validation and the completion.
func TestFilterBar(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.keys("/", "bth.psn ==")
	h.waitFor("Filter✗ bth.psn ==", "column 11")
	h.keys(" 5")
	h.waitFor("Filter✓ bth.psn == 5")
	h.waitUntil(func(u *UI) bool { u.filterBar.SetText(""); return true }, "clear")
	h.keys("infiniband.aeth.syndrome.opc")
	s := h.waitFor("Filter✗ infiniband.aeth.syndrome.opc", "infiniband.aeth.syndrome.opcode")
	golden(t, "filter-completion", s)
	h.keys("<esc>", "<esc>") // the first closes the completion list
	h.waitUntil(func(u *UI) bool { return u.app.GetFocus() == u.list }, "esc leaves the filter bar")
	// A filter that does not compile is not applied.
	h.keys("/", "bth.psn ==", "<enter>")
	h.waitFor("Filter✗ bth.psn ==")
	// keys returned after enter was handled: the filter stays in the bar,
	// focused, and the model never got it.
	h.waitUntil(func(u *UI) bool {
		st := u.m.Status()
		return st.Filter == "" && !st.Filtering && !st.HasFilter && u.app.GetFocus() == u.filterBar &&
			u.filterBar.GetText() == "bth.psn =="
	}, "the bad filter was not applied")
}

// TestSearch finds the next NAK with ctrl-f and n.
func TestSearch(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.keys("<ctrl-f>", "infiniband.aeth.syndrome.opcode == 3", "<enter>")
	h.waitFor("Frame 159:")
	h.keys("n")
	h.waitFor("Frame 237:")
	h.keys("<ctrl-f>", "RDMA Write Last", "<enter>")
	h.waitFor("Frame 239:")
}

func TestResize(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.waitUntil(func(u *UI) bool { h.sim.SetSize(80, 24); return true }, "resize")
	s := h.waitFor("2243 packets")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	assert.Len(t, lines, 24)
	for _, l := range lines {
		assert.LessOrEqual(t, len([]rune(l)), 80)
	}
	h.waitUntil(func(u *UI) bool { h.sim.SetSize(200, 60); return true }, "resize")
	s = h.waitFor("2243 packets")
	assert.Len(t, strings.Split(strings.TrimRight(s, "\n"), "\n"), 60)
}

// TestMonochrome checks that the monochrome theme draws no colour at all.
func TestMonochrome(t *testing.T) {
	h := start(t, writeLoss, "ibwire.analysis.nak", 120, 40)
	h.waitFor("13 displayed")
	cells, _, _ := h.contents()
	for _, c := range cells {
		fg, bg, _ := c.Style.Decompose()
		require.Equal(t, tcell.ColorDefault, fg)
		require.Equal(t, tcell.ColorDefault, bg)
	}
}

// TestQuit: q leaves the help for the view before it, and quits from
// elsewhere, as :quit does.
func TestQuit(t *testing.T) {
	tests := []struct {
		name string
		keys []string
	}{
		{"q", []string{"q"}},
		{":quit", []string{":", "quit", "<enter>"}},
		{":q", []string{":", "q", "<enter>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, writeLoss, "", 80, 24)
			h.keys("?")
			h.waitFor("ibtui keys")
			h.keys("q") // from the help: back
			h.waitUntil(func(u *UI) bool { return u.view == viewPackets }, "q leaves the help")
			h.waitFor("Frame 1:")
			h.keys(tc.keys...)
			select {
			case err := <-h.done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("%q did not quit", tc.keys)
			}
			h.done <- nil // for the cleanup
		})
	}
}

// TestHelpListsEveryBinding: the help is generated from the key table.
func TestHelpListsEveryBinding(t *testing.T) {
	text := KeyHelp()
	for _, b := range keyTable() {
		assert.Contains(t, text, b.help)
		assert.Contains(t, text, keyNames(&b))
		require.NotNil(t, b.action, b.help)
	}
}

// TestHelpWraps lays the help out narrow: no line passes the width (no
// word is that long), a description continues under itself, and the
// Mouse line, which starts at column 0, continues there.
func TestHelpWraps(t *testing.T) {
	const width = 50
	text := helpText(keyTable(), width)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	mouse := -1
	for i, l := range lines {
		assert.LessOrEqual(t, len([]rune(l)), width, "line %d: %q", i, l)
		if strings.HasPrefix(l, "Mouse:") {
			mouse = i
		}
	}
	require.Positive(t, mouse)
	require.Greater(t, len(lines), mouse+1, "the Mouse line wraps at %d", width)
	for _, l := range lines[mouse+1:] {
		assert.NotEqual(t, ' ', rune(l[0]), "the Mouse line continues at column 0: %q", l)
	}
	// The : line wraps; its continuation starts at the description column.
	for i, l := range lines {
		if strings.HasPrefix(l, "  :") {
			next := lines[i+1]
			assert.Equal(t, strings.Repeat(" ", helpIndent), next[:helpIndent])
			assert.NotEqual(t, ' ', rune(next[helpIndent]))
			assert.Equal(t, helpIndent, strings.Index(l, "command line"))
		}
	}
}

// TestCommandCompletion: the command line completes names and aliases from
// the command table, offers nothing for a whole command (enter then runs
// it, :q included), and the help names every command and alias.
func TestCommandCompletion(t *testing.T) {
	u := &UI{promptFor: "command"}
	for _, whole := range []string{"q", "quit", "qps", "convs", "filter", "clear-filter"} {
		assert.Nil(t, u.completeCommand(whole), whole)
	}
	assert.Equal(t, []string{"qps"}, u.completeCommand("qp"))
	assert.Equal(t, []string{"quit"}, u.completeCommand("qu"))
	assert.Equal(t, []string{"convs", "clear-filter"}, u.completeCommand("c"))
	assert.Equal(t, []string{"filter ibwire.analysis.psn_gap"}, u.completeCommand("filter ibwire.analysis.psn_g"))
	help := KeyHelp()
	for _, c := range commandTable() {
		assert.Contains(t, help, c.name)
		for _, a := range c.aliases {
			assert.Contains(t, help, c.name+"/"+a)
		}
	}
}

func TestCommands(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	noFilter := func(u *UI) bool { st := u.m.Status(); return !st.Filtering && !st.HasFilter }
	h.keys("jjjj", "mb", "G", "ma")
	// The last packet with a PSN gap: G on the filtered list selects it,
	// and clearing the filter must leave the cursor on it, not tail the
	// longer list that comes back.
	gaps := loadModel(t, writeLoss, "ibwire.analysis.psn_gap")
	lastGap := gaps.Frame(gaps.Displayed() - 1)
	require.NotZero(t, lastGap)
	require.Less(t, lastGap, 2243)
	for _, tc := range []struct {
		keys      []string // pressed before the command
		cmd, want string
		until     func(u *UI) bool
	}{
		{nil, "marks", "marks: a=2243 b=5", nil}, // sorted by letter
		{nil, "expert", "[ Expert ]", nil},
		{nil, "filter ibwire.analysis.psn_gap", "12 displayed", nil},
		// "[ Packets ]" was on screen before: wait for the filter to go,
		// and for the refresh that shows the whole list again.
		{[]string{"G"}, "clear-filter", "Frame " + strconv.Itoa(lastGap) + ":", func(u *UI) bool {
			return noFilter(u) && u.rows == u.m.Status().Packets && u.selected == lastGap
		}},
		{nil, "150", "Frame 150:", nil},
		{nil, "latency", "[ Latency ]", nil},
		{nil, "iograph COUNT(infiniband.bth.psn)infiniband.bth.psn", "COUNT(infiniband.bth.psn)", nil},
		{nil, "nonsense", "unknown command", nil},
		{nil, "help", "ibtui keys", nil},
		// A filter that does not compile goes to the bar, with its
		// reason under it, for the user to mend (last: the bar keeps the
		// keys).
		{nil, "filter bth.psn ==", "                  ^ column 11: unexpected end of filter expression", func(u *UI) bool {
			return u.filterBar.GetText() == "bth.psn ==" && focused(u, u.filterBar) && noFilter(u)
		}},
	} {
		if tc.keys != nil {
			h.keys(tc.keys...)
		}
		h.keys(":", tc.cmd, "<enter>")
		if tc.until != nil {
			h.waitUntil(tc.until, tc.cmd)
		}
		h.waitFor(tc.want)
	}
}

// TestMouseSelectsPackets clicks the third packet of the list.
func TestMouseSelectsPackets(t *testing.T) {
	h := start(t, writeLoss, "", 120, 40)
	h.waitFor("Frame 1:")
	var x, y int
	h.waitUntil(func(u *UI) bool { x, y, _, _ = u.list.GetInnerRect(); return true }, "the list's place")
	// Row 0 is the header: the third packet is on the fourth line.
	h.sim.InjectMouse(x+2, y+3, tcell.Button1, tcell.ModNone)
	h.sim.InjectMouse(x+2, y+3, tcell.ButtonNone, tcell.ModNone)
	h.waitFor("Frame 3:")
	h.sim.InjectMouse(x+2, y+3, tcell.WheelDown, tcell.ModNone)
	h.waitUntil(func(u *UI) bool { ro, _ := u.list.GetOffset(); return ro > 0 }, "the wheel scrolls the list")
}

// TestColours checks the colour theme: NAK rows in the warning colour,
// and the selected row in the selection colour.
func TestColours(t *testing.T) {
	h := startTheme(t, writeLoss, "infiniband.aeth.syndrome.opcode == 3", 120, 40, false)
	h.waitFor("13 displayed")
	cells, width, _ := h.contents()
	warn, _, _ := newTheme(false).warn.Decompose()
	_, selBG, _ := newTheme(false).selected.Decompose()
	// Line 3 is the first packet, selected; line 4 the second NAK.
	_, bg, _ := cells[3*width+1].Style.Decompose()
	assert.Equal(t, selBG, bg)
	fg, _, _ := cells[4*width+1].Style.Decompose()
	assert.Equal(t, warn, fg)
}
