package output

import (
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

func iscsiSRTUs(header, key string, get func(*decode.ISCSISRTRow) time.Duration) Column[*decode.ISCSISRTRow] {
	return Column[*decode.ISCSISRTRow]{Header: header, Key: key, Width: 10, Align: AlignRight,
		Value: func(r **decode.ISCSISRTRow) any { return micros(get(*r)) },
		Text:  func(r **decode.ISCSISRTRow) string { return strconv.FormatFloat(micros(get(*r)), 'f', 3, 64) }}
}

// ISCSISRTTable is -z iscsi,srt (also -z iser,srt): per iSCSI opcode, and
// per CDB operation code for SCSI commands, the service response time
// (request to response) of every request answered.
var ISCSISRTTable = &Table[*decode.ISCSISRTRow]{
	Title: "iSCSI service response time (microseconds)",
	Columns: []Column[*decode.ISCSISRTRow]{
		{Header: "Opcode", Key: "opcode", Width: 6, Align: AlignRight, Value: func(r **decode.ISCSISRTRow) any { return int((*r).Opcode) },
			Text: func(r **decode.ISCSISRTRow) string { return "0x" + strconv.FormatUint(uint64((*r).Opcode), 16) }},
		{Header: "CDB", Key: "cdb_opcode", Width: 4, Align: AlignRight, Value: func(r **decode.ISCSISRTRow) any { return int((*r).CDBOpcode) },
			Text: func(r **decode.ISCSISRTRow) string {
				if (*r).Opcode != layers.ISCSISCSICommand {
					return "-"
				}
				return "0x" + strconv.FormatUint(uint64((*r).CDBOpcode), 16)
			}},
		{Header: "Command", Key: "command", Width: 24, Value: func(r **decode.ISCSISRTRow) any { return (*r).Command }},
		{Header: "Count", Key: "count", Width: 6, Align: AlignRight, Value: func(r **decode.ISCSISRTRow) any { return (*r).Count() }},
		{Header: "Errors", Key: "errors", Width: 6, Align: AlignRight, Value: func(r **decode.ISCSISRTRow) any { return (*r).Errors }},
		iscsiSRTUs("Min", "min_us", (*decode.ISCSISRTRow).Min),
		iscsiSRTUs("Avg", "avg_us", (*decode.ISCSISRTRow).Mean),
		iscsiSRTUs("P50", "p50_us", func(r *decode.ISCSISRTRow) time.Duration { return r.Quantile(0.5) }),
		iscsiSRTUs("P90", "p90_us", func(r *decode.ISCSISRTRow) time.Duration { return r.Quantile(0.9) }),
		iscsiSRTUs("P99", "p99_us", func(r *decode.ISCSISRTRow) time.Duration { return r.Quantile(0.99) }),
		iscsiSRTUs("Max", "max_us", (*decode.ISCSISRTRow).Max),
	},
}

// WriteISCSISRT writes -z iscsi,srt.
func WriteISCSISRT(w io.Writer, rows []*decode.ISCSISRTRow, filter string) error {
	return ISCSISRTTable.WriteText(w, rows, filter)
}

// AppendISCSISRTJSON appends -z iscsi,srt as a JSON array.
func AppendISCSISRTJSON(buf []byte, rows []*decode.ISCSISRTRow) []byte {
	return ISCSISRTTable.AppendJSON(buf, rows)
}
