package craft

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// Faults is what goes wrong in a conversation, declared up front so the
// result is deterministic and its findings known. Request packets are
// numbered from 1 in PSN order (a READ request is one packet however many
// PSNs it takes); transmissions of one side are numbered from 1 in the
// order that side sends them, retransmissions included.
type Faults struct {
	// Seed drives the probabilistic faults (Loss.Prob, CE.Prob).
	Seed uint64
	Loss Loss
	NAKs []NAK
	RNRs []RNR
	// CNPEvery marks every CNPEvery-th request transmission with ECN CE
	// (FECN on RoCEv1 and native IB), and the responder answers each of
	// them with a CNP (BECN set, DestQP the requester's QP).
	CNPEvery int
	CE       CEMarks
	Corrupt  []Corrupt
}

// Loss drops frames between the sender and the capture point: lost frames
// are neither captured nor received.
type Loss struct {
	Packets   []int   // request packets whose first transmission is lost
	Responses []int   // responder transmissions that are lost
	Every     int     // every Every-th request transmission is lost
	Prob      float64 // each frame of either side is lost with this probability
}

// NAK makes the responder answer the first in-order arrival of request
// packet Packet with a NAK of Code instead of executing it. A PSN sequence
// error NAK makes the requester go back to that packet; any other code puts
// the QP in the error state and ends the conversation.
type NAK struct {
	Packet int
	Code   layers.NAKCode
}

// RNR makes the responder refuse the first Times in-order arrivals of
// request packet Packet (0 counts as 1) with an RNR NAK carrying Timer; the
// requester waits that long and resends from the packet.
type RNR struct {
	Packet int
	Times  int
	Timer  layers.RNRTimerCode
}

// CEMarks marks request transmissions Congestion Experienced, without CNPs.
type CEMarks struct {
	Every int     // every Every-th request transmission
	Prob  float64 // each request transmission with this probability
}

// CorruptKind is a way of breaking a packet on purpose.
type CorruptKind uint8

// Corruptions. The receiver drops packets with a bad CRC, cut short or
// whose pad count exceeds what follows the headers; a responder answers a
// bad opcode sequence, a RETH length mismatch and an unknown opcode with a
// NAK Invalid Request (RC), which ends the conversation.
const (
	NoCorruption  CorruptKind = iota
	BadICRC                   // the last byte before the pad has a bit flipped; the ICRC is the original one
	BadVCRC                   // the VCRC has a bit flipped (native IB)
	Truncated                 // the frame ends 6 bytes early: no ICRC (and VCRC); length fields say more
	WrongPad                  // BTH PadCnt says 3 (2 when 3 is right); CRCs recomputed
	BadSequence               // a SEND/WRITE FIRST becomes MIDDLE, an ONLY becomes LAST (no FIRST before it)
	RETHMismatch              // a WRITE's RETH DMA length is 4 more than the message carries
	UnknownOpcode             // the opcode byte becomes one the IBTA does not define; CRCs recomputed
)

var corruptNames = [...]string{"none", "bad-icrc", "bad-vcrc", "truncated", "wrong-pad", "bad-sequence",
	"reth-mismatch", "unknown-opcode"}

func (k CorruptKind) String() string {
	if int(k) < len(corruptNames) {
		return corruptNames[k]
	}
	return fmt.Sprintf("CorruptKind(%d)", uint8(k))
}

// ParseCorruptKind parses the names String returns.
func ParseCorruptKind(s string) (CorruptKind, error) {
	for i, n := range corruptNames {
		if i > 0 && n == strings.ToLower(s) {
			return CorruptKind(i), nil
		}
	}
	return 0, fmt.Errorf("craft: unknown corruption %q (want one of %s)", s, strings.Join(corruptNames[1:], ", "))
}

// CorruptKinds lists every corruption.
func CorruptKinds() []CorruptKind {
	ks := make([]CorruptKind, 0, len(corruptNames)-1)
	for i := 1; i < len(corruptNames); i++ {
		ks = append(ks, CorruptKind(i))
	}
	return ks
}

// needs says what a frame must be for kind k to break it.
func (k CorruptKind) needs() string {
	switch k {
	case BadVCRC:
		return "a native IB frame"
	case BadSequence:
		return "the FIRST or ONLY packet of an RC or UC SEND or WRITE"
	case RETHMismatch:
		return "an RDMA WRITE FIRST or ONLY"
	case WrongPad:
		return "a packet with nothing after its headers (or name the frame)"
	}
	return "a request packet"
}

// finding is the finding a corrupted frame should produce.
func (k CorruptKind) finding() FindingKind {
	return [...]FindingKind{"", FindingICRCBad, FindingVCRCBad, FindingTruncated, FindingMalformed,
		FindingBadSequence, FindingLengthMismatch, FindingUnknownOpcode}[k]
}

// dropped reports whether the receiver discards the frame unread.
func (k CorruptKind) dropped() bool { return k == BadICRC || k == BadVCRC || k == Truncated }

// Corrupt breaks frame Frame of a Run (counted from 1 in the Run's output);
// Frame 0 picks the first frame the kind applies to.
type Corrupt struct {
	Frame int
	Kind  CorruptKind
}

// applies reports whether kind k can break a frame of encapsulation e
// carrying p, and why not.
func (k CorruptKind) applies(e Encap, side Side, b *layers.BTH) error {
	info := b.Opcode.Info()
	switch k {
	case BadVCRC:
		if !e.Native() {
			return fmt.Errorf("%v needs native IB, not %v", k, e)
		}
	case BadSequence:
		if side != Requester || (info.Operation != layers.OpSend && info.Operation != layers.OpRDMAWrite) ||
			(info.Position != layers.PosFirst && info.Position != layers.PosOnly) || info.Service == layers.ServiceUD {
			return fmt.Errorf("%v needs the FIRST or ONLY packet of an RC/UC SEND or WRITE, not %v", k, b.Opcode)
		}
	case RETHMismatch:
		if side != Requester || info.Operation != layers.OpRDMAWrite || !info.Has(layers.HdrRETH) {
			return fmt.Errorf("%v needs a WRITE FIRST or ONLY, not %v", k, b.Opcode)
		}
	case WrongPad, UnknownOpcode, BadICRC, Truncated:
	default:
		return fmt.Errorf("unknown corruption %d", k)
	}
	return nil
}

// auto reports whether kind k picks a frame like this one when no frame is
// named: the first frame it applies to, preferring requests, and for
// WrongPad a frame with nothing after its headers (so decoding fails).
func (k CorruptKind) auto(e Encap, side Side, b *layers.BTH, payload int) bool {
	if k.applies(e, side, b) != nil {
		return false
	}
	switch k {
	case WrongPad:
		return payload == 0
	case BadICRC, Truncated, BadVCRC, UnknownOpcode:
		return side == Requester
	}
	return true
}

// reshape makes the generation-level corruptions: it changes the packet
// before it is serialized.
func (k CorruptKind) reshape(b *layers.BTH) {
	switch k {
	case BadSequence:
		in := b.Opcode.Info()
		pos := layers.PosMiddle
		if in.Position == layers.PosOnly {
			pos = layers.PosLast
		}
		b.Opcode = mustOpcode(in.Service, in.Operation, pos, in.Immediate && pos == layers.PosLast,
			in.Invalidate && pos == layers.PosLast)
		b.AckReq = pos == layers.PosLast
	case RETHMismatch:
		b.RETH.DMALength += 4
	}
}

// frameLayout locates the IB packet in a frame of encapsulation e: the
// first byte the ICRC covers, the BTH, and the end of the ICRC.
func frameLayout(e Encap, f []byte) (start, bth, end int, err error) {
	short := func() (int, int, int, error) {
		return 0, 0, 0, fmt.Errorf("craft: frame of %d bytes too short for %v", len(f), e)
	}
	switch e {
	case RoCEv2:
		if len(f) < 14+20 {
			return short()
		}
		return 14, 14 + 20 + 8, 14 + int(binary.BigEndian.Uint16(f[16:18])), nil
	case RoCEv2IPv6:
		if len(f) < 14+40 {
			return short()
		}
		return 14, 14 + 40 + 8, 14 + 40 + int(binary.BigEndian.Uint16(f[18:20])), nil
	case RoCEv1:
		if len(f) < 14+40 {
			return short()
		}
		return 14, 14 + 40, 14 + 40 + int(binary.BigEndian.Uint16(f[18:20])), nil
	}
	s := 0
	if e == ERF || e == ERFGRH {
		s = layers.ERFHeaderLength
	}
	if len(f) < s+layers.LRHLength {
		return short()
	}
	b := s + layers.LRHLength
	if e.HasGRH() {
		b += layers.GRHLength
	}
	return s, b, s + int(binary.BigEndian.Uint16(f[s+4:s+6])&0x7FF)*4, nil
}

// refinish recomputes the ICRC (and VCRC) of a frame after a byte-level change.
func refinish(e Encap, f []byte) error {
	start, _, end, err := frameLayout(e, f)
	if err != nil {
		return err
	}
	if end > len(f) || end-start < layers.ICRCLength {
		return fmt.Errorf("craft: frame of %d bytes shorter than its %d-byte packet", len(f), end)
	}
	crc, err := layers.ComputeICRC(e.Layers(), f[start:end])
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(f[end-layers.ICRCLength:], crc)
	if e.Native() {
		binary.LittleEndian.PutUint16(f[end:], layers.ComputeVCRC(f[start:end]))
	}
	return nil
}

// damage makes the byte-level corruptions of a finished frame and returns
// the frame (shorter when truncated) and a description.
func (k CorruptKind) damage(e Encap, f []byte) ([]byte, string, error) {
	start, bth, end, err := frameLayout(e, f)
	if err != nil {
		return nil, "", err
	}
	pad := int(f[bth+1] >> 4 & 3)
	switch k {
	case BadICRC:
		i := end - layers.ICRCLength - pad - 1
		f[i] ^= 0x01
		if e.Native() {
			binary.LittleEndian.PutUint16(f[end:], layers.ComputeVCRC(f[start:end]))
		}
		return f, fmt.Sprintf("bit 0 of frame byte %d flipped after the ICRC was computed", i), nil
	case BadVCRC:
		f[end] ^= 0x01
		return f, fmt.Sprintf("bit 0 of the VCRC (frame byte %d) flipped", end), nil
	case Truncated:
		cut := end - 6
		if e.Native() {
			cut = end + layers.VCRCLength - 6
		}
		g := append([]byte(nil), f[:cut]...)
		if e == ERF || e == ERFGRH {
			binary.BigEndian.PutUint16(g[14:16], uint16(cut-start))
			g = padERF(g)
		}
		return g, fmt.Sprintf("the packet ends after %d of its %d bytes", cut-start, end-start+boolInt(e.Native())*layers.VCRCLength), nil
	case WrongPad:
		wrong := 3
		if pad == 3 {
			wrong = 2
		}
		f[bth+1] = f[bth+1]&^0x30 | byte(wrong)<<4
		return f, fmt.Sprintf("PadCnt %d, the packet has %d pad bytes", wrong, pad), refinish(e, f)
	case UnknownOpcode:
		old := layers.Opcode(f[bth])
		op := unknownOpcode(old.Service())
		f[bth] = byte(op)
		return f, fmt.Sprintf("opcode 0x%02x in place of %v", uint8(op), old), refinish(e, f)
	}
	return f, "", nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
