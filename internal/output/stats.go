package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

const ruler80 = "================================================================================"

// WriteQPFlows writes -z conv,qp in the layout of tshark's conversation
// tables: one row per QP direction (source, destination, destination QP).
func WriteQPFlows(w io.Writer, flows []decode.Flow, filter string) error {
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nQP Conversations (one row per direction)\nFilter:%s\n", ruler80, filter)
	fmt.Fprintf(&b, "%-26s     %-26s %-10s | %7s %12s %12s | %14s | %12s |\n", "Source", "Destination", "Dest QP", "Frames", "Bytes", "Payload", "Relative Start", "Duration")
	for _, f := range flows {
		fmt.Fprintf(&b, "%-26s --> %-26s 0x%06x   | %7d %12s %12s | %14.9f | %12.4f |\n",
			f.Src, f.Dst, f.DestQP, f.Packets, fmt.Sprintf("%d bytes", f.Bytes), fmt.Sprintf("%d bytes", f.PayloadSize),
			f.FirstSeen.Seconds(), (f.LastSeen - f.FirstSeen).Seconds())
	}
	b.WriteString(ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteIOStat writes -z io,stat as tshark's boxed table: a column of frames
// and bytes per filter (or one for all frames).
func WriteIOStat(w io.Writer, s *decode.IOStat, filters []string) error {
	rows, dur := s.Rows()
	titles := filters
	if len(titles) == 0 {
		titles = []string{"Frames and bytes"}
	}
	interval := s.Interval
	if interval <= 0 {
		interval = dur
	}
	secs := func(d time.Duration) string {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", d.Seconds()), "0"), ".")
	}
	// The interval column is as wide as its longest entry.
	labels := make([]string, len(rows))
	ivWidth := len("Interval")
	for i, r := range rows {
		end := secs(r.Start + interval)
		if r.Start+interval >= dur || s.Interval <= 0 {
			end = "Dur"
		}
		labels[i] = secs(r.Start) + " <> " + end
		ivWidth = max(ivWidth, len(labels[i]))
	}
	const colWidth = len(" Frames |     Bytes ")
	inner := 1 + ivWidth + 2 + colWidth*len(titles) + len(titles) - 1 // between the outer bars
	head := []string{"IO Statistics", "", "Duration: " + secs(dur) + " secs", "Interval: " + secs(interval) + " secs", ""}
	for i, t := range titles {
		head = append(head, fmt.Sprintf("Col %d: %s", i+1, t))
	}
	for _, h := range head {
		inner = max(inner, len(h)+2)
	}
	var b strings.Builder
	rule := strings.Repeat("=", inner+2)
	line := func(s string) { fmt.Fprintf(&b, "|%-*s|\n", inner, s) }
	b.WriteString(rule + "\n")
	for _, h := range head {
		line(" " + h)
	}
	line(strings.Repeat("-", inner))
	nums, cols := " "+strings.Repeat(" ", ivWidth)+" |", " "+fmt.Sprintf("%-*s", ivWidth, "Interval")+" |"
	for i := range titles {
		if i > 0 {
			nums, cols = nums+"|", cols+"|"
		}
		nums += fmt.Sprintf("%-*s", colWidth, strconv.Itoa(i+1))
		cols += " Frames |     Bytes "
	}
	line(nums)
	line(cols)
	line(strings.Repeat("-", inner))
	for i, r := range rows {
		row := fmt.Sprintf(" %-*s |", ivWidth, labels[i])
		for c := range r.Frames {
			if c > 0 {
				row += "|"
			}
			row += fmt.Sprintf(" %6d | %9d ", r.Frames[c], r.Bytes[c])
		}
		line(row)
	}
	b.WriteString(rule + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
