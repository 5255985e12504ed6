package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// RateGraph is --graph rate: the Analyzer's rate series of each
// direction with the CE marks, CNPs and rate cuts it found, and the PFC
// pauses of the direction's priority.
type RateGraph struct{}

// NewRateGraph returns the graph.
func NewRateGraph() *RateGraph { return &RateGraph{} }

// rateColors tell the directions apart.
var rateColors = [...]string{"#238", "#c60", "#2a2", "#93c", "#088", "#a33", "#666", "#880"}

// maxRateFlows is how many directions one graph draws.
const maxRateFlows = len(rateColors)

// WriteSVG draws the sending rate of each direction of rows (per interval,
// as a step line) against time, its CE marks as ticks under the axis, the
// CNPs sent to it as diamonds on its line, and the PFC pauses of its
// priority (from pfc, known only with a link speed) as shaded bands.
func (*RateGraph) WriteSVG(w io.Writer, title string, rows []decode.DCQCNRow, pfc []decode.PFCRow) error {
	const (
		width, height = 960, 540
		left, right   = 90, 30
		top, bottom   = 50, 90
	)
	dropped := 0
	if len(rows) > maxRateFlows {
		dropped, rows = len(rows)-maxRateFlows, rows[:maxRateFlows]
	}
	// The axes span the series, the marks and the pauses.
	var t0, t1 time.Duration
	first := true
	span := func(a, b time.Duration) {
		if first {
			t0, t1, first = a, b, false
		}
		t0, t1 = min(t0, a), max(t1, b)
	}
	var rmax float64
	for i := range rows {
		r := &rows[i]
		for _, b := range r.Bins {
			span(b.Start, b.Start+r.Interval)
			rmax = math.Max(rmax, b.Rate(r.Interval))
		}
	}
	for i := range rows {
		for _, t := range rows[i].CETimes {
			span(t, t)
		}
		for _, t := range rows[i].CNPTimes {
			span(t, t)
		}
	}
	if t1 <= t0 {
		t1 = t0 + time.Microsecond
	}
	ymax := niceCeil(rmax / 1e6)
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	x := func(t time.Duration) float64 {
		return left + pw*float64(min(max(t, t0), t1)-t0)/float64(t1-t0)
	}
	y := func(bps float64) float64 { return top + ph - ph*(bps/1e6)/ymax }

	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n", left, xmlEscape(title))
	// PFC pauses of the drawn priorities, under everything else.
	prios := map[int]bool{}
	for i := range rows {
		if rows[i].Priority >= 0 {
			prios[rows[i].Priority] = true
		}
	}
	paused := false
	for i := range pfc {
		p := &pfc[i]
		if !p.DurationsKnown || !(prios[p.Priority] || p.Priority == decode.PFCAll && len(prios) > 0) {
			continue
		}
		for _, iv := range p.Intervals {
			paused = true
			fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.0f\" fill=\"#f4c7c3\"><title>PFC pause, priority %s, %.3f-%.3f us</title></rect>\n",
				x(iv.Start), top, math.Max(x(iv.End)-x(iv.Start), 1), ph, prioName(p.Priority), micros(iv.Start), micros(iv.End))
		}
	}
	fmt.Fprintf(&b, "<g stroke=\"black\" fill=\"none\"><rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/></g>\n", left, top, pw, ph)
	b.WriteString("<g fill=\"black\" stroke=\"#ccc\">\n")
	for i := 0; i <= 5; i++ {
		tv := t0 + time.Duration(float64(t1-t0)*float64(i)/5)
		rv := ymax * float64(i) / 5
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>", x(tv), top, x(tv), top+ph)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" stroke=\"none\">%s</text>\n", x(tv), top+ph+30, fixed(micros(tv), 0))
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>", left, y(rv*1e6), left+pw, y(rv*1e6))
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\">%s</text>\n", left-6, y(rv*1e6)+4, fixed(rv, 0))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">time (µs)</text>\n", left+pw/2, height-48)
	fmt.Fprintf(&b, "<text x=\"20\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.0f)\">sending rate (Mb/s)</text>\n", top+ph/2, top+ph/2)

	for i := range rows {
		r := &rows[i]
		color := rateColors[i]
		var pts []string
		for _, bin := range r.Bins {
			ry := y(bin.Rate(r.Interval))
			pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", x(bin.Start), ry, x(bin.Start+r.Interval), ry))
		}
		if len(pts) > 0 {
			fmt.Fprintf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", color, strings.Join(pts, " "))
		}
		// The sender's measured reactions: the new rate from the slow frame.
		for _, rx := range r.Reactions {
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fv6\" stroke=\"%s\" stroke-width=\"2\"><title>rate cut %.3f us after the CNP: %s -> %s Mb/s</title></path>\n",
				x(rx.CNPAt+rx.Reaction), y(rx.RateAfter)-3, color, micros(rx.Reaction), fixed(mbps(rx.RateBefore), 1), fixed(mbps(rx.RateAfter), 1))
		}
	}
	// rateAt is direction i's rate in the interval holding t.
	rateAt := func(i int, t time.Duration) float64 {
		r := &rows[i]
		for _, bin := range r.Bins {
			if t >= bin.Start && t < bin.Start+r.Interval {
				return bin.Rate(r.Interval)
			}
		}
		return 0
	}
	var unmarked uint64
	for i := range rows {
		r := &rows[i]
		color := rateColors[i]
		for _, t := range r.CNPTimes {
			px, py := x(t), y(rateAt(i, t))
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"%s\" stroke=\"black\" stroke-width=\"0.5\"/>\n", px, py-5, color)
		}
		lane := top + ph + 4 + float64(i%4)*4
		for _, t := range r.CETimes {
			fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", x(t), lane, x(t), lane+4, color)
		}
		unmarked += r.MarksDropped
	}
	// Legend: a line per direction, then what the marks are.
	for i := range rows {
		r := &rows[i]
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			left+(i%3)*280, height-30+(i/3)*14-8, rateColors[i], left+(i%3)*280+14, height-30+(i/3)*14+1, xmlEscape(flowName(r)))
	}
	key := fmt.Sprintf("rate per %v; ticks under the axis: CE marks; diamonds: CNPs; short bars: measured rate cuts", rows0Interval(rows))
	if paused {
		key += "; shaded: PFC pause of the priority"
	}
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s</text>\n", left, height-2, xmlEscape(key))
	if len(rows) == 0 {
		fmt.Fprintf(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no ECN CE mark, FECN or CNP in the capture: no rate analysis</text>\n", left+pw/2, top+ph/2)
	}
	if dropped > 0 || unmarked > 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"40\" font-size=\"11\">%d more directions and %d marks not drawn</text>\n", left, dropped, unmarked)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func rows0Interval(rows []decode.DCQCNRow) time.Duration {
	if len(rows) == 0 {
		return 0
	}
	return rows[0].Interval
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
