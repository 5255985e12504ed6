package craft

import (
	"fmt"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// RawPacket is a native-IB raw packet (IBTA Vol 1 §5.3.1): an LRH whose
// LNH says no IBA transport follows, then the carried packet and the VCRC.
// With EtherType 0 it is a raw IPv6 packet (LNH 1) and Payload is the IPv6
// packet; otherwise (LNH 0) an RWH carries the EtherType and Payload is
// that EtherType's packet (IPv4, ARP ...).
type RawPacket struct {
	From      Side
	EtherType uint16
	Payload   []byte
	VL        uint8
}

// BuildRaw serializes a raw packet into a frame stamped t, with PktLen and
// the VCRC filled in. Raw packets have no pad count: a payload that does
// not fill its last 4-byte word is padded with zeros, which the carried
// packet's own length (IP total length, ARP's fixed size) excludes. Only
// native encapsulations carry raw packets; a raw packet has no GRH, so the
// GRH encapsulations send it without one.
func (b *Builder) BuildRaw(p RawPacket, t time.Time) (Frame, error) {
	c := &b.cfg
	if !c.Encap.Native() {
		return Frame{}, fmt.Errorf("craft: raw packets need a native IB encapsulation, not %v", c.Encap)
	}
	src, dst := b.endpoints(p.From)
	payload := append([]byte(nil), p.Payload...)
	payload = append(payload, make([]byte, (4-len(payload)%4)%4)...)
	lrh := &layers.LRH{VL: p.VL, SL: c.SL, LNH: layers.LNHIPv6, DLID: dst.LID, SLID: src.LID}
	ls := []gopacket.SerializableLayer{lrh}
	if p.EtherType != 0 {
		lrh.LNH = layers.LNHRaw
		ls = append(ls, &layers.RWH{EtherType: gplayers.EthernetType(p.EtherType)})
	}
	ls = append(ls, gopacket.Payload(payload))
	if c.Encap == ERF || c.Encap == ERFGRH {
		ls = append([]gopacket.SerializableLayer{&layers.ERF{Type: layers.ERFTypeInfiniBand, Flags: erfFlags,
			Timestamp: erfTime(t)}}, ls...)
	}
	frame, err := serializeLayers(ls, -1)
	if err != nil {
		return Frame{}, fmt.Errorf("craft: serialize raw packet: %w", err)
	}
	if c.Encap == ERF || c.Encap == ERFGRH {
		frame = padERF(frame)
	}
	// The carried packet need not decode (a test may send any bytes): only
	// the VCRC is filled in, over the LRH's PktLen words.
	n := int(lrh.PktLen) * 4
	off := len(frame) - n - layers.VCRCLength
	if c.Encap == ERF || c.Encap == ERFGRH {
		off = layers.ERFHeaderLength
	}
	vcrc := layers.ComputeVCRC(frame[off : off+n])
	frame[off+n], frame[off+n+1] = byte(vcrc), byte(vcrc>>8)
	return Frame{Data: frame, Time: t, LinkType: c.Encap.LinkType(), Info: FrameInfo{From: p.From, Raw: true}}, nil
}
