package output

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// Follow gathers -z follow,qp: the messages of one connection, in order,
// reassembled from FIRST/MIDDLE/LAST packets and READ response sequences
// (resent copies left out). The connection is the one of the first packet
// the filter matches. It keeps the payloads of that connection only.
type Follow struct {
	match  func(*decode.Packet) bool
	filter string
	hex    bool
	conv   uint32
	nodes  [2]string
	cur    [4]followBuf // by direction, then request (0) or READ response (1)
	msgs   []FollowMessage
}

// FollowMessage is one message of the followed connection.
type FollowMessage struct {
	Dir         uint8  // 1: A→B, 2: B→A
	Op          string // SEND, RDMA_WRITE, RDMA_READ response, RDMA_READ request ...
	First, Last uint32 // frames
	Size        uint32
	Data        []byte
}

type followBuf struct {
	active bool
	msg    FollowMessage
	psn    layers.PSN
	mtu    int
}

// NewFollow returns a follower for the connection of the first packet
// match accepts; hexDump chooses hex over ASCII.
func NewFollow(match func(*decode.Packet) bool, filter string, hexDump bool) *Follow {
	return &Follow{match: match, filter: filter, hex: hexDump}
}

// Add looks at every packet, before any display filter.
func (f *Follow) Add(p *decode.Packet) {
	a := &p.Analysis
	if f.conv == 0 {
		if a.Conv == 0 || !p.IsIB() || !f.match(p) {
			return
		}
		f.conv = a.Conv
	}
	if a.Conv != f.conv || !p.IsIB() || p.Err != nil || a.Dir == 0 {
		return
	}
	b := p.BTH()
	info := b.Info()
	src, dst := p.Endpoints()
	if f.nodes[a.Dir-1] == "" {
		f.nodes[a.Dir-1] = fmt.Sprintf("%s QP 0x%06x", src, b.DestQP)
		_ = dst
	}
	i := int(a.Dir-1) * 2
	op := info.Operation.String()
	if info.Response {
		i++
		op = "RDMA_READ response"
	}
	payload := b.PacketPayload()
	switch info.Operation {
	case layers.OpRDMAReadRequest:
		if a.Info&decode.InfoNewData != 0 {
			f.msgs = append(f.msgs, FollowMessage{Dir: a.Dir, Op: "RDMA_READ request", First: uint32(p.Number),
				Last: uint32(p.Number), Size: b.RETH.DMALength})
		}
		return
	case layers.OpCompareSwap, layers.OpFetchAdd:
		if a.Info&decode.InfoNewData != 0 {
			f.msgs = append(f.msgs, FollowMessage{Dir: a.Dir, First: uint32(p.Number), Last: uint32(p.Number), Size: 8,
				Op: fmt.Sprintf("%s swap/add %d compare %d", op, b.AtomicETH.SwapAddData, b.AtomicETH.CompareData)})
		}
		return
	case layers.OpAtomicAcknowledge:
		if a.Info&decode.InfoRequest != 0 {
			f.msgs = append(f.msgs, FollowMessage{Dir: a.Dir, First: uint32(p.Number), Last: uint32(p.Number), Size: 8,
				Op: fmt.Sprintf("ATOMIC_ACKNOWLEDGE original %d", b.AtomicAckETH.OrigRemoteData)})
		}
		return
	case layers.OpSend, layers.OpRDMAWrite, layers.OpRDMAReadResponse:
	default:
		return
	}
	c := &f.cur[i]
	if a.Info&decode.InfoMessageStart != 0 && a.Info&decode.InfoNewData != 0 {
		*c = followBuf{active: true, msg: FollowMessage{Dir: a.Dir, Op: op, First: uint32(p.Number)}, psn: b.PSN, mtu: len(payload)}
		c.msg.Data = append(c.msg.Data, payload...)
	} else if c.active && a.Info&decode.InfoNewData != 0 {
		off := b.PSN.Diff(c.psn) * c.mtu
		if off >= 0 && off < 1<<26 {
			if need := off + len(payload); need > len(c.msg.Data) {
				c.msg.Data = append(c.msg.Data, make([]byte, need-len(c.msg.Data))...)
			}
			copy(c.msg.Data[off:], payload)
		}
	}
	if a.Info&decode.InfoMessage != 0 && c.active {
		c.msg.Last, c.msg.Size = uint32(p.Number), a.MessageSize
		if int(c.msg.Size) <= len(c.msg.Data) {
			c.msg.Data = c.msg.Data[:c.msg.Size]
		}
		f.msgs = append(f.msgs, c.msg)
		*c = followBuf{}
	}
}

// Messages returns the messages gathered.
func (f *Follow) Messages() []FollowMessage { return f.msgs }

// Write prints the messages as tshark's follow does: a header naming the
// two nodes, then each message (B→A ones indented by a tab in hex mode).
func (f *Follow) Write(w io.Writer) error {
	var b strings.Builder
	mode := "ascii"
	if f.hex {
		mode = "hex"
	}
	rule := strings.Repeat("=", 67)
	fmt.Fprintf(&b, "\n%s\nFollow: qp,%s\nFilter: %s\nNode 0: %s\nNode 1: %s\n", rule, mode, f.filter, f.nodes[0], f.nodes[1])
	for _, m := range f.msgs {
		indent := ""
		if m.Dir == 2 {
			indent = "\t"
		}
		arrow := "A>B"
		if m.Dir == 2 {
			arrow = "B>A"
		}
		fmt.Fprintf(&b, "%sframes %d-%d %s %s, %d bytes\n", indent, m.First, m.Last, arrow, m.Op, m.Size)
		switch {
		case len(m.Data) == 0:
		case f.hex:
			for off := 0; off < len(m.Data); off += 16 {
				row := m.Data[off:min(off+16, len(m.Data))]
				fmt.Fprintf(&b, "%s%08x  ", indent, off)
				for i := range 16 {
					if i < len(row) {
						fmt.Fprintf(&b, "%02x ", row[i])
					} else {
						b.WriteString("   ")
					}
					if i == 7 {
						b.WriteByte(' ')
					}
				}
				b.WriteString(" ")
				b.WriteString(printable(row))
				b.WriteByte('\n')
			}
		default:
			b.WriteString(indent + printable(m.Data) + "\n")
		}
	}
	b.WriteString(rule + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func printable(data []byte) string {
	out := make([]byte, len(data))
	for i, c := range data {
		if c >= 0x20 && c < 0x7F {
			out[i] = c
		} else {
			out[i] = '.'
		}
	}
	return string(out)
}

type followJSON struct {
	Direction  string `json:"direction"`
	Op         string `json:"op"`
	FirstFrame uint32 `json:"first_frame"`
	LastFrame  uint32 `json:"last_frame"`
	Size       uint32 `json:"size"`
	Data       string `json:"data"`
}

// AppendJSON appends the messages as a JSON array (data in hex).
func (f *Follow) AppendJSON(buf []byte) []byte {
	out := []followJSON{}
	for _, m := range f.msgs {
		dir := "a>b"
		if m.Dir == 2 {
			dir = "b>a"
		}
		out = append(out, followJSON{dir, m.Op, m.First, m.Last, m.Size, hex.EncodeToString(m.Data)})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
