package output

import (
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
)

func rpcSRTUs(header, key string, get func(*decode.RPCSRTRow) time.Duration) Column[*decode.RPCSRTRow] {
	return Column[*decode.RPCSRTRow]{Header: header, Key: key, Width: 10, Align: AlignRight,
		Value: func(r **decode.RPCSRTRow) any { return micros(get(*r)) },
		Text:  func(r **decode.RPCSRTRow) string { return strconv.FormatFloat(micros(get(*r)), 'f', 3, 64) }}
}

func rpcQuantile(q float64) func(*decode.RPCSRTRow) time.Duration {
	return func(r *decode.RPCSRTRow) time.Duration { return r.Quantile(q) }
}

// RPCSRTTable is -z rpc,srt: per program, version and procedure, the
// service response time (call to reply) of every RPC call answered.
var RPCSRTTable = &Table[*decode.RPCSRTRow]{
	Title: "RPC service response time (microseconds)",
	Columns: []Column[*decode.RPCSRTRow]{
		{Header: "Program", Key: "program", Width: 8, Align: AlignRight, Value: func(r **decode.RPCSRTRow) any { return int((*r).Program) }},
		{Header: "Vers", Key: "version", Width: 4, Align: AlignRight, Value: func(r **decode.RPCSRTRow) any { return int((*r).Version) }},
		{Header: "Proc", Key: "procedure", Width: 4, Align: AlignRight, Value: func(r **decode.RPCSRTRow) any { return int((*r).Procedure) }},
		{Header: "Name", Key: "name", Width: 22, Value: func(r **decode.RPCSRTRow) any { return (*r).Name }},
		{Header: "Calls", Key: "count", Width: 6, Align: AlignRight, Value: func(r **decode.RPCSRTRow) any { return (*r).Count() }},
		{Header: "Errors", Key: "errors", Width: 6, Align: AlignRight, Value: func(r **decode.RPCSRTRow) any { return (*r).Errors }},
		rpcSRTUs("Min", "min_us", (*decode.RPCSRTRow).Min),
		rpcSRTUs("Avg", "avg_us", (*decode.RPCSRTRow).Mean),
		rpcSRTUs("P50", "p50_us", rpcQuantile(0.5)),
		rpcSRTUs("P90", "p90_us", rpcQuantile(0.9)),
		rpcSRTUs("P99", "p99_us", rpcQuantile(0.99)),
		rpcSRTUs("Max", "max_us", (*decode.RPCSRTRow).Max),
	},
}

// WriteRPCSRT writes -z rpc,srt.
func WriteRPCSRT(w io.Writer, rows []*decode.RPCSRTRow, filter string) error {
	return RPCSRTTable.WriteText(w, rows, filter)
}

// AppendRPCSRTJSON appends -z rpc,srt as a JSON array.
func AppendRPCSRTJSON(buf []byte, rows []*decode.RPCSRTRow) []byte {
	return RPCSRTTable.AppendJSON(buf, rows)
}
