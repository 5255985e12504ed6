package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/ibwire/ibwire/layers"
)

// A capture taken before UDP segmentation (on lo, where a sender's
// UDP_SEGMENT run is only cut into datagrams after the tap) shows a run of
// RoCEv2 packets as one datagram: the first packet's headers, then the
// rest of the run as "payload", and the last packet's ICRC, which does not
// verify over the whole. The decoder recognises such a run only where the
// ICRC is bad and the payload is longer than any IB MTU allows, so the
// decoding of every other packet costs nothing more.

// gsoRun is what the decoder recognised in a packet with a bad ICRC.
type gsoRun struct {
	segments, size uint32 // 0 segments: not a run
}

// gsoScratch is the decoder's room for the recognition, made when first
// needed.
type gsoScratch struct {
	icrc layers.ICRCComputer
	span []byte
}

// maxIBMTU is the largest payload one IB packet carries.
var maxIBMTU = layers.MTU4096.Bytes()

// maxSegment bounds the segment size tried: the largest transport packet
// (BTH, extended headers, a full MTU, ICRC).
var maxSegment = layers.BTHLength + 64 + maxIBMTU + layers.ICRCLength

// GSORun reports whether p is a UDP GSO run captured before segmentation:
// segments RoCEv2 packets of size bytes each (BTH through ICRC; the last
// may be shorter) in one datagram, the first packet's ICRC verifying for a
// datagram of that size. Only packets whose ICRC is bad are runs.
func (p *Packet) GSORun() (segments, size int, ok bool) {
	if p.ICRC != layers.CRCBad || p.gso.segments == 0 {
		return 0, 0, false
	}
	return int(p.gso.segments), int(p.gso.size), true
}

// GSONote is the text a packet's line gives a GSO run (empty when p is
// not one).
func (p *Packet) GSONote() string {
	n, s, ok := p.GSORun()
	if !ok {
		return ""
	}
	return "UDP GSO run of " + strconv.Itoa(n) + " segments of " + strconv.Itoa(s) +
		" bytes captured before segmentation (a capture on loopback); capture with ibpeer --udp-offload=off to see each packet"
}

// impossiblyLong reports a payload no single packet carries: longer than
// the largest IB MTU, or, for the FIRST or MIDDLE packet of a message,
// which carry exactly the path MTU, other than an IB MTU (a capture on lo
// shows runs of two or three packets at MTU 1024 that way).
func impossiblyLong(b *layers.BTH) bool {
	n := len(b.PacketPayload())
	if n > maxIBMTU {
		return true
	}
	if pos := b.Info().Position; pos == layers.PosFirst || pos == layers.PosMiddle {
		return !layers.IsPathMTU(n)
	}
	return false
}

// recogniseGSO looks for a segment size s such that BTHs of the same
// destination QP with PSNs one higher each lie at s, 2s, ... of the UDP
// payload, and the first segment's ICRC verifies for a datagram of s
// bytes. Transport packets are whole 4-byte words, so s steps by 4.
func (d *Decoder) recogniseGSO(pkt *Packet) gsoRun {
	h := pkt.Headers
	if !impossiblyLong(&h.BTH) || pkt.Encapsulation != layers.EncapRoCEv2IPv4 && pkt.Encapsulation != layers.EncapRoCEv2IPv6 {
		return gsoRun{}
	}
	span, enc, ok := h.ICRCSpan()
	if !ok {
		return gsoRun{}
	}
	start := cap(span) - cap(h.BTH.Contents) // the UDP payload (the first BTH) in span
	if start < 8 || start >= len(span) {
		return gsoRun{}
	}
	u := span[start:]
	qp := binary.BigEndian.Uint32(u[4:]) & 0xFFFFFF
	psn := layers.PSN(binary.BigEndian.Uint32(u[8:]) & 0xFFFFFF)
	if d.gso == nil {
		d.gso = &gsoScratch{}
	}
	g := d.gso
	for s := layers.BTHLength + layers.ICRCLength; s <= maxSegment && s+layers.BTHLength+layers.ICRCLength <= len(u); s += 4 {
		n := 1
		for off := s; off < len(u); off += s {
			if len(u)-off < layers.BTHLength+layers.ICRCLength ||
				binary.BigEndian.Uint32(u[off+4:])&0xFFFFFF != qp ||
				layers.PSN(binary.BigEndian.Uint32(u[off+8:])&0xFFFFFF) != psn.Add(n) {
				n = 0
				break
			}
			n++
		}
		if n < 2 {
			continue
		}
		seg, ok := layers.GSOSegmentSpan(g.span, enc, span, start, s)
		g.span = seg
		if !ok {
			continue
		}
		want, err := g.icrc.Compute(enc, seg)
		if err == nil && want == binary.LittleEndian.Uint32(seg[len(seg)-layers.ICRCLength:]) {
			return gsoRun{segments: uint32(n), size: uint32(s)}
		}
	}
	return gsoRun{}
}
