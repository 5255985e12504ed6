package tui

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
)

// sparks are the eight heights of a sparkline cell.
var sparks = []rune("▁▂▃▄▅▆▇█")

func spark(v, maxV float64) rune {
	if v <= 0 || maxV <= 0 {
		return ' '
	}
	i := int(math.Ceil(v/maxV*float64(len(sparks)))) - 1
	return sparks[min(max(i, 0), len(sparks)-1)]
}

// printLine writes s at (x, y), clipped to w.
func printLine(screen tcell.Screen, s string, x, y, w int, st tcell.Style) {
	col := 0
	for _, r := range s {
		if col >= w {
			break
		}
		screen.SetContent(x+col, y, r, nil, st)
		col++
	}
}

// ioGraph is the I/O graph: one sparkline per -z io,stat column, over
// intervals of the whole capture.
type ioGraph struct {
	*tview.Box
	u        *UI
	columns  []string // as -z io,stat takes them: FILTER or FUNC(field)FILTER; "" is every frame
	interval time.Duration
	series   [][]float64
	titles   []string
	err      string
	busy     bool
	cancel   context.CancelFunc
	scanned  int
	drawn    bool // tview boxes have a placeholder size until drawn
}

func defaultIOColumns() []string {
	return []string{"", "SUM(ibwire.payload.len)", "ibwire.analysis." + decode.FindRetransmission.Name(),
		"ibwire.analysis." + decode.FindNAK.Name(), "ibwire.analysis." + decode.FindCNP.Name()}
}

func newIOGraph(u *UI) *ioGraph {
	return &ioGraph{Box: tview.NewBox(), u: u, columns: defaultIOColumns()}
}

// setColumns takes -z io,stat's column list, comma separated.
func (g *ioGraph) setColumns(spec string) {
	var cols []string
	for _, c := range splitColumns(spec) {
		cols = append(cols, strings.TrimSpace(c))
	}
	g.columns = cols
	g.scanned = -1
	g.start()
}

// splitColumns splits at commas outside parentheses and quotes.
func splitColumns(s string) []string {
	var out []string
	depth, quote, start := 0, false, 0
	for i, c := range s {
		switch {
		case c == '"':
			quote = !quote
		case quote:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// ioColumn compiles one column as ibdump's -z io,stat does.
func ioColumn(expr string) (decode.IOColumn, error) {
	col := decode.IOColumn{Title: expr}
	filterExpr := expr
	if fn, field, rest, ok := decode.ParseIOFunc(expr); ok {
		fd, found := decode.Lookup(field)
		if !found {
			return col, fmt.Errorf("no field %q", field)
		}
		col.Func, col.Field, filterExpr = fn, fd, rest
	}
	if strings.TrimSpace(filterExpr) != "" {
		f, err := dfilter.Compile(filterExpr)
		if err != nil {
			return col, err
		}
		col.Match = f.Match
	}
	if col.Title == "" {
		col.Title = "all frames"
	}
	return col, nil
}

func (u *UI) editIOColumns() {
	if u.view != viewIO {
		return
	}
	u.openPrompt("command", ":")
	u.prompt.SetText("iograph " + strings.Join(u.io.columns, ","))
}

// start computes the series in the background, unless they are up to date.
func (g *ioGraph) start() {
	st := g.u.m.Status()
	if g.scanned == st.Packets && g.interval != 0 {
		return
	}
	if g.cancel != nil {
		g.cancel()
	}
	var cols []decode.IOColumn
	for _, c := range g.columns {
		col, err := ioColumn(c)
		if err != nil {
			g.err = fmt.Sprintf("%s: %v", c, err)
			return
		}
		cols = append(cols, col)
	}
	g.err = ""
	if g.interval == 0 {
		// The interval fits the capture to the graph's width, known at
		// its first draw, which calls start again.
		_, _, w, _ := g.GetInnerRect()
		if !g.drawn {
			g.busy = true
			return
		}
		span := st.Last.Sub(st.First)
		g.interval = niceInterval(span / time.Duration(max(w-2, 20)))
	}
	ctx, cancel := context.WithCancel(g.u.ctx)
	g.cancel, g.busy = cancel, true
	interval, total := g.interval, st.Packets
	go func() {
		stat := &decode.IOFuncStat{Interval: interval, Columns: cols}
		if err := g.u.m.Scan(ctx, total, func(p *decode.Packet) bool { stat.Add(p); return true }); err != nil {
			return
		}
		rows, _ := stat.Rows()
		series := make([][]float64, len(cols))
		n := 0
		for _, r := range rows {
			n = max(n, int(r.Start/interval)+1)
		}
		for i := range series {
			series[i] = make([]float64, n)
		}
		for _, r := range rows {
			k := int(r.Start / interval)
			for i, c := range cols {
				if c.Func == decode.IOFrames {
					series[i][k] = float64(r.Frames[i])
				} else {
					series[i][k] = r.Values[i]
				}
			}
		}
		var titles []string
		for _, c := range cols {
			titles = append(titles, c.Title)
		}
		g.u.queue(func() {
			if g.interval != interval {
				return
			}
			g.series, g.titles, g.busy, g.scanned = series, titles, false, total
		})
	}()
}

// niceInterval rounds d up to 1, 2 or 5 times a power of ten.
func niceInterval(d time.Duration) time.Duration {
	if d <= time.Microsecond {
		return time.Microsecond
	}
	p := time.Duration(1)
	for p*10 <= d {
		p *= 10
	}
	for _, m := range []time.Duration{1, 2, 5, 10} {
		if p*m >= d {
			return p * m
		}
	}
	return p * 10
}

func (g *ioGraph) zoom(in bool) {
	if g.interval == 0 {
		return
	}
	if in {
		g.interval = max(g.interval/2, time.Microsecond)
	} else {
		g.interval *= 2
	}
	g.scanned = -1
	g.start()
}

func (g *ioGraph) Draw(screen tcell.Screen) {
	g.Box.DrawForSubclass(screen, g)
	x, y, w, h := g.GetInnerRect()
	if !g.drawn {
		g.drawn = true
		g.start()
	}
	t := &g.u.theme
	head := fmt.Sprintf("I/O graph, interval %v (+/- zoom, e: edit columns)", g.interval)
	if g.busy {
		head += "  computing..."
	}
	printLine(screen, head, x, y, w, t.header)
	if g.err != "" {
		printLine(screen, "error: "+g.err, x, y+1, w, t.bad)
		return
	}
	row := y + 2
	for i, s := range g.series {
		if row+1 >= y+h {
			break
		}
		maxV, sum := 0.0, 0.0
		for _, v := range s {
			maxV = math.Max(maxV, v)
			sum += v
		}
		printLine(screen, fmt.Sprintf("%s  (max %s, total %s)", g.titles[i], ioNumber(maxV), ioNumber(sum)), x, row, w, t.normal)
		for k := 0; k < min(len(s), w); k++ {
			screen.SetContent(x+k, row+1, spark(s[k], maxV), nil, t.good)
		}
		row += 3
	}
	if len(g.series) > 0 && row-1 < y+h-1 {
		// As far as the capture goes, and one tick past its end.
		n := len(g.series[0]) + ioAxisStep - 1
		g.drawTimeAxis(screen, x, row-1, min(w, n-n%ioAxisStep+1))
	}
}

// ioAxisStep is how many columns lie between two ticks of the time axis.
const ioAxisStep = 10

// drawTimeAxis draws under the sparklines a tick every ioAxisStep columns
// and, below, the time since the capture's start at each tick a label fits.
func (g *ioGraph) drawTimeAxis(screen tcell.Screen, x, y, w int) {
	t := &g.u.theme
	free := 0 // the first column a label may take
	for col := 0; col < w; col++ {
		r := '─'
		if col%ioAxisStep == 0 {
			r = '┬'
			label := (time.Duration(col) * g.interval).String()
			if col >= free && col+len(label) <= w {
				printLine(screen, label, x+col, y+1, len(label), t.normal)
				free = col + len(label) + 1
			}
		}
		screen.SetContent(x+col, y, r, nil, t.normal)
	}
}

// ioNumber prints a column's value as -z io,stat does: integers whole,
// fractions as short as they are exact.
func ioNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// psnMarkers are the PSN graph's markers by decode.PSNMark, whose order
// says which wins a cell that several points share.
var psnMarkers = [decode.NumPSNMarks]rune{decode.MarkRequest: '·', decode.MarkResponse: '+', decode.MarkCNP: 'C',
	decode.MarkRetransmission: 'R', decode.MarkNAK: 'N', decode.MarkRNRNAK: 'Z'}

// psnGraph plots time against unwrapped PSN for one connection, with
// retransmissions, NAKs, RNR NAKs and CNPs marked (tcptrace style).
type psnGraph struct {
	*tview.Box
	u      *UI
	conv   uint32
	points []decode.PSNPoint
	busy   bool
	t0, t1 time.Duration // the time window shown
	cancel context.CancelFunc
}

func newPSNGraph(u *UI) *psnGraph { return &psnGraph{Box: tview.NewBox(), u: u} }

// psnSelected opens the PSN graph of the selected connection.
func (u *UI) psnSelected() {
	cv := u.convOf(u.selectedConv())
	id := cv.ID
	if id == 0 {
		u.note("PSN graph: select a packet of a connection, or a row of the QP table")
		return
	}
	g := u.psn
	if g.cancel != nil {
		g.cancel()
	}
	ctx, cancel := context.WithCancel(u.ctx)
	g.cancel, g.conv, g.points, g.busy = cancel, id, nil, true
	u.showView(viewPSN)
	total := u.m.Status().Packets
	go func() {
		var series decode.PSNSeries
		err := u.m.Scan(ctx, total, func(p *decode.Packet) bool {
			if cv.HasID(p.Analysis.Conv) && p.BTH() != nil {
				series.Add(p)
			}
			return true
		})
		pts := series.Points
		if err != nil {
			return
		}
		u.queue(func() {
			if g.conv != id {
				return
			}
			g.points, g.busy = pts, false
			g.reset()
		})
	}()
}

func (g *psnGraph) reset() {
	if len(g.points) == 0 {
		return
	}
	g.t0, g.t1 = g.points[0].T, g.points[len(g.points)-1].T
	if g.t1 <= g.t0 {
		g.t1 = g.t0 + time.Microsecond
	}
}

func (g *psnGraph) zoom(in bool) {
	if g.busy || len(g.points) == 0 {
		return
	}
	mid, half := (g.t0+g.t1)/2, (g.t1-g.t0)/2
	if in {
		half = max(half/2, time.Microsecond)
	} else {
		half *= 2
	}
	g.t0, g.t1 = mid-half, mid+half
}

func (g *psnGraph) pan(d int) {
	if g.busy || len(g.points) == 0 {
		return
	}
	step := (g.t1 - g.t0) / 4
	g.t0 += time.Duration(d) * step
	g.t1 += time.Duration(d) * step
}

func (u *UI) zoomGraph(in bool) {
	switch u.view {
	case viewPSN:
		u.psn.zoom(in)
	case viewIO:
		u.io.zoom(in)
	}
}

// psnHead is the PSN graph's title, the legend of its markers and its keys:
// one line when the width allows, else the keys on a second line. Where the
// legend's long words do not fit, short ones name every marker still.
func psnHead(conv uint32, w int) []string {
	title := fmt.Sprintf("PSN graph, connection %d", conv)
	const keys = "(+/- zoom, h/l pan, 0 all)"
	legends := []string{"· request  + response  R retransmission  N NAK  Z RNR NAK  C CNP",
		"· req  + resp  R retr  N NAK  Z RNR  C CNP"}
	for _, l := range legends {
		if s := title + "  " + l + "  " + keys; utf8.RuneCountInString(s) <= w {
			return []string{s}
		}
	}
	for _, l := range legends {
		if s := title + "  " + l; utf8.RuneCountInString(s) <= w {
			return []string{s, keys}
		}
	}
	return []string{title + "  " + legends[len(legends)-1], keys}
}

func (g *psnGraph) Draw(screen tcell.Screen) {
	g.Box.DrawForSubclass(screen, g)
	x, y, w, h := g.GetInnerRect()
	t := &g.u.theme
	head := psnHead(g.conv, w)
	for i, line := range head {
		printLine(screen, line, x, y+i, w, t.header)
	}
	top := y + len(head)
	if g.busy {
		printLine(screen, "computing...", x, top, w, t.normal)
		return
	}
	if len(g.points) == 0 {
		printLine(screen, "no packets with a PSN in this connection", x, top, w, t.normal)
		return
	}
	const axisW = 10
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	var counts [decode.NumPSNMarks]int
	for _, p := range g.points {
		if p.T < g.t0 || p.T > g.t1 {
			continue
		}
		lo, hi = min(lo, p.PSN), max(hi, p.PSN)
		counts[p.Mark]++
	}
	if lo > hi {
		printLine(screen, "no packets in this time window (0 resets)", x, y+1, w, t.normal)
		return
	}
	left := fmt.Sprintf("%.6fs", g.t0.Seconds())
	right := fmt.Sprintf("%.6fs", g.t1.Seconds())
	legend := fmt.Sprintf("PSN %d..%d  retrans %d  NAK %d  RNR %d  CNP %d", wirePSN(lo), wirePSN(hi),
		counts[decode.MarkRetransmission], counts[decode.MarkNAK], counts[decode.MarkRNRNAK], counts[decode.MarkCNP])
	// Below the plot: the time axis and the counts, on the time axis's
	// line when they fit between its ends, else on a line of their own.
	plotX, plotY, plotW := x+axisW+1, top, w-axisW-1
	inline := len(left)+2+len(legend) < plotW-len(right)
	plotH := h - len(head) - 2
	if !inline {
		plotH--
	}
	if plotW < 4 || plotH < 2 {
		return
	}
	if hi == lo {
		hi = lo + 1
	}
	// The highest mark wins a cell (decode.PSNMark); 0 is an empty one.
	grid := make([]uint8, plotW*plotH)
	for _, p := range g.points {
		if p.T < g.t0 || p.T > g.t1 {
			continue
		}
		cx := int(float64(p.T-g.t0) / float64(g.t1-g.t0) * float64(plotW-1))
		cy := plotH - 1 - int(float64(p.PSN-lo)/float64(hi-lo)*float64(plotH-1))
		i := cy*plotW + cx
		grid[i] = max(grid[i], uint8(p.Mark)+1)
	}
	for row := 0; row < plotH; row++ {
		if row == 0 || row == plotH-1 || row == plotH/2 {
			v := hi - int64(float64(row)/float64(plotH-1)*float64(hi-lo))
			printLine(screen, fmt.Sprintf("%*d", axisW, wirePSN(v)), x, plotY+row, axisW, t.normal)
		}
		screen.SetContent(plotX-1, plotY+row, '│', nil, t.normal)
		for col := 0; col < plotW; col++ {
			m := grid[row*plotW+col]
			if m == 0 {
				continue
			}
			mark := decode.PSNMark(m - 1)
			st := t.normal
			switch mark {
			case decode.MarkRetransmission, decode.MarkNAK:
				st = t.bad
			case decode.MarkRNRNAK:
				st = t.warn
			case decode.MarkCNP:
				st = t.congestion
			}
			screen.SetContent(plotX+col, plotY+row, psnMarkers[mark], nil, st)
		}
	}
	for col := 0; col < plotW; col++ {
		screen.SetContent(plotX+col, plotY+plotH, '─', nil, t.normal)
	}
	printLine(screen, left, plotX, plotY+plotH+1, plotW, t.normal)
	printLine(screen, right, plotX+plotW-len(right), plotY+plotH+1, len(right), t.normal)
	if inline {
		printLine(screen, legend, plotX+len(left)+2, plotY+plotH+1, len(legend), t.normal)
	} else {
		printLine(screen, legend, plotX, plotY+plotH+2, plotW, t.normal)
	}
}

// wirePSN is the PSN on the wire at a place of an unwrapped line.
func wirePSN(v int64) int64 { return int64(decode.WirePSN(v)) }

// latencyView draws -z latency: a summary and a histogram per operation.
type latencyView struct {
	*tview.Box
	u *UI
}

func newLatencyView(u *UI) *latencyView { return &latencyView{Box: tview.NewBox(), u: u} }

func fmtDur(d time.Duration) string {
	return fmt.Sprintf("%.1fµs", float64(d.Nanoseconds())/1000)
}

func (l *latencyView) Draw(screen tcell.Screen) {
	l.Box.DrawForSubclass(screen, l)
	x, y, w, h := l.GetInnerRect()
	t := &l.u.theme
	printLine(screen, "Latency (request to response), histograms on a log scale from min to max", x, y, w, t.header)
	rows := l.u.m.latencySnaps()
	if len(rows) == 0 {
		printLine(screen, "no request answered yet", x, y+2, w, t.normal)
		return
	}
	line := y + 2
	for _, r := range rows {
		if line+2 >= y+h {
			break
		}
		s := r.summary
		printLine(screen, fmt.Sprintf("%-14s n=%-7d min %s  p50 %s  p90 %s  p99 %s  max %s", r.name, s.Count,
			fmtDur(s.Min), fmtDur(s.P50), fmtDur(s.P90), fmtDur(s.P99), fmtDur(s.Max)), x, line, w, t.normal)
		bins := histogramBins(r.quantiles[:], max(w-2, 8))
		peak := 0.0
		for _, b := range bins {
			peak = math.Max(peak, b)
		}
		for i, b := range bins {
			screen.SetContent(x+1+i, line+1, spark(b, peak), nil, t.good)
		}
		if line+2 < y+h {
			latencyAxis(screen, r.quantiles[0], r.quantiles[len(r.quantiles)-1], x+1, line+2, len(bins), t.normal)
		}
		line += 4
	}
}

// latencyAxis labels a histogram's ends, lo and hi, and its middle (their
// geometric mean: the scale is logarithmic) on the line under it.
func latencyAxis(screen tcell.Screen, lo, hi time.Duration, x, y, w int, st tcell.Style) {
	left, right := fmtDur(lo), fmtDur(hi)
	n, m := utf8.RuneCountInString(left), utf8.RuneCountInString(right)
	if n+m+1 > w {
		return
	}
	printLine(screen, left, x, y, n, st)
	printLine(screen, right, x+w-m, y, m, st)
	mid := fmtDur(time.Duration(math.Sqrt(float64(max(lo, 1)) * float64(max(hi, 1)))))
	k := utf8.RuneCountInString(mid)
	if at := x + (w-k)/2; at > x+n+1 && at+k < x+w-m-1 {
		printLine(screen, mid, at, y, k, st)
	}
}

// histogramBins spreads the quantiles over n log-spaced bins between the
// smallest and the largest: each quantile step is an equal share of the
// requests.
func histogramBins(q []time.Duration, n int) []float64 {
	bins := make([]float64, n)
	lo, hi := math.Log(float64(max(q[0], 1))), math.Log(float64(max(q[len(q)-1], 1)))
	for _, d := range q {
		i := 0
		if hi > lo {
			i = int((math.Log(float64(max(d, 1))) - lo) / (hi - lo) * float64(n-1))
		}
		bins[min(max(i, 0), n-1)]++
	}
	return bins
}

// rateView is the DCQCN view: per QP direction the Analyzer followed, its
// numbers on one line, its sending rate per interval as a sparkline (the
// intervals fitted to the width), and
// under it where CE marks (.) and CNPs (c) fell.
type rateView struct {
	*tview.Box
	u *UI
}

func newRateView(u *UI) *rateView { return &rateView{Box: tview.NewBox(), u: u} }

func (v *rateView) Draw(screen tcell.Screen) {
	v.Box.DrawForSubclass(screen, v)
	x, y, w, h := v.GetInnerRect()
	t := &v.u.theme
	printLine(screen, "DCQCN: sending rate per QP direction (sparkline), CE marks (.) and CNPs (c) under it", x, y, w, t.header)
	rows := v.u.m.dcqcnSnap()
	if len(rows) == 0 {
		printLine(screen, "no ECN CE mark, FECN or CNP yet: no congestion to follow", x, y+2, w, t.normal)
		return
	}
	cols := max(w-2, 8)
	line := y + 2
	for i := range rows {
		r := &rows[i]
		if line+2 >= y+h || len(r.Bins) == 0 {
			break
		}
		victim := ""
		if r.Victim {
			victim = "  victim"
		}
		printLine(screen, fmt.Sprintf("%s  CE %d (%.1f%%)  CNPs %d  cuts %d%s", r.Flow, r.ECN[decode.ECNCE], 100*r.CERatio(),
			r.CNPs, len(r.Reactions), victim), x, line, w, t.normal)
		t0, span := r.Bins[0].Start, time.Duration(len(r.Bins))*r.Interval
		col := func(at time.Duration) int { return min(int(int64(at-t0)*int64(cols)/int64(span)), cols-1) }
		// Each column is the mean rate of the intervals it covers, or,
		// with fewer intervals than columns, the rate of the one it falls in.
		rates, counts := make([]float64, cols), make([]int, cols)
		if len(r.Bins) < cols {
			for c := range rates {
				rates[c], counts[c] = r.Bins[c*len(r.Bins)/cols].Rate(r.Interval), 1
			}
		} else {
			for j, b := range r.Bins {
				c := col(r.Bins[0].Start + time.Duration(j)*r.Interval)
				rates[c] += b.Rate(r.Interval)
				counts[c]++
			}
		}
		peak := 0.0
		for c := range rates {
			if counts[c] > 0 {
				rates[c] /= float64(counts[c])
			}
			peak = math.Max(peak, rates[c])
		}
		for c, rate := range rates {
			screen.SetContent(x+1+c, line+1, spark(rate, peak), nil, t.good)
		}
		for _, at := range r.CETimes {
			screen.SetContent(x+1+col(at), line+2, '.', nil, t.normal)
		}
		for _, at := range r.CNPTimes {
			screen.SetContent(x+1+col(at), line+2, 'c', nil, t.header)
		}
		line += 4
	}
}
