package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// WriteIOFuncStat writes -z io,stat with function columns as tshark's boxed
// table: a column per FUNC(field)filter (frames and bytes for a plain filter).
func WriteIOFuncStat(w io.Writer, s *decode.IOFuncStat) error {
	rows, dur := s.Rows()
	interval := s.Interval
	if interval <= 0 {
		interval = dur
	}
	secs := func(d time.Duration) string {
		return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", d.Seconds()), "0"), ".")
	}
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
	// Each column is as wide as its heading and its values.
	cells := make([][]string, len(rows))
	widths := make([]int, len(s.Columns))
	heads := make([]string, len(s.Columns))
	for c, col := range s.Columns {
		heads[c] = " Frames |     Bytes "
		if col.Func != decode.IOFrames {
			heads[c] = " " + col.Func.String() + " "
		}
		widths[c] = len(heads[c])
	}
	for i, r := range rows {
		cells[i] = make([]string, len(s.Columns))
		for c, col := range s.Columns {
			v := fmt.Sprintf(" %6d | %9d ", r.Frames[c], r.Bytes[c])
			if col.Func != decode.IOFrames {
				v = " " + strconv.FormatFloat(r.Values[c], 'f', -1, 64) + " "
				if col.Field != nil && (col.Field.Type == decode.FTRelTime || col.Func == decode.IOAvg) {
					v = " " + strconv.FormatFloat(r.Values[c], 'f', 6, 64) + " "
				}
			}
			cells[i][c] = v
			widths[c] = max(widths[c], len(v))
		}
	}
	inner := 1 + ivWidth + 2
	for _, wd := range widths {
		inner += wd + 1
	}
	inner--
	head := []string{"IO Statistics", "", "Duration: " + secs(dur) + " secs", "Interval: " + secs(interval) + " secs", ""}
	for c, col := range s.Columns {
		head = append(head, fmt.Sprintf("Col %d: %s", c+1, col.Title))
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
	for c := range s.Columns {
		if c > 0 {
			nums, cols = nums+"|", cols+"|"
		}
		nums += fmt.Sprintf("%-*s", widths[c], strconv.Itoa(c+1))
		cols += fmt.Sprintf("%*s", widths[c], heads[c])
	}
	line(nums)
	line(cols)
	line(strings.Repeat("-", inner))
	for i := range rows {
		row := fmt.Sprintf(" %-*s |", ivWidth, labels[i])
		for c := range s.Columns {
			if c > 0 {
				row += "|"
			}
			row += fmt.Sprintf("%*s", widths[c], cells[i][c])
		}
		line(row)
	}
	b.WriteString(rule + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type ioRowJSON struct {
	Start   float64     `json:"start"`
	Columns []ioColJSON `json:"columns"`
}

type ioColJSON struct {
	Column string   `json:"column"`
	Frames int      `json:"frames"`
	Bytes  int      `json:"bytes"`
	Value  *float64 `json:"value,omitempty"`
}

// AppendIOFuncStatJSON appends -z io,stat with functions as a JSON array,
// one object per interval.
func AppendIOFuncStatJSON(buf []byte, s *decode.IOFuncStat) []byte {
	rows, _ := s.Rows()
	out := []ioRowJSON{}
	for _, r := range rows {
		j := ioRowJSON{Start: r.Start.Seconds()}
		for c, col := range s.Columns {
			cj := ioColJSON{Column: col.Title, Frames: r.Frames[c], Bytes: r.Bytes[c]}
			if col.Func != decode.IOFrames {
				v := r.Values[c]
				cj.Value = &v
			}
			j.Columns = append(j.Columns, cj)
		}
		out = append(out, j)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
