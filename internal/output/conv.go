package output

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// ruler80 frames the -z tables, as tshark frames its statistics.
const ruler80 = "================================================================================"

// WriteConversations writes -z conv,qp: one row per connection, its two
// directions paired, in the manner of tshark's conversation tables ("<-" is
// B to A, "->" is A to B).
func WriteConversations(w io.Writer, cs []decode.Conversation, filter string) error {
	return ConvTable.WriteText(w, cs, filter)
}

// Conv is a row of ConvTable.
type Conv = decode.Conversation

func convUint(header, name, key string, width int, sep string, get func(*Conv) uint64) Column[Conv] {
	return Column[Conv]{Header: header, Name: name, Key: key, Width: width, Align: AlignRight, Sep: sep,
		Value: func(c *Conv) any { return get(c) }}
}

func convBytes(name, key string, sep string, get func(*Conv) uint64) Column[Conv] {
	return Column[Conv]{Header: "Bytes", Name: name, Key: key, Width: 16, Align: AlignRight, Sep: sep,
		Value: func(c *Conv) any { return get(c) },
		Text:  func(c *Conv) string { return byteCount(get(c)) },
		Cell:  func(c *Conv) string { return strconv.FormatUint(get(c), 10) }}
}

func convSum(header, key string, width int, sep string, f func(*decode.DirStats) uint64) Column[Conv] {
	return convUint(header, "", key, width, sep, func(c *Conv) uint64 { return c.Sum(f) })
}

func convJSONOnly(key string, get func(*Conv) any) Column[Conv] {
	return Column[Conv]{Key: key, Value: get}
}

func convNAKs(c *Conv) any {
	naks := func(code layers.NAKCode) uint64 { return c.Dir[0].NAKs[code] + c.Dir[1].NAKs[code] }
	return nakJSON{naks(layers.NAKPSNSequenceError), naks(layers.NAKInvalidRequest), naks(layers.NAKRemoteAccessError),
		naks(layers.NAKRemoteOperationalError), naks(layers.NAKInvalidRDRequest)}
}

func convOps(c *Conv) any {
	ops := map[string]uint64{}
	for op := decode.OpClassSend; op < decode.NumOpClasses; op++ {
		if n := c.Dir[0].Ops[op] + c.Dir[1].Ops[op]; n > 0 {
			ops[op.String()] = n
		}
	}
	return ops
}

func qpnText(c *Conv) string {
	if !c.HasBA {
		return "-"
	}
	return fmt.Sprintf("0x%06x", c.QPNBA)
}

// ConvTable is -z conv,qp: its text, its JSON (the keys are a promise to
// scripts: change none) and ibtui's QP table.
var ConvTable = &Table[Conv]{
	Title: "QP Conversations",
	End:   " |",
	Columns: []Column[Conv]{
		{Header: "A", Key: "a", Width: 24, Value: func(c *Conv) any { return c.A.String() }},
		{Header: "B", Key: "b", Width: 24, Sep: " <-> ", Value: func(c *Conv) any { return c.B.String() }},
		{Header: "QPN A>B", Key: "qpn_ab", Width: 8, Value: func(c *Conv) any { return c.QPNAB },
			Text: func(c *Conv) string { return fmt.Sprintf("0x%06x", c.QPNAB) }},
		{Header: "QPN B>A", Key: "qpn_ba", Width: 8, Text: qpnText, Value: func(c *Conv) any {
			if !c.HasBA {
				return (*uint32)(nil)
			}
			qpn := c.QPNBA
			return &qpn
		}},
		{Header: "Svc", Key: "service", Width: 3, Value: func(c *Conv) any { return serviceName(c.Service) }},
		{Header: "Paired", Key: "paired_by", Width: 6, Value: func(c *Conv) any { return c.PairedBy.String() }},
		convUint("<- Frms", "", "packets_ba", 7, " | ", func(c *Conv) uint64 { return c.Dir[1].Packets }),
		convBytes("<- Bytes", "bytes_ba", "", func(c *Conv) uint64 { return c.Dir[1].Bytes }),
		convUint("-> Frms", "", "packets_ab", 7, " | ", func(c *Conv) uint64 { return c.Dir[0].Packets }),
		convBytes("-> Bytes", "bytes_ab", "", func(c *Conv) uint64 { return c.Dir[0].Bytes }),
		convUint("Frames", "", "", 7, " | ", func(c *Conv) uint64 { return c.Dir[0].Packets + c.Dir[1].Packets }),
		convBytes("Bytes", "", "", func(c *Conv) uint64 { return c.Dir[0].Bytes + c.Dir[1].Bytes }),
		convUint("Msgs", "", "messages", 5, " | ", (*Conv).Messages),
		convJSONOnly("ops", convOps),
		convSum("Retr", "retransmissions", 5, " | ", func(d *decode.DirStats) uint64 { return d.Retransmissions }),
		convSum("", "duplicates", 0, "", func(d *decode.DirStats) uint64 { return d.Duplicates }),
		convSum("Gaps", "psn_gaps", 4, "", func(d *decode.DirStats) uint64 { return d.PSNGaps }),
		convSum("", "out_of_order", 0, "", func(d *decode.DirStats) uint64 { return d.OutOfOrder }),
		convSum("NAKs", "", 4, "", naksOf),
		convJSONOnly("naks", convNAKs),
		convSum("RNR", "rnr_naks", 4, "", func(d *decode.DirStats) uint64 { return d.RNRNAKs }),
		convSum("CNP", "cnps", 4, "", func(d *decode.DirStats) uint64 { return d.CNPs }),
		convSum("CE", "ecn_ce", 4, "", func(d *decode.DirStats) uint64 { return d.ECNCE }),
		convSum("", "icrc_errors", 0, "", func(d *decode.DirStats) uint64 { return d.ICRCErrors }),
		{Header: "Rel Start", Name: "Start", Key: "start", Width: 14, Align: AlignRight, Sep: " | ",
			Value: func(c *Conv) any { return c.Start.Seconds() },
			Text:  func(c *Conv) string { return strconv.FormatFloat(c.Start.Seconds(), 'f', 9, 64) },
			Cell:  func(c *Conv) string { return strconv.FormatFloat(c.Start.Seconds(), 'f', 6, 64) }},
		{Header: "Duration", Key: "duration", Width: 12, Align: AlignRight, Sep: " | ",
			Value: func(c *Conv) any { return c.Duration.Seconds() },
			Text:  func(c *Conv) string { return strconv.FormatFloat(c.Duration.Seconds(), 'f', 4, 64) }},
		convJSONOnly("goodput_ab_bps", func(c *Conv) any { return c.Goodput(0) }),
		convJSONOnly("goodput_ba_bps", func(c *Conv) any { return c.Goodput(1) }),
		convJSONOnly("latency_us", func(c *Conv) any { return latencyOf(&c.Latency) }),
	},
	Keys: []string{"a", "b", "qpn_ab", "qpn_ba", "service", "paired_by", "packets_ab", "packets_ba", "bytes_ab", "bytes_ba",
		"messages", "ops", "retransmissions", "duplicates", "psn_gaps", "out_of_order", "naks", "rnr_naks", "cnps", "ecn_ce",
		"icrc_errors", "start", "duration", "goodput_ab_bps", "goodput_ba_bps", "latency_us"},
}

// ConvTroubled says whether a connection lost or refused packets: its row
// stands out.
func ConvTroubled(c *Conv) bool {
	return c.Sum(func(d *decode.DirStats) uint64 { return d.Retransmissions + d.PSNGaps }) > 0 || c.Sum(naksOf) > 0
}

func byteCount(n uint64) string { return fmt.Sprintf("%d bytes", n) }

func naksOf(d *decode.DirStats) uint64 {
	var n uint64
	for _, x := range d.NAKs {
		n += x
	}
	return n
}

// serviceName is the service as -z conv,qp prints it (RC, UC, UD, XRC, RD).
func serviceName(s layers.ServiceType) string {
	if s == layers.ServiceUnknown || s == layers.ServiceCNP {
		return "RC"
	}
	return s.String()
}

type nakJSON struct {
	PSNSeqErr       uint64 `json:"psn_seq_err"`
	InvalidReq      uint64 `json:"invalid_req"`
	RemoteAccessErr uint64 `json:"remote_access_err"`
	RemoteOpErr     uint64 `json:"remote_op_err"`
	InvalidRDReq    uint64 `json:"invalid_rd_req"`
}

type latencyJSON struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Count uint64  `json:"count"`
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func latencyOf(l *decode.LatencySummary) latencyJSON {
	return latencyJSON{P50: micros(l.P50), P90: micros(l.P90), P99: micros(l.P99), Max: micros(l.Max), Count: l.Count}
}

// AppendConversationsJSON appends -z conv,qp as a JSON array, one object
// per connection.
func AppendConversationsJSON(buf []byte, cs []decode.Conversation) []byte {
	return ConvTable.AppendJSON(buf, cs)
}
