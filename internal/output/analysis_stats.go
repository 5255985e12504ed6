package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// WriteOpcodes writes -z opcodes: packets and bytes per BTH opcode.
func WriteOpcodes(w io.Writer, rows []decode.OpcodeRow, total uint64, filter string) error {
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nInfiniBand opcodes\nFilter:%s\n", ruler80, filter)
	fmt.Fprintf(&b, "%-6s %-36s %10s %14s %8s\n", "Opcode", "Name", "Packets", "Bytes", "Percent")
	for _, r := range rows {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(r.Packets) / float64(total)
		}
		fmt.Fprintf(&b, "0x%02x   %-36s %10d %14d %7.2f%%\n", uint8(r.Opcode), r.Opcode, r.Packets, r.Bytes, pct)
	}
	fmt.Fprintf(&b, "%-43s %10d\n%s\n", "Total", total, ruler80)
	_, err := io.WriteString(w, b.String())
	return err
}

type opcodeJSON struct {
	Opcode  uint8  `json:"opcode"`
	Name    string `json:"name"`
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// AppendOpcodesJSON appends -z opcodes as a JSON array.
func AppendOpcodesJSON(buf []byte, rows []decode.OpcodeRow) []byte {
	out := []opcodeJSON{}
	for _, r := range rows {
		out = append(out, opcodeJSON{uint8(r.Opcode), r.Opcode.String(), r.Packets, r.Bytes})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}

// WriteEndpoints writes -z endpoints,gid: per address, packets and bytes
// sent and received, QPs, CNPs.
func WriteEndpoints(w io.Writer, rows []decode.EndpointRow, filter string) error {
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nInfiniBand endpoints (IP, GID or LID)\nFilter:%s\n", ruler80, filter)
	fmt.Fprintf(&b, "%-40s %9s %14s %9s %14s %5s %9s %9s\n", "Endpoint", "Tx Frames", "Tx Bytes", "Rx Frames", "Rx Bytes", "QPs", "CNPs sent", "CNPs rcvd")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-40s %9d %14d %9d %14d %5d %9d %9d\n", r.Endpoint, r.TxPackets, r.TxBytes, r.RxPackets, r.RxBytes, r.QPs, r.CNPsSent, r.CNPsRecv)
	}
	b.WriteString(ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type endpointJSON struct {
	Endpoint  string `json:"endpoint"`
	TxPackets uint64 `json:"tx_packets"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	RxBytes   uint64 `json:"rx_bytes"`
	QPs       int    `json:"qps"`
	CNPsSent  uint64 `json:"cnps_sent"`
	CNPsRecv  uint64 `json:"cnps_received"`
}

// AppendEndpointsJSON appends -z endpoints,gid as a JSON array.
func AppendEndpointsJSON(buf []byte, rows []decode.EndpointRow) []byte {
	out := []endpointJSON{}
	for _, r := range rows {
		out = append(out, endpointJSON{r.Endpoint.String(), r.TxPackets, r.TxBytes, r.RxPackets, r.RxBytes, r.QPs, r.CNPsSent, r.CNPsRecv})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
