package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// PFCReport is -z pfc: the pause timeline of every port and priority, with
// what it needs to print (the link speed, the capture's length).
type PFCReport struct {
	Rows     []decode.PFCRow
	Captured time.Duration // first to last frame
	Opts     decode.PFCOptions
}

// pfcRow is one row of the table: the timeline and the capture's length.
type pfcRow struct {
	*decode.PFCRow
	captured time.Duration
}

func (r *pfcRow) known() bool { return r.DurationsKnown }

// usOrNull is a duration in microseconds for JSON, nil (null) when unknown.
func (r *pfcRow) usOrNull(d time.Duration) any {
	if !r.known() {
		return nil
	}
	return micros(d)
}

func (r *pfcRow) usText(d time.Duration) string {
	if !r.known() {
		return "?"
	}
	return strconv.FormatFloat(micros(d), 'f', 3, 64)
}

// maxPerSecond is the most paused second's share.
func (r *pfcRow) maxPerSecond() float64 {
	var m time.Duration
	for _, d := range r.PerSecond {
		m = max(m, d)
	}
	return float64(m) / float64(time.Second)
}

func (r *pfcRow) violations(inFlight bool) int {
	n := 0
	for _, v := range r.Violations {
		if v.InFlight == inFlight {
			n++
		}
	}
	return n
}

func prioName(p int) string {
	if p == decode.PFCAll {
		return "all"
	}
	return strconv.Itoa(p)
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) }

type pfcIntervalJSON struct {
	StartUs    float64 `json:"start_us"`
	EndUs      float64 `json:"end_us"`
	StartFrame uint32  `json:"start_frame"`
	EndFrame   uint32  `json:"end_frame"`
	Refreshes  int     `json:"refreshes"`
	Cut        bool    `json:"cut_by_capture_end"`
}

type pfcStormJSON struct {
	StartUs  float64 `json:"window_start_us"`
	PausedUs float64 `json:"paused_us"`
	Percent  float64 `json:"percent"`
}

type pfcViolationJSON struct {
	Frame      uint32  `json:"frame"`
	PauseFrame uint32  `json:"pause_frame"`
	AfterUs    float64 `json:"after_us"`
	InFlight   bool    `json:"in_flight"`
}

func pfcCount(header, key string, width int, get func(r *pfcRow) uint64) Column[pfcRow] {
	return Column[pfcRow]{Header: header, Key: key, Width: width, Align: AlignRight, Value: func(r *pfcRow) any { return get(r) }}
}

func pfcUs(header, key string, get func(r *pfcRow) time.Duration) Column[pfcRow] {
	return Column[pfcRow]{Header: header, Key: key, Width: 12, Align: AlignRight,
		Value: func(r *pfcRow) any { return r.usOrNull(get(r)) },
		Text:  func(r *pfcRow) string { return r.usText(get(r)) }}
}

// pfcTable is -z pfc's table.
var pfcTable = &Table[pfcRow]{
	Title: "PFC pause timeline (per pausing port and priority; times in microseconds)",
	Columns: []Column[pfcRow]{
		{Header: "Port (pause source)", Key: "port", Width: 19, Value: func(r *pfcRow) any { return macString(r.Port[:]) }},
		{Header: "Prio", Key: "priority", Width: 4, Align: AlignRight, Value: func(r *pfcRow) any { return prioName(r.Priority) }},
		pfcCount("Frames", "frames", 6, func(r *pfcRow) uint64 { return r.Frames }),
		pfcCount("Refresh", "refreshes", 7, func(r *pfcRow) uint64 { return r.Refreshes }),
		pfcCount("Resume", "resumes", 6, func(r *pfcRow) uint64 { return r.Resumes }),
		pfcCount("MaxQ", "max_quanta", 5, func(r *pfcRow) uint64 { return uint64(r.MaxQuanta) }),
		{Header: "Pauses", Key: "pauses", Width: 6, Align: AlignRight,
			Value: func(r *pfcRow) any {
				if !r.known() {
					return nil
				}
				return len(r.Intervals)
			},
			Text: func(r *pfcRow) string {
				if !r.known() {
					return "?"
				}
				return strconv.Itoa(len(r.Intervals))
			}},
		pfcUs("Paused", "paused_us", func(r *pfcRow) time.Duration { return r.Total }),
		pfcUs("Longest", "longest_us", func(r *pfcRow) time.Duration { return r.Longest }),
		{Header: "Paused%", Key: "paused_fraction", Width: 7, Align: AlignRight,
			Value: func(r *pfcRow) any {
				if !r.known() {
					return nil
				}
				return r.PausedFraction(r.captured)
			},
			Text: func(r *pfcRow) string {
				if !r.known() {
					return "?"
				}
				return pct(r.PausedFraction(r.captured))
			}},
		{Header: "Max%/s", Key: "max_paused_fraction_per_second", Width: 6, Align: AlignRight,
			Value: func(r *pfcRow) any {
				if !r.known() {
					return nil
				}
				return r.maxPerSecond()
			},
			Text: func(r *pfcRow) string {
				if !r.known() {
					return "?"
				}
				return pct(r.maxPerSecond())
			}},
		pfcCount("Storms", "storm_windows", 6, func(r *pfcRow) uint64 { return uint64(len(r.Storms)) }),
		pfcCount("Sent", "sent_while_paused", 4, func(r *pfcRow) uint64 { return uint64(r.violations(false)) }),
		pfcCount("InFlt", "in_flight", 5, func(r *pfcRow) uint64 { return uint64(r.violations(true)) }),
		{Key: "paused_us_per_second", Value: func(r *pfcRow) any {
			if !r.known() {
				return nil
			}
			out := make([]float64, len(r.PerSecond))
			for i, d := range r.PerSecond {
				out[i] = micros(d)
			}
			return out
		}},
		{Key: "intervals", Value: func(r *pfcRow) any {
			out := make([]pfcIntervalJSON, 0, len(r.Intervals))
			for _, iv := range r.Intervals {
				out = append(out, pfcIntervalJSON{micros(iv.Start), micros(iv.End), iv.StartFrame, iv.EndFrame, iv.Refreshes, iv.CutByCaptureEnding})
			}
			return out
		}},
		{Key: "storms", Value: func(r *pfcRow) any {
			out := make([]pfcStormJSON, 0, len(r.Storms))
			for _, s := range r.Storms {
				out = append(out, pfcStormJSON{micros(s.Start), micros(s.Paused), s.Percent})
			}
			return out
		}},
		{Key: "violations", Value: func(r *pfcRow) any {
			out := make([]pfcViolationJSON, 0, len(r.Violations))
			for _, v := range r.Violations {
				out = append(out, pfcViolationJSON{v.Frame, v.PauseFrame, micros(v.After), v.InFlight})
			}
			return out
		}},
	},
}

func macString(b []byte) string { return string(appendMAC(nil, b)) }

func (rep *PFCReport) rows() []pfcRow {
	out := make([]pfcRow, len(rep.Rows))
	for i := range rep.Rows {
		out[i] = pfcRow{&rep.Rows[i], rep.Captured}
	}
	return out
}

// WritePFC writes -z pfc: the table, then what its numbers rest on (the
// link speed, or that durations are unknown), each storm window and each
// RoCE packet sent on a paused priority.
func WritePFC(w io.Writer, rep *PFCReport, filter string) error {
	var b strings.Builder
	o := rep.Opts
	if o.LinkSpeed == 0 {
		b.WriteString("Durations unknown (quanta only): no --link-speed and no pcapng if_speed.\n")
	} else {
		fmt.Fprintf(&b, "Link speed %s: a quantum (512 bit times) is %s ns; capture %.3f us. Storm: paused > %s%% of a %v window.\n",
			speedName(o.LinkSpeed), strconv.FormatFloat(o.QuantumNanos(), 'f', -1, 64), micros(rep.Captured),
			strconv.FormatFloat(o.StormPercent, 'f', -1, 64), o.StormWindow)
	}
	for _, r := range rep.Rows {
		port := macString(r.Port[:])
		for _, s := range r.Storms {
			fmt.Fprintf(&b, "Storm: %s priority %s paused %.3f us of the window at %.3f us (%.1f%%)\n",
				port, prioName(r.Priority), micros(s.Paused), micros(s.Start), s.Percent)
		}
		for _, v := range r.Violations {
			what := "sent on a paused priority: a PFC violation (unless the link's delay exceeds it: a capture point near the pausing port sees the pause first)"
			if v.InFlight {
				what = "within a frame time of the pause: in flight, or seen by the capture point before the sender saw the pause (cannot be told apart)"
			}
			fmt.Fprintf(&b, "Frame %d to %s priority %s, %.3f us after pause frame %d: %s\n",
				v.Frame, port, prioName(r.Priority), micros(v.After), v.PauseFrame, what)
		}
	}
	return pfcTable.writeText(w, rep.rows(), filter, b.String())
}

// AppendPFCJSON appends -z pfc as JSON: the link speed (null when unknown),
// the capture's length and one object per port and priority.
func AppendPFCJSON(buf []byte, rep *PFCReport) []byte {
	buf = append(buf, `{"pfc": {"link_speed_bps": `...)
	if rep.Opts.LinkSpeed == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = strconv.AppendUint(buf, rep.Opts.LinkSpeed, 10)
	}
	buf = append(buf, `, "captured_us": `...)
	buf = appendJSONFloat(buf, micros(rep.Captured))
	buf = append(buf, `, "storm_window_us": `...)
	buf = appendJSONFloat(buf, micros(rep.Opts.StormWindow))
	buf = append(buf, `, "storm_percent": `...)
	buf = appendJSONFloat(buf, rep.Opts.StormPercent)
	buf = append(buf, `, "rows": `...)
	buf = pfcTable.AppendJSON(buf, rep.rows())
	buf = buf[:len(buf)-1] // the table's newline
	return append(buf, "}}\n"...)
}

func speedName(bps uint64) string {
	if bps%1e9 == 0 {
		return strconv.FormatUint(bps/1e9, 10) + "G"
	}
	return strconv.FormatUint(bps, 10) + " b/s"
}
