package device

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// PcapWire records every datagram its Wire sends and receives into a pcap
// file of raw IP packets (link type 101), rebuilding with gopacket's
// serializers the IP and UDP headers a UDP socket does not show: IPv4 with DF set and identification 0 — what
// the UDP wire sends, so the ICRCs of ibpeer's own packets verify — the
// datagram's traffic class, its hop limit or 64, and UDP checksum 0 (IPv6:
// computed). A received packet's identification and TTL are not visible to
// a socket; the file holds 0 and 64, which is right for ibpeer's peers and
// makes a Linux rxe peer's IPv4 ICRCs fail to verify (rxe numbers its IPv4
// packets).
type PcapWire struct {
	endpoint.Wire
	mu     sync.Mutex
	w      *capture.Writer
	buf    gopacket.SerializeBuffer
	err    error // the first write error
	closed bool
	n      int
}

// NewPcapWire wraps inner, recording into a new pcap file at path; Close
// closes both.
func NewPcapWire(inner endpoint.Wire, path string) (*PcapWire, error) {
	w, err := capture.Create(path, capture.FormatPcap, layers.LinkTypeRaw, true)
	if err != nil {
		return nil, err
	}
	return &PcapWire{Wire: inner, w: w, buf: gopacket.NewSerializeBuffer()}, nil
}

func (p *PcapWire) ReadBatch(dgs []endpoint.Datagram) (int, error) {
	n, err := p.Wire.ReadBatch(dgs)
	p.record(dgs[:n], false)
	return n, err
}

func (p *PcapWire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	n, err := p.Wire.WriteBatch(dgs) // fills the ICRCs first
	p.record(dgs[:max(n, 0)], true)
	return n, err
}

// record writes dgs; sent ones leave from the wire's own address and port
// (a UDP socket bound to 4791 sends from 4791, whatever Datagram.Src says).
func (p *PcapWire) record(dgs []endpoint.Datagram, sent bool) {
	if len(dgs) == 0 {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, dg := range dgs {
		if p.closed || p.err != nil {
			return
		}
		if dg.Drop != 0 {
			continue // not read whole: no bytes to record
		}
		if local := p.Wire.LocalAddr(); sent {
			if local.Addr().IsUnspecified() {
				local = netip.AddrPortFrom(dg.Src.Addr(), local.Port())
			}
			dg.Src = local
		}
		frame, err := ipFrame(p.buf, dg)
		if err != nil {
			p.err = err
			return
		}
		p.err = p.w.WritePacket(capture.Packet{Data: frame, LinkType: layers.LinkTypeRaw,
			Time: now, Length: len(frame)})
		p.n++
	}
}

// Close closes the wire, then the file.
func (p *PcapWire) Close() error {
	err := p.Wire.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return err
	}
	p.closed = true
	return errors.Join(err, p.err, p.w.Close())
}

// Packets is the number of packets recorded.
func (p *PcapWire) Packets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// ipFrame serializes dg as an IPv4 or IPv6 packet with its UDP header into
// buf, whose bytes it returns (valid until the next call). IPv4 gets its
// header checksum and a zero UDP checksum, as RoCEv2 sends (craft's frames
// too); IPv6 its UDP checksum, which the protocol requires.
func ipFrame(buf gopacket.SerializeBuffer, dg endpoint.Datagram) ([]byte, error) {
	src, dst := dg.Src.Addr().Unmap(), dg.Dst.Addr().Unmap()
	hop := dg.HopLimit
	if hop == 0 {
		hop = 64
	}
	udp := &gplayers.UDP{SrcPort: gplayers.UDPPort(dg.Src.Port()), DstPort: gplayers.UDPPort(dg.Dst.Port())}
	var ip gopacket.SerializableLayer
	v4 := src.Is4() && dst.Is4()
	if v4 {
		ip = &gplayers.IPv4{Version: 4, IHL: 5, TOS: dg.TrafficClass, Flags: gplayers.IPv4DontFragment, TTL: hop,
			Protocol: gplayers.IPProtocolUDP, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	} else {
		s16, d16 := src.As16(), dst.As16()
		ip6 := &gplayers.IPv6{Version: 6, TrafficClass: dg.TrafficClass, NextHeader: gplayers.IPProtocolUDP, HopLimit: hop,
			SrcIP: s16[:], DstIP: d16[:]}
		if err := udp.SetNetworkLayerForChecksum(ip6); err != nil {
			return nil, err
		}
		ip = ip6
	}
	if err := buf.Clear(); err != nil {
		return nil, err
	}
	// Innermost first, as gopacket.SerializeLayers does, so that each
	// layer takes its own checksum option.
	for i, l := range []gopacket.SerializableLayer{gopacket.Payload(dg.Payload), udp, ip} {
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: i == 2 || (i == 1 && !v4)}
		if err := l.SerializeTo(buf, opts); err != nil {
			return nil, err
		}
	}
	b := buf.Bytes()
	if !v4 && udp.Checksum == 0 {
		binary.BigEndian.PutUint16(b[40+6:], 0xFFFF) // a computed 0 is sent as all ones (RFC 8200)
	}
	return b, nil
}
