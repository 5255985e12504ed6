package tui

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// The latency histograms per opcode: for the commands of one connection,
// or of all, one histogram for each row of the model's -z nvme,srt,
// rpc,srt, iscsi,srt and smb2,srt tables (decode.NVMeSRT, RPCSRT,
// ISCSISRT, SMB2SRT, fed the packets as ibdump feeds them), with the row's
// count and percentiles on its header line. The view only sorts the
// row's samples into log-scaled buckets to draw them; enter lists a
// bucket's commands in the commands view, whose rows know which row of
// the model's tables their completion went to.

// opKey names a row of one of the model's -z ...,srt tables by the
// fields that tell its rows apart; the zero opKey is no row.
type opKey struct {
	proto   string // "NVMe", "RPC", "iSCSI", "SMB2"
	a, b, c uint32
	name    string
}

func nvmeRowKey(r *decode.NVMeSRTRow) opKey {
	return opKey{proto: "NVMe", a: uint32(r.Opcode), name: r.Queue + " " + r.Command}
}

func rpcRowKey(r *decode.RPCSRTRow) opKey {
	return opKey{proto: "RPC", a: r.Program, b: r.Version, c: r.Procedure}
}

func iscsiRowKey(r *decode.ISCSISRTRow) opKey {
	return opKey{proto: "iSCSI", a: uint32(r.Opcode), b: uint32(r.CDBOpcode)}
}

func smb2Op(c layers.SMB2Command) opKey { return opKey{proto: "SMB2", a: uint32(c)} }

// srtTable is one of the model's service response time tables.
type srtTable[R any] interface {
	Add(*decode.Packet)
	Rows() []R
}

// opOf is the row of the model's table t a completion (reply, response)
// packet is counted in, asked of the model itself: t, empty, fed that
// packet alone.
func opOf[R any](t srtTable[R], p *decode.Packet, key func(R) opKey) opKey {
	t.Add(p)
	if rows := t.Rows(); len(rows) == 1 {
		return key(rows[0])
	}
	return opKey{}
}

func nvmeOpOf(p *decode.Packet) opKey  { return opOf(&decode.NVMeSRT{}, p, nvmeRowKey) }
func rpcOpOf(p *decode.Packet) opKey   { return opOf(&decode.RPCSRT{}, p, rpcRowKey) }
func iscsiOpOf(p *decode.Packet) opKey { return opOf(&decode.ISCSISRT{}, p, iscsiRowKey) }

// srtSet is the model's four service response time tables over some
// packets; hist is their rows once the packets are all in.
type srtSet struct {
	nvme  decode.NVMeSRT
	rpc   decode.RPCSRT
	iscsi decode.ISCSISRT
	smb2  decode.SMB2SRT
	hist  []*opHist
}

func (s *srtSet) add(p *decode.Packet) {
	s.nvme.Add(p)
	s.rpc.Add(p)
	s.iscsi.Add(p)
	s.smb2.Add(p)
}

// opHist is one histogram: a row of the model's tables.
type opHist struct {
	key    opKey
	label  string // "NVMe I/O Read", "NFSv3 READ", "iSCSI READ(10)", "SMB2 READ"
	errors int
	s      *decode.SRTSamples // sorted (the tables' Rows sort them)
}

// finish takes the rows out of the tables: NVMe-oF's, then RPC's,
// iSCSI's and SMB2's, each table in its own order.
func (s *srtSet) finish() {
	s.hist = s.hist[:0]
	for _, r := range s.nvme.Rows() {
		s.hist = append(s.hist, &opHist{nvmeRowKey(r), "NVMe " + r.Queue + " " + r.Command, r.Errors, &r.SRTSamples})
	}
	for _, r := range s.rpc.Rows() {
		s.hist = append(s.hist, &opHist{rpcRowKey(r), r.Name, r.Errors, &r.SRTSamples})
	}
	for _, r := range s.iscsi.Rows() {
		s.hist = append(s.hist, &opHist{iscsiRowKey(r), "iSCSI " + r.Command, r.Errors, &r.SRTSamples})
	}
	for _, r := range s.smb2.Rows() {
		s.hist = append(s.hist, &opHist{smb2Op(r.Command), "SMB2 " + r.Command.String(), r.Errors, &r.SRTSamples})
	}
}

// bucketOf is the histogram bucket of a latency: 0 below 1 µs, k for
// [2^(k-1), 2^k) µs.
func bucketOf(d time.Duration) int {
	us := d / time.Microsecond
	if us < 1 {
		return 0
	}
	return bits.Len64(uint64(us))
}

// bucketRange is bucket k's bounds in µs, the upper one excluded.
func bucketRange(k int) (lo, hi int64) {
	if k == 0 {
		return 0, 1
	}
	return 1 << (k - 1), 1 << k
}

// bucketLabel is how a bucket's line names it: "[256, 512)".
func bucketLabel(k int) string {
	lo, hi := bucketRange(k)
	return "[" + strconv.FormatInt(lo, 10) + ", " + strconv.FormatInt(hi, 10) + ")"
}

// buckets are h's counts from the bucket of its shortest sample to its
// longest's, the empty ones between included; first is the first's.
func (h *opHist) buckets() (first int, counts []int) {
	if h.s.Count() == 0 {
		return 0, nil
	}
	first = bucketOf(h.s.Min())
	counts = make([]int, bucketOf(h.s.Max())-first+1)
	for _, d := range h.s.Samples {
		counts[bucketOf(d)-first]++
	}
	return first, counts
}

// micros is a latency in µs, as the commands view and the histograms write it.
func micros(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64)
}

// stats is h's header line: the model's count and percentiles.
func (h *opHist) stats() string {
	s := h.s
	line := fmt.Sprintf("min %s  p50 %s  p90 %s  p99 %s  max %s", micros(s.Min()), micros(s.Quantile(0.5)),
		micros(s.Quantile(0.9)), micros(s.Quantile(0.99)), micros(s.Max()))
	if h.errors > 0 {
		line += fmt.Sprintf("  errors %d", h.errors)
	}
	return line
}

// barEighths are the partial blocks a bar ends with, by eighths.
var barEighths = []rune(" ▏▎▍▌▋▊▉")

// bar draws n out of peak as a bar of at most w cells, in eighths of a
// cell; a count above zero shows at least an eighth.
func bar(n, peak, w int) string {
	if n <= 0 || peak <= 0 {
		return ""
	}
	e := max(n*w*8/peak, 1)
	s := strings.Repeat("█", e/8)
	if e%8 != 0 {
		s += string(barEighths[e%8])
	}
	return s
}

// opBarWidth is the longest bar, in cells.
const opBarWidth = 40

// opLine is a line of the view: an opcode's header (bucket -1) or one of
// its buckets.
type opLine struct {
	h      *opHist
	bucket int
	count  int
}

// opLatView is the latency histograms per opcode.
type opLatView struct {
	*tview.Flex
	u     *UI
	title *tview.TextView
	table *tview.Table
	conv  uint32 // the connection shown; 0: all
	last  uint32 // the connection last chosen, for T
	lines []opLine
}

func newOpLatView(u *UI) *opLatView {
	v := &opLatView{u: u, title: tview.NewTextView().SetWrap(false),
		table: tview.NewTable().SetSelectable(true, false).SetFixed(1, 0)}
	v.table.SetSelectedStyle(u.theme.selected)
	v.table.SetSelectedFunc(func(int, int) { u.opLatCommands() })
	v.Flex = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(v.title, 1, 0, false).AddItem(v.table, 0, 1, true)
	return v
}

// showOpLatency opens the histograms of the selected command's connection
// (all false) or of every connection.
func (u *UI) showOpLatency(all bool) {
	v := u.opLat
	switch {
	case all:
		v.conv = 0
	default:
		c := u.commands.selected()
		if c == nil || c.conv == 0 {
			u.note("no command selected: T shows every connection's histograms")
			return
		}
		v.conv = u.commands.col.canon(c.conv)
		v.last = v.conv
	}
	u.showView(viewOpLat)
	u.collectCommands()
	v.fill()
}

// toggleOpLatency switches between every connection and the one last
// chosen.
func (u *UI) toggleOpLatency() {
	v := u.opLat
	switch {
	case v.conv != 0:
		v.conv = 0
	case v.last != 0:
		v.conv = v.last
	default:
		u.note("no connection chosen: t in the commands view chooses the selected command's")
		return
	}
	v.fill()
}

// set is the tables of the connection shown (of all connections when
// none is), gathered from the ids it absorbed.
func (v *opLatView) set(col *cmdCollector) *srtSet {
	if v.conv == 0 {
		return &col.all
	}
	return col.conv(v.conv)
}

func (v *opLatView) scope() string {
	if v.conv == 0 {
		return "all connections"
	}
	return fmt.Sprintf("connection %d", v.conv)
}

// fill draws the histograms of the last collection, keeping the line
// selected when it is still there.
func (v *opLatView) fill() {
	cv := v.u.commands
	r, _ := v.table.GetSelection()
	var keep opLine
	if r >= 1 && r <= len(v.lines) {
		keep = v.lines[r-1]
	}
	t := v.table
	t.Clear()
	v.lines = v.lines[:0]
	if cv.busy || cv.col == nil {
		v.title.SetText(fmt.Sprintf("Latency per opcode, %s: reading %d packets...", v.scope(), cv.packets))
		return
	}
	s := v.set(cv.col)
	n := 0
	for _, h := range s.hist {
		n += h.s.Count()
		v.lines = append(v.lines, opLine{h: h, bucket: -1, count: h.s.Count()})
		first, counts := h.buckets()
		for i, c := range counts {
			v.lines = append(v.lines, opLine{h: h, bucket: first + i, count: c})
		}
	}
	v.title.SetText(fmt.Sprintf("Latency per opcode, %s: %d opcodes, %d commands (enter: their commands, T: all connections/this one)",
		v.scope(), len(s.hist), n))
	th := &v.u.theme
	for k, h := range []string{"Opcode / latency µs", "Count", "min p50 p90 p99 max (µs) / commands per bucket"} {
		c := tview.NewTableCell(h).SetStyle(th.header).SetSelectable(false)
		if k == 1 {
			c.SetAlign(tview.AlignRight)
		}
		t.SetCell(0, k, c)
	}
	sel, peak := 1, 0
	for i, l := range v.lines {
		row := i + 1
		if l.bucket < 0 {
			peak = 0
			for _, m := range v.lines[i+1:] {
				if m.h != l.h {
					break
				}
				peak = max(peak, m.count)
			}
			st := th.header
			if l.h.errors > 0 {
				st = th.bad
			}
			t.SetCell(row, 0, tview.NewTableCell(l.h.label).SetStyle(st))
			t.SetCell(row, 1, tview.NewTableCell(strconv.Itoa(l.count)).SetStyle(st).SetAlign(tview.AlignRight))
			t.SetCell(row, 2, tview.NewTableCell(l.h.stats()).SetStyle(th.normal))
		} else {
			t.SetCell(row, 0, tview.NewTableCell("  "+bucketLabel(l.bucket)).SetStyle(th.normal))
			t.SetCell(row, 1, tview.NewTableCell(strconv.Itoa(l.count)).SetStyle(th.normal).SetAlign(tview.AlignRight))
			t.SetCell(row, 2, tview.NewTableCell(bar(l.count, peak, opBarWidth)).SetStyle(th.good))
		}
		if l.h != nil && keep.h != nil && l.h.key == keep.h.key && l.bucket == keep.bucket {
			sel = row
		}
	}
	if len(v.lines) == 0 {
		t.SetCell(1, 0, tview.NewTableCell("(no command answered: no latency to draw)").SetSelectable(false))
	}
	t.SetOffset(0, 0)
	t.Select(sel, 0)
}

// opLatCommands lists the selected line's commands (its opcode's, or its
// bucket's) in the commands view, where enter goes to their frames.
func (u *UI) opLatCommands() {
	v := u.opLat
	r, _ := v.table.GetSelection()
	col := u.commands.col
	if r < 1 || r > len(v.lines) || col == nil {
		return
	}
	l := v.lines[r-1]
	if l.count == 0 {
		u.note("no command in " + bucketLabel(l.bucket) + " µs")
		return
	}
	key, conv, b := l.h.key, v.conv, l.bucket
	title := l.h.label
	if b >= 0 {
		title += " " + bucketLabel(b) + " µs"
	}
	cm := u.commands
	cm.only = func(c *ulpCommand) bool {
		return c.op == key && (conv == 0 || col.canon(c.conv) == conv) && (b < 0 || bucketOf(c.lat) == b)
	}
	cm.onlyTitle = title + ", " + v.scope()
	u.showView(viewCommands)
	cm.update(col)
}
