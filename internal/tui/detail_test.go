package tui

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// TestFieldSpans checks the bytes placed for lines of a RoCEv2 RDMA WRITE
// (Ethernet 14 bytes, IPv4 20, UDP 8, then the BTH at 42), the hex pane's
// highlight when they are selected.
func TestFieldSpans(t *testing.T) {
	m := loadModel(t, writeLoss, "")
	p, err := newReader(m).packet(100)
	require.NoError(t, err)
	d, _ := newDetail(100, p)
	find := func(name string) output.Span {
		for _, n := range d.nodes {
			if n.Field.Name == name {
				return n.Span
			}
		}
		t.Fatalf("no field %s in the tree", name)
		return output.Span{}
	}
	tests := []struct {
		field  string
		lo, hi int
	}{
		{"eth", 0, 14},
		{"eth.dst", 0, 6},
		{"eth.src", 6, 12},
		{"eth.type", 12, 14},
		{"ip", 14, 34},
		{"ip.version", 14, 15},
		{"ip.flags.df", 20, 21}, // the flags: the top bits of byte 6
		{"ip.ttl", 22, 23},
		{"ip.src", 26, 30},
		{"ip.dst", 30, 34},
		{"udp", 34, 42},
		{"udp.dstport", 36, 38},
		{"infiniband.bth", 42, 54},
		{"infiniband.bth.opcode", 42, 43},
		{"infiniband.bth.se", 43, 44},
		{"infiniband.bth.p_key", 44, 46},
		{"infiniband.reserved", 46, 47},
		{"infiniband.bth.destqp", 47, 50},
		{"infiniband.bth.a", 50, 51},
		{"infiniband.bth.psn", 51, 54},
		{"ibwire.payload", 54, len(p.Data) - 4},
		{"infiniband.invariant.crc", len(p.Data) - 4, len(p.Data)},
		{"infiniband", 42, len(p.Data)},
	}
	for _, tc := range tests {
		assert.Equal(t, output.Span{Lo: tc.lo, Hi: tc.hi}, find(tc.field), tc.field)
	}
	// What the frame's bytes do not hold has none.
	for _, name := range []string{"frame", "frame.number", "ibwire.payload.len"} {
		assert.True(t, find(name).Empty(), name)
	}
}

// TestDetailCostsNothingPerByte builds the detail of one RDMA WRITE with
// payloads of 16 and 1024 bytes (the same tree): placing each line's
// bytes must not cost allocations per byte of the frame, as decoding it
// again with each byte inverted did.
func TestDetailCostsNothingPerByte(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not exact under the race detector")
	}
	m := loadModel(t, writeLoss, "")
	p, err := newReader(m).packet(100)
	require.NoError(t, err)
	require.Len(t, p.Data, 42+12+1024+4, "frame 100 is an RDMA WRITE MIDDLE of 1024 bytes")
	allocs := map[int]float64{}
	for _, payload := range []int{16, 1024} {
		frame := append(append([]byte(nil), p.Data[:42+12+payload]...), p.Data[len(p.Data)-4:]...)
		binary.BigEndian.PutUint16(frame[16:], uint16(len(frame)-14)) // IPv4 total length
		binary.BigEndian.PutUint16(frame[38:], uint16(len(frame)-34)) // UDP length
		in := p.Input
		in.Data, in.Length = frame, len(frame)
		dec := decode.NewDecoder(decode.Options{})
		q := dec.Decode(in)
		require.NoError(t, q.Err)
		d, _ := newDetail(100, q)
		require.Equal(t, output.Span{Lo: 54, Hi: 54 + payload}, d.nodes[slices.IndexFunc(d.nodes, func(n output.TreeNode) bool { return n.Field.Name == "ibwire.payload" })].Span)
		allocs[payload] = testing.AllocsPerRun(20, func() { newDetail(100, q) })
	}
	assert.Equal(t, allocs[16], allocs[1024], "allocations for a 16-byte and a 1024-byte payload")
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
		return i >= 0 && u.detail.nodes[i].Field.Name == "infiniband.bth.destqp" && u.hex.span == (output.Span{Lo: 47, Hi: 50})
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
	assert.Equal(t, []string{"convs", "commands", "cmds", "clear-filter"}, u.completeCommand("c"))
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

// TestFieldSpansAgreeWithProbing compares the bytes the tree places with
// those found the way ibtui found them before the tree placed them: invert
// each byte of a copy of the frame, decode it again, and see which lines'
// values change (probeSpans). On every packet of the corpus each line
// agrees, or differs in a way the probe explains:
//   - a byte the probe finds that is not placed must choose the layout:
//     with it inverted the field's value changes because the field is read
//     from elsewhere (an opcode that brings other headers, a length);
//   - a placed byte the probe does not find must make the field vanish
//     when inverted (a header no longer decoded): inverting all of a byte
//     changes any value with a bit in it;
//   - values the decoder computes have no bytes, though the bytes they are
//     computed from change them.
func TestFieldSpansAgreeWithProbing(t *testing.T) {
	// The ICRC's verdict and value are computed over the whole packet: the
	// probe decodes without CRC checks, but a payload no one packet carries
	// has its ICRC checked all the same, so a flipped pad count can bring
	// them in.
	computed := map[string]bool{"ibwire.payload.len": true, "tcp.len": true, "ibwire.malformed": true,
		"ibwire.icrc.status": true, "ibwire.icrc.computed": true}
	// A value that names a class of the raw values (every unknown opcode
	// is of the unknown service) can stay the same with all its bits
	// inverted.
	classes := map[string]bool{"ibwire.service": true}
	files, err := filepath.Glob("../../pcaps/*.pcap")
	require.NoError(t, err)
	vectors, err := filepath.Glob("../../testdata/vectors/*.pcap")
	require.NoError(t, err)
	files = append(append(files, vectors...), "../../testdata/sll2-tcpdump-any.pcap",
		"../../pcaps/rxe/atomic_fadd.pcap", "../../pcaps/rxe/interop/ud_pingpong_gs.pcap", writeLoss)
	var lines, same, layout, unseen int
	for _, path := range files {
		r, err := capture.Open(path)
		require.NoError(t, err, path)
		dec := decode.NewDecoder(decode.Options{})
		for range 200 {
			cp, err := r.Next()
			if err != nil {
				break
			}
			p := dec.Decode(cp)
			nodes := output.TreeNodes(p)
			probed := probeSpans(p.Input, nodes)
			shown := map[*decode.Field]int{}
			for i, n := range nodes {
				lines++
				f, old, now := n.Field, probed[i], n.Span
				if shown[f]++; shown[f] > 1 && f.Row() != 0 && f.Type == decode.FTBytes {
					// A later entry of a table: the probe reads the first
					// (Field.Get); the line is placed by its own bytes.
					continue
				}
				where := fmt.Sprintf("%s frame %d %s: placed %v, probed %v", filepath.Base(path), cp.Number, n.Field.Name, now, old)
				switch {
				case old == now || old.Empty() && now.Empty():
					same++
					continue
				case computed[n.Field.Name]:
					assert.True(t, now.Empty(), where)
					continue
				case n.Field.Type == decode.FTProtocol || n.Field.Type == decode.FTNone:
					// Its header's bytes and its lines' (FuzzFieldSpans), and
					// the probe's union of its lines', checked line by line.
					continue
				}
				if old.Union(now) != now {
					layout++
					for b := old.Lo; b < old.Hi; b++ {
						if !now.Has(b) {
							assert.True(t, readElsewhere(t, p, nodes, i, b), "byte %d: %s", b, where)
						}
					}
				}
				if now.Union(old) != old {
					unseen++
					for b := now.Lo; b < now.Hi; b++ {
						if !old.Has(b) && (b < 256 || b >= len(p.Data)-8) && !classes[f.Name] {
							assert.True(t, vanishes(p, f, b), "byte %d: %s", b, where)
						}
					}
				}
			}
		}
		r.Close()
	}
	t.Logf("%d lines: %d the same, %d with bytes the probe finds that choose the layout, %d with bytes the probe cannot see",
		lines, same, layout, unseen)
	assert.Greater(t, same, 9*lines/10, "nine lines in ten agree")
}

// vanishes reports whether, with byte b of p's frame inverted, p has no
// field f: inverting all of a byte changes any value that byte holds bits
// of, so a byte the probe does not find either holds none or removes the
// field.
func vanishes(p *decode.Packet, f *decode.Field, b int) bool {
	in := p.Input
	in.Data = append([]byte(nil), p.Data...)
	in.Data[b] ^= 0xFF
	var v decode.Value
	return !f.Get(decode.NewDecoder(decode.Options{SkipCRC: true}).Decode(in), &v)
}

// readElsewhere reports whether, with byte b of p's frame inverted, line i
// of p's tree (nodes) is absent, shows the same value, or is read from other bytes
// than it is in p: whether b changes the line only by choosing the layout.
func readElsewhere(t *testing.T, p *decode.Packet, nodes []output.TreeNode, i, b int) bool {
	f := nodes[i].Field
	var v decode.Value
	require.True(t, f.Get(p, &v))
	want := f.String(&v)
	in := p.Input
	in.Data = append([]byte(nil), p.Data...)
	in.Data[b] ^= 0xFF
	q := decode.NewDecoder(decode.Options{SkipCRC: true}).Decode(in)
	if !f.Get(q, &v) || f.String(&v) == want {
		return true
	}
	for _, n := range output.TreeNodes(q) {
		if n.Field == f {
			return n.Span != nodes[i].Span
		}
	}
	return true
}

// probeSpans finds which bytes of the frame each tree line's field is
// decoded from, without knowing the wire format: a field whose value is a
// slice of the frame is located exactly; for the others, each of the first
// 256 bytes and the last 8 is inverted in a copy of the frame in turn, and
// a field whose value changes (while it stays present) is made of that byte.
// Protocols cover the bytes of their fields. ibtui did this on each cursor
// move until the tree placed the bytes; it is kept as the oracle above.
func probeSpans(in decode.Input, nodes []output.TreeNode) []output.Span {
	const probeLimit = 256
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	frame := append([]byte(nil), in.Data...)
	in.Data = frame
	p := dec.Decode(in)
	spans := make([]output.Span, len(nodes))
	base := make([]string, len(nodes))
	var v decode.Value
	probe := make([]bool, len(nodes))
	// A line is its field's occurrence occ[i] (a table's entry i).
	occ := make([]int, len(nodes))
	seen := map[*decode.Field]int{}
	for i, n := range nodes {
		occ[i] = seen[n.Field]
		seen[n.Field]++
	}
	get := func(f *decode.Field, p *decode.Packet, i int, v *decode.Value) bool {
		if occ[i] == 0 || f.TreeOnly() {
			return f.Get(p, v)
		}
		return f.GetOccurrence(p, occ[i], v)
	}
	for i, n := range nodes {
		if n.Field.Type == decode.FTProtocol || n.Field.Type == decode.FTNone || !get(n.Field, p, i, &v) {
			continue
		}
		if n.Field.Type == decode.FTBytes && len(v.B) > 0 && cap(v.B) <= cap(frame) {
			if off := cap(frame) - cap(v.B); off >= 0 && off+len(v.B) <= len(frame) && &frame[off] == &v.B[0] {
				spans[i] = output.Span{Lo: off, Hi: off + len(v.B)}
				continue
			}
		}
		if n.Field.Name == "frame" || strings.HasPrefix(n.Field.Name, "frame.") || strings.HasPrefix(n.Field.Name, "ibwire.analysis") {
			continue // about the frame, not from its bytes
		}
		base[i] = n.Field.String(&v)
		probe[i] = true
	}
	mut := make([]byte, len(frame))
	var positions []int
	for b := 0; b < min(len(frame), probeLimit); b++ {
		positions = append(positions, b)
	}
	for b := max(probeLimit, len(frame)-8); b < len(frame); b++ {
		positions = append(positions, b)
	}
	for _, b := range positions {
		copy(mut, frame)
		mut[b] ^= 0xFF
		in.Data = mut
		q := dec.Decode(in)
		for i, n := range nodes {
			if probe[i] && get(n.Field, q, i, &v) && n.Field.String(&v) != base[i] {
				spans[i] = spans[i].Union(output.Span{Lo: b, Hi: b + 1})
			}
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if t := nodes[i].Field.Type; t != decode.FTProtocol && t != decode.FTNone {
			continue // a text item (FTNone) holds its lines' bytes too
		}
		for j := i + 1; j < len(nodes) && nodes[j].Depth > nodes[i].Depth; j++ {
			spans[i] = spans[i].Union(spans[j])
		}
	}
	return spans
}
