package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// WriteLatency writes -z latency: per operation, the request-to-response
// latency distribution in microseconds.
func WriteLatency(w io.Writer, rows []decode.LatencyRow, filter string) error {
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nRDMA request latency (microseconds)\nFilter:%s\n", ruler80, filter)
	fmt.Fprintf(&b, "%-14s %8s %10s %10s %10s %10s %10s %10s\n", "Operation", "Count", "Min", "P50", "P90", "P99", "Max", "Mean")
	for _, r := range rows {
		h := r.Histogram
		fmt.Fprintf(&b, "%-14s %8d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", r.Name, h.Count(), micros(h.Min()),
			micros(h.Quantile(0.5)), micros(h.Quantile(0.9)), micros(h.Quantile(0.99)), micros(h.Max()), micros(h.Mean()))
	}
	b.WriteString(ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type latencyRowJSON struct {
	Operation string  `json:"operation"`
	Count     uint64  `json:"count"`
	Min       float64 `json:"min_us"`
	P50       float64 `json:"p50_us"`
	P90       float64 `json:"p90_us"`
	P99       float64 `json:"p99_us"`
	Max       float64 `json:"max_us"`
	Mean      float64 `json:"mean_us"`
}

// AppendLatencyJSON appends -z latency as a JSON array.
func AppendLatencyJSON(buf []byte, rows []decode.LatencyRow) []byte {
	out := []latencyRowJSON{}
	for _, r := range rows {
		h := r.Histogram
		out = append(out, latencyRowJSON{r.Name, h.Count(), micros(h.Min()), micros(h.Quantile(0.5)), micros(h.Quantile(0.9)),
			micros(h.Quantile(0.99)), micros(h.Max()), micros(h.Mean())})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
