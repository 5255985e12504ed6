package tui

import (
	"strconv"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// listColumns are the packet list's columns: tshark's text line's, and the
// BTH's PSN, which RDMA work reads the list by.
var listColumns = []string{"No.", "Time", "Source", "Destination", "Protocol", "Length", "PSN", "Info"}

// Where the list's columns are.
const (
	listLength = 5
	listPSN    = 6
	listInfo   = 7
)

// listRow is one packet's row, rendered once and cached.
type listRow struct {
	cols  [listInfo + 1]string
	style tcell.Style
}

// listContent is the packet list's virtual table: tview asks for the cells
// on screen only, and each row is decoded from the spool when it first
// shows. No cell exists for a packet off screen.
type listContent struct {
	tview.TableContentReadOnly
	u     *UI
	cache map[int]*listRow // by frame; small, emptied when it grows
	fmt   *rowFormatter
}

func (c *listContent) invalidate() { clear(c.cache) }

func (c *listContent) GetRowCount() int    { return c.u.rows + 1 }
func (c *listContent) GetColumnCount() int { return len(listColumns) + c.u.points.listColumns() }

func (c *listContent) GetCell(row, col int) *tview.TableCell {
	if n := c.u.points.listColumns(); n > 0 && col >= listInfo { // the points' columns, before Info
		if col < listInfo+n {
			return c.u.points.listCell(row, col-listInfo)
		}
		col -= n
	}
	if row == 0 {
		return tview.NewTableCell(listColumns[col]).SetStyle(c.u.theme.header).SetSelectable(false)
	}
	frame := c.u.m.Frame(row - 1)
	if frame == 0 {
		return nil
	}
	r := c.row(frame)
	if r == nil {
		return nil
	}
	cell := tview.NewTableCell(r.cols[col]).SetStyle(r.style)
	switch col {
	case 0, listLength, listPSN:
		cell.SetAlign(tview.AlignRight)
	case listInfo:
		cell.SetExpansion(1)
	}
	return cell
}

// row returns frame's row, decoding the checkpoint block around it on a
// miss so that the neighbouring rows come with it.
func (c *listContent) row(frame int) *listRow {
	if r, ok := c.cache[frame]; ok {
		return r
	}
	if len(c.cache) > 4096 {
		clear(c.cache)
	}
	if c.fmt == nil {
		c.fmt = newRowFormatter()
	}
	from := frame - (frame-1)%checkpointEvery
	to := min(from+checkpointEvery-1, c.u.m.Status().Packets)
	_ = c.u.rd.each(from, to, func(p *decode.Packet) {
		c.cache[p.Number] = c.fmt.row(p, &c.u.theme)
	})
	return c.cache[frame]
}

// rowFormatter renders the list's columns with internal/output's
// functions, so the list says what ibdump says.
type rowFormatter struct{ buf []byte }

func newRowFormatter() *rowFormatter { return &rowFormatter{} }

func (f *rowFormatter) info(p *decode.Packet) string {
	f.buf = output.AppendInfo(f.buf[:0], p)
	f.buf = output.AppendAnalysisNotes(f.buf, p)
	return string(f.buf)
}

func (f *rowFormatter) row(p *decode.Packet, t *theme) *listRow {
	r := &listRow{style: rowStyle(p, t)}
	r.cols[0] = strconv.Itoa(p.Number)
	r.cols[1] = strconv.FormatFloat(p.RelTime.Seconds(), 'f', 6, 64)
	r.cols[2] = string(output.AppendAddress(nil, p, true))
	r.cols[3] = string(output.AppendAddress(nil, p, false))
	r.cols[4] = output.Protocol(p)
	r.cols[listLength] = strconv.Itoa(p.Length)
	if b := p.BTH(); b != nil {
		r.cols[listPSN] = strconv.FormatUint(uint64(b.PSN), 10)
	}
	r.cols[listInfo] = f.info(p)
	return r
}

// rowStyle colours a row as ibdump colours a line (output.ClassOf).
func rowStyle(p *decode.Packet, t *theme) tcell.Style {
	switch output.ClassOf(p) {
	case output.ClassBad:
		return t.bad
	case output.ClassWarn:
		return t.warn
	case output.ClassCongestion:
		return t.congestion
	}
	return t.normal
}
