package craft

import (
	"fmt"
	"net"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// Mirror says how a switch mirrors frames to a collector: ERSPAN type 2 or
// 3 inside GRE with a sequence number, over IPv4 between the switch and the
// collector.
type Mirror struct {
	Type     int // 2 or 3
	Session  uint16
	Src, Dst net.IP           // the switch and the collector; zero: 10.9.9.1 → 10.9.9.2
	SrcMAC   net.HardwareAddr // zero: 02:00:00:00:09:01
	DstMAC   net.HardwareAddr // zero: 02:00:00:00:09:02
}

// Wrap returns the frames as the collector captures them, each inside
// Ethernet, IPv4, GRE (sequence numbers from 1) and the ERSPAN header,
// the type III timestamp in 100 ns units from the frame's time.
func (m Mirror) Wrap(frames []Frame) ([]Frame, error) {
	if m.Type != 2 && m.Type != 3 {
		return nil, fmt.Errorf("craft: ERSPAN type %d: 2 or 3", m.Type)
	}
	src, dst := m.Src, m.Dst
	if src == nil {
		src, dst = net.IP{10, 9, 9, 1}, net.IP{10, 9, 9, 2}
	}
	smac, dmac := m.SrcMAC, m.DstMAC
	if smac == nil {
		smac, dmac = net.HardwareAddr{2, 0, 0, 0, 9, 1}, net.HardwareAddr{2, 0, 0, 0, 9, 2}
	}
	out := make([]Frame, len(frames))
	buf := gopacket.NewSerializeBuffer()
	for i, f := range frames {
		if f.LinkType != layers.LinkTypeEthernet {
			return nil, fmt.Errorf("craft: mirror frame %d: %v, ERSPAN carries Ethernet", i+1, f.LinkType)
		}
		eth := &gplayers.Ethernet{SrcMAC: smac, DstMAC: dmac, EthernetType: gplayers.EthernetTypeIPv4}
		ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolGRE, SrcIP: src, DstIP: dst, Flags: gplayers.IPv4DontFragment}
		gre := &gplayers.GRE{SeqPresent: true, Seq: uint32(i + 1), Protocol: gplayers.EthernetTypeERSPAN}
		var erspan gopacket.SerializableLayer = &gplayers.ERSPANII{Version: 1, SessionID: m.Session, Index: 1}
		if m.Type == 3 {
			gre.Protocol = layers.EthernetTypeERSPANIII
			erspan = &layers.ERSPANIII{Version: 2, SessionID: m.Session, Granularity: 1,
				Timestamp: uint32(f.Time.UnixNano() / 100)}
		}
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, gre, erspan, gopacket.Payload(f.Data)); err != nil {
			return nil, fmt.Errorf("craft: mirror frame %d: %w", i+1, err)
		}
		g := f
		g.Data = append([]byte(nil), buf.Bytes()...)
		out[i] = g
	}
	return out, nil
}
