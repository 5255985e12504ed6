package output

import (
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// latencyUs is a column of -z latency in microseconds.
func latencyUs(header, key string, get func(*decode.Histogram) time.Duration) Column[decode.LatencyRow] {
	return Column[decode.LatencyRow]{Header: header, Key: key, Width: 10, Align: AlignRight,
		Value: func(r *decode.LatencyRow) any { return micros(get(r.Histogram)) },
		Text:  func(r *decode.LatencyRow) string { return strconv.FormatFloat(micros(get(r.Histogram)), 'f', 3, 64) }}
}

func quantile(q float64) func(*decode.Histogram) time.Duration {
	return func(h *decode.Histogram) time.Duration { return h.Quantile(q) }
}

// LatencyTable is -z latency: per operation, the request-to-response
// latency distribution in microseconds.
var LatencyTable = &Table[decode.LatencyRow]{
	Title: "RDMA request latency (microseconds)",
	Columns: []Column[decode.LatencyRow]{
		{Header: "Operation", Key: "operation", Width: 14, Value: func(r *decode.LatencyRow) any { return r.Name }},
		{Header: "Count", Key: "count", Width: 8, Align: AlignRight, Value: func(r *decode.LatencyRow) any { return r.Count() }},
		latencyUs("Min", "min_us", (*decode.Histogram).Min),
		latencyUs("P50", "p50_us", quantile(0.5)),
		latencyUs("P90", "p90_us", quantile(0.9)),
		latencyUs("P99", "p99_us", quantile(0.99)),
		latencyUs("Max", "max_us", (*decode.Histogram).Max),
		latencyUs("Mean", "mean_us", (*decode.Histogram).Mean),
	},
}

// WriteLatency writes -z latency.
func WriteLatency(w io.Writer, rows []decode.LatencyRow, filter string) error {
	return LatencyTable.WriteText(w, rows, filter)
}

// AppendLatencyJSON appends -z latency as a JSON array.
func AppendLatencyJSON(buf []byte, rows []decode.LatencyRow) []byte {
	return LatencyTable.AppendJSON(buf, rows)
}
