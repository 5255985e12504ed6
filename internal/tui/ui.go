// Package tui is ibtui: a terminal viewer for RDMA captures that opens on
// the packet list, with the queue-pair conversations one key away. It
// draws decode's model with tview; it is the only package that imports
// tview and tcell.
package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
)

// The views, in the order of the tab line.
const (
	viewPackets  = "packets"
	viewConvs    = "convs"
	viewExpert   = "expert"
	viewFollow   = "follow"
	viewIO       = "iograph"
	viewPSN      = "psngraph"
	viewLatency  = "latency"
	viewRate     = "rate"
	viewCommands = "commands"
	viewOpLat    = "oplatency" // the commands' latency per opcode: under the Cmds tab
	viewHelp     = "help"
	viewPoints   = "points" // with capture points only (Config.Points)
)

var viewTitles = []struct{ name, title string }{
	{viewPackets, "Packets"}, {viewConvs, "QPs"}, {viewExpert, "Expert"}, {viewFollow, "Follow"},
	{viewIO, "I/O"}, {viewPSN, "PSN"}, {viewLatency, "Latency"}, {viewRate, "Rate"}, {viewCommands, "Cmds"}, {viewPoints, "Points"}, {viewHelp, "Help"},
}

// The panes of the packets view.
const (
	paneList = iota
	paneTree
	paneHex
)

// Config sets up a UI.
type Config struct {
	Model *Model
	// Mono selects the monochrome theme (NO_COLOR and friends).
	Mono bool
	// Open loads another capture for :load; nil disables the command.
	Open func(path string) (*Model, error)
	// Frame, when not 0, is the frame to select once it is read (ibtui -g):
	// the way into a capture from a row of ibdump -T parquet's output.
	Frame int
	// Points, when set, is a correlation of captures (ibtui --correlate)
	// for the points view; Model then holds the first point's capture.
	Points *Points
}

// UI is the whole viewer. Everything in it belongs to the tview event loop's
// goroutine; other goroutines reach it through queue.
type UI struct {
	app   *tview.Application
	m     *Model
	rd    *reader
	theme theme
	keys  []binding
	open  func(string) (*Model, error)
	ctx   context.Context
	stop  context.CancelFunc

	root      *tview.Flex
	tabs      *tview.TextView
	filterBar *tview.InputField
	// filterErr is the line under the filter bar that says why the filter
	// does not compile, as ibdump does: a caret under the column, the
	// reason. Empty when it compiles.
	filterErr    *tview.TextView
	filterErrMsg string
	filterErrCol int // 1-based; 0 when the error names no column
	// msg is a note about the last key, in the status bar until the next.
	msg        string
	statusText string
	// startFrame is Config.Frame until it has been read and selected.
	startFrame int
	pages      *tview.Pages
	bottom     *tview.Pages
	status     *tview.TextView
	prompt     *tview.InputField
	promptFor  string // "command" or "search"
	view       string
	prevView   string

	// The packets view.
	packets  *tview.Flex
	lower    *tview.Flex
	list     *tview.Table
	listData *listContent
	tree     *tview.TreeView
	hex      *hexView
	detail   *detail
	pane     int
	zoomed   bool
	side     bool // hex beside the tree
	listSize int  // the packet list's weight in the height (tree and hex have 2 each)
	selected int  // the selected frame, 0 when none
	rows     int  // displayed rows, as of the last refresh
	// rowsFilter is the filter rows were counted under, as of the last
	// refresh that was not filtering.
	rowsFilter string

	convs    *convTable
	expert   *tview.Table
	follow   *followView
	io       *ioGraph
	psn      *psnGraph
	latency  *latencyView
	rate     *rateView
	commands *commandsView
	opLat    *opLatView
	points   *pointsView
	help     *helpView

	// Keys in progress.
	pending rune // 'm', '\'', 'g' or 0
	count   int  // digits typed before G or gg
	marks   map[rune]int
	back    int // the frame before the last jump, for ''

	// The detail tree: the field the user last selected, and the
	// protocols the user opened (true) or closed, by name.
	treeKeep  *decode.Field
	treeOpen  map[string]bool
	treeStart *tview.TreeNode // the line the tree of the packet shown started on

	search      string
	refreshing  atomic.Bool
	lastVersion uint64
}

// newUI builds the viewer over cfg.Model in app; Run shows it.
func newUI(app *tview.Application, cfg Config) *UI {
	ctx, stop := context.WithCancel(context.Background())
	u := &UI{app: app, m: cfg.Model, theme: newTheme(cfg.Mono), keys: keyTable(), open: cfg.Open, ctx: ctx, stop: stop,
		marks: map[rune]int{}, treeOpen: map[string]bool{}, startFrame: cfg.Frame}
	u.theme.apply()
	u.rd = newReader(u.m)
	u.build()
	app.SetRoot(u.root, true).EnableMouse(true)
	app.SetInputCapture(u.handleKey)
	u.showView(viewPackets)
	if cfg.Points != nil {
		u.setPoints(cfg.Points)
	}
	u.refresh()
	return u
}

// changed is the Model's notify: it schedules one redraw, however many
// changes come before it runs.
func (u *UI) changed() {
	if u.refreshing.Swap(true) {
		return
	}
	u.queue(func() {
		u.refreshing.Store(false)
		u.refresh()
	})
}

// queue runs fn on the UI goroutine and redraws. It never blocks the
// caller: tview's QueueUpdateDraw blocks forever once Run has returned
// (rivo/tview#1163), so it is called from a goroutine of its own that the
// UI's context lets go.
func (u *UI) queue(fn func()) {
	go func() {
		select {
		case <-u.ctx.Done():
			return
		default:
		}
		u.app.QueueUpdateDraw(func() {
			if u.ctx.Err() == nil {
				fn()
			}
		})
	}()
}

// Close stops the background work the UI started.
func (u *UI) Close() { u.stop() }

func (u *UI) build() {
	u.tabs = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	u.filterBar = tview.NewInputField().SetLabel("Filter: ")
	u.filterBar.SetChangedFunc(u.validateFilter)
	u.filterBar.SetAutocompleteFunc(completeFilter)
	u.filterBar.SetAutocompletedFunc(func(text string, index, source int) bool {
		if source != tview.AutocompletedNavigate {
			u.filterBar.SetText(text)
		}
		return source == tview.AutocompletedEnter || source == tview.AutocompletedClick || source == tview.AutocompletedTab
	})
	u.filterBar.SetDoneFunc(func(k tcell.Key) {
		switch k {
		case tcell.KeyEnter:
			u.applyFilter(u.filterBar.GetText())
		case tcell.KeyEscape:
			u.filterBar.SetText(u.m.Status().Filter)
			u.focusPane(u.pane)
		}
	})
	u.validateFilter(u.m.Status().Filter)
	u.filterBar.SetText(u.m.Status().Filter)

	u.listData = &listContent{u: u, cache: map[int]*listRow{}}
	u.list = tview.NewTable().SetContent(u.listData).SetSelectable(true, false).SetFixed(1, 0)
	u.list.SetSelectedStyle(u.theme.selected)
	u.list.SetSelectionChangedFunc(func(row, _ int) { u.listSelected(row) })
	u.list.SetSelectedFunc(func(int, int) { u.focusPane(paneTree) })
	u.list.SetMouseCapture(func(a tview.MouseAction, ev *tcell.EventMouse) (tview.MouseAction, *tcell.EventMouse) {
		if a == tview.MouseLeftClick {
			u.pane = paneList
		}
		return a, ev
	})
	u.tree = tview.NewTreeView()
	u.tree.SetChangedFunc(func(n *tview.TreeNode) {
		u.treeSelected(n)
		// tview calls this at the next draw for the line a new packet's
		// tree starts on too: only another line is the user's choice.
		if n != u.treeStart {
			u.treeChose()
		}
	})
	u.tree.SetMouseCapture(func(a tview.MouseAction, ev *tcell.EventMouse) (tview.MouseAction, *tcell.EventMouse) {
		if a == tview.MouseLeftClick {
			u.pane = paneTree
		}
		return a, ev
	})
	u.hex = newHexView(u)
	u.detail = &detail{}
	u.lower = tview.NewFlex()
	u.packets = tview.NewFlex().SetDirection(tview.FlexRow)
	u.layoutPackets()

	u.convs = newConvTable(u)
	u.expert = tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)
	u.expert.SetSelectedStyle(u.theme.selected)
	u.expert.SetSelectedFunc(func(int, int) { u.expertJump() })
	u.follow = newFollowView(u)
	u.io = newIOGraph(u)
	u.psn = newPSNGraph(u)
	u.latency = newLatencyView(u)
	u.rate = newRateView(u)
	u.commands = newCommandsView(u)
	u.opLat = newOpLatView(u)
	u.points = newPointsView(u)
	u.help = newHelpView(u.keys)

	u.pages = tview.NewPages().
		AddPage(viewPackets, u.packets, true, true).
		AddPage(viewConvs, u.convs.view, true, false).
		AddPage(viewExpert, u.expert, true, false).
		AddPage(viewFollow, u.follow.Flex, true, false).
		AddPage(viewIO, u.io, true, false).
		AddPage(viewPSN, u.psn, true, false).
		AddPage(viewLatency, u.latency, true, false).
		AddPage(viewRate, u.rate, true, false).
		AddPage(viewCommands, u.commands, true, false).
		AddPage(viewOpLat, u.opLat, true, false).
		AddPage(viewPoints, u.points, true, false).
		AddPage(viewHelp, u.help, true, false)

	u.status = tview.NewTextView().SetWrap(true).SetWordWrap(true)
	u.status.SetTextStyle(u.theme.status)
	_, statusBG, _ := u.theme.status.Decompose()
	u.status.SetBackgroundColor(statusBG)
	u.prompt = tview.NewInputField()
	u.prompt.SetDoneFunc(u.promptDone)
	u.prompt.SetAutocompleteFunc(u.completeCommand)
	u.bottom = tview.NewPages().AddPage("status", u.status, true, true).AddPage("prompt", u.prompt, true, false)

	u.filterErr = tview.NewTextView().SetWrap(false).SetDynamicColors(true)
	u.filterErr.SetTextStyle(u.theme.bad)

	u.root = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(u.tabs, 1, 0, false).
		AddItem(u.filterBar, 1, 0, false).
		AddItem(u.filterErr, 0, 0, false).
		AddItem(u.pages, 0, 1, true).
		AddItem(u.bottom, 1, 0, false)
	u.root.SetDrawFunc(func(_ tcell.Screen, x, y, w, h int) (int, int, int, int) {
		u.fitMessages(w, h)
		return x, y, w, h
	})
}

// fitMessages gives the filter's error and the status bar the lines they
// need at width w (out of h), so that neither is cut at the width.
func (u *UI) fitMessages(w, h int) {
	var errLines []string
	if u.filterErrMsg != "" {
		caret := ""
		if u.filterErrCol > 0 {
			caret = strings.Repeat(" ", utf8.RuneCountInString(filterBadLabel)+u.filterErrCol-1) + "^"
		}
		// Escaped, so that brackets in the filter are text, not tags.
		msg := tview.Escape(u.filterErrMsg)
		switch {
		case caret == "":
			errLines = tview.WordWrap(msg, w)
		case len(caret)+1+utf8.RuneCountInString(u.filterErrMsg) <= w:
			errLines = []string{caret + " " + msg}
		default:
			errLines = append([]string{caret}, tview.WordWrap(msg, w)...)
		}
	}
	errLines = errLines[:min(len(errLines), 3)]
	u.filterErr.SetText(strings.Join(errLines, "\n"))
	u.root.ResizeItem(u.filterErr, len(errLines), 0)
	status := 1
	if name, _ := u.bottom.GetFrontPage(); name == "status" {
		status = min(max(len(tview.WordWrap(tview.Escape(u.statusText), w)), 1), max(h/3, 1))
	}
	u.root.ResizeItem(u.bottom, status, 0)
}

// layoutPackets arranges the three panes: stacked, or the hex beside the
// tree (|), or only the focused one (\).
func (u *UI) layoutPackets() {
	u.packets.Clear()
	u.lower.Clear()
	if u.zoomed {
		u.packets.AddItem([]tview.Primitive{u.list, u.tree, u.hex}[u.pane], 0, 1, true)
		return
	}
	if u.listSize == 0 {
		u.listSize = 3
	}
	u.packets.AddItem(u.list, 0, u.listSize, u.pane == paneList)
	if u.side {
		u.lower.SetDirection(tview.FlexColumn).AddItem(u.tree, 0, 1, u.pane == paneTree).AddItem(u.hex, 0, 1, u.pane == paneHex)
		u.packets.AddItem(u.lower, 0, 3, u.pane != paneList)
		return
	}
	u.packets.AddItem(u.tree, 0, 2, u.pane == paneTree).AddItem(u.hex, 0, 2, u.pane == paneHex)
}

func (u *UI) toggleZoom() {
	if u.view != viewPackets {
		return
	}
	u.zoomed = !u.zoomed
	u.layoutPackets()
	u.focusPane(u.pane)
}

// resizeList gives the packet list more (d > 0) or less of the height.
func (u *UI) resizeList(d int) {
	if u.view != viewPackets {
		return
	}
	u.listSize = min(max(u.listSize+d, 1), 12)
	u.layoutPackets()
	u.focusPane(u.pane)
}

func (u *UI) toggleLayout() {
	if u.view != viewPackets {
		return
	}
	u.side = !u.side
	u.layoutPackets()
	u.focusPane(u.pane)
}

func (u *UI) focusPane(p int) {
	if u.view != viewPackets {
		u.showView(viewPackets)
	}
	u.pane = p
	if u.zoomed {
		u.layoutPackets()
	}
	u.app.SetFocus([]tview.Primitive{u.list, u.tree, u.hex}[p])
	u.drawTabs()
}

func (u *UI) cyclePane(d int) {
	if u.view != viewPackets {
		return
	}
	u.focusPane((u.pane + d + 3) % 3)
}

// showView switches the page and starts what the view needs.
func (u *UI) showView(name string) {
	if name != u.view && u.view != viewHelp {
		u.prevView = u.view
	}
	u.view = name
	u.pages.SwitchToPage(name)
	switch name {
	case viewPackets:
		u.app.SetFocus([]tview.Primitive{u.list, u.tree, u.hex}[u.pane])
	case viewConvs:
		u.convs.update(u.m.Conversations())
		u.app.SetFocus(u.convs.Table)
	case viewExpert:
		u.fillExpert()
		u.app.SetFocus(u.expert)
	case viewFollow:
		u.app.SetFocus(u.follow.list)
	case viewIO:
		u.io.start()
		u.app.SetFocus(u.io)
	case viewPSN:
		u.app.SetFocus(u.psn)
	case viewLatency:
		u.app.SetFocus(u.latency)
	case viewRate:
		u.app.SetFocus(u.rate)
	case viewCommands:
		u.app.SetFocus(u.commands.table)
	case viewOpLat:
		u.app.SetFocus(u.opLat.table)
	case viewPoints:
		u.points.fill()
		u.app.SetFocus(u.points.table)
	case viewHelp:
		u.app.SetFocus(u.help)
	}
	u.drawTabs()
}

func (u *UI) quitOrBack() {
	if u.view == viewHelp {
		back := u.prevView
		if back == "" {
			back = viewPackets
		}
		u.showView(back)
		return
	}
	u.app.Stop()
}

func (u *UI) drawTabs() {
	var b strings.Builder
	lit := u.view
	if lit == viewOpLat {
		lit = viewCommands // the commands' histograms are under their tab
	}
	for _, v := range viewTitles {
		if v.name == viewPoints && u.points.p == nil {
			continue // a tab only when there are capture points
		}
		t := v.title
		if v.name == lit {
			fmt.Fprintf(&b, "[%s] ", styleTag(u.theme.tabActive, " "+t+" "))
		} else {
			fmt.Fprintf(&b, " %s  ", t)
		}
	}
	b.WriteString(" ? help  q quit")
	u.tabs.SetText(b.String())
}

// styleTag wraps s in tview colour tags for style st.
func styleTag(st tcell.Style, s string) string {
	fg, bg, attr := st.Decompose()
	col := func(c tcell.Color) string {
		if c == tcell.ColorDefault {
			return "-"
		}
		return c.String()
	}
	flags := ""
	if attr&tcell.AttrBold != 0 {
		flags += "b"
	}
	if attr&tcell.AttrReverse != 0 {
		flags += "r"
	}
	if attr&tcell.AttrUnderline != 0 {
		flags += "u"
	}
	return fmt.Sprintf("[%s:%s:%s]%s[-:-:-]", col(fg), col(bg), flags, tview.Escape(s))
}

// refresh brings every view up to date with the model; the loader calls it
// (through changed) after each batch.
func (u *UI) refresh() {
	st := u.m.Status()
	// Tail the list only when the cursor was on its last row and the list
	// grew under the same filter: a new filter (or none) changes the rows,
	// and the cursor then stays on its frame.
	tail := u.rows > 0 && u.listRow() == u.rows && !st.Filtering && st.Filter == u.rowsFilter && st.Displayed > u.rows
	u.rows = st.Displayed
	if !st.Filtering {
		u.rowsFilter = st.Filter
	}
	// tview's table follows its end once it has been drawn short of rows
	// (when the first batch came); only the user, by going to the last
	// packet, asks for that.
	ro, co := u.list.GetOffset()
	u.list.SetOffset(ro, co)
	if st.Version != u.lastVersion {
		u.lastVersion = st.Version
		u.listData.invalidate()
	}
	switch {
	case u.selected == 0 && u.rows > 0:
		u.selectRow(0)
	case tail:
		// Tail a capture that grows, up to its last packets, which come
		// with the end.
		u.selectRow(u.rows - 1)
	case u.selected != 0:
		// Keep the selected frame under the cursor when a filter changes
		// the rows; when it is filtered out, the next one shown.
		if r, shown := u.m.Row(u.selected); r+1 != u.listRow() || !shown {
			u.list.Select(r+1, 0)
			u.listSelected(r + 1)
		}
	}
	if n := u.startFrame; n > 0 && (st.Packets >= n || st.Done) && !st.Filtering {
		u.startFrame = 0
		u.jumpFrame(n) // says so when the frame is not there
	}
	if u.view == viewConvs {
		u.convs.update(u.m.Conversations())
	}
	if u.view == viewExpert {
		u.fillExpert()
	}
	u.drawStatus(st)
	u.drawTabs()
}

func (u *UI) drawStatus(st Status) {
	var b strings.Builder
	fmt.Fprintf(&b, " %s | %d packets", st.Name, st.Packets)
	// While a filter runs the bar is no longer than once it is done: a
	// bar that wrapped for a moment shrank the panes, and the tree stayed
	// scrolled by the line it lost.
	switch {
	case st.Filtering:
		b.WriteString(" | filtering...")
	case st.HasFilter:
		fmt.Fprintf(&b, " | %d displayed", st.Displayed)
	}
	if st.Filter != "" {
		fmt.Fprintf(&b, " | filter: %s", st.Filter)
	}
	switch {
	case st.Err != nil:
		fmt.Fprintf(&b, " | error: %v", st.Err)
	case st.Live && st.Done:
		// The source ended (a live capture never does by itself): no rate.
		fmt.Fprintf(&b, " | capture ended | %d dropped", st.Dropped)
	case st.Live:
		fmt.Fprintf(&b, " | capturing %.0f pkt/s | %d dropped", st.Rate, st.Dropped)
	case !st.Done:
		fmt.Fprintf(&b, " | loading %.0f pkt/s", st.Rate)
	}
	if st.Capped {
		fmt.Fprintf(&b, " | stopped at %d packets (--max-packets)", st.MaxPackets)
	}
	if u.msg != "" {
		fmt.Fprintf(&b, " | %s", u.msg)
	}
	u.statusText = b.String()
	u.status.SetText(u.statusText)
}

// filterBadLabel is the filter bar's label while its filter does not
// compile.
const filterBadLabel = "Filter✗ "

// validateFilter colours the filter bar as the filter is typed: green
// when it compiles, red with the error's column when it does not.
func (u *UI) validateFilter(text string) {
	st := u.theme.filterOff
	u.filterErrMsg, u.filterErrCol = "", 0
	label := "Filter: "
	if strings.TrimSpace(text) != "" {
		if err := dfilter.Validate(text); err != nil {
			st = u.theme.filterBad
			label = filterBadLabel
			u.filterErrMsg = err.Error()
			if se, ok := err.(*dfilter.SyntaxError); ok {
				u.filterErrMsg = fmt.Sprintf("column %d: %s", se.Column, se.Msg)
				u.filterErrCol = se.Column
			}
		} else {
			st = u.theme.filterOK
			label = "Filter✓ "
		}
	}
	u.filterBar.SetLabel(label)
	u.filterBar.SetFieldStyle(st)
	if u.status != nil {
		u.drawStatus(u.m.Status())
	}
}

// completeFilter offers field names, operators and value names for the
// token being typed (dfilter's completion over the registry).
func completeFilter(text string) []string {
	if text == "" {
		return nil
	}
	at := dfilter.TokenStart(text)
	if at < 0 {
		return nil
	}
	var out []string
	for _, s := range dfilter.Complete(text) {
		out = append(out, text[:at]+s)
		if len(out) == 12 {
			break
		}
	}
	if len(out) == 1 && out[0] == text {
		return nil
	}
	return out
}

func (u *UI) focusFilter() {
	u.app.SetFocus(u.filterBar)
}

// applyFilter sets the display filter; it is checked first, and a filter
// that does not compile stays in the bar, red, with its error.
func (u *UI) applyFilter(expr string) {
	expr = strings.TrimSpace(expr)
	if err := u.m.SetFilter(expr); err != nil {
		// In the bar (from the command line too), with its reason, for
		// the user to mend.
		if u.filterBar.GetText() != expr {
			u.filterBar.SetText(expr)
		}
		u.validateFilter(expr)
		u.app.SetFocus(u.filterBar)
		return
	}
	u.filterBar.SetText(expr)
	u.validateFilter(expr)
	u.showView(viewPackets)
	u.focusPane(paneList)
	u.refresh()
}

// handleKey is the one place keys are dispatched, from the key table.
func (u *UI) handleKey(ev *tcell.EventKey) *tcell.EventKey {
	switch u.app.GetFocus() {
	case u.filterBar, u.prompt:
		return ev // typing: the field handles its keys
	}
	// A note is about the key before: the next one takes it away.
	if u.msg != "" {
		u.msg = ""
		u.drawStatus(u.m.Status())
	}
	if u.pending != 0 {
		p := u.pending
		u.pending = 0
		if u.prefix(p, ev) {
			return nil
		}
	}
	if ev.Key() == tcell.KeyRune && ev.Rune() >= '0' && ev.Rune() <= '9' && u.scope() == scopeList &&
		(u.count > 0 || ev.Rune() != '0') {
		u.count = u.count*10 + int(ev.Rune()-'0')
		return nil
	}
	scope := u.scope()
	for i := range u.keys {
		b := &u.keys[i]
		if b.scope != scope {
			continue
		}
		for _, k := range b.keys {
			if k.matches(ev) {
				b.action(u)
				if u.pending == 0 {
					u.count = 0
				}
				return nil
			}
		}
	}
	for i := range u.keys {
		b := &u.keys[i]
		if b.scope != scopeGlobal {
			continue
		}
		for _, k := range b.keys {
			if k.matches(ev) {
				b.action(u)
				u.count = 0
				return nil
			}
		}
	}
	u.count = 0
	return ev
}

// scope is the key-table scope of what has the focus.
func (u *UI) scope() string {
	switch u.view {
	case viewPackets:
		return []string{scopeList, scopeTree, scopeHex}[u.pane]
	case viewConvs:
		return scopeConvs
	case viewExpert:
		return scopeExpert
	case viewFollow:
		return scopeFollow
	case viewCommands:
		return scopeCommands
	case viewOpLat:
		return scopeOpLat
	case viewIO, viewPSN, viewLatency, viewRate:
		return scopeGraph
	case viewPoints:
		return scopePoints
	case viewHelp:
		return scopeHelp
	}
	return scopeGlobal
}

// prefix finishes a two-key command (m<letter>, '<letter>, gg).
func (u *UI) prefix(p rune, ev *tcell.EventKey) bool {
	if ev.Key() != tcell.KeyRune {
		return false
	}
	r := ev.Rune()
	switch p {
	case 'm':
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			u.marks[r] = u.selected
			u.note(fmt.Sprintf("mark %c: frame %d", r, u.selected))
			return true
		}
	case '\'':
		if r == '\'' {
			u.jumpFrame(u.back)
			return true
		}
		if f, ok := u.marks[r]; ok {
			u.jumpFrame(f)
			return true
		}
		u.note(fmt.Sprintf("no mark %c", r))
		return true
	case 'g':
		if r == 'g' {
			if u.count > 0 {
				u.jumpFrame(u.count)
			} else {
				u.selectRow(0)
			}
			u.count = 0
			return true
		}
	}
	return false
}

func (u *UI) note(s string) {
	u.msg = s
	u.drawStatus(u.m.Status())
}

// halfPage is half the packet list's height.
func (u *UI) halfPage() int {
	_, _, _, h := u.list.GetInnerRect()
	return max(1, (h-1)/2)
}

func (u *UI) moveList(d int) {
	if u.count > 0 {
		d *= u.count
	}
	u.selectRow(u.listRow() - 1 + d)
}

func (u *UI) gotoEnd() {
	if u.count > 0 {
		u.jumpFrame(u.count)
		return
	}
	// The model's last row, which may be ahead of the last refresh: then
	// the list tails the capture from there.
	u.selectRow(u.m.Displayed() - 1)
}

// selectRow selects the displayed row i (clamped).
func (u *UI) selectRow(i int) {
	u.rows = u.m.Displayed() // the model may be ahead of the last refresh
	if u.rows == 0 {
		return
	}
	i = min(max(i, 0), u.rows-1)
	u.list.Select(i+1, 0)
	u.listSelected(i + 1)
}

// jumpFrame selects frame n (or the next displayed one) and remembers where
// the cursor was, for ”.
func (u *UI) jumpFrame(n int) {
	if n <= 0 {
		return
	}
	back := u.selected
	r, ok := u.m.Row(n)
	if !ok {
		u.note(fmt.Sprintf("frame %d is not displayed", n))
	}
	if u.view != viewPackets {
		u.showView(viewPackets)
	}
	u.selectRow(r)
	u.back = back
}

func (u *UI) moveTable(t *tview.Table, d int) {
	r, _ := t.GetSelection()
	n := t.GetRowCount()
	r = min(max(r+d, 1), max(n-1, 1))
	t.Select(r, 0)
}

// listSelected shows the packet of table row (1-based; 0 is the header).
func (u *UI) listSelected(row int) {
	frame := u.m.Frame(row - 1)
	if frame == 0 || frame == u.selected {
		return
	}
	u.selected = frame
	u.showPacket(frame)
}

// The command line (:) and search (ctrl-f) share the bottom line.

// command is one : command: its name, the other names it answers to, and
// what it does with the rest of the line.
type command struct {
	name    string
	aliases []string
	run     func(u *UI, arg string)
}

// commandTable is every : command, in the order the help lists them; the
// command line runs them and completes their names from it.
func commandTable() []command {
	view := func(name string) func(u *UI, _ string) { return func(u *UI, _ string) { u.showView(name) } }
	return []command{
		{"packets", nil, view(viewPackets)},
		{"convs", []string{"qps"}, view(viewConvs)},
		{"expert", nil, view(viewExpert)},
		{"follow", nil, func(u *UI, _ string) { u.followSelected() }},
		{"iograph", nil, func(u *UI, arg string) {
			if arg != "" {
				u.io.setColumns(arg)
			}
			u.showView(viewIO)
		}},
		{"psngraph", nil, func(u *UI, _ string) { u.psnSelected() }},
		{"latency", nil, view(viewLatency)},
		{"rate", nil, view(viewRate)},
		{"commands", []string{"cmds"}, func(u *UI, _ string) { u.showCommands() }},
		{"oplatency", nil, func(u *UI, _ string) { u.showOpLatency(true) }},
		{"points", nil, view(viewPoints)},
		{"filter", nil, (*UI).applyFilter},
		{"clear-filter", nil, func(u *UI, _ string) { u.applyFilter("") }},
		{"marks", nil, func(u *UI, _ string) { u.showMarks() }},
		{"load", nil, (*UI).load},
		{"help", nil, view(viewHelp)},
		{"quit", []string{"q"}, func(u *UI, _ string) { u.app.Stop() }},
	}
}

// findCommand returns the command name or one of its aliases names.
func findCommand(name string) (command, bool) {
	for _, c := range commandTable() {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c, true
		}
	}
	return command{}, false
}

// commandNames is the command line's help: each command with its aliases.
func commandNames() string {
	var s []string
	for _, c := range commandTable() {
		s = append(s, strings.Join(append([]string{c.name}, c.aliases...), "/"))
	}
	return strings.Join(s, " ")
}

func (u *UI) openCommand() { u.openPrompt("command", ":") }
func (u *UI) openSearch()  { u.openPrompt("search", "search (filter or text): ") }

func (u *UI) openPrompt(kind, label string) {
	u.promptFor = kind
	u.prompt.SetLabel(label).SetText("")
	u.bottom.SwitchToPage("prompt")
	u.app.SetFocus(u.prompt)
}

func (u *UI) closePrompt() {
	u.bottom.SwitchToPage("status")
	u.showView(u.view)
}

func (u *UI) completeCommand(text string) []string {
	if u.promptFor != "command" || text == "" {
		return nil
	}
	if cmd, arg, ok := strings.Cut(text, " "); ok {
		if cmd == "filter" {
			var out []string
			for _, s := range completeFilter(arg) {
				out = append(out, "filter "+s)
			}
			return out
		}
		return nil
	}
	if _, ok := findCommand(text); ok {
		// A whole command: no list, or enter would pick a longer name
		// from it (quit for :q) instead of running it.
		return nil
	}
	var out []string
	for _, c := range commandTable() {
		for _, name := range append([]string{c.name}, c.aliases...) {
			if strings.HasPrefix(name, text) {
				out = append(out, name)
			}
		}
	}
	return out
}

func (u *UI) promptDone(k tcell.Key) {
	text := strings.TrimSpace(u.prompt.GetText())
	u.closePrompt()
	if k != tcell.KeyEnter || text == "" {
		return
	}
	if u.promptFor == "search" {
		u.search = text
		u.searchNext()
		return
	}
	u.runCommand(text)
}

// runCommand runs a : command.
func (u *UI) runCommand(text string) {
	cmd, arg, _ := strings.Cut(text, " ")
	if c, ok := findCommand(cmd); ok {
		c.run(u, strings.TrimSpace(arg))
		return
	}
	if n, err := strconv.Atoi(cmd); err == nil {
		u.jumpFrame(n) // :123 goes to frame 123, as in vim
		return
	}
	u.note(fmt.Sprintf("unknown command %q (:help lists the keys)", cmd))
}

// showMarks lists the marks in the status line, by letter.
func (u *UI) showMarks() {
	var s []string
	for r, f := range u.marks {
		s = append(s, fmt.Sprintf("%c=%d", r, f))
	}
	sort.Strings(s) // by letter, not in the map's random order
	u.note("marks: " + strings.Join(s, " "))
}

// load replaces the capture with another file.
func (u *UI) load(path string) {
	if u.open == nil || path == "" {
		u.note("load: give a file")
		return
	}
	m, err := u.open(path)
	if err != nil {
		u.note(fmt.Sprintf("load %s: %v", path, err))
		return
	}
	m.setNotify(u.changed)
	u.m = m
	u.rd = newReader(m)
	u.selected, u.rows, u.lastVersion = 0, 0, 0
	u.rowsFilter = m.Status().Filter
	u.marks = map[rune]int{}
	u.listData.invalidate()
	u.filterBar.SetText("")
	u.showView(viewPackets)
	u.refresh()
}

// searchNext finds the next displayed packet after the selected one that
// matches the search: a display filter if it compiles, else text in the
// packet's summary line. It runs in the background.
func (u *UI) searchNext() {
	if u.search == "" {
		u.openSearch()
		return
	}
	from, total := u.selected, u.m.Status().Packets
	f, ferr := dfilter.Compile(u.search)
	text := strings.ToLower(u.search)
	u.note("searching " + u.search)
	go func() {
		found := 0
		sum := newRowFormatter()
		_ = u.m.Scan(u.ctx, total, func(p *decode.Packet) bool {
			if p.Number <= from {
				return true
			}
			var hit bool
			if ferr == nil {
				hit = f.Match(p)
			} else {
				hit = strings.Contains(strings.ToLower(sum.info(p)), text)
			}
			if hit {
				if _, shown := u.m.Row(p.Number); shown {
					found = p.Number
					return false
				}
			}
			return true
		})
		u.queue(func() {
			if found == 0 {
				u.note(fmt.Sprintf("search: no packet after %d matches %q", from, u.search))
				return
			}
			u.note(fmt.Sprintf("search: frame %d", found))
			u.jumpFrame(found)
		})
	}()
}

// Run shows the viewer over cfg.Model on the terminal until the user quits
// or ctx is done. It has cfg.Model, and each model cfg.Open returns, tell
// the viewer when they change.
func Run(ctx context.Context, cfg Config) error {
	app := tview.NewApplication()
	u := newUI(app, cfg)
	defer u.Close()
	u.m.setNotify(u.changed)
	u.changed() // for what the loader published before the viewer existed
	stop := context.AfterFunc(ctx, app.Stop)
	defer stop()
	return app.Run()
}

// listRow is the packet list's selected table row (1-based; 0 is the header).
func (u *UI) listRow() int {
	r, _ := u.list.GetSelection()
	return r
}
