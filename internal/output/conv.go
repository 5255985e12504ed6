package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nQP Conversations\nFilter:%s\n", ruler80, filter)
	fmt.Fprintf(&b, "%-24s <-> %-24s %-8s %-8s %-3s %-6s | %7s %16s | %7s %16s | %7s %16s | %5s | %5s %4s %4s %4s %4s %4s | %14s | %12s |\n",
		"A", "B", "QPN A>B", "QPN B>A", "Svc", "Paired", "<- Frms", "Bytes", "-> Frms", "Bytes", "Frames", "Bytes",
		"Msgs", "Retr", "Gaps", "NAKs", "RNR", "CNP", "CE", "Rel Start", "Duration")
	for i := range cs {
		c := &cs[i]
		ba := "-"
		if c.HasBA {
			ba = fmt.Sprintf("0x%06x", c.QPNBA)
		}
		sum := func(f func(*decode.DirStats) uint64) uint64 { return c.Sum(f) }
		fmt.Fprintf(&b, "%-24s <-> %-24s 0x%06x %-8s %-3s %-6s | %7d %16s | %7d %16s | %7d %16s | %5d | %5d %4d %4d %4d %4d %4d | %14.9f | %12.4f |\n",
			c.A, c.B, c.QPNAB, ba, serviceName(c.Service), c.PairedBy,
			c.Dir[1].Packets, byteCount(c.Dir[1].Bytes), c.Dir[0].Packets, byteCount(c.Dir[0].Bytes),
			c.Dir[0].Packets+c.Dir[1].Packets, byteCount(c.Dir[0].Bytes+c.Dir[1].Bytes), c.Messages(),
			sum(func(d *decode.DirStats) uint64 { return d.Retransmissions }),
			sum(func(d *decode.DirStats) uint64 { return d.PSNGaps }),
			sum(naksOf), sum(func(d *decode.DirStats) uint64 { return d.RNRNAKs }),
			sum(func(d *decode.DirStats) uint64 { return d.CNPs }),
			sum(func(d *decode.DirStats) uint64 { return d.ECNCE }),
			c.Start.Seconds(), c.Duration.Seconds())
	}
	b.WriteString(ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
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

// convJSON is one connection of -z conv,qp -T json. Its keys are a
// promise to scripts: change none.
type convJSON struct {
	A              string            `json:"a"`
	B              string            `json:"b"`
	QPNAB          uint32            `json:"qpn_ab"`
	QPNBA          *uint32           `json:"qpn_ba"`
	Service        string            `json:"service"`
	PairedBy       string            `json:"paired_by"`
	PacketsAB      uint64            `json:"packets_ab"`
	PacketsBA      uint64            `json:"packets_ba"`
	BytesAB        uint64            `json:"bytes_ab"`
	BytesBA        uint64            `json:"bytes_ba"`
	Messages       uint64            `json:"messages"`
	Ops            map[string]uint64 `json:"ops"`
	Retransmission uint64            `json:"retransmissions"`
	Duplicates     uint64            `json:"duplicates"`
	PSNGaps        uint64            `json:"psn_gaps"`
	OutOfOrder     uint64            `json:"out_of_order"`
	NAKs           nakJSON           `json:"naks"`
	RNRNAKs        uint64            `json:"rnr_naks"`
	CNPs           uint64            `json:"cnps"`
	ECNCE          uint64            `json:"ecn_ce"`
	ICRCErrors     uint64            `json:"icrc_errors"`
	Start          float64           `json:"start"`
	Duration       float64           `json:"duration"`
	GoodputAB      float64           `json:"goodput_ab_bps"`
	GoodputBA      float64           `json:"goodput_ba_bps"`
	Latency        latencyJSON       `json:"latency_us"`
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
	out := make([]convJSON, 0, len(cs))
	for i := range cs {
		c := &cs[i]
		sum := func(f func(*decode.DirStats) uint64) uint64 { return c.Sum(f) }
		j := convJSON{A: c.A.String(), B: c.B.String(), QPNAB: c.QPNAB, Service: serviceName(c.Service),
			PairedBy: c.PairedBy.String(), PacketsAB: c.Dir[0].Packets, PacketsBA: c.Dir[1].Packets,
			BytesAB: c.Dir[0].Bytes, BytesBA: c.Dir[1].Bytes, Messages: c.Messages(), Ops: map[string]uint64{},
			Retransmission: sum(func(d *decode.DirStats) uint64 { return d.Retransmissions }),
			Duplicates:     sum(func(d *decode.DirStats) uint64 { return d.Duplicates }),
			PSNGaps:        sum(func(d *decode.DirStats) uint64 { return d.PSNGaps }),
			OutOfOrder:     sum(func(d *decode.DirStats) uint64 { return d.OutOfOrder }),
			RNRNAKs:        sum(func(d *decode.DirStats) uint64 { return d.RNRNAKs }),
			CNPs:           sum(func(d *decode.DirStats) uint64 { return d.CNPs }),
			ECNCE:          sum(func(d *decode.DirStats) uint64 { return d.ECNCE }),
			ICRCErrors:     sum(func(d *decode.DirStats) uint64 { return d.ICRCErrors }),
			Start:          c.Start.Seconds(), Duration: c.Duration.Seconds(),
			GoodputAB: c.Goodput(0), GoodputBA: c.Goodput(1), Latency: latencyOf(&c.Latency)}
		if c.HasBA {
			qpn := c.QPNBA
			j.QPNBA = &qpn
		}
		for op := decode.OpClassSend; op < decode.NumOpClasses; op++ {
			if n := c.Dir[0].Ops[op] + c.Dir[1].Ops[op]; n > 0 {
				j.Ops[op.String()] = n
			}
		}
		naks := func(code layers.NAKCode) uint64 { return c.Dir[0].NAKs[code] + c.Dir[1].NAKs[code] }
		j.NAKs = nakJSON{naks(layers.NAKPSNSequenceError), naks(layers.NAKInvalidRequest), naks(layers.NAKRemoteAccessError),
			naks(layers.NAKRemoteOperationalError), naks(layers.NAKInvalidRDRequest)}
		out = append(out, j)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
