package endpoint

import (
	"errors"
	"net/netip"
)

// MaxDatagram is the largest UDP payload a Wire carries: a 4096-byte IB MTU
// payload plus the longest transport header set, pad and ICRC, rounded up.
const MaxDatagram = 4096 + 128

// ICRCStatus says what a Wire could establish about a received packet's ICRC.
type ICRCStatus uint8

const (
	// ICRCGood: the wire recomputed the ICRC over the headers as received
	// and it matched.
	ICRCGood ICRCStatus = iota
	// ICRCBad: the ICRC did not match; the endpoint drops the packet
	// silently, as rxe does (ENDPOINT.md §1.3 step 8), and counts it.
	ICRCBad
	// ICRCUnverifiable: the wire cannot know every hashed header field
	// (an IPv4 UDP socket never sees the sender's IP Identification), so
	// it could only check what it knew; see the wire's documentation.
	ICRCUnverifiable
)

func (s ICRCStatus) String() string {
	switch s {
	case ICRCGood:
		return "good"
	case ICRCBad:
		return "bad"
	case ICRCUnverifiable:
		return "unverifiable"
	}
	return "ICRCStatus(?)"
}

// Datagram is one RoCEv2 packet as a Wire carries it: the UDP payload,
// from the BTH through the 4-byte ICRC, and the IP and UDP facts around it.
//
// Buffers belong to the caller. ReadBatch fills Payload[:n] of a buffer the
// caller gave it (cap(Payload) ≥ MaxDatagram) and never allocates; WriteBatch
// reads the buffers only until it returns. This is how the endpoint keeps
// to no allocation per packet in steady state.
type Datagram struct {
	Src netip.AddrPort // sender's IP address and UDP source port
	Dst netip.AddrPort // receiver's IP address and UDP port (layers.RoCEv2Port)

	// TrafficClass is the IPv4 TOS or IPv6 traffic-class byte: DSCP in the
	// top six bits, ECN in the low two (3 = CE, congestion experienced).
	// On write it is the value to send; on read the value received, when
	// the wire can see it (UDP wires read it from control messages).
	TrafficClass uint8

	// HopLimit is the IPv4 TTL or IPv6 hop limit: on write the one to send
	// (0 = the wire's default), on read the one received where the wire can
	// see it (0 = unknown). rxe's tools send 1, 64 or 255 (ENDPOINT.md §1.5);
	// rdma_cm answers with the TTL it received.
	HopLimit uint8

	// Payload is BTH … ICRC. On write the last four bytes are the ICRC's
	// place: the wire fills them, because only the wire knows the IP and
	// UDP headers that are hashed. On read they are as received.
	Payload []byte

	// ICRC is set by ReadBatch.
	ICRC ICRCStatus

	// Drop is set by ReadBatch: zero for a datagram delivered, otherwise
	// why the wire could not deliver the one that arrived in this slot —
	// DropTooLong when it was longer than MaxDatagram or its buffer (the
	// kernel cut it), DropTooShort when a packet wire found its IP or UDP
	// header unusable. Payload is then empty, Src is the sender where the
	// wire knows it, and the reader counts the drop and skips the slot.
	Drop DropReason
}

// Wire moves RoCEv2 datagrams between this endpoint and the network. The
// implementations are the UDP socket wire (kernel UDP on port 4791, batch
// I/O), the packet wire (AF_PACKET: whole frames, every header under our
// control) and endpoint/wiretest's in-memory pair with fault knobs.
//
// One goroutine calls ReadBatch and any number may call WriteBatch; Close
// unblocks a pending ReadBatch, which then returns ErrWireClosed.
type Wire interface {
	// ReadBatch blocks until at least one datagram has arrived and fills
	// dgs[:n]; each dgs[i].Payload must have capacity ≥ MaxDatagram.
	// Slot i keeps the caller's buffer i: a reader may pair dgs[i] with
	// whatever owns that buffer. A datagram the wire cannot deliver still
	// takes its slot, marked with Drop, so a drop never moves another
	// datagram.
	ReadBatch(dgs []Datagram) (n int, err error)
	// WriteBatch sends dgs in order and returns how many were sent. It
	// fills each Payload's trailing ICRC first.
	WriteBatch(dgs []Datagram) (n int, err error)
	// LocalAddr is the address and port the wire receives on; it is the
	// endpoint's GID (an IPv4 address becomes ::ffff:a.b.c.d).
	LocalAddr() netip.AddrPort
	// BatchSize is the number of datagrams one ReadBatch or WriteBatch
	// call moves at most with a single system call (1 when unbatched).
	BatchSize() int
	Close() error
}

// ErrWireClosed is returned by a Wire's methods after Close.
var ErrWireClosed = errors.New("endpoint: wire closed")
