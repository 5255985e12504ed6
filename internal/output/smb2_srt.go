package output

import (
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
)

func smb2SRTUs(header, key string, get func(*decode.SMB2SRTRow) time.Duration) Column[*decode.SMB2SRTRow] {
	return Column[*decode.SMB2SRTRow]{Header: header, Key: key, Width: 10, Align: AlignRight,
		Value: func(r **decode.SMB2SRTRow) any { return micros(get(*r)) },
		Text:  func(r **decode.SMB2SRTRow) string { return strconv.FormatFloat(micros(get(*r)), 'f', 3, 64) }}
}

func smb2Quantile(q float64) func(*decode.SMB2SRTRow) time.Duration {
	return func(r *decode.SMB2SRTRow) time.Duration { return r.Quantile(q) }
}

// SMB2SRTTable is -z smb2,srt: per SMB2 command carried by SMB Direct, the
// service response time (request to final response) of every request
// answered.
var SMB2SRTTable = &Table[*decode.SMB2SRTRow]{
	Title: "SMB2 over SMB Direct service response time (microseconds)",
	Columns: []Column[*decode.SMB2SRTRow]{
		{Header: "Cmd", Key: "command_code", Width: 3, Align: AlignRight, Value: func(r **decode.SMB2SRTRow) any { return int((*r).Command) }},
		{Header: "Command", Key: "command", Width: 16, Value: func(r **decode.SMB2SRTRow) any { return (*r).Command.String() }},
		{Header: "Calls", Key: "count", Width: 6, Align: AlignRight, Value: func(r **decode.SMB2SRTRow) any { return (*r).Count() }},
		{Header: "Errors", Key: "errors", Width: 6, Align: AlignRight, Value: func(r **decode.SMB2SRTRow) any { return (*r).Errors }},
		smb2SRTUs("Min", "min_us", (*decode.SMB2SRTRow).Min),
		smb2SRTUs("Avg", "avg_us", (*decode.SMB2SRTRow).Mean),
		smb2SRTUs("P50", "p50_us", smb2Quantile(0.5)),
		smb2SRTUs("P90", "p90_us", smb2Quantile(0.9)),
		smb2SRTUs("P99", "p99_us", smb2Quantile(0.99)),
		smb2SRTUs("Max", "max_us", (*decode.SMB2SRTRow).Max),
	},
}

// WriteSMB2SRT writes -z smb2,srt.
func WriteSMB2SRT(w io.Writer, rows []*decode.SMB2SRTRow, filter string) error {
	return SMB2SRTTable.WriteText(w, rows, filter)
}

// AppendSMB2SRTJSON appends -z smb2,srt as a JSON array.
func AppendSMB2SRTJSON(buf []byte, rows []*decode.SMB2SRTRow) []byte {
	return SMB2SRTTable.AppendJSON(buf, rows)
}
