package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// convColumns are -z conv,qp's columns (output.ConvTable's text ones),
// and convNames their names: "<-" is B to A and "->" A to B, as ibdump
// prints them.
var convColumns, convNames = func() ([]*output.Column[output.Conv], []string) {
	var cols []*output.Column[output.Conv]
	var names []string
	for i := range output.ConvTable.Columns {
		if c := &output.ConvTable.Columns[i]; c.Header != "" {
			cols, names = append(cols, c), append(names, c.Label())
		}
	}
	return cols, names
}()

// convColumn is the index of the column named name.
func convColumn(name string) int {
	for j, n := range convNames {
		if n == name {
			return j
		}
	}
	panic("tui: no QP table column " + name)
}

// convFrames is the column S sorts by when none is chosen.
var convFrames = convColumn("Frames")

// convDropOrder is the order columns leave the QP table when the terminal
// is too narrow for all of them: the per-direction counts first (Frames
// and Bytes sum them), the connection's health (Retr to CE) last but the
// endpoints, which always stay. What is left out, the view names.
var convDropOrder = func() []int {
	var order []int
	for _, name := range []string{"<- Frms", "<- Bytes", "-> Frms", "-> Bytes", "Paired", "Svc", "Start", "QPN B>A",
		"Bytes", "Msgs", "Duration", "CE", "CNP", "RNR", "Frames", "NAKs", "Gaps", "Retr", "QPN A>B"} {
		order = append(order, convColumn(name))
	}
	return order
}()

type convRow struct {
	id       uint32
	cells    []string
	keys     []float64 // numeric sort keys; NaN-free, strings sort by cells
	troubled bool
}

// convTable is the QP conversations view: sortable, refreshed while the
// capture loads.
type convTable struct {
	*tview.Table
	view    *tview.Flex     // the note over the table
	note    *tview.TextView // names the columns left out
	u       *UI
	rows    []convRow
	sortCol int
	desc    bool
	width   int    // the width the columns were fitted to
	hidden  []bool // by column: left out at this width
}

func newConvTable(u *UI) *convTable {
	c := &convTable{Table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0), u: u, sortCol: -1,
		note: tview.NewTextView().SetWrap(true).SetWordWrap(true).SetDynamicColors(true), hidden: make([]bool, len(convColumns))}
	c.SetSelectedStyle(u.theme.selected)
	c.SetSelectedFunc(func(int, int) { u.applyConv() })
	c.view = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(c.note, 0, 0, false).AddItem(c.Table, 0, 1, true)
	c.view.SetDrawFunc(func(_ tcell.Screen, x, y, w, h int) (int, int, int, int) {
		if w != c.width {
			c.width = w
			c.fill(c.selectedID())
		}
		return x, y, w, h
	})
	return c
}

// fit leaves out columns, in convDropOrder, until the rest fit the width,
// and says which in the note.
func (c *convTable) fit() {
	widths := make([]int, len(convColumns))
	for j, h := range convNames {
		widths[j] = utf8.RuneCountInString(h) + 1 // and the sort arrow
		for _, r := range c.rows {
			widths[j] = max(widths[j], utf8.RuneCountInString(r.cells[j]))
		}
	}
	total := -1
	for j := range widths {
		c.hidden[j] = false
		total += widths[j] + 1
	}
	for _, j := range convDropOrder {
		if total <= c.width {
			break
		}
		c.hidden[j] = true
		total -= widths[j] + 1
	}
	// Room left takes back what fits, the most wanted first.
	for i := len(convDropOrder) - 1; i >= 0; i-- {
		if j := convDropOrder[i]; c.hidden[j] && total+widths[j]+1 <= c.width {
			c.hidden[j] = false
			total += widths[j] + 1
		}
	}
	var names []string
	for j, h := range convNames {
		if c.hidden[j] {
			names = append(names, h)
		}
	}
	lines := 0
	if len(names) > 0 {
		text := "not shown at this width: " + strings.Join(names, ", ") + " (ibdump -z conv,qp prints every column)"
		c.note.SetText(tview.Escape(text))
		lines = len(tview.WordWrap(tview.Escape(text), max(c.width, 1)))
	}
	c.view.ResizeItem(c.note, lines, 0)
}

func (c *convTable) update(cs []decode.Conversation) {
	keep := c.selectedID()
	c.rows = c.rows[:0]
	for i := range cs {
		cv := &cs[i]
		r := convRow{id: cv.ID, cells: make([]string, len(convColumns)), keys: make([]float64, len(convColumns)),
			troubled: output.ConvTroubled(cv)}
		for j, col := range convColumns {
			r.cells[j] = col.CellOf(cv)
			r.keys[j], _ = col.Number(cv)
		}
		c.rows = append(c.rows, r)
	}
	c.sort()
	c.fill(keep)
}

// convNumeric says by column whether it sorts by number, not by text.
var convNumeric = func() []bool {
	var cv decode.Conversation
	numeric := make([]bool, len(convColumns))
	for j, col := range convColumns {
		_, numeric[j] = col.Number(&cv)
	}
	return numeric
}()

func (c *convTable) sort() {
	if c.sortCol < 0 {
		return
	}
	col, desc := c.sortCol, c.desc
	sort.SliceStable(c.rows, func(i, j int) bool {
		a, b := &c.rows[i], &c.rows[j]
		var less bool
		if convNumeric[col] {
			less = a.keys[col] < b.keys[col]
		} else {
			less = a.cells[col] < b.cells[col]
		}
		if desc {
			return !less && (a.keys[col] != b.keys[col] || a.cells[col] != b.cells[col])
		}
		return less
	})
}

func (c *convTable) selectedID() uint32 {
	r, _ := c.GetSelection()
	if r < 1 || r > len(c.rows) {
		return 0
	}
	return c.rows[r-1].id
}

func (c *convTable) fill(keep uint32) {
	c.Clear()
	c.fit()
	// col is where column j goes: the columns left out take no place.
	col := make([]int, len(convColumns))
	k := 0
	for j, h := range convNames {
		col[j] = k
		if c.hidden[j] {
			continue
		}
		k++
		if j == c.sortCol {
			h += map[bool]string{false: "▲", true: "▼"}[c.desc]
		}
		c.SetCell(0, col[j], tview.NewTableCell(h).SetStyle(c.u.theme.header).SetSelectable(false))
	}
	sel := 1
	for i, r := range c.rows {
		st := c.u.theme.normal
		if r.troubled {
			st = c.u.theme.warn
		}
		for j, s := range r.cells {
			if c.hidden[j] {
				continue
			}
			cell := tview.NewTableCell(s).SetStyle(st)
			if convColumns[j].Align == output.AlignRight {
				cell.SetAlign(tview.AlignRight)
			}
			c.SetCell(i+1, col[j], cell)
		}
		if r.id == keep {
			sel = i + 1
		}
	}
	if len(c.rows) == 0 {
		c.SetCell(1, 0, tview.NewTableCell("(no connections yet)").SetSelectable(false))
	}
	// A table drawn empty follows its end (tview): keep the user's place.
	ro, co := c.GetOffset()
	c.SetOffset(ro, co)
	c.Select(sel, 0)
}

// sortNext sorts by the next column shown (after the last: none).
func (c *convTable) sortNext(d int) {
	for {
		c.sortCol = (c.sortCol + d + len(convColumns) + 1) % (len(convColumns) + 1)
		if c.sortCol == len(convColumns) {
			c.sortCol = -1
		}
		if c.sortCol < 0 || !c.hidden[c.sortCol] {
			break
		}
	}
	c.update(c.u.m.Conversations())
}

func (c *convTable) reverse() {
	if c.sortCol < 0 {
		c.sortCol = convFrames
	}
	c.desc = !c.desc
	c.update(c.u.m.Conversations())
}

// selectedConv is the connection the views act on: the row of the QP table
// when it is showing, else the selected packet's.
func (u *UI) selectedConv() uint32 {
	if u.view == viewConvs {
		return u.convs.selectedID()
	}
	if u.selected == 0 {
		return 0
	}
	_, mk := u.m.analysisOf(u.selected)
	return mk.conv()
}

// convOf returns the conversation that id is, or that absorbed id (a
// connection's first packets may get an id of their own until the analysis
// pairs the two directions): its HasID tests the ids of its packets. An id
// the table does not know (yet) is a conversation of its own.
func (u *UI) convOf(id uint32) decode.Conversation {
	cs := u.m.Conversations()
	for i := range cs {
		if cs[i].HasID(id) {
			return cs[i]
		}
	}
	return decode.Conversation{ID: id}
}

// convFilter is the display filter of the packets of cv: its id and the
// ids it absorbed.
func convFilter(cv *decode.Conversation) string {
	if len(cv.Aliases) == 0 {
		return fmt.Sprintf("ibwire.analysis.conv_id == %d", cv.ID)
	}
	ids := []string{strconv.FormatUint(uint64(cv.ID), 10)}
	for _, a := range cv.Aliases {
		ids = append(ids, strconv.FormatUint(uint64(a), 10))
	}
	return fmt.Sprintf("ibwire.analysis.conv_id in {%s}", strings.Join(ids, " "))
}

// applyConv filters the packet list to the selected connection.
func (u *UI) applyConv() {
	if id := u.convs.selectedID(); id != 0 {
		cv := u.convOf(id)
		u.applyFilter(convFilter(&cv))
	}
}

func (u *UI) applyPacketConv() {
	if id := u.selectedConv(); id != 0 {
		cv := u.convOf(id)
		u.applyFilter(convFilter(&cv))
	} else {
		u.note("the packet belongs to no connection")
	}
}

// fillExpert shows the expert findings, worst first.
func (u *UI) fillExpert() {
	rows := u.m.Expert()
	t := u.expert
	keep, _ := t.GetSelection()
	t.Clear()
	for j, h := range []string{"Severity", "Group", "Finding", "Count", "Frames"} {
		t.SetCell(0, j, tview.NewTableCell(h).SetStyle(u.theme.header).SetSelectable(false))
	}
	for i, r := range rows {
		st := u.theme.normal
		switch r.Severity {
		case decode.SevError:
			st = u.theme.bad
		case decode.SevWarn:
			st = u.theme.warn
		}
		var fr []string
		for _, f := range r.Frames[:min(len(r.Frames), 8)] {
			fr = append(fr, strconv.Itoa(int(f)))
		}
		if len(r.Frames) > 8 {
			fr = append(fr, "…")
		}
		cells := []string{r.Severity.String(), r.Group, r.Summary, strconv.FormatUint(r.Count, 10), strings.Join(fr, " ")}
		for j, s := range cells {
			cell := tview.NewTableCell(s).SetStyle(st).SetReference(i)
			if j == 3 {
				cell.SetAlign(tview.AlignRight)
			}
			t.SetCell(i+1, j, cell)
		}
	}
	if len(rows) == 0 {
		t.SetCell(1, 0, tview.NewTableCell("(no findings)").SetSelectable(false))
	}
	ro, co := t.GetOffset()
	t.SetOffset(ro, co) // tview follows the end of a table first drawn empty
	t.Select(min(max(keep, 1), max(len(rows), 1)), 0)
}

func (u *UI) expertJump() {
	r, _ := u.expert.GetSelection()
	rows := u.m.Expert()
	if r < 1 || r > len(rows) || len(rows[r-1].Frames) == 0 {
		return
	}
	u.jumpFrame(int(rows[r-1].Frames[0]))
}

// followView is Follow QP: the messages of one connection, reassembled,
// with the selected message's payload below.
type followView struct {
	*tview.Flex
	u       *UI
	title   *tview.TextView
	list    *tview.Table
	payload *tview.TextView
	msgs    []decode.FollowMessage
	hex     bool
	conv    uint32
	cancel  context.CancelFunc
}

func newFollowView(u *UI) *followView {
	f := &followView{u: u, title: tview.NewTextView().SetWrap(false),
		list: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0), payload: tview.NewTextView().SetWrap(true)}
	f.list.SetSelectedStyle(u.theme.selected)
	f.list.SetSelectionChangedFunc(func(int, int) { f.showPayload() })
	f.list.SetSelectedFunc(func(int, int) { u.followJump() })
	f.Flex = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(f.title, 1, 0, false).
		AddItem(f.list, 0, 2, true).AddItem(f.payload, 0, 1, false)
	return f
}

// followSelected follows the selected connection: its messages are
// reassembled in the background from the spool.
func (u *UI) followSelected() {
	cv := u.convOf(u.selectedConv())
	id := cv.ID
	if id == 0 {
		u.note("follow: select a packet of a connection, or a row of the QP table")
		return
	}
	f := u.follow
	if f.cancel != nil {
		f.cancel()
	}
	ctx, cancel := context.WithCancel(u.ctx)
	f.cancel, f.conv = cancel, id
	f.title.SetText(fmt.Sprintf("Follow QP: connection %d (reassembling...)", id))
	f.msgs = nil
	f.fill()
	u.showView(viewFollow)
	total := u.m.Status().Packets
	go func() {
		fl := decode.NewFollower(func(p *decode.Packet) bool { return cv.HasID(p.Analysis.Conv) })
		err := u.m.Scan(ctx, total, func(p *decode.Packet) bool { fl.Add(p); return true })
		if err != nil {
			return
		}
		msgs := fl.Messages()
		u.queue(func() {
			if f.conv != id {
				return
			}
			f.msgs = msgs
			f.title.SetText(fmt.Sprintf("Follow QP: connection %d, %d messages (x: hex/ASCII, enter: go to frame)", id, len(msgs)))
			f.fill()
		})
	}()
}

func (f *followView) fill() {
	t := f.list
	t.Clear()
	for j, h := range []string{"Dir", "Operation", "Frames", "Size", "Payload"} {
		t.SetCell(0, j, tview.NewTableCell(h).SetStyle(f.u.theme.header).SetSelectable(false))
	}
	for i, m := range f.msgs {
		dir := "A→B"
		if m.Dir == 2 {
			dir = "B→A"
		}
		frames := strconv.Itoa(int(m.First))
		if m.Last != m.First {
			frames += "-" + strconv.Itoa(int(m.Last))
		}
		t.SetCell(i+1, 0, tview.NewTableCell(dir))
		t.SetCell(i+1, 1, tview.NewTableCell(m.Op))
		t.SetCell(i+1, 2, tview.NewTableCell(frames))
		t.SetCell(i+1, 3, tview.NewTableCell(strconv.Itoa(int(m.Size))).SetAlign(tview.AlignRight))
		t.SetCell(i+1, 4, tview.NewTableCell(f.preview(m.Data)).SetExpansion(1))
	}
	// A table drawn empty follows its end (tview); start at the top.
	t.SetOffset(0, 0)
	t.Select(1, 0)
	f.showPayload()
}

func (f *followView) preview(b []byte) string {
	b = b[:min(len(b), 24)]
	if f.hex {
		return fmt.Sprintf("% x", b)
	}
	return printable(b)
}

func printable(b []byte) string {
	out := make([]rune, 0, len(b))
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			out = append(out, '.')
		} else {
			out = append(out, rune(c))
		}
	}
	return string(out)
}

func (f *followView) toggleHex() {
	f.hex = !f.hex
	r, _ := f.list.GetSelection()
	f.fill()
	f.list.Select(max(r, 1), 0)
}

func (f *followView) showPayload() {
	r, _ := f.list.GetSelection()
	if r < 1 || r > len(f.msgs) {
		f.payload.SetText("")
		return
	}
	data := f.msgs[r-1].Data
	if f.hex {
		f.payload.SetText(string(output.AppendTcpdumpHex(nil, data, true)))
	} else {
		f.payload.SetText(tview.Escape(printable(data)))
	}
	f.payload.ScrollToBeginning()
}

func (u *UI) followJump() {
	r, _ := u.follow.list.GetSelection()
	if r >= 1 && r <= len(u.follow.msgs) {
		u.jumpFrame(int(u.follow.msgs[r-1].First))
	}
}
