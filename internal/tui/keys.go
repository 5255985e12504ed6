package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// key is one key press a binding answers to.
type key struct {
	k   tcell.Key
	r   rune
	mod tcell.ModMask // only for tcell.KeyRune with Alt; control keys are their own tcell.Key
}

func runeKey(r rune) key      { return key{k: tcell.KeyRune, r: r} }
func ctrlKey(k tcell.Key) key { return key{k: k} }

func (k key) matches(ev *tcell.EventKey) bool {
	if k.k == tcell.KeyRune {
		return ev.Key() == tcell.KeyRune && ev.Rune() == k.r && ev.Modifiers()&tcell.ModAlt == k.mod&tcell.ModAlt
	}
	return ev.Key() == k.k
}

func (k key) String() string {
	if k.k == tcell.KeyRune {
		if k.r == ' ' {
			return "space"
		}
		return string(k.r)
	}
	if k.k == tcell.KeyBacktab {
		return "shift-tab"
	}
	name := tcell.KeyNames[k.k]
	if name == "" {
		name = fmt.Sprintf("key%d", k.k)
	}
	name = strings.ToLower(name)
	// tcell spells control keys "Ctrl-D"; the help says "ctrl-d".
	return name
}

// Scopes say where a binding applies. A binding of scopeGlobal applies
// wherever no text is being typed; the others when that pane has the focus.
const (
	scopeGlobal   = "global"
	scopeList     = "packet list"
	scopeTree     = "detail tree"
	scopeHex      = "hex pane"
	scopeConvs    = "conversations"
	scopeExpert   = "expert"
	scopeFollow   = "follow QP"
	scopeCommands = "commands"
	scopeOpLat    = "latency per opcode"
	scopeGraph    = "graphs"
	scopePoints   = "capture points"
	scopeHelp     = "help"
)

// binding is one row of THE key table: the keys, where they apply, what
// they do (for the help screen) and the action. The help screen is
// generated from this table, so it cannot disagree with the handling.
type binding struct {
	scope  string
	keys   []key
	help   string
	action func(u *UI)
}

// keyTable returns every binding, in the order the help screen lists them.
func keyTable() []binding {
	r, c := runeKey, ctrlKey
	return []binding{
		{scopeGlobal, []key{r('/')}, "focus the display filter bar (enter applies, esc leaves, tab completes)", (*UI).focusFilter},
		{scopeGlobal, []key{r(':')}, "command line: " + commandNames(), (*UI).openCommand},
		{scopeGlobal, []key{r('?'), c(tcell.KeyF1)}, "this help", func(u *UI) { u.showView(viewHelp) }},
		{scopeGlobal, []key{r('q')}, "quit (from the help, back to the previous view)", (*UI).quitOrBack},
		{scopeGlobal, []key{c(tcell.KeyEscape)}, "back to the packet list", func(u *UI) { u.showView(viewPackets) }},
		{scopeGlobal, []key{r('C')}, "QP conversations view", func(u *UI) { u.showView(viewConvs) }},
		{scopeGlobal, []key{r('E')}, "expert findings view", func(u *UI) { u.showView(viewExpert) }},
		{scopeGlobal, []key{r('F')}, "follow QP of the selected packet or conversation", (*UI).followSelected},
		{scopeGlobal, []key{r('I')}, "I/O graph (sparklines of -z io,stat columns)", func(u *UI) { u.showView(viewIO) }},
		{scopeGlobal, []key{r('P')}, "PSN graph of the selected packet's or conversation's connection", (*UI).psnSelected},
		{scopeGlobal, []key{r('T')}, "latency histograms", func(u *UI) { u.showView(viewLatency) }},
		{scopeGlobal, []key{r('R')}, "DCQCN: sending rate per QP direction, with CE marks and CNPs", func(u *UI) { u.showView(viewRate) }},
		{scopeGlobal, []key{r('U')}, "upper-layer commands: NVMe-oF commands, RPC-over-RDMA calls, iSER tasks and SMB2 requests with status and latency", (*UI).showCommands},
		{scopeGlobal, []key{r('W')}, "capture points (ibtui --correlate): where each packet was seen, its time at each point, and the per-hop table", func(u *UI) { u.showView(viewPoints) }},
		{scopeGlobal, []key{c(tcell.KeyTab)}, "next pane", func(u *UI) { u.cyclePane(1) }},
		{scopeGlobal, []key{c(tcell.KeyBacktab)}, "previous pane", func(u *UI) { u.cyclePane(-1) }},
		{scopeGlobal, []key{r('\\')}, "zoom the focused pane (again: unzoom)", (*UI).toggleZoom},
		{scopeGlobal, []key{r('|')}, "layout: hex below the tree, or beside it", (*UI).toggleLayout},
		{scopeGlobal, []key{r('+')}, "packets view: a taller packet list", func(u *UI) { u.resizeList(1) }},
		{scopeGlobal, []key{r('-')}, "packets view: a shorter packet list", func(u *UI) { u.resizeList(-1) }},
		{scopeGlobal, []key{c(tcell.KeyCtrlF)}, "search forward: a display filter, or text of the summary line", (*UI).openSearch},
		{scopeGlobal, []key{r('n')}, "search again", (*UI).searchNext},
		{scopeGlobal, []key{c(tcell.KeyCtrlL)}, "redraw the screen", func(u *UI) { u.app.Sync() }},

		{scopeList, []key{r('j'), c(tcell.KeyDown)}, "next packet", func(u *UI) { u.moveList(1) }},
		{scopeList, []key{r('k'), c(tcell.KeyUp)}, "previous packet", func(u *UI) { u.moveList(-1) }},
		{scopeList, []key{c(tcell.KeyCtrlD), c(tcell.KeyPgDn)}, "half a page down", func(u *UI) { u.moveList(u.halfPage()) }},
		{scopeList, []key{c(tcell.KeyCtrlU), c(tcell.KeyPgUp)}, "half a page up", func(u *UI) { u.moveList(-u.halfPage()) }},
		{scopeList, []key{r('G'), c(tcell.KeyEnd)}, "last packet (with a count: that packet number)", (*UI).gotoEnd},
		{scopeList, []key{c(tcell.KeyHome)}, "first packet", func(u *UI) { u.selectRow(0) }},
		{scopeList, []key{c(tcell.KeyEnter)}, "open the detail tree", func(u *UI) { u.focusPane(paneTree) }},
		{scopeList, []key{r('a')}, "apply the selected packet's connection as the filter", (*UI).applyPacketConv},
		{scopeList, []key{r('m')}, "m + letter: mark the selected packet", func(u *UI) { u.pending = 'm' }},
		{scopeList, []key{r('\'')}, "' + letter: jump to the mark; '' jumps back", func(u *UI) { u.pending = '\'' }},
		{scopeList, []key{r('g')}, "gg: first packet; 5gg or 5G: packet 5 (digits are a count)", func(u *UI) { u.pending = 'g' }},

		{scopeTree, []key{r('j'), c(tcell.KeyDown)}, "next field", func(u *UI) { u.moveTree(1) }},
		{scopeTree, []key{r('k'), c(tcell.KeyUp)}, "previous field", func(u *UI) { u.moveTree(-1) }},
		{scopeTree, []key{r('l'), c(tcell.KeyRight)}, "expand", func(u *UI) { u.expandTree(true) }},
		{scopeTree, []key{r('h'), c(tcell.KeyLeft)}, "collapse", func(u *UI) { u.expandTree(false) }},
		{scopeTree, []key{c(tcell.KeyEnter), r(' ')}, "expand or collapse", (*UI).toggleTree},
		{scopeTree, []key{r('a')}, "apply the selected field as the filter (field == value)", func(u *UI) { u.applyField("") }},
		{scopeTree, []key{r('&')}, "and the selected field with the current filter", func(u *UI) { u.applyField("&&") }},
		{scopeTree, []key{r('!')}, "filter out the selected field's value", func(u *UI) { u.applyField("!") }},

		{scopeHex, []key{r('l'), c(tcell.KeyRight)}, "next byte (selects its field)", func(u *UI) { u.moveHex(1) }},
		{scopeHex, []key{r('h'), c(tcell.KeyLeft)}, "previous byte", func(u *UI) { u.moveHex(-1) }},
		{scopeHex, []key{r('j'), c(tcell.KeyDown)}, "next line", func(u *UI) { u.moveHex(16) }},
		{scopeHex, []key{r('k'), c(tcell.KeyUp)}, "previous line", func(u *UI) { u.moveHex(-16) }},

		{scopeConvs, []key{r('j'), c(tcell.KeyDown)}, "next connection", func(u *UI) { u.moveTable(u.convs.Table, 1) }},
		{scopeConvs, []key{r('k'), c(tcell.KeyUp)}, "previous connection", func(u *UI) { u.moveTable(u.convs.Table, -1) }},
		{scopeConvs, []key{r('s')}, "sort by the next column", func(u *UI) { u.convs.sortNext(1) }},
		{scopeConvs, []key{r('S')}, "reverse the sort", func(u *UI) { u.convs.reverse() }},
		{scopeConvs, []key{c(tcell.KeyEnter), r('a')}, "apply the connection as the filter and show its packets", (*UI).applyConv},
		{scopeConvs, []key{r('f')}, "follow the connection", (*UI).followSelected},
		{scopeConvs, []key{r('p')}, "PSN graph of the connection", (*UI).psnSelected},

		{scopeExpert, []key{r('j'), c(tcell.KeyDown)}, "next finding", func(u *UI) { u.moveTable(u.expert, 1) }},
		{scopeExpert, []key{r('k'), c(tcell.KeyUp)}, "previous finding", func(u *UI) { u.moveTable(u.expert, -1) }},
		{scopeExpert, []key{c(tcell.KeyEnter)}, "go to the finding's first frame", (*UI).expertJump},

		{scopeFollow, []key{r('j'), c(tcell.KeyDown)}, "next message", func(u *UI) { u.moveTable(u.follow.list, 1) }},
		{scopeFollow, []key{r('k'), c(tcell.KeyUp)}, "previous message", func(u *UI) { u.moveTable(u.follow.list, -1) }},
		{scopeFollow, []key{r('x')}, "payload as hex or ASCII", func(u *UI) { u.follow.toggleHex() }},
		{scopeFollow, []key{c(tcell.KeyEnter)}, "go to the message's first frame", (*UI).followJump},

		{scopeCommands, []key{r('j'), c(tcell.KeyDown)}, "next command", func(u *UI) { u.moveTable(u.commands.table, 1) }},
		{scopeCommands, []key{r('k'), c(tcell.KeyUp)}, "previous command", func(u *UI) { u.moveTable(u.commands.table, -1) }},
		{scopeCommands, []key{c(tcell.KeyEnter)}, "go to the command's (the call's) frame", func(u *UI) { u.commandJump(false) }},
		{scopeCommands, []key{r('c')}, "go to its completion's (reply's) frame", func(u *UI) { u.commandJump(true) }},
		{scopeCommands, []key{r('a')}, "apply the command's connection as the filter", (*UI).commandConv},
		{scopeCommands, []key{r('s')}, "sort by the next column", func(u *UI) { u.commands.sortNext() }},
		{scopeCommands, []key{r('S')}, "reverse the sort (first: slowest first)", func(u *UI) { u.commands.reverse() }},
		{scopeCommands, []key{r('t')}, "latency histogram per opcode (as -z nvme,srt, rpc,srt, iscsi,srt, smb2,srt) of the command's connection", func(u *UI) { u.showOpLatency(false) }},
		{scopeCommands, []key{r('T')}, "latency histogram per opcode of every connection (:oplatency)", func(u *UI) { u.showOpLatency(true) }},

		{scopeOpLat, []key{r('j'), c(tcell.KeyDown)}, "next line (an opcode or one of its buckets)", func(u *UI) { u.moveTable(u.opLat.table, 1) }},
		{scopeOpLat, []key{r('k'), c(tcell.KeyUp)}, "previous line", func(u *UI) { u.moveTable(u.opLat.table, -1) }},
		{scopeOpLat, []key{c(tcell.KeyEnter)}, "the opcode's or the bucket's commands, in the commands view (enter there: their frames; U: every command)", (*UI).opLatCommands},
		{scopeOpLat, []key{r('T')}, "every connection, or back to the connection", (*UI).toggleOpLatency},

		{scopeGraph, []key{r('+'), r('=')}, "zoom in (I/O graph: shorter interval)", func(u *UI) { u.zoomGraph(true) }},
		{scopeGraph, []key{r('-')}, "zoom out (I/O graph: longer interval)", func(u *UI) { u.zoomGraph(false) }},
		{scopeGraph, []key{r('h'), c(tcell.KeyLeft)}, "PSN graph: pan left", func(u *UI) { u.psn.pan(-1) }},
		{scopeGraph, []key{r('l'), c(tcell.KeyRight)}, "PSN graph: pan right", func(u *UI) { u.psn.pan(1) }},
		{scopeGraph, []key{r('0')}, "PSN graph: the whole connection", func(u *UI) { u.psn.reset() }},
		{scopeGraph, []key{r('e')}, "I/O graph: edit the columns (as -z io,stat: FILTER or FUNC(field)FILTER, comma separated)", (*UI).editIOColumns},

		{scopePoints, []key{c(tcell.KeyEnter)}, "go to the packet in the packet list (the first point's capture)", (*UI).pointsJump},
		{scopePoints, []key{c(tcell.KeyTab)}, "move between the packets and the per-hop table (j/k scroll either)", (*UI).pointsFocus},

		{scopeHelp, []key{c(tcell.KeyCtrlD)}, "half a page down (j/k, pgdn/pgup, g/G scroll too)", func(u *UI) { u.help.scroll(1) }},
		{scopeHelp, []key{c(tcell.KeyCtrlU)}, "half a page up", func(u *UI) { u.help.scroll(-1) }},
	}
}

// keyNames is the help's spelling of a binding's keys.
func keyNames(b *binding) string {
	var s []string
	for _, k := range b.keys {
		s = append(s, k.String())
	}
	return strings.Join(s, " / ")
}

// helpText is the help screen, generated from the key table. With width
// above 0 each description wraps under itself to fit (80 columns leave
// the longest ones too little room); 0 leaves lines whole.
func helpText(table []binding, width int) string {
	var b strings.Builder
	b.WriteString("ibtui keys (esc or q closes this help)\n")
	scope := ""
	for i := range table {
		k := &table[i]
		if k.scope != scope {
			scope = k.scope
			fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(scope))
		}
		prefix := fmt.Sprintf("  %-*s ", helpKeyWidth, keyNames(k))
		writeHanging(&b, prefix, k.help, width, helpIndent)
	}
	writeHanging(&b, "\n", "Mouse: click a row, a field or a byte to select it; the wheel scrolls.", width, 0)
	return b.String()
}

// helpKeyWidth is the width of the help's key column; descriptions start at
// helpIndent: two spaces, the key column, a space.
const (
	helpKeyWidth = 20
	helpIndent   = 2 + helpKeyWidth + 1
)

// writeHanging writes prefix and text, wrapping text at word boundaries so
// no line passes width (when width > 0), its continuation lines indented
// by indent.
func writeHanging(b *strings.Builder, prefix, text string, width, indent int) {
	b.WriteString(prefix)
	col := len(prefix) - strings.LastIndexByte(prefix, '\n') - 1
	start := col
	for i, word := range strings.Fields(text) {
		if i > 0 {
			if width > 0 && col+1+len(word) > width && col > start {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col, start = indent, indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(word)
		col += len(word)
	}
	b.WriteByte('\n')
}

// KeyHelp is the key table as the help screen shows it, for ibtui --help.
func KeyHelp() string { return helpText(keyTable(), 0) }

// helpView is the help screen laid out again for its width each time that
// changes, so that descriptions wrap under themselves instead of running
// off an 80-column terminal.
type helpView struct {
	*tview.TextView
	keys  []binding
	width int
}

func newHelpView(keys []binding) *helpView {
	return &helpView{TextView: tview.NewTextView().SetWrap(false), keys: keys, width: -1}
}

// scroll moves the help half a page down (d > 0) or up.
func (h *helpView) scroll(d int) {
	_, _, _, height := h.GetInnerRect()
	row, col := h.GetScrollOffset()
	h.ScrollTo(max(row+d*max(height/2, 1), 0), col)
}

// Draw lays the text out for the width the view was given, then draws it.
func (h *helpView) Draw(screen tcell.Screen) {
	if _, _, w, _ := h.GetInnerRect(); w != h.width {
		h.width = w
		h.SetText(helpText(h.keys, w))
	}
	h.TextView.Draw(screen)
}
