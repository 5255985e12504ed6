package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/correlate"
)

// WriteCorrelation writes ibdump --correlate's report: the capture points
// and their clocks, then per flow its path, losses by segment, capture drops
// per point and the delay of each hop in microseconds.
func WriteCorrelation(w io.Writer, r *correlate.Report) error {
	bw := bufio.NewWriter(w)
	ref := r.Points[0].Name
	fmt.Fprintf(bw, "Capture points (clocks against %s; window %v; delays on %s clocks)\n", ref, r.Window, map[bool]string{true: "corrected", false: "raw"}[r.ClockFixed])
	tw := newTextTable("Point", "File", "Frames", "RoCE", "Errors", "Drops", "Offset", "±", "Drift ppm", "Samples")
	for i, p := range r.Points {
		offset, unc, drift, samples := "reference", "", "", ""
		if i > 0 {
			offset = signedDuration(p.Clock.Offset)
			unc = "unbounded"
			if p.Clock.Bounded {
				unc = p.Clock.Uncertainty.String()
			}
			drift = strconv.FormatFloat(p.Clock.DriftPPM, 'f', 2, 64)
			samples = strconv.Itoa(p.Clock.Samples)
		}
		tw.row(p.Name, p.File, strconv.Itoa(p.Frames), strconv.Itoa(p.RoCE), strconv.Itoa(p.Errors), strconv.Itoa(p.CaptureDrops), offset, unc, drift, samples)
	}
	tw.write(bw, "  ")
	for _, p := range r.Points {
		if p.FirstError != "" {
			fmt.Fprintf(bw, "  %s: %d frames did not decode; first: %s\n", p.Name, p.Errors, p.FirstError)
		}
	}
	for _, f := range r.Flows {
		fmt.Fprintf(bw, "\n%s → %s QP 0x%06x: %d packets, path %s\n", f.Src, f.Dst, f.DestQP, f.Packets, strings.Join(f.Path, " → "))
		var losses []string
		for _, s := range f.Segments {
			losses = append(losses, fmt.Sprintf("%s %d", s.Name, s.Losses))
		}
		fmt.Fprintf(bw, "  losses:        %s\n", strings.Join(losses, ", "))
		var drops []string
		for j, name := range f.Path {
			drops = append(drops, fmt.Sprintf("%s %d", name, f.CaptureDrops[j]))
		}
		fmt.Fprintf(bw, "  capture drops: %s\n", strings.Join(drops, ", "))
		if f.ReorderedBeforeFirst > 0 {
			fmt.Fprintf(bw, "  reordered before %s: %d\n", f.Path[0], f.ReorderedBeforeFirst)
		}
		if len(f.Hops) == 0 {
			continue
		}
		ht := newTextTable("Hop", "Packets", "P50 us", "P90 us", "P99 us", "Max us", "Below 0", "Reordered", "CE added")
		for _, h := range f.Hops {
			d := h.Delay
			ht.row(h.From+" → "+h.To, strconv.FormatUint(d.Count, 10), us(d.P50), us(d.P90), us(d.P99), us(d.Max), strconv.Itoa(h.Negative), strconv.Itoa(h.Reordered), strconv.Itoa(h.Marked))
		}
		ht.write(bw, "  ")
	}
	return bw.Flush()
}

// WriteCorrelationJSON writes the report as one JSON object.
func WriteCorrelationJSON(w io.Writer, r *correlate.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func us(d time.Duration) string { return strconv.FormatFloat(micros(d), 'f', 3, 64) }

func signedDuration(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

// textTable lines up columns of strings, numbers right-aligned.
type textTable struct {
	rows [][]string
}

func newTextTable(header ...string) *textTable { return &textTable{rows: [][]string{header}} }

func (t *textTable) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer, indent string) {
	width := make([]int, len(t.rows[0]))
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range t.rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			if _, err := strconv.ParseFloat(strings.TrimPrefix(c, "+"), 64); err == nil && i > 0 {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
