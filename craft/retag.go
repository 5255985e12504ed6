package craft

import (
	"encoding/binary"
	"fmt"

	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// SetDSCP rewrites the DSCP of a RoCEv2 frame (IPv4 or IPv6 over Ethernet,
// no VLAN tag) in place, keeping its ECN bits, and mends the IPv4 header
// checksum. The ICRC does not change: it covers the traffic class masked.
// It stands for a sender whose packets of one kind (CNPs, ACKs, some of a
// QP's) are sent in another class, what a configuration lint looks for.
func SetDSCP(f *Frame, dscp uint8) error {
	d := f.Data
	if f.Info.Raw || len(d) < 14+40 || binary.BigEndian.Uint16(d[12:14]) != 0x0800 && binary.BigEndian.Uint16(d[12:14]) != 0x86DD {
		return fmt.Errorf("craft: SetDSCP: not a RoCEv2 frame over untagged Ethernet")
	}
	if dscp > 63 {
		return fmt.Errorf("craft: SetDSCP: DSCP %d out of 0-63", dscp)
	}
	ip := d[14:]
	if ip[0]>>4 == 4 {
		ip[1] = dscp<<2 | ip[1]&3
		ihl := int(ip[0]&0xf) * 4
		ip[10], ip[11] = 0, 0
		var sum uint32
		for i := 0; i < ihl; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
		return nil
	}
	// IPv6: the traffic class straddles the first two bytes.
	tc := (ip[0]&0xf)<<4 | ip[1]>>4
	tc = dscp<<2 | tc&3
	ip[0] = 6<<4 | tc>>4
	ip[1] = tc<<4 | ip[1]&0xf
	return nil
}

// RecomputeICRC sets the ICRC of a RoCE or native IB frame to the one its
// bytes call for, after an edit of fields the ICRC covers (a CM message's
// body rewritten to stand for a misconfigured sender, say).
func RecomputeICRC(f *Frame) error {
	if f.LinkType != layers.LinkTypeEthernet {
		return fmt.Errorf("craft: RecomputeICRC: only RoCE frames over Ethernet")
	}
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	if err := p.Decode(f.Data); err != nil {
		return fmt.Errorf("craft: RecomputeICRC: %w", err)
	}
	span, enc, ok := p.ICRCSpan()
	if !ok || len(span) < 4 {
		return fmt.Errorf("craft: RecomputeICRC: no ICRC in the frame")
	}
	icrc, err := layers.ComputeICRC(enc, span)
	if err != nil {
		return fmt.Errorf("craft: RecomputeICRC: %w", err)
	}
	binary.LittleEndian.PutUint32(span[len(span)-4:], icrc)
	return nil
}
