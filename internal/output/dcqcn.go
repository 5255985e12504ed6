package output

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// DCQCNReport is -z dcqcn: the congestion picture of every direction the
// rate analysis followed.
type DCQCNReport struct {
	Rows []decode.DCQCNRow
}

// mbps is bits per second in Mb/s, to the b/s (what a rate measured
// from nanosecond gaps can tell).
func mbps(bps float64) float64 { return math.Round(bps) / 1e6 }

func fixed(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

func flowName(r *decode.DCQCNRow) string { return r.Flow.String() }

// reactionRange is the least and greatest reaction time, ok false with none.
func reactionRange(r *decode.DCQCNRow) (lo, hi time.Duration, ok bool) {
	for i, x := range r.Reactions {
		if i == 0 || x.Reaction < lo {
			lo = x.Reaction
		}
		hi = max(hi, x.Reaction)
	}
	return lo, hi, len(r.Reactions) > 0
}

func dcqcnCount(header, key string, width int, get func(r *decode.DCQCNRow) uint64) Column[decode.DCQCNRow] {
	return Column[decode.DCQCNRow]{Header: header, Key: key, Width: width, Align: AlignRight, Value: func(r *decode.DCQCNRow) any { return get(r) }}
}

type dcqcnReactionJSON struct {
	CNPFrame      uint32  `json:"cnp_frame"`
	CNPUs         float64 `json:"cnp_us"`
	SlowFrame     uint32  `json:"slow_frame"`
	ReactionUs    float64 `json:"reaction_us"`
	RateBeforeMbs float64 `json:"rate_before_mbps"`
	RateAfterMbs  float64 `json:"rate_after_mbps"`
}

type dcqcnBinJSON struct {
	StartUs  float64 `json:"start_us"`
	Packets  uint32  `json:"packets"`
	CE       uint32  `json:"ce"`
	RateMbps float64 `json:"rate_mbps"`
}

// dcqcnTable is -z dcqcn's table.
var dcqcnTable = &Table[decode.DCQCNRow]{
	Title: "DCQCN per direction (ECN codepoints, CNPs to its QP, the sender's reactions; times in microseconds)",
	Columns: []Column[decode.DCQCNRow]{
		{Header: "Flow", Key: "flow", Width: 44, Value: func(r *decode.DCQCNRow) any { return flowName(r) }},
		{Header: "Prio", Key: "priority", Width: 4, Align: AlignRight, Value: func(r *decode.DCQCNRow) any {
			if r.Priority < 0 {
				return nil
			}
			return r.Priority
		}, Text: func(r *decode.DCQCNRow) string {
			if r.Priority < 0 {
				return "-"
			}
			return strconv.Itoa(r.Priority)
		}},
		dcqcnCount("Pkts", "packets", 6, func(r *decode.DCQCNRow) uint64 { return r.Packets }),
		dcqcnCount("NotECT", "not_ect", 6, func(r *decode.DCQCNRow) uint64 { return r.ECN[decode.ECNNotECT] }),
		dcqcnCount("ECT0", "ect0", 6, func(r *decode.DCQCNRow) uint64 { return r.ECN[decode.ECNECT0] }),
		dcqcnCount("ECT1", "ect1", 4, func(r *decode.DCQCNRow) uint64 { return r.ECN[decode.ECNECT1] }),
		dcqcnCount("CE", "ce", 5, func(r *decode.DCQCNRow) uint64 { return r.ECN[decode.ECNCE] }),
		{Header: "CE%", Key: "ce_ratio", Width: 6, Align: AlignRight, Value: func(r *decode.DCQCNRow) any { return r.CERatio() },
			Text: func(r *decode.DCQCNRow) string { return pct(r.CERatio()) }},
		dcqcnCount("CNPs", "cnps", 4, func(r *decode.DCQCNRow) uint64 { return r.CNPs }),
		{Header: "CNP/ms", Key: "cnps_per_second", Width: 6, Align: AlignRight, Value: func(r *decode.DCQCNRow) any { return r.CNPRate() },
			Text: func(r *decode.DCQCNRow) string { return fixed(r.CNPRate()/1000, 2) }},
		{Header: "MinGap", Key: "min_cnp_spacing_us", Width: 8, Align: AlignRight, Value: func(r *decode.DCQCNRow) any {
			if r.CNPs < 2 {
				return nil
			}
			return micros(r.MinCNPSpacing)
		}, Text: func(r *decode.DCQCNRow) string {
			if r.CNPs < 2 {
				return "-"
			}
			return fixed(micros(r.MinCNPSpacing), 3)
		}},
		dcqcnCount("Cuts", "cuts", 4, func(r *decode.DCQCNRow) uint64 { return uint64(len(r.Reactions)) }),
		{Header: "React", Key: "reaction_range_us", Width: 13, Align: AlignRight, Value: func(r *decode.DCQCNRow) any {
			lo, hi, ok := reactionRange(r)
			if !ok {
				return nil
			}
			return []float64{micros(lo), micros(hi)}
		}, Text: func(r *decode.DCQCNRow) string {
			lo, hi, ok := reactionRange(r)
			if !ok {
				return "-"
			}
			return fixed(micros(lo), 3) + "-" + fixed(micros(hi), 3)
		}},
		dcqcnCount("NoCut", "no_reaction", 5, func(r *decode.DCQCNRow) uint64 { return r.NoReaction }),
		{Header: "Victim", Key: "victim", Width: 6, Value: func(r *decode.DCQCNRow) any { return r.Victim },
			Text: func(r *decode.DCQCNRow) string {
				if r.Victim {
					return "yes"
				}
				return "no"
			}},
		{Key: "conv_id", Value: func(r *decode.DCQCNRow) any { return r.Conv }},
		{Key: "dscp", Value: func(r *decode.DCQCNRow) any {
			if r.DSCP < 0 {
				return nil
			}
			return r.DSCP
		}},
		{Key: "victim_frame", Value: func(r *decode.DCQCNRow) any { return r.VictimFrame }},
		{Key: "since_us", Value: func(r *decode.DCQCNRow) any { return micros(r.Since) }},
		{Key: "interval_us", Value: func(r *decode.DCQCNRow) any { return micros(r.Interval) }},
		{Key: "reactions", Value: func(r *decode.DCQCNRow) any {
			out := make([]dcqcnReactionJSON, 0, len(r.Reactions))
			for _, x := range r.Reactions {
				out = append(out, dcqcnReactionJSON{x.CNPFrame, micros(x.CNPAt), x.SlowFrame, micros(x.Reaction), mbps(x.RateBefore), mbps(x.RateAfter)})
			}
			return out
		}},
		{Key: "intervals", Value: func(r *decode.DCQCNRow) any {
			out := make([]dcqcnBinJSON, 0, len(r.Bins))
			for _, b := range r.Bins {
				out = append(out, dcqcnBinJSON{micros(b.Start), b.Packets, b.CE, mbps(b.Rate(r.Interval))})
			}
			return out
		}},
	},
}

// WriteDCQCN writes -z dcqcn: the table, then for each direction its
// sending rate and CE ratio per interval, each CNP's reaction and whether
// it is a victim.
func WriteDCQCN(w io.Writer, rep *DCQCNReport, filter string) error {
	var b strings.Builder
	if len(rep.Rows) == 0 {
		b.WriteString("No ECN CE mark, FECN or CNP in the capture: no congestion to follow.\n")
	} else {
		fmt.Fprintf(&b, "Followed from %.3f us (the first congestion mark or CNP); traffic before it is spread over its intervals.\n", micros(rep.Rows[0].Since))
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		fmt.Fprintf(&b, "%s: Mb/s (CE%%) per %v from %.0f us:", flowName(r), r.Interval, micros(firstStart(r)))
		for _, bin := range r.Bins {
			fmt.Fprintf(&b, " %s", fixed(mbps(bin.Rate(r.Interval)), 1))
			if bin.CE > 0 {
				fmt.Fprintf(&b, " (%s)", fixed(100*bin.CERatio(), 1))
			}
		}
		b.WriteByte('\n')
		for _, x := range r.Reactions {
			fmt.Fprintf(&b, "  CNP frame %d at %.3f us: slower from frame %d, %.3f us later, %s -> %s Mb/s\n",
				x.CNPFrame, micros(x.CNPAt), x.SlowFrame, micros(x.Reaction), fixed(mbps(x.RateBefore), 1), fixed(mbps(x.RateAfter), 1))
		}
		if r.Victim {
			fmt.Fprintf(&b, "  Victim: under half its earlier rate from frame %d with no CE mark or CNP of its own (PFC or a shared queue held it back)\n", r.VictimFrame)
		}
	}
	return dcqcnTable.writeText(w, rep.Rows, filter, b.String())
}

func firstStart(r *decode.DCQCNRow) time.Duration {
	if len(r.Bins) == 0 {
		return 0
	}
	return r.Bins[0].Start
}

// AppendDCQCNJSON appends -z dcqcn as JSON: one object per direction.
func AppendDCQCNJSON(buf []byte, rep *DCQCNReport) []byte {
	buf = append(buf, `{"dcqcn": {"rows": `...)
	buf = dcqcnTable.AppendJSON(buf, rep.Rows)
	buf = buf[:len(buf)-1] // the table's newline
	return append(buf, "}}\n"...)
}
