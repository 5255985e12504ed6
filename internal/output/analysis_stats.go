package output

import (
	"fmt"
	"io"
	"strconv"

	"github.com/ibwire/ibwire/decode"
)

// OpcodeShare is a row of -z opcodes: an opcode's counts and the packet
// total they are a share of.
type OpcodeShare struct {
	decode.OpcodeRow
	Total uint64
}

func opcodeCount(header, key string, width int, get func(*OpcodeShare) uint64) Column[OpcodeShare] {
	return Column[OpcodeShare]{Header: header, Key: key, Width: width, Align: AlignRight,
		Value: func(r *OpcodeShare) any { return get(r) }}
}

// OpcodesTable is -z opcodes: packets and bytes per BTH opcode.
var OpcodesTable = &Table[OpcodeShare]{
	Title: "InfiniBand opcodes",
	Columns: []Column[OpcodeShare]{
		{Header: "Opcode", Key: "opcode", Width: 6, Value: func(r *OpcodeShare) any { return uint8(r.Opcode) },
			Text: func(r *OpcodeShare) string { return fmt.Sprintf("0x%02x", uint8(r.Opcode)) }},
		{Header: "Name", Key: "name", Width: 36, Value: func(r *OpcodeShare) any { return r.Opcode.String() }},
		opcodeCount("Packets", "packets", 10, func(r *OpcodeShare) uint64 { return r.Packets }),
		opcodeCount("Bytes", "bytes", 14, func(r *OpcodeShare) uint64 { return r.Bytes }),
		{Header: "Percent", Width: 8, Align: AlignRight, Value: func(r *OpcodeShare) any { return r.percent() },
			Text: func(r *OpcodeShare) string { return strconv.FormatFloat(r.percent(), 'f', 2, 64) + "%" }},
	},
}

func (r *OpcodeShare) percent() float64 {
	if r.Total == 0 {
		return 0
	}
	return 100 * float64(r.Packets) / float64(r.Total)
}

func opcodeShares(rows []decode.OpcodeRow, total uint64) []OpcodeShare {
	out := make([]OpcodeShare, len(rows))
	for i, r := range rows {
		out[i] = OpcodeShare{r, total}
	}
	return out
}

// WriteOpcodes writes -z opcodes, and the packet total under the rows.
func WriteOpcodes(w io.Writer, rows []decode.OpcodeRow, total uint64, filter string) error {
	return OpcodesTable.writeText(w, opcodeShares(rows, total), filter, fmt.Sprintf("%-43s %10d\n", "Total", total))
}

// AppendOpcodesJSON appends -z opcodes as a JSON array.
func AppendOpcodesJSON(buf []byte, rows []decode.OpcodeRow) []byte {
	return OpcodesTable.AppendJSON(buf, opcodeShares(rows, 0))
}

func endpointCount(header, key string, width int, get func(*decode.EndpointRow) uint64) Column[decode.EndpointRow] {
	return Column[decode.EndpointRow]{Header: header, Key: key, Width: width, Align: AlignRight,
		Value: func(r *decode.EndpointRow) any { return get(r) }}
}

// EndpointsTable is -z endpoints,gid: per address, packets and bytes sent
// and received, QPs, CNPs.
var EndpointsTable = &Table[decode.EndpointRow]{
	Title: "InfiniBand endpoints (IP, GID or LID)",
	Columns: []Column[decode.EndpointRow]{
		{Header: "Endpoint", Key: "endpoint", Width: 40, Value: func(r *decode.EndpointRow) any { return r.Endpoint.String() }},
		endpointCount("Tx Frames", "tx_packets", 9, func(r *decode.EndpointRow) uint64 { return r.TxPackets }),
		endpointCount("Tx Bytes", "tx_bytes", 14, func(r *decode.EndpointRow) uint64 { return r.TxBytes }),
		endpointCount("Rx Frames", "rx_packets", 9, func(r *decode.EndpointRow) uint64 { return r.RxPackets }),
		endpointCount("Rx Bytes", "rx_bytes", 14, func(r *decode.EndpointRow) uint64 { return r.RxBytes }),
		{Header: "QPs", Key: "qps", Width: 5, Align: AlignRight, Value: func(r *decode.EndpointRow) any { return r.QPs }},
		endpointCount("CNPs sent", "cnps_sent", 9, func(r *decode.EndpointRow) uint64 { return r.CNPsSent }),
		endpointCount("CNPs rcvd", "cnps_received", 9, func(r *decode.EndpointRow) uint64 { return r.CNPsRecv }),
	},
}

// WriteEndpoints writes -z endpoints,gid.
func WriteEndpoints(w io.Writer, rows []decode.EndpointRow, filter string) error {
	return EndpointsTable.WriteText(w, rows, filter)
}

// AppendEndpointsJSON appends -z endpoints,gid as a JSON array.
func AppendEndpointsJSON(buf []byte, rows []decode.EndpointRow) []byte {
	return EndpointsTable.AppendJSON(buf, rows)
}
