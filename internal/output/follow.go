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
// one per message the analysis counts (the packet marked
// ibwire.analysis.message_size), its payload reassembled by PSN from every
// packet that carried it, first transmission or resent copy. A READ is one
// message, from its request to the response that completes it, carrying
// the data read. The connection is the one of the first packet the filter
// matches. It keeps the payloads of that connection only.
type Follow struct {
	match  func(*decode.Packet) bool
	filter string
	hex    bool
	conv   uint32
	nodes  [2]string
	// pieces holds payloads by PSN: by direction, then request (0) or
	// READ response (1).
	pieces  [4]map[layers.PSN]followPiece
	mtu     [4]int
	readPSN map[uint32]layers.PSN // READ request frame → its PSN
	ends    []followEnd
	msgs    []FollowMessage
	built   bool
}

// followPiece is the payload of one PSN and where it sits in its message.
type followPiece struct {
	data []byte
	pos  layers.Position
}

// followEnd is a message as the analysis ended it; its payload is put
// together when the messages are read.
type followEnd struct {
	msg       FollowMessage
	key       int
	first     layers.PSN
	last      layers.PSN
	fromFirst bool // first is known (a READ), else the message ends at last
}

// FollowMessage is one message of the followed connection.
type FollowMessage struct {
	Dir         uint8  // 1: A→B, 2: B→A (for a READ, the direction of the data)
	Op          string // SEND, RDMA_WRITE, RDMA_READ ...
	First, Last uint32 // frames
	Size        uint32
	Data        []byte
}

// NewFollow returns a follower for the connection of the first packet
// match accepts; hexDump chooses hex over ASCII.
func NewFollow(match func(*decode.Packet) bool, filter string, hexDump bool) *Follow {
	return &Follow{match: match, filter: filter, hex: hexDump, readPSN: map[uint32]layers.PSN{}}
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
	src, _ := p.Endpoints()
	if f.nodes[a.Dir-1] == "" {
		f.nodes[a.Dir-1] = fmt.Sprintf("%s QP 0x%06x", src, b.DestQP)
	}
	key := int(a.Dir-1) * 2
	if info.Response {
		key++
	}
	payload := b.PacketPayload()
	switch info.Operation {
	case layers.OpRDMAReadRequest:
		if _, ok := f.readPSN[uint32(p.Number)]; !ok {
			f.readPSN[uint32(p.Number)] = b.PSN
		}
		return
	case layers.OpCompareSwap, layers.OpFetchAdd:
		if a.Info&decode.InfoNewData != 0 {
			f.ends = append(f.ends, followEnd{msg: FollowMessage{Dir: a.Dir, First: uint32(p.Number), Last: uint32(p.Number), Size: 8,
				Op: fmt.Sprintf("%s swap/add %d compare %d", info.Operation, b.AtomicETH.SwapAddData, b.AtomicETH.CompareData)}, key: -1})
		}
		return
	case layers.OpAtomicAcknowledge:
		if a.Info&decode.InfoRequest != 0 {
			f.ends = append(f.ends, followEnd{msg: FollowMessage{Dir: a.Dir, First: uint32(p.Number), Last: uint32(p.Number), Size: 8,
				Op: fmt.Sprintf("ATOMIC_ACKNOWLEDGE original %d", b.AtomicAckETH.OrigRemoteData)}, key: -1})
		}
		return
	case layers.OpSend, layers.OpRDMAWrite, layers.OpRDMAReadResponse:
	default:
		return
	}
	if len(payload) > 0 {
		if f.pieces[key] == nil {
			f.pieces[key] = map[layers.PSN]followPiece{}
		}
		f.pieces[key][b.PSN] = followPiece{append([]byte(nil), payload...), info.Position}
		if info.Position == layers.PosFirst || info.Position == layers.PosMiddle {
			f.mtu[key] = max(f.mtu[key], len(payload))
		}
	}
	if a.Info&decode.InfoMessage == 0 {
		return
	}
	e := followEnd{msg: FollowMessage{Dir: a.Dir, Op: info.Operation.String(), First: a.MessageFrame, Last: uint32(p.Number),
		Size: a.MessageSize}, key: key, last: b.PSN}
	if info.Response {
		e.msg.Op = "RDMA_READ"
		e.first, e.fromFirst = f.readPSN[a.MessageFrame], true
		delete(f.readPSN, a.MessageFrame)
	}
	f.ends = append(f.ends, e)
	f.built = false
}

// build puts each message's payload together from its pieces.
func (f *Follow) build() {
	if f.built {
		return
	}
	f.built = true
	f.msgs = f.msgs[:0]
	for _, e := range f.ends {
		m := e.msg
		if e.key >= 0 {
			if !e.fromFirst {
				f.sendBounds(&e)
				m.Size = e.msg.Size
			}
			m.Data = f.payload(&e)
		}
		f.msgs = append(f.msgs, m)
	}
}

// sendBounds finds where a SEND or WRITE begins: back from its LAST over
// the PSNs captured (first transmission or copy) to its FIRST. Its size is
// theirs when they are all there (the analysis may not have known it: the
// FIRST can come after the LAST, resent).
func (f *Follow) sendBounds(e *followEnd) {
	pieces := f.pieces[e.key]
	e.first, e.fromFirst = e.last, true
	last, ok := pieces[e.last]
	if !ok || last.pos == layers.PosOnly {
		return
	}
	total := len(last.data)
	for n := 0; n < 1<<16; n++ {
		q := e.first.Add(-1)
		piece, ok := pieces[q]
		if !ok || piece.pos != layers.PosFirst && piece.pos != layers.PosMiddle {
			return // a PSN missing: the size the analysis gave stands
		}
		e.first, total = q, total+len(piece.data)
		if piece.pos == layers.PosFirst {
			e.msg.Size = uint32(total)
			return
		}
	}
}

// payload is the message's bytes: the pieces of its PSNs, each a full
// packet (the path MTU) but the last.
func (f *Follow) payload(e *followEnd) []byte {
	pieces, mtu := f.pieces[e.key], f.mtu[e.key]
	size := int(e.msg.Size)
	n := 1
	if mtu > 0 && size > 0 {
		n = (size + mtu - 1) / mtu
	}
	first := e.first
	if !e.fromFirst {
		first = e.last.Add(1 - n)
	}
	var data []byte
	for i := range n {
		piece, ok := pieces[first.Add(i)]
		if !ok {
			piece.data = make([]byte, min(mtu, max(size-len(data), 0)))
		}
		data = append(data, piece.data...)
	}
	if len(data) > size {
		data = data[:size]
	}
	return data
}

// Messages returns the messages gathered.
func (f *Follow) Messages() []FollowMessage {
	f.build()
	return f.msgs
}

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
	for _, m := range f.Messages() {
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
	for _, m := range f.Messages() {
		dir := "a>b"
		if m.Dir == 2 {
			dir = "b>a"
		}
		out = append(out, followJSON{dir, m.Op, m.First, m.Last, m.Size, hex.EncodeToString(m.Data)})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
