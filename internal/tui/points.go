package tui

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// pointState is what one capture point knows of one packet.
type pointState uint8

const (
	pointOff     pointState = iota // not on the packet's path
	pointSeen                      // captured there
	pointDropped                   // passed there, not captured: a capture drop
	pointLost                      // never got there: lost upstream
)

// pointRow is one packet of a correlation: where it was seen and when.
type pointRow struct {
	flow   int32 // index into Points.flows
	psn    uint32
	opcode uint8
	copy   int
	first  int64 // ns: its first sighting, on the corrected clocks
	frame0 int   // its frame at the first point, 0 when not seen there
	state  []pointState
	delay  []int64 // ns after first, where seen
	lostOn string
}

// maxPointRows bounds the rows a correlation keeps for the view; the
// report counts every packet.
const maxPointRows = 1 << 18

// Points is a correlation of several captures of the same traffic (ibdump
// --correlate's, package correlate) for the viewer: the packets as the
// correlation settles them (Add), then its report (Finish). The command
// runs the correlation; the views draw what it computed.
type Points struct {
	names []string

	mu      sync.Mutex
	rows    []pointRow
	more    int // packets past maxPointRows
	flows   []decode.FlowKey
	flowIdx map[decode.FlowKey]int32
	byFrame map[int]int32 // rows by their frame at the first point
	report  string        // the report, as ibdump --correlate prints it
	err     error
	done    bool
	version uint64
	notify  func()
}

// PointSighting is one packet of a correlation once its fate is known
// (correlate.Sighting's fields the views show).
type PointSighting struct {
	Flow   decode.FlowKey
	PSN    uint32
	Opcode uint8
	Copy   int // 1 for the PSN's first transmission
	// Frames, Times and Dropped are per point: the frame number (0 where
	// not seen), the corrected time (zero where not seen), whether the
	// point's capture missed it.
	Frames  []int
	Times   []time.Time
	Dropped []bool
	// Path lists the points along the packet's path, upstream first;
	// LostAfter is the segment it was lost on (an index into the segments
	// sender → Path[0] → ... → receiver), or -1, and LostOn names it.
	Path      []int
	LostAfter int
	LostOn    string
}

// NewPoints starts a correlation of the named capture points, the first
// the one whose capture the packet list shows.
func NewPoints(names []string) *Points {
	return &Points{names: names, flowIdx: map[decode.FlowKey]int32{}, byFrame: map[int]int32{}}
}

// Finish ends the correlation with its report's text, or the error that
// ended it.
func (p *Points) Finish(report string, err error) {
	p.mu.Lock()
	p.err, p.report, p.done = err, report, true
	// In the order of the first sightings, not of the fates settled.
	sort.SliceStable(p.rows, func(i, j int) bool { return p.rows[i].first < p.rows[j].first })
	for i, r := range p.rows {
		if r.frame0 != 0 {
			p.byFrame[r.frame0] = int32(i)
		}
	}
	p.version++
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// Add takes one settled packet of the correlation.
func (p *Points) Add(s *PointSighting) {
	p.mu.Lock()
	if len(p.rows) >= maxPointRows {
		p.more++
		p.mu.Unlock()
		return
	}
	fi, ok := p.flowIdx[s.Flow]
	if !ok {
		fi = int32(len(p.flows))
		p.flows = append(p.flows, s.Flow)
		p.flowIdx[s.Flow] = fi
	}
	n := len(p.names)
	r := pointRow{flow: fi, psn: s.PSN, opcode: s.Opcode, copy: s.Copy, frame0: s.Frames[0], lostOn: s.LostOn,
		state: make([]pointState, n), delay: make([]int64, n)}
	for _, t := range s.Times {
		if !t.IsZero() && (r.first == 0 || t.UnixNano() < r.first) {
			r.first = t.UnixNano()
		}
	}
	for j, pt := range s.Path {
		switch {
		case !s.Times[pt].IsZero():
			r.state[pt], r.delay[pt] = pointSeen, s.Times[pt].UnixNano()-r.first
		case s.Dropped[pt]:
			r.state[pt] = pointDropped
		case s.LostAfter >= 0 && j >= s.LostAfter:
			r.state[pt] = pointLost
		}
	}
	if r.frame0 != 0 {
		p.byFrame[r.frame0] = int32(len(p.rows))
	}
	p.rows = append(p.rows, r)
	p.version++
	notify := p.notify
	p.mu.Unlock()
	if notify != nil && len(p.rows)%1024 == 1 {
		notify()
	}
}

func (p *Points) setNotify(fn func()) {
	p.mu.Lock()
	p.notify = fn
	p.mu.Unlock()
}

// pointsStatus is the correlation's progress, for the view's header.
type pointsStatus struct {
	rows, more int
	done       bool
	err        error
	version    uint64
}

func (p *Points) status() pointsStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pointsStatus{rows: len(p.rows), more: p.more, done: p.done, err: p.err, version: p.version}
}

// The points view's fixed columns, before one per point and after them.
var pointsColumns = []string{"Time", "Connection", "PSN", "Opcode", "Copy"}

// pointCell is what the view shows of a packet at a point: its delay
// after the packet's first sighting, or what happened to it there.
func pointCell(r *pointRow, i int) string {
	switch r.state[i] {
	case pointSeen:
		if r.delay[i] == 0 {
			return "0"
		}
		return "+" + formatDelay(r.delay[i])
	case pointDropped:
		return "drop"
	case pointLost:
		return "lost"
	}
	return ""
}

func formatDelay(ns int64) string {
	d := time.Duration(ns)
	if d < time.Millisecond {
		return fmt.Sprintf("%.3fµs", float64(d)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.3fms", float64(d)/float64(time.Millisecond))
}

// pointsContent is the packet table of the points view, drawn from the
// rows on screen only.
type pointsContent struct {
	tview.TableContentReadOnly
	v *pointsView
}

func (c *pointsContent) GetRowCount() int {
	if c.v.p == nil {
		return 1
	}
	return c.v.p.status().rows + 1
}

func (c *pointsContent) GetColumnCount() int {
	if c.v.p == nil {
		return len(pointsColumns)
	}
	return len(pointsColumns) + len(c.v.p.names) + 1
}

func (c *pointsContent) GetCell(row, col int) *tview.TableCell {
	p := c.v.p
	if p == nil {
		return nil
	}
	n := len(p.names)
	if row == 0 {
		var title string
		switch {
		case col < len(pointsColumns):
			title = pointsColumns[col]
		case col < len(pointsColumns)+n:
			title = p.names[col-len(pointsColumns)]
		default:
			title = "Lost on"
		}
		return tview.NewTableCell(title).SetSelectable(false).SetAttributes(tcell.AttrBold)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if row-1 >= len(p.rows) {
		return nil
	}
	r := &p.rows[row-1]
	var text string
	align := tview.AlignLeft
	switch {
	case col == 0:
		text, align = fmt.Sprintf("%.6f", float64(r.first-p.rows[0].first)/1e9), tview.AlignRight
	case col == 1:
		fl := p.flows[r.flow]
		text = fmt.Sprintf("%s → %s QP %#06x", fl.Src, fl.Dst, fl.DestQP)
	case col == 2:
		text, align = fmt.Sprint(r.psn), tview.AlignRight
	case col == 3:
		text = layers.Opcode(r.opcode).Info().Info
	case col == 4:
		text, align = fmt.Sprint(r.copy), tview.AlignRight
	case col < len(pointsColumns)+n:
		text, align = pointCell(r, col-len(pointsColumns)), tview.AlignRight
	default:
		text = r.lostOn
	}
	return tview.NewTableCell(tview.Escape(text)).SetAlign(align)
}

// listColumns is how many columns the packet list gives the points: one
// per point, when there are points.
func (v *pointsView) listColumns() int {
	if v == nil || v.p == nil || v.u.m != v.m {
		return 0 // another capture loaded: its frames are not the first point's
	}
	return len(v.p.names)
}

// listCell is the packet list's cell of point i for the packet of the
// list's row (a frame of the first point's capture): its time there after
// its first sighting, or what happened to it there.
func (v *pointsView) listCell(row, i int) *tview.TableCell {
	if row == 0 {
		return tview.NewTableCell(tview.Escape(v.p.names[i])).SetStyle(v.u.theme.header).SetSelectable(false)
	}
	frame := v.u.m.Frame(row - 1)
	text := ""
	v.p.mu.Lock()
	if k, ok := v.p.byFrame[frame]; ok && frame != 0 {
		text = pointCell(&v.p.rows[k], i)
	}
	v.p.mu.Unlock()
	return tview.NewTableCell(tview.Escape(text)).SetAlign(tview.AlignRight)
}

// pointsView shows a correlation: each packet with the points that saw it
// and its time at each, and the report's per-hop table under it.
type pointsView struct {
	*tview.Flex
	u      *UI
	p      *Points
	m      *Model // the first point's capture, which the packet list's point columns are of
	header *tview.TextView
	table  *tview.Table
	report *tview.TextView
	shown  uint64 // the version drawn
}

func newPointsView(u *UI) *pointsView {
	v := &pointsView{Flex: tview.NewFlex().SetDirection(tview.FlexRow), u: u}
	v.header = tview.NewTextView().SetWrap(false)
	v.table = tview.NewTable().SetContent(&pointsContent{v: v}).SetSelectable(true, false).SetFixed(1, 0)
	v.table.SetSelectedStyle(u.theme.selected)
	v.table.SetSelectedFunc(func(int, int) { u.pointsJump() })
	v.report = tview.NewTextView().SetWrap(false)
	v.report.SetBorder(true).SetTitle(" per hop ")
	v.AddItem(v.header, 1, 0, false).AddItem(v.table, 0, 3, true).AddItem(v.report, 0, 2, false)
	v.fill()
	return v
}

// setPoints shows p in the points view.
func (u *UI) setPoints(p *Points) {
	u.points.p, u.points.m = p, u.m
	p.setNotify(func() { u.queue(u.points.fill) })
	u.points.fill()
	u.drawTabs()
}

// fill brings the view up to date with the correlation.
func (v *pointsView) fill() {
	if v.p == nil {
		v.header.SetText(" No capture points: open several captures of the same traffic with ibtui --correlate a.pcap b.pcap (or --point NAME=FILE).")
		return
	}
	st := v.p.status()
	if st.version == v.shown && v.shown != 0 {
		return
	}
	v.shown = st.version
	var b strings.Builder
	fmt.Fprintf(&b, " %d packets at %d capture points (%s)", st.rows+st.more, len(v.p.names), strings.Join(v.p.names, ", "))
	switch {
	case st.err != nil:
		fmt.Fprintf(&b, " | error: %v", st.err)
	case st.done:
		b.WriteString(" | done")
	default:
		b.WriteString(" | correlating…")
	}
	if st.more > 0 {
		fmt.Fprintf(&b, " | the first %d listed", st.rows)
	}
	v.header.SetText(b.String())
	v.p.mu.Lock()
	report := v.p.report
	v.p.mu.Unlock()
	if report == "" {
		report = "(the per-hop table comes when the correlation is done)"
	}
	v.report.SetText(report)
	if row, _ := v.table.GetSelection(); row == 0 && st.rows > 0 {
		v.table.Select(1, 0)
	}
}

// pointsJump shows the selected packet in the packet list, which holds
// the first point's capture.
func (u *UI) pointsJump() {
	v := u.points
	if v.p == nil {
		u.note("no capture points (ibtui --correlate)")
		return
	}
	row, _ := v.table.GetSelection()
	v.p.mu.Lock()
	frame := 0
	if row >= 1 && row-1 < len(v.p.rows) {
		frame = v.p.rows[row-1].frame0
	}
	v.p.mu.Unlock()
	if frame == 0 {
		u.note(fmt.Sprintf("not captured at %s, whose capture the packet list shows", v.p.names[0]))
		return
	}
	u.jumpFrame(frame)
}

// pointsFocus moves the focus between the packet table and the per-hop
// table.
func (u *UI) pointsFocus() {
	if u.app.GetFocus() == u.points.table {
		u.app.SetFocus(u.points.report)
	} else {
		u.app.SetFocus(u.points.table)
	}
}
