package output

import (
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
)

func nvmeSRTUs(header, key string, get func(*decode.NVMeSRTRow) time.Duration) Column[*decode.NVMeSRTRow] {
	return Column[*decode.NVMeSRTRow]{Header: header, Key: key, Width: 10, Align: AlignRight,
		Value: func(r **decode.NVMeSRTRow) any { return micros(get(*r)) },
		Text:  func(r **decode.NVMeSRTRow) string { return strconv.FormatFloat(micros(get(*r)), 'f', 3, 64) }}
}

func nvmeQuantile(q float64) func(*decode.NVMeSRTRow) time.Duration {
	return func(r *decode.NVMeSRTRow) time.Duration { return r.Quantile(q) }
}

// NVMeSRTTable is -z nvme,srt: per queue kind and command, the service
// response time (command capsule to response capsule) in microseconds,
// with exact percentiles (nearest rank).
var NVMeSRTTable = &Table[*decode.NVMeSRTRow]{
	Title: "NVMe-oF service response time (microseconds)",
	Columns: []Column[*decode.NVMeSRTRow]{
		{Header: "Queue", Key: "queue", Width: 6, Value: func(r **decode.NVMeSRTRow) any { return (*r).Queue }},
		{Header: "Opcode", Key: "opcode", Width: 6, Align: AlignRight, Value: func(r **decode.NVMeSRTRow) any { return int((*r).Opcode) },
			Text: func(r **decode.NVMeSRTRow) string { return "0x" + strconv.FormatUint(uint64((*r).Opcode), 16) }},
		{Header: "Command", Key: "command", Width: 26, Value: func(r **decode.NVMeSRTRow) any { return (*r).Command }},
		{Header: "Count", Key: "count", Width: 7, Align: AlignRight, Value: func(r **decode.NVMeSRTRow) any { return (*r).Count() }},
		{Header: "Errors", Key: "errors", Width: 6, Align: AlignRight, Value: func(r **decode.NVMeSRTRow) any { return (*r).Errors }},
		nvmeSRTUs("Min", "min_us", (*decode.NVMeSRTRow).Min),
		nvmeSRTUs("Avg", "avg_us", (*decode.NVMeSRTRow).Mean),
		nvmeSRTUs("P50", "p50_us", nvmeQuantile(0.5)),
		nvmeSRTUs("P90", "p90_us", nvmeQuantile(0.9)),
		nvmeSRTUs("P99", "p99_us", nvmeQuantile(0.99)),
		nvmeSRTUs("Max", "max_us", (*decode.NVMeSRTRow).Max),
	},
}

// WriteNVMeSRT writes -z nvme,srt.
func WriteNVMeSRT(w io.Writer, rows []*decode.NVMeSRTRow, filter string) error {
	return NVMeSRTTable.WriteText(w, rows, filter)
}

// AppendNVMeSRTJSON appends -z nvme,srt as a JSON array.
func AppendNVMeSRTJSON(buf []byte, rows []*decode.NVMeSRTRow) []byte {
	return NVMeSRTTable.AppendJSON(buf, rows)
}
