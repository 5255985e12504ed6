package decode

import (
	"errors"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// Options adjust decoding.
type Options struct {
	// DecodeDC treats opcodes 0x40-0x5F as Mellanox DC rather than RD.
	DecodeDC bool
	// RoCEv2Ports are extra UDP ports that carry RoCEv2 ("-d udp.port==N,infiniband").
	RoCEv2Ports []uint16
	// SkipCRC leaves the ICRC and VCRC unchecked (status CRCAbsent), for
	// runs that only count: checking costs about a tenth of decoding.
	SkipCRC bool
}

// Input is one captured frame as a capture source delivers it; the decoded
// Packet refers to its Data, it does not copy.
type Input = capture.Packet

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
	// Correlation is what a correlation of capture points found about the
	// packet (ibwire.correlate.*); nil unless one set it.
	Correlation *Correlation
	// Analysis is what an Analyzer found about the packet (ibwire.analysis.*);
	// zero until Analyzer.Analyze runs on it.
	Analysis PacketAnalysis
	has      layerSet
	// perf is where a PerfMgt packet's counters are decoded once for all
	// their fields: the Decoder's, set for MAD packets only.
	perf *perfCounters
	// gso is the UDP GSO run a packet with a bad ICRC is (GSORun).
	gso gsoRun
}

// layerSet is a bitmask of the layer types a frame had, for constant-time
// "does the frame have X" checks in filters and field getters. Its bits
// stay below bit 32, where HeaderSet puts the extended headers
// (TestLayerSetFitsHeaderSet).
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
	hasSLL // a Linux cooked-capture header, version 1 or 2
	hasRWH
	hasMACControl
	// layerSetEnd is not a layer: the bit after the last one, which
	// TestLayerSetFitsHeaderSet keeps at or below HeaderSet's bit 32.
	layerSetEnd
)

// layerBits maps layer types to their bit; an array indexed by type costs
// less than a map lookup for each of the half-dozen layers of every packet.
var layerBits = func() (t [2000]layerSet) {
	for lt, bit := range map[gopacket.LayerType]layerSet{
		gplayers.LayerTypeEthernet: hasEthernet, gplayers.LayerTypeDot1Q: hasDot1Q, gplayers.LayerTypeIPv4: hasIPv4,
		gplayers.LayerTypeIPv6: hasIPv6, gplayers.LayerTypeUDP: hasUDP, gplayers.LayerTypeTCP: hasTCP,
		layers.LayerTypeERF: hasERF, layers.LayerTypeLRH: hasLRH, layers.LayerTypeGRH: hasGRH,
		layers.LayerTypeBTH: hasBTH, layers.LayerTypeMAD: hasMAD, gopacket.LayerTypePayload: hasPayload,
		gplayers.LayerTypeARP: hasARP, layers.LayerTypeLinuxSLL: hasSLL, layers.LayerTypeLinuxSLL2: hasSLL,
		layers.LayerTypeRWH:        hasRWH,
		layers.LayerTypeMACControl: hasMACControl,
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

// Cut reports an InfiniBand packet that the capture cut short (fewer bytes
// captured than were on the wire: a snapshot length) after its BTH: the
// packet was whole on the wire, so what its headers say holds (the BTH, and
// each extended header BTH.HasETH names), and only the payload and ICRC are
// missing. The analysis follows such packets as it follows whole ones.
func (p *Packet) Cut() bool {
	return p.Err != nil && p.cut() // the common case, inlined
}

// cut is Cut's rare case; kept out of line so that Cut stays small enough
// to inline.
//
//go:noinline
func (p *Packet) cut() bool {
	return p.has&hasBTH != 0 && p.Length > len(p.Data) && errors.Is(p.Err, layers.ErrTruncated)
}

// PayloadLength is the length of the IB payload the packet carried, pad
// excluded: what BTH.PacketPayload holds, or, for a packet the capture Cut,
// what the enclosing header's length says the packet had (UDP length for
// RoCEv2, GRH PayLen for RoCEv1 and IB with a GRH, LRH PktLen for IB), so
// messages keep their sizes in a capture taken with a snapshot length.
func (p *Packet) PayloadLength() int {
	if p.Err == nil { // the common case, inlined
		return len(p.Headers.BTH.PacketPayload())
	}
	return p.cutPayloadLength()
}

func (p *Packet) cutPayloadLength() int {
	b := &p.Headers.BTH
	if !p.Cut() {
		return len(b.PacketPayload())
	}
	var transport int // BTH to ICRC
	switch {
	case p.has&hasUDP != 0:
		transport = int(p.Headers.UDP.Length) - 8
	case p.has&hasGRH != 0:
		transport = int(p.Headers.GRH.PayLen)
	case p.has&hasLRH != 0:
		transport = int(p.Headers.LRH.PktLen)*4 - layers.LRHLength
	}
	n := transport - len(b.Contents) - (b.Info().HeaderLength() - layers.BTHLength) - int(b.PadCount) - layers.ICRCLength
	return max(n, 0)
}

// IBMalformed reports whether the frame failed to decode inside InfiniBand:
// in an LRH, GRH, BTH, extended header, MAD, payload or CRC, or after a UDP
// header that leads to a BTH. An empty frame, or one cut or damaged before
// anything says it is InfiniBand (Ethernet, ARP, IP of other traffic), is
// malformed but no InfiniBand packet; neither is a packet the capture Cut,
// which was whole on the wire (tshark reports nothing for those either).
func (p *Packet) IBMalformed() bool {
	if p.Err == nil || p.Cut() {
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
	opts  Options
	own   Frame // where Decode decodes
	clock Clock
	gso   *gsoScratch // recogniseGSO's, made when first needed
}

// Clock is what a Decoder carries from one frame to the next: the first
// frame's time, from which relative times count, and the previous frame's,
// from which the delta counts. A run that decodes batches of frames on
// several goroutines reads the records in order, notes the Clock each batch
// starts from (Tick for every record) and hands it with the batch to the
// Decoder that decodes it (SetClock).
type Clock struct {
	startNs int64 // first frame's time, Unix nanoseconds
	prevNs  int64
	started bool
}

// Tick moves the clock past a frame captured at t, as decoding it does.
func (c *Clock) Tick(t time.Time) { c.tick(t.UnixNano()) }

func (c *Clock) tick(ns int64) {
	if !c.started {
		c.startNs, c.started = ns, true
	}
	c.prevNs = ns
}

// SetClock sets where the next frame's relative and delta times count from.
func (d *Decoder) SetClock(c Clock) { d.clock = c }

// Fork returns a new Decoder with d's options and a zero Clock, for another
// goroutine's share of the same capture.
func (d *Decoder) Fork() *Decoder { return NewDecoder(d.opts) }

// Frame is where one decoded frame lives: its Packet and the headers the
// Packet points to. A Decoder has one, which Decode reuses for every frame;
// DecodeInto decodes into a Frame of the caller's, so that a pipeline can
// hold a batch of frames decoded ahead of their analysis. The zero Frame
// is ready to use.
type Frame struct {
	parsers      map[gopacket.LayerType]*layers.Parser
	last         *layers.Parser // the parser of lastLinkType's frames
	lastLinkType layers.LinkType
	pkt          Packet
	perf         perfCounters
}

// NewDecoder returns a decoder.
func NewDecoder(opts Options) *Decoder {
	return &Decoder{opts: opts}
}

func (d *Decoder) parserOpts() layers.ParserOptions {
	return layers.ParserOptions{DecodeDC: d.opts.DecodeDC, RoCEv2Ports: d.opts.RoCEv2Ports}
}

// parserFor returns the parser for a frame of link type lt: one parser per
// first layer (layers.FirstLayer), made when first needed. A capture has
// one or a few link types, so the last one's parser is kept at hand (its
// caller looks there first); raw IP frames start with IPv4 or IPv6 by
// their version nibble and are looked up each time.
func (d *Decoder) parserFor(f *Frame, lt layers.LinkType, data []byte) (*layers.Parser, error) {
	first, err := layers.FirstLayer(lt, data)
	if err != nil {
		return nil, err
	}
	p, ok := f.parsers[first]
	if !ok {
		if f.parsers == nil {
			f.parsers = map[gopacket.LayerType]*layers.Parser{}
		}
		p = layers.NewParser(first, d.parserOpts())
		f.parsers[first] = p
	}
	if first != gplayers.LayerTypeIPv4 && first != gplayers.LayerTypeIPv6 {
		f.last, f.lastLinkType = p, lt
	}
	return p, nil
}

// Decode decodes one frame. The returned Packet is reused by the next call.
func (d *Decoder) Decode(in Input) *Packet { return d.decodeInto(&d.own, &in) }

// DecodeInto decodes one frame into f, in the Decoder's order of frames
// (the relative times follow the calls, whichever Frame each goes to). The
// returned Packet lives in f and is valid until f is decoded into again;
// in.Data must stay unchanged as long.
func (d *Decoder) DecodeInto(f *Frame, in Input) *Packet { return d.decodeInto(f, &in) }

// decodeInto is DecodeInto with the frame passed by reference: one copy of
// it, into the Packet, rather than one more for each call.
func (d *Decoder) decodeInto(f *Frame, in *Input) *Packet {
	pkt := &f.pkt
	// Field by field: one composite assignment of the whole Packet (nearly
	// 300 bytes, pointers among them) cost a tenth of decoding a packet.
	pkt.Input = *in
	pkt.Err = nil // Headers is set below, on every path
	pkt.ICRC, pkt.VCRC, pkt.ICRCComputed, pkt.VCRCComputed = 0, 0, 0, 0
	pkt.Encapsulation, pkt.Correlation = 0, nil
	pkt.Analysis = PacketAnalysis{}
	pkt.has, pkt.perf, pkt.gso = 0, nil, gsoRun{}
	// Nanosecond integers: time.Time.Sub costs more than the rest of the
	// bookkeeping of a packet (captures carry wall times only, no monotonic
	// reading, so nothing is lost).
	ns := in.Time.UnixNano()
	c := &d.clock
	prev := c.prevNs
	if !c.started {
		prev = ns
	}
	c.tick(ns)
	pkt.RelTime = time.Duration(ns - c.startNs)
	pkt.DeltaTime = time.Duration(ns - prev)

	p := f.last
	if p == nil || in.LinkType != f.lastLinkType {
		var err error
		if p, err = d.parserFor(f, in.LinkType, in.Data); err != nil {
			pkt.Headers = emptyParser
			pkt.Err = err
			return pkt
		}
	}
	pkt.Headers = p
	if err := p.Decode(in.Data); err != nil {
		pkt.Err = err
	}
	if p.FastPath() {
		// The commonest frame: its layers are known without a look at
		// each (and its error is nil).
		pkt.has = hasEthernet | hasIPv4 | hasUDP | hasBTH
		if len(p.BTH.PacketPayload()) > 0 {
			pkt.has |= hasPayload
		}
		pkt.Encapsulation = p.Encapsulation()
	} else {
		for _, t := range p.Decoded {
			pkt.has |= bitOf(t)
		}
		if pkt.has&hasBTH != 0 {
			pkt.Encapsulation = p.Encapsulation()
		}
		if pkt.has&hasMAD != 0 {
			f.perf.decoded = false
			pkt.perf = &f.perf
		}
	}
	if pkt.Err == nil && pkt.has&hasBTH != 0 {
		if !d.opts.SkipCRC {
			pkt.ICRC, pkt.ICRCComputed = p.CheckICRC()
			if pkt.ICRC == layers.CRCBad {
				pkt.gso = d.recogniseGSO(pkt)
			}
			pkt.VCRC, pkt.VCRCComputed = p.CheckVCRC()
		} else if impossiblyLong(&p.BTH) {
			// A payload no one packet carries is damage or a GSO run
			// captured before segmentation: its ICRC says which, even
			// in a run that checks no other packet's.
			pkt.ICRC, pkt.ICRCComputed = p.CheckICRC()
			if pkt.ICRC == layers.CRCBad {
				pkt.gso = d.recogniseGSO(pkt)
			}
		}
	}
	return pkt
}

// emptyParser stands in for the headers of a frame that could not be decoded at all.
var emptyParser = layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})

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

// HasVLAN reports an 802.1Q tag.
func (p *Packet) HasVLAN() bool { return p.has&hasDot1Q != 0 }

// HasARP reports an ARP message.
func (p *Packet) HasARP() bool { return p.has&hasARP != 0 }

// HasMACControl reports a MAC Control frame (PAUSE, PFC).
func (p *Packet) HasMACControl() bool { return p.has&hasMACControl != 0 }

// HasMAD reports a management datagram.
func (p *Packet) HasMAD() bool { return p.has&hasMAD != 0 }
