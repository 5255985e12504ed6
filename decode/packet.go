package decode

import (
	"errors"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// Link types the decoder starts from (the pcap LINKTYPE_ values).
const (
	LinkTypeEthernet   = 1
	LinkTypeRaw        = 101
	LinkTypeIPv4       = 228
	LinkTypeIPv6       = 229
	LinkTypeERF        = 197
	LinkTypeInfiniBand = 247
)

// LinkLayerFactory tells the decoder how to start frames of a link type it
// does not know itself: the first layer type and fresh decoding layers for
// it. The capture package provides Linux SLL and SLL2 this way
// (capture.DecodingLinkLayers), so decode need not import capture; the
// type is an alias so capture can spell it without importing decode.
type LinkLayerFactory = func() (first gopacket.LayerType, dls []gopacket.DecodingLayer)

// Options adjust decoding.
type Options struct {
	// DecodeDC treats opcodes 0x40-0x5F as Mellanox DC rather than RD.
	DecodeDC bool
	// RoCEv2Ports are extra UDP ports that carry RoCEv2 ("-d udp.port==N,infiniband").
	RoCEv2Ports []uint16
	// SkipCRC leaves the ICRC and VCRC unchecked (status CRCAbsent), for
	// runs that only count: checking costs about a tenth of decoding.
	SkipCRC bool
	// LinkLayers adds link types, by pcap LINKTYPE_ value.
	LinkLayers map[uint32]LinkLayerFactory
}

// Input is one captured frame as a capture source delivers it.
type Input struct {
	Number    int // 1-based frame number
	Time      time.Time
	Length    int // length on the wire
	LinkType  uint32
	Interface int
	Data      []byte // the captured bytes; Packet refers to them, it does not copy
}

// Packet is one decoded frame. It refers to the decoder's reusable state and
// is valid until the next call to Decode.
type Packet struct {
	Input
	// Headers holds every header decoded from the frame.
	Headers *layers.Parser
	// Err is the decoding error of a malformed or truncated frame (a
	// *layers.DecodeError); the headers before the damage stay valid.
	Err error
	// ICRC and VCRC say whether the packet's CRCs verify; the Computed
	// values are what they should be.
	ICRC, VCRC         layers.CRCStatus
	ICRCComputed       uint32
	VCRCComputed       uint16
	RelTime, DeltaTime time.Duration // since the first frame, since the previous one
	Encapsulation      layers.Encapsulation
	// Analysis is what an Analyzer found about the packet (ibwire.analysis.*);
	// zero until Analyzer.Analyze runs on it.
	Analysis PacketAnalysis
	has      layerSet
}

// layerSet is a bitmask of the layer types a frame had, for constant-time
// "does the frame have X" checks in filters and field getters.
type layerSet uint64

const (
	hasEthernet layerSet = 1 << iota
	hasDot1Q
	hasIPv4
	hasIPv6
	hasUDP
	hasTCP
	hasERF
	hasLRH
	hasGRH
	hasBTH
	hasMAD
	hasPayload
	hasARP
)

// layerBits maps layer types to their bit; an array indexed by type costs
// less than a map lookup for each of the half-dozen layers of every packet.
var layerBits = func() (t [2000]layerSet) {
	for lt, bit := range map[gopacket.LayerType]layerSet{
		gplayers.LayerTypeEthernet: hasEthernet, gplayers.LayerTypeDot1Q: hasDot1Q, gplayers.LayerTypeIPv4: hasIPv4,
		gplayers.LayerTypeIPv6: hasIPv6, gplayers.LayerTypeUDP: hasUDP, gplayers.LayerTypeTCP: hasTCP,
		layers.LayerTypeERF: hasERF, layers.LayerTypeLRH: hasLRH, layers.LayerTypeGRH: hasGRH,
		layers.LayerTypeBTH: hasBTH, layers.LayerTypeMAD: hasMAD, gopacket.LayerTypePayload: hasPayload,
		gplayers.LayerTypeARP: hasARP,
	} {
		t[lt] = bit
	}
	return t
}()

func bitOf(t gopacket.LayerType) layerSet {
	if int(t) < len(layerBits) {
		return layerBits[t]
	}
	return 0
}

// Has reports whether the frame had a layer of type t.
func (p *Packet) Has(t gopacket.LayerType) bool {
	if bit := bitOf(t); bit != 0 {
		return p.has&bit != 0
	}
	return p.Headers.Has(t)
}

// IsIB reports whether the frame carries an InfiniBand transport packet.
func (p *Packet) IsIB() bool { return p.has&hasBTH != 0 }

// IBMalformed reports whether the frame failed to decode inside InfiniBand:
// in an LRH, GRH, BTH, extended header, MAD, payload or CRC, or after a UDP
// header that leads to a BTH. An empty frame, or one cut or damaged before
// anything says it is InfiniBand (Ethernet, ARP, IP of other traffic), is
// malformed but no InfiniBand packet.
func (p *Packet) IBMalformed() bool {
	if p.Err == nil {
		return false
	}
	if p.has&(hasBTH|hasLRH|hasGRH|hasMAD) != 0 {
		return true
	}
	if p.has&hasUDP != 0 && p.Headers.UDP.NextLayerType() == layers.LayerTypeBTH {
		return true
	}
	var de *layers.DecodeError
	if errors.As(p.Err, &de) {
		switch de.Layer {
		case "LRH", "GRH", "BTH", "ICRC", "VCRC", "MAD":
			return true
		}
	}
	return false
}

// BTH returns the transport header, or nil when the frame has none.
func (p *Packet) BTH() *layers.BTH {
	if p.has&hasBTH == 0 {
		return nil
	}
	return &p.Headers.BTH
}

// Decoder turns captured frames into Packets. It keeps one layers.Parser per
// starting layer and the timing state for relative times; it is not safe for
// concurrent use.
type Decoder struct {
	opts    Options
	parsers map[uint32]*layers.Parser
	ipv4    *layers.Parser
	ipv6    *layers.Parser
	pkt     Packet
	startNs int64 // first frame's time, Unix nanoseconds
	prevNs  int64
	started bool
}

// NewDecoder returns a decoder.
func NewDecoder(opts Options) *Decoder {
	return &Decoder{opts: opts, parsers: map[uint32]*layers.Parser{}}
}

func (d *Decoder) parserOpts(extra []gopacket.DecodingLayer) layers.ParserOptions {
	return layers.ParserOptions{DecodeDC: d.opts.DecodeDC, RoCEv2Ports: d.opts.RoCEv2Ports, Extra: extra}
}

// parserFor returns the parser for a frame of link type lt, or nil.
func (d *Decoder) parserFor(lt uint32, data []byte) *layers.Parser {
	switch lt {
	case LinkTypeRaw, LinkTypeIPv4, LinkTypeIPv6, 12, 14:
		// Raw IP: the version nibble decides, per frame.
		if len(data) > 0 && data[0]>>4 == 6 {
			if d.ipv6 == nil {
				d.ipv6 = layers.NewParser(gplayers.LayerTypeIPv6, d.parserOpts(nil))
			}
			return d.ipv6
		}
		if d.ipv4 == nil {
			d.ipv4 = layers.NewParser(gplayers.LayerTypeIPv4, d.parserOpts(nil))
		}
		return d.ipv4
	}
	if p, ok := d.parsers[lt]; ok {
		return p
	}
	var p *layers.Parser
	switch lt {
	case LinkTypeEthernet:
		p = layers.NewParser(gplayers.LayerTypeEthernet, d.parserOpts(nil))
	case LinkTypeERF:
		p = layers.NewParser(layers.LayerTypeERF, d.parserOpts(nil))
	case LinkTypeInfiniBand:
		p = layers.NewParser(layers.LayerTypeLRH, d.parserOpts(nil))
	default:
		if mk, ok := d.opts.LinkLayers[lt]; ok {
			first, dls := mk()
			p = layers.NewParser(first, d.parserOpts(dls))
		}
	}
	d.parsers[lt] = p
	return p
}

// Decode decodes one frame. The returned Packet is reused by the next call.
func (d *Decoder) Decode(in Input) *Packet {
	pkt := &d.pkt
	*pkt = Packet{Input: in}
	// Nanosecond integers: time.Time.Sub costs more than the rest of the
	// bookkeeping of a packet (captures carry wall times only, no monotonic
	// reading, so nothing is lost).
	ns := in.Time.UnixNano()
	if !d.started {
		d.startNs, d.prevNs, d.started = ns, ns, true
	}
	pkt.RelTime = time.Duration(ns - d.startNs)
	pkt.DeltaTime = time.Duration(ns - d.prevNs)
	d.prevNs = ns

	p := d.parserFor(in.LinkType, in.Data)
	if p == nil {
		pkt.Headers = emptyParser
		pkt.Err = &UnsupportedLinkTypeError{LinkType: in.LinkType}
		return pkt
	}
	pkt.Headers = p
	pkt.Err = p.Decode(in.Data)
	for _, t := range p.Decoded {
		pkt.has |= bitOf(t)
	}
	if pkt.has&hasBTH != 0 {
		pkt.Encapsulation = p.Encapsulation()
	}
	if pkt.Err == nil && pkt.has&hasBTH != 0 {
		if !d.opts.SkipCRC {
			pkt.ICRC, pkt.ICRCComputed = p.CheckICRC()
			pkt.VCRC, pkt.VCRCComputed = p.CheckVCRC()
		}
	}
	return pkt
}

// emptyParser stands in for the headers of a frame that could not be decoded at all.
var emptyParser = layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})

// UnsupportedLinkTypeError reports a link type the decoder cannot start from.
type UnsupportedLinkTypeError struct{ LinkType uint32 }

func (e *UnsupportedLinkTypeError) Error() string {
	return "decode: link type " + itoa(uint64(e.LinkType)) + " is not supported"
}

// Presence of the headers renderers ask about, without importing gopacket.

// HasEthernet reports an Ethernet header.
func (p *Packet) HasEthernet() bool { return p.has&hasEthernet != 0 }

// HasIPv4 reports an IPv4 header.
func (p *Packet) HasIPv4() bool { return p.has&hasIPv4 != 0 }

// HasIPv6 reports an IPv6 header.
func (p *Packet) HasIPv6() bool { return p.has&hasIPv6 != 0 }

// HasUDP reports a UDP header.
func (p *Packet) HasUDP() bool { return p.has&hasUDP != 0 }

// HasTCP reports a TCP header.
func (p *Packet) HasTCP() bool { return p.has&hasTCP != 0 }

// HasGRH reports a GRH (RoCEv1 or routed native IB).
func (p *Packet) HasGRH() bool { return p.has&hasGRH != 0 }

// HasLRH reports an LRH (native IB).
func (p *Packet) HasLRH() bool { return p.has&hasLRH != 0 }

// HasARP reports an ARP message.
func (p *Packet) HasARP() bool { return p.has&hasARP != 0 }

// HasMAD reports a management datagram.
func (p *Packet) HasMAD() bool { return p.has&hasMAD != 0 }
