package decode

import (
	"fmt"

	"github.com/ibwire/ibwire/layers"
)

// Follower gathers the messages of one analysed connection (what -z
// follow,qp and ibtui's Follow view show), in order, one per message the
// analysis counts (the packet marked ibwire.analysis.message_size), its
// payload reassembled by PSN from every packet that carried it, first
// transmission or resent copy. A READ is one message, from its request to
// the response that completes it, carrying the data read. The connection
// is the one of the first packet match accepts. It keeps the payloads of
// that connection only.
type Follower struct {
	match func(*Packet) bool
	conv  uint32
	nodes [2]string
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

// NewFollower returns a follower for the connection of the first packet
// match accepts.
func NewFollower(match func(*Packet) bool) *Follower {
	return &Follower{match: match, readPSN: map[uint32]layers.PSN{}}
}

// Add looks at every packet, before any display filter.
func (f *Follower) Add(p *Packet) {
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
		if a.Info&InfoNewData != 0 {
			f.ends = append(f.ends, followEnd{msg: FollowMessage{Dir: a.Dir, First: uint32(p.Number), Last: uint32(p.Number), Size: 8,
				Op: fmt.Sprintf("%s swap/add %d compare %d", info.Operation, b.AtomicETH.SwapAddData, b.AtomicETH.CompareData)}, key: -1})
		}
		return
	case layers.OpAtomicAcknowledge:
		if a.Info&InfoRequest != 0 {
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
	if a.Info&InfoMessage == 0 {
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
func (f *Follower) build() {
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
func (f *Follower) sendBounds(e *followEnd) {
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
func (f *Follower) payload(e *followEnd) []byte {
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

// Nodes names the connection's two ends: the source and destination QP of
// A→B, then of B→A ("" for a direction not seen).
func (f *Follower) Nodes() [2]string { return f.nodes }

// Messages returns the messages gathered.
func (f *Follower) Messages() []FollowMessage {
	f.build()
	return f.msgs
}
