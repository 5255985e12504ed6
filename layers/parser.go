package layers

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// ParserOptions adjust how a Parser decodes.
type ParserOptions struct {
	// DecodeDC treats opcodes 0x40-0x5F as Mellanox DC (see BTH.DecodeDC).
	DecodeDC bool
	// RoCEv2Ports are UDP ports that carry a BTH besides 4791 (tshark's
	// "-d udp.port==N,infiniband").
	RoCEv2Ports []uint16
}

// Parser decodes frames through a gopacket.DecodingLayerParser over an
// explicit stack — Ethernet or Linux SLL/SLL2, 802.1Q, IPv4, IPv6, UDP, TCP, ERF, LRH, GRH, BTH
// with its extended headers, MAD with its class bodies, payload — and nothing
// else: untrusted bytes never reach gopacket's other decoders. Decoding
// allocates nothing per frame. After Decode, the fields hold the last frame's
// headers and Decoded lists their types in wire order; a Parser is not safe
// for concurrent use.
type Parser struct {
	Ethernet gplayers.Ethernet
	SLL      LinuxSLL
	SLL2     LinuxSLL2
	Dot1Q    gplayers.Dot1Q
	IPv4     gplayers.IPv4
	IPv6     gplayers.IPv6
	UDP      roceUDP
	TCP      gplayers.TCP
	ARP      gplayers.ARP
	ERF      ERF
	LRH      LRH
	RWH      RWH
	GRH      GRH
	BTH      BTH
	MAD      MAD
	Payload  gopacket.Payload
	// MACControl is a PAUSE or PFC frame's body (no InfiniBand in it).
	MACControl MACControl
	// GRE and ERSPAN wrap a frame a switch mirrored to a collector; the
	// mirrored frame's headers then replace the outer ones in Ethernet,
	// Dot1Q, IPv4 and IPv6 (Decoded lists both).
	GRE       GRE
	ERSPANII  ERSPANII
	ERSPANIII ERSPANIII

	// Decoded lists the layer types of the last frame, outermost first.
	Decoded []gopacket.LayerType

	first gopacket.LayerType
	dlp   *gopacket.DecodingLayerParser
	icrc  ICRCComputer

	encap      Encapsulation // of the last frame
	fast       bool          // the last frame took decodeRoCEv2Fast
	noFastPath bool          // tests compare the fast path with the general one
	fastDF     truncFlag     // the fast path's decode feedback

	frame []byte
}

// roceUDP is gopacket's UDP layer with RoCEv2 port selection of our own:
// either port being a RoCEv2 port means a BTH follows (gopacket alone looks
// at the destination port first, and its table is global).
type roceUDP struct {
	gplayers.UDP
	// Trailing holds bytes the IP packet carries after UDP.Length ends:
	// gopacket drops them, and decode then serialize must give them back.
	Trailing []byte
	ports    []uint16
}

func (u *roceUDP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := u.UDP.DecodeFromBytes(data, df); err != nil {
		return err
	}
	u.Trailing = nil
	if n := int(u.Length); n >= 8 && n < len(data) {
		u.Trailing = data[n:]
	}
	return nil
}

// SerializeTo writes the UDP header (gopacket's), then the trailing bytes.
func (u *roceUDP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if err := u.UDP.SerializeTo(b, opts); err != nil {
		return err
	}
	if len(u.Trailing) > 0 {
		t, err := b.AppendBytes(len(u.Trailing))
		if err != nil {
			return err
		}
		copy(t, u.Trailing)
	}
	return nil
}

func (u *roceUDP) NextLayerType() gopacket.LayerType {
	if u.SrcPort == UDPPortRoCEv2 || u.DstPort == UDPPortRoCEv2 || u.isRoCEPort(uint16(u.SrcPort), uint16(u.DstPort)) {
		return LayerTypeBTH
	}
	return u.UDP.NextLayerType()
}

// isRoCEPort reports whether either port is one of the extra RoCEv2 ports.
func (u *roceUDP) isRoCEPort(sport, dport uint16) bool {
	for _, p := range u.ports {
		if sport == p || dport == p {
			return true
		}
	}
	return false
}

// NewParser returns a parser whose frames start with layer first
// (gplayers.LayerTypeEthernet, LayerTypeLRH, LayerTypeERF, LayerTypeGRH,
// LayerTypeBTH, gplayers.LayerTypeIPv4 ...); FirstLayer names the one for
// a capture's link type.
func NewParser(first gopacket.LayerType, opts ParserOptions) *Parser {
	p := &Parser{first: first, Decoded: make([]gopacket.LayerType, 0, 16)}
	p.BTH.DecodeDC = opts.DecodeDC
	p.UDP.ports = append([]uint16(nil), opts.RoCEv2Ports...)
	return p
}

// layerParser returns gopacket's layer loop over p's layers, made the first
// time a frame misses the fast path: its container (a slice indexed by
// layer type, ~17 KB) is most of a Parser's memory, and a pipeline that
// keeps a Parser per packet in flight need not pay it for RoCEv2 frames.
func (p *Parser) layerParser() *gopacket.DecodingLayerParser {
	if p.dlp != nil {
		return p.dlp
	}
	dls := []gopacket.DecodingLayer{&p.Ethernet, &p.SLL, &p.SLL2, &p.Dot1Q, &p.IPv4, &p.IPv6, &p.UDP, &p.TCP, &p.ARP,
		&p.ERF, &p.LRH, &p.RWH, &p.GRH, &p.Payload, &p.MACControl, &p.GRE, &p.ERSPANII, &p.ERSPANIII}
	dls = append(dls, p.BTH.DecodingLayers()...)
	dls = append(dls, p.MAD.DecodingLayers()...)
	p.dlp = gopacket.NewDecodingLayerParser(p.first)
	// A slice indexed by layer type finds each decoder without the map
	// lookup of gopacket's default container; our types are all below 2000.
	var dlc gopacket.DecodingLayerContainer = gopacket.DecodingLayerSparse(nil)
	for _, d := range dls {
		dlc = dlc.Put(d)
	}
	p.dlp.SetDecodingLayerContainer(dlc)
	p.dlp.IgnoreUnsupported = true
	return p.dlp
}

// Decode decodes one frame. It returns a *DecodeError naming the layer and
// field where decoding stopped, or where a truncated frame ends; the layers
// before that point stay valid. Frames that are not RoCE or IB decode as far
// as the stack reaches, without error.
//
// The common case — Ethernet II, IPv4 without options or fragments, UDP to
// or from a RoCEv2 port, a whole BTH whose payload is not a MAD — is decoded
// here without gopacket's layer loop, filling the same structs and the same
// Decoded list as DecodeLayers would. Anything else, having changed nothing
// the general path relies on, goes to decodeGeneral, which decodes (and
// explains) the frame.
func (p *Parser) Decode(frame []byte) error {
	p.frame = frame
	if p.noFastPath {
		return p.decodeGeneral(frame)
	}
	const ethLen, ipLen, udpLen = 14, 20, 8
	if p.first != gplayers.LayerTypeEthernet || len(frame) < ethLen+ipLen+udpLen+BTHLength+ICRCLength ||
		frame[12] != 0x08 || frame[13] != 0x00 {
		return p.decodeGeneral(frame)
	}
	ip := frame[ethLen:]
	length := int(binary.BigEndian.Uint16(ip[2:4]))
	flagsFrag := binary.BigEndian.Uint16(ip[6:8])
	if ip[0] != 0x45 || ip[9] != uint8(gplayers.IPProtocolUDP) || flagsFrag&0x3FFF != 0 ||
		length < ipLen+udpLen || length > len(ip) {
		return p.decodeGeneral(frame)
	}
	udp := ip[ipLen:length]
	ulen := int(binary.BigEndian.Uint16(udp[4:6]))
	sport, dport := binary.BigEndian.Uint16(udp[0:2]), binary.BigEndian.Uint16(udp[2:4])
	if ulen < udpLen+BTHLength+ICRCLength || ulen > len(udp) ||
		(sport != uint16(UDPPortRoCEv2) && dport != uint16(UDPPortRoCEv2) && !p.UDP.isRoCEPort(sport, dport)) {
		return p.decodeGeneral(frame)
	}
	p.fastDF = false
	if err := p.BTH.DecodeFromBytes(udp[udpLen:ulen], &p.fastDF); err != nil || p.fastDF || p.BTH.payloadType == LayerTypeMAD {
		return p.decodeGeneral(frame)
	}

	e := &p.Ethernet
	e.DstMAC, e.SrcMAC = frame[0:6], frame[6:12]
	e.EthernetType, e.Length = gplayers.EthernetTypeIPv4, 0
	e.Contents, e.Payload = frame[:ethLen], frame[ethLen:]

	v4 := &p.IPv4
	v4.Version, v4.IHL, v4.TOS = 4, 5, ip[1]
	v4.Length = uint16(length)
	v4.Id = binary.BigEndian.Uint16(ip[4:6])
	v4.Flags, v4.FragOffset = gplayers.IPv4Flag(flagsFrag>>13), flagsFrag&0x1FFF
	v4.TTL, v4.Protocol = ip[8], gplayers.IPProtocolUDP
	v4.Checksum = binary.BigEndian.Uint16(ip[10:12])
	v4.SrcIP, v4.DstIP = ip[12:16], ip[16:20]
	// Stores only where the value changes: a pointer store costs a write
	// barrier check, and these are nearly always empty already.
	if len(v4.Options) != 0 {
		v4.Options = v4.Options[:0]
	}
	if v4.Padding != nil {
		v4.Padding = nil
	}
	v4.Contents, v4.Payload = ip[:ipLen], ip[ipLen:length]

	u := &p.UDP
	u.SrcPort, u.DstPort = gplayers.UDPPort(sport), gplayers.UDPPort(dport)
	u.Length = uint16(ulen)
	u.Checksum = binary.BigEndian.Uint16(udp[6:8])
	u.Contents, u.Payload = udp[:udpLen], udp[udpLen:ulen]
	if ulen < len(udp) {
		u.Trailing = udp[ulen:]
	} else if u.Trailing != nil {
		u.Trailing = nil
	}

	const fixed = 4 // Ethernet, IPv4, UDP, BTH
	if cap(p.Decoded) < fixed+maxETHs+1 {
		p.Decoded = make([]gopacket.LayerType, 0, 16)
	}
	d := p.Decoded[:fixed+maxETHs+1]
	d[0], d[1], d[2], d[3] = gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, LayerTypeBTH
	l := &ethLayouts[p.BTH.Opcode]
	// All four, used or not: cheaper than a loop over those used (the
	// constant stops the build should an opcode ever have more).
	const _ = uint(maxETHs-4) + uint(4-maxETHs)
	d[fixed], d[fixed+1], d[fixed+2], d[fixed+3] = l.lts[0], l.lts[1], l.lts[2], l.lts[3]
	n := fixed + int(l.n)
	if len(p.BTH.payload) > 0 {
		p.Payload = p.BTH.payload
		d[n] = gopacket.LayerTypePayload
		n++
	}
	p.Decoded = p.Decoded[:n]
	p.encap, p.fast = EncapRoCEv2IPv4, true
	return nil
}

// decodeGeneral is Decode for a frame the common case does not cover.
func (p *Parser) decodeGeneral(frame []byte) error {
	p.fast = false
	err := p.decode(frame)
	p.encap = p.encapsulation()
	return err
}

// FastPath reports whether the last frame was of the commonest kind,
// which Decode takes a shorter way through: Ethernet II, IPv4 without
// options, UDP to or from a RoCEv2 port, a whole BTH whose payload is no
// MAD. Decoded then lists exactly Ethernet, IPv4, UDP, BTH, the opcode's
// extended headers and, when the BTH carries any, the payload; the error
// was nil.
func (p *Parser) FastPath() bool { return p.fast }

// decode is the general path: gopacket's layer loop, then an explanation of
// whatever stopped it.
func (p *Parser) decode(frame []byte) error {
	err := p.layerParser().DecodeLayers(frame, &p.Decoded)
	var located error
	if err != nil {
		t, _ := p.layerInput()
		located = p.locate(err)
		if t == LayerTypeBTH && p.BTH.Contents != nil {
			// The base header was read before the fault: a pad count larger
			// than the payload (every extended header read too), or data
			// that ends before an extended header or the ICRC, as a
			// capture's snapshot length cuts packets (those read whole
			// count: BTH.HasETH). Keep them visible, as Wireshark does.
			p.Decoded = append(p.Decoded, LayerTypeBTH)
		}
		if t == LayerTypeMACControl && p.MACControl.Contents != nil {
			// The opcode was read: keep the parameters that fit, as
			// Wireshark shows them.
			p.Decoded = append(p.Decoded, LayerTypeMACControl)
		}
	}
	if p.dlp.Truncated {
		// A length field says the frame should be longer: the layer that
		// failed, if any, only saw the short remainder, so the length fields
		// tell more truly where the frame was cut.
		if terr := p.truncation(); terr != nil {
			if p.BTH.Contents != nil && !p.BTH.Cut() && p.Has(LayerTypeBTH) {
				// The BTH took the last bytes captured for its pad and
				// ICRC; they are payload, and the trailer was not captured.
				p.BTH.decodeCut(p.frame[offsetIn(p.frame, p.BTH.Contents):], len(p.BTH.Contents))
			}
			return terr
		}
	}
	if err != nil {
		return located
	}
	if next, in := p.layerInput(); len(in) == 0 && next != gopacket.LayerTypePayload && p.decodingLayer(next) != nil {
		// gopacket stops quietly when a header leaves no bytes for the next one.
		name, spans := headerFields(next)
		return &DecodeError{Layer: name, Field: spans[0].Name, FrameOffset: len(frame), Need: spans[0].Size, Err: ErrTruncated,
			Detail: "the frame ends where this header should start"}
	}
	return nil
}

// headerFields names a layer type and lists its fields.
func headerFields(t gopacket.LayerType) (string, []FieldSpan) {
	if g, ok := gopacketFields[t]; ok {
		return g.name, g.spans
	}
	switch t {
	case LayerTypeERF:
		return "ERF", erfFields
	case LayerTypeLRH:
		return "LRH", lrhFields
	case LayerTypeRWH:
		return "RWH", rwhFields
	case LayerTypeGRH:
		return "GRH", grhFields
	case LayerTypeBTH:
		return "BTH", bthFields
	case LayerTypeMAD:
		return "MAD", madFields
	case LayerTypeCM:
		return "CM", cmDataFields // by attribute: FieldBytes reads the message's own table
	case LayerTypeMACControl:
		return "MACControl", macControlAllFields // each opcode's own: macControlSpans
	case gplayers.LayerTypeGRE:
		return "GRE", greFields
	case gplayers.LayerTypeERSPANII:
		return "ERSPANII", erspanIIFields
	case LayerTypeERSPANIII:
		return "ERSPANIII", erspanIIIFields
	case LayerTypeSMP:
		return "SMP", smpFields
	case LayerTypeSMPDirected:
		return "SMPDirected", smpDirectedFields
	case LayerTypeSA:
		return "SA", saFields
	case LayerTypePerfMgt:
		return "PerfMgt", perfMgtFields
	}
	for k := HdrRDETH; k <= HdrCNP; k++ {
		if k.LayerType() == t {
			return k.String(), ethFieldSpans(k)
		}
	}
	return t.String(), []FieldSpan{{"Header", 0, 1}}
}

// Frame returns the frame last decoded.
func (p *Parser) Frame() []byte { return p.frame }

// Has reports whether the last frame had a layer of type t.
func (p *Parser) Has(t gopacket.LayerType) bool {
	for _, d := range p.Decoded {
		if d == t {
			return true
		}
	}
	return false
}

// Encapsulation says what carried the IB transport packet of the last frame.
func (p *Parser) Encapsulation() Encapsulation { return p.encap }

// encapsulation works out Encapsulation once per frame.
func (p *Parser) encapsulation() Encapsulation {
	if !p.Has(LayerTypeBTH) {
		return EncapNone
	}
	switch {
	case p.Has(LayerTypeLRH) && p.LRH.LNH == LNHIBAGlobal:
		return EncapIBGlobal
	case p.Has(LayerTypeLRH):
		return EncapIBLocal
	case p.Has(LayerTypeGRH):
		return EncapRoCEv1
	case p.Has(gplayers.LayerTypeIPv4):
		return EncapRoCEv2IPv4
	case p.Has(gplayers.LayerTypeIPv6):
		return EncapRoCEv2IPv6
	}
	return EncapNone
}

// offsetIn returns where sub, a slice of frame, starts in frame.
func offsetIn(frame, sub []byte) int { return cap(frame) - cap(sub) }

// ICRCSpan returns the bytes of the last frame that ComputeICRC covers.
func (p *Parser) ICRCSpan() ([]byte, Encapsulation, bool) {
	enc := p.Encapsulation()
	var start []byte
	switch enc {
	case EncapRoCEv2IPv4:
		start = p.IPv4.Contents
	case EncapRoCEv2IPv6:
		start = p.IPv6.Contents
	case EncapRoCEv1:
		start = p.GRH.Contents
	case EncapIBLocal, EncapIBGlobal:
		start = p.LRH.Contents
	default:
		return nil, EncapNone, false
	}
	s := offsetIn(p.frame, start)
	e := offsetIn(p.frame, p.BTH.Trailer.Contents) + len(p.BTH.Trailer.Contents)
	if s < 0 || e > len(p.frame) || s > e {
		return nil, enc, false
	}
	return p.frame[s:e], enc, true
}

// CRCStatus is the outcome of checking a CRC.
type CRCStatus uint8

// CRC check outcomes (the values of ibwire.icrc.status).
const (
	CRCAbsent CRCStatus = iota // the frame has no such CRC
	CRCGood
	CRCBad
)

var crcStatusNames = [...]string{"absent", "good", "bad"}

func (s CRCStatus) String() string {
	if int(s) < len(crcStatusNames) {
		return crcStatusNames[s]
	}
	return fmt.Sprintf("CRCStatus(%d)", uint8(s))
}

// CheckICRC verifies the ICRC of the last frame; want is the computed value.
func (p *Parser) CheckICRC() (status CRCStatus, want uint32) {
	span, enc, ok := p.ICRCSpan()
	if !ok {
		return CRCAbsent, 0
	}
	want, err := p.icrc.Compute(enc, span)
	if err != nil {
		return CRCAbsent, 0
	}
	if want == p.BTH.Trailer.ICRC {
		return CRCGood, want
	}
	return CRCBad, want
}

// CheckVCRC verifies the VCRC of the last frame, when it is native IB.
func (p *Parser) CheckVCRC() (status CRCStatus, want uint16) {
	if !p.Has(LayerTypeLRH) || !p.LRH.HasVCRC {
		return CRCAbsent, 0
	}
	s := offsetIn(p.frame, p.LRH.Contents)
	want = ComputeVCRC(p.frame[s : s+int(p.LRH.PktLen)*4])
	if want == p.LRH.VCRC {
		return CRCGood, want
	}
	return CRCBad, want
}

// SerializableLayers returns the layers of the last frame in wire order, for
// gopacket.SerializeLayers: decode then serialize gives the frame back.
func (p *Parser) SerializableLayers() []gopacket.SerializableLayer {
	var ls []gopacket.SerializableLayer
	for _, t := range p.Decoded {
		switch t {
		case gplayers.LayerTypeEthernet:
			ls = append(ls, &p.Ethernet)
		case gplayers.LayerTypeDot1Q:
			ls = append(ls, &p.Dot1Q)
		case gplayers.LayerTypeIPv4:
			ls = append(ls, &p.IPv4)
		case gplayers.LayerTypeIPv6:
			ls = append(ls, &p.IPv6)
		case gplayers.LayerTypeUDP:
			ls = append(ls, &p.UDP)
		case gplayers.LayerTypeTCP:
			ls = append(ls, &p.TCP)
		case gplayers.LayerTypeARP:
			ls = append(ls, &p.ARP)
		case LayerTypeERF:
			ls = append(ls, &p.ERF)
		case LayerTypeLRH:
			ls = append(ls, &p.LRH)
		case LayerTypeRWH:
			ls = append(ls, &p.RWH)
		case LayerTypeGRH:
			ls = append(ls, &p.GRH)
		case LayerTypeBTH:
			ls = append(ls, &p.BTH)
			for _, k := range p.BTH.Info().HeaderList() {
				ls = append(ls, p.BTH.ETH(k))
			}
			if p.BTH.payloadType != LayerTypeMAD || len(p.BTH.payload) == 0 {
				ls = append(ls, gopacket.Payload(p.BTH.payload))
			}
		case LayerTypeMAD:
			ls = append(ls, &p.MAD)
			if body := p.MAD.classBody(p.MAD.MgmtClass); body != nil {
				if s, ok := body.(gopacket.SerializableLayer); ok {
					ls = append(ls, s)
				}
			} else {
				ls = append(ls, gopacket.Payload(p.MAD.Payload))
			}
		case LayerTypeMACControl:
			ls = append(ls, &p.MACControl)
		case gopacket.LayerTypePayload:
			if !p.Has(LayerTypeBTH) {
				ls = append(ls, p.Payload)
			}
		}
	}
	if p.Has(LayerTypeBTH) {
		ls = append(ls, &p.BTH.Trailer)
	}
	return ls
}

// layerInput returns the bytes that the layer after the last decoded one
// was given, and that layer's type.
func (p *Parser) layerInput() (gopacket.LayerType, []byte) {
	if len(p.Decoded) == 0 {
		return p.first, p.frame
	}
	last := p.Decoded[len(p.Decoded)-1]
	dl := p.decodingLayer(last)
	if dl == nil {
		return gopacket.LayerTypeZero, nil
	}
	return dl.NextLayerType(), dl.LayerPayload()
}

func (p *Parser) decodingLayer(t gopacket.LayerType) gopacket.DecodingLayer {
	switch t {
	case gplayers.LayerTypeEthernet:
		return &p.Ethernet
	case LayerTypeLinuxSLL:
		return &p.SLL
	case LayerTypeLinuxSLL2:
		return &p.SLL2
	case gplayers.LayerTypeDot1Q:
		return &p.Dot1Q
	case gplayers.LayerTypeIPv4:
		return &p.IPv4
	case gplayers.LayerTypeIPv6:
		return &p.IPv6
	case gplayers.LayerTypeUDP:
		return &p.UDP
	case gplayers.LayerTypeTCP:
		return &p.TCP
	case gplayers.LayerTypeARP:
		return &p.ARP
	case LayerTypeERF:
		return &p.ERF
	case LayerTypeLRH:
		return &p.LRH
	case LayerTypeRWH:
		return &p.RWH
	case LayerTypeGRH:
		return &p.GRH
	case LayerTypeBTH:
		return &p.BTH
	case LayerTypeMAD:
		return &p.MAD
	case gopacket.LayerTypePayload:
		return &p.Payload
	case LayerTypeMACControl:
		return &p.MACControl
	case gplayers.LayerTypeGRE:
		return &p.GRE
	case gplayers.LayerTypeERSPANII:
		return &p.ERSPANII
	case LayerTypeERSPANIII:
		return &p.ERSPANIII
	}
	for _, k := range p.BTH.Info().HeaderList() {
		if k.LayerType() == t {
			return p.BTH.ETH(k)
		}
	}
	if body := p.MAD.classBody(p.MAD.MgmtClass); body != nil && body.LayerType() == t {
		return body
	}
	return nil
}

// Fields of gopacket's own headers, to name what a short frame cuts.
var (
	ethernetFields = []FieldSpan{{"DstMAC", 0, 6}, {"SrcMAC", 6, 6}, {"EthernetType", 12, 2}}
	dot1QFields    = []FieldSpan{{"VLANIdentifier", 0, 2}, {"Type", 2, 2}}
	ipv4Fields     = []FieldSpan{{"Version/IHL", 0, 1}, {"TOS", 1, 1}, {"Length", 2, 2}, {"Id", 4, 2},
		{"Flags/FragOffset", 6, 2}, {"TTL", 8, 1}, {"Protocol", 9, 1}, {"Checksum", 10, 2}, {"SrcIP", 12, 4}, {"DstIP", 16, 4}}
	ipv6Fields = []FieldSpan{{"Version/TrafficClass/FlowLabel", 0, 4}, {"Length", 4, 2}, {"NextHeader", 6, 1},
		{"HopLimit", 7, 1}, {"SrcIP", 8, 16}, {"DstIP", 24, 16}}
	udpFields = []FieldSpan{{"SrcPort", 0, 2}, {"DstPort", 2, 2}, {"Length", 4, 2}, {"Checksum", 6, 2}}
	arpFields = []FieldSpan{{"AddrType", 0, 2}, {"Protocol", 2, 2}, {"HwAddressSize", 4, 1}, {"ProtAddressSize", 5, 1},
		{"Operation", 6, 2}, {"SourceHwAddress", 8, 6}, {"SourceProtAddress", 14, 4}, {"DstHwAddress", 18, 6}, {"DstProtAddress", 24, 4}}
	tcpFields = []FieldSpan{{"SrcPort", 0, 2}, {"DstPort", 2, 2}, {"Seq", 4, 4}, {"Ack", 8, 4},
		{"DataOffset/Flags", 12, 2}, {"Window", 14, 2}, {"Checksum", 16, 2}, {"Urgent", 18, 2}}
)

var gopacketFields = map[gopacket.LayerType]struct {
	name   string
	spans  []FieldSpan
	length string // the field that a malformed header most often has wrong
}{
	gplayers.LayerTypeEthernet: {"Ethernet", ethernetFields, "EthernetType"},
	gplayers.LayerTypeDot1Q:    {"Dot1Q", dot1QFields, "Type"},
	gplayers.LayerTypeIPv4:     {"IPv4", ipv4Fields, "IHL/Length"},
	gplayers.LayerTypeIPv6:     {"IPv6", ipv6Fields, "Length"},
	gplayers.LayerTypeUDP:      {"UDP", udpFields, "Length"},
	gplayers.LayerTypeTCP:      {"TCP", tcpFields, "DataOffset"},
	gplayers.LayerTypeARP:      {"ARP", arpFields, "HwAddressSize"},
}

// locate turns a decoding error into a *DecodeError whose FrameOffset says
// where in the frame the failing field is.
func (p *Parser) locate(err error) error {
	t, in := p.layerInput()
	base := 0
	if in != nil {
		base = offsetIn(p.frame, in)
	}
	var de *DecodeError
	if errors.As(err, &de) {
		de.FrameOffset = base + de.Offset
		return de
	}
	g, ok := gopacketFields[t]
	if !ok {
		return &DecodeError{Layer: t.String(), Field: "?", Offset: 0, FrameOffset: base, Err: ErrMalformed, Detail: err.Error()}
	}
	if cut := checkLength(g.name, g.spans, len(in)); cut != nil {
		de = cut.(*DecodeError)
		de.FrameOffset = base + de.Offset
		de.Detail = err.Error()
		return de
	}
	return &DecodeError{Layer: g.name, Field: g.length, FrameOffset: base, Err: ErrMalformed, Detail: err.Error()}
}

// truncation explains a frame that ends before a length field says it does:
// it names the header whose length claims more, and the field the frame ends in.
func (p *Parser) truncation() error {
	cut := len(p.frame)
	claim, claimField, claimEnd := "", "", -1
	// The innermost header whose length field claims more than the data it
	// was given is the one the frame was cut inside: its data ends at cut.
	// gopacket also raises the flag when nothing is missing (an IPv6
	// hop-by-hop header makes it miscount), so a flag that no length field
	// confirms is not an error. The data a header sees can end before the
	// frame does (an IPv4 length, an ERF record), so each is measured
	// against its own input.
	check := func(layer, field string, contents, payload []byte, claimed, short int) {
		start := offsetIn(p.frame, contents)
		seen := len(contents) // the header and what it passed on, gaps (IPv6 extension headers) included
		if payload != nil {
			seen = offsetIn(p.frame, payload) + len(payload) - start
		}
		if short == 0 && claimed > seen {
			short = claimed - seen
		}
		if short > 0 {
			cut = start + seen
			claim, claimField, claimEnd = layer, field, cut+short
		}
	}
	for _, t := range p.Decoded {
		switch t {
		case gplayers.LayerTypeIPv4:
			check("IPv4", "Length", p.IPv4.Contents, p.IPv4.Payload, int(p.IPv4.Length), 0)
		case gplayers.LayerTypeIPv6:
			check("IPv6", "Length", p.IPv6.Contents, p.IPv6.Payload, 40+int(p.IPv6.Length), 0)
		case gplayers.LayerTypeUDP:
			check("UDP", "Length", p.UDP.Contents, p.UDP.Payload, int(p.UDP.Length), 0)
		case LayerTypeERF:
			check("ERF", "WLen", p.ERF.Contents, p.ERF.Payload, 0, p.ERF.short)
		case LayerTypeLRH:
			check("LRH", "PktLen", p.LRH.Contents, p.LRH.Payload, 0, p.LRH.short)
		case LayerTypeGRH:
			check("GRH", "PayLen", p.GRH.Contents, p.GRH.Payload, 0, p.GRH.short)
		}
	}
	if claim == "" {
		return nil
	}
	de := &DecodeError{Layer: claim, Field: claimField, Offset: cut, FrameOffset: cut, Err: ErrTruncated,
		Detail: fmt.Sprintf("data ends at byte %d, %s.%s says %d", cut, claim, claimField, claimEnd)}
	next, in := p.layerInput()
	base := cut
	if in != nil {
		base = offsetIn(p.frame, in)
	}
	start := -1
	switch {
	case p.Has(LayerTypeBTH):
		start = offsetIn(p.frame, p.BTH.Contents)
	case next == LayerTypeBTH:
		start = base
	}
	if start >= 0 && start <= cut {
		end := claimEnd
		if claim == "LRH" {
			if cut >= end-VCRCLength {
				de.Layer, de.Field = "LRH", "VCRC"
				return de
			}
			end -= VCRCLength
		}
		var op Opcode
		if cut > start {
			op = Opcode(p.frame[start])
		}
		de.Layer, de.Field, de.Offset = transportFieldAt(op, p.BTH.DecodeDC, cut-start, end-start)
		return de
	}
	if next != gopacket.LayerTypeZero && p.decodingLayer(next) != nil && base <= cut {
		name, spans := headerFields(next)
		for _, f := range spans {
			if cut-base < f.Offset+f.Size {
				de.Layer, de.Field, de.Offset = name, f.Name, cut-base
				return de
			}
		}
	}
	return de
}

// transportFieldAt names the layer and field at byte off of a transport
// packet of total bytes whose opcode is op.
func transportFieldAt(op Opcode, dc bool, off, total int) (layer, field string, at int) {
	if off < BTHLength {
		for _, f := range bthFields {
			if off < f.Offset+f.Size {
				return "BTH", f.Name, off
			}
		}
	}
	pos := BTHLength
	if dc && op >= 0x40 && op <= 0x5F {
		if off < pos+DCExtensionLength {
			return "BTH", "DCExtension", off
		}
		pos += DCExtensionLength
	}
	for _, k := range op.Info().HeaderList() {
		if off < pos+k.Size() {
			for _, f := range ethFieldSpans(k) {
				if off < pos+f.Offset+f.Size {
					return k.String(), f.Name, off - pos
				}
			}
		}
		pos += k.Size()
	}
	if off >= total-ICRCLength {
		return "ICRC", "ICRC", off - (total - ICRCLength)
	}
	return "Payload", "Data", off - pos
}

// ethFieldSpans returns the field list of an extended header kind.
func ethFieldSpans(k HeaderKind) []FieldSpan {
	switch k {
	case HdrRDETH:
		return rdethFields
	case HdrDETH:
		return dethFields
	case HdrXRCETH:
		return xrcethFields
	case HdrFETH:
		return fethFields
	case HdrRETH:
		return rethFields
	case HdrAtomicETH:
		return atomicETHFields
	case HdrAETH:
		return aethFields
	case HdrAtomicAckETH:
		return atomicAckFields
	case HdrImmDt:
		return immDtFields
	case HdrIETH:
		return iethFields
	case HdrCNP:
		return cnpFields
	}
	return nil
}

// Finish fills in the ICRC, and for native IB the VCRC, of a frame that was
// serialized with placeholder CRCs: the pass over the finished frame that
// gopacket's inside-out serialization needs, since the BTH is written before
// the headers the ICRC covers exist.
func (p *Parser) Finish(frame []byte) error {
	if err := p.Decode(frame); err != nil {
		return err
	}
	if span, enc, ok := p.ICRCSpan(); ok {
		crc, err := p.icrc.Compute(enc, span)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(span[len(span)-ICRCLength:], crc)
		p.BTH.Trailer.ICRC = crc
	}
	if p.Has(LayerTypeLRH) && p.LRH.HasVCRC {
		s := offsetIn(frame, p.LRH.Contents)
		n := int(p.LRH.PktLen) * 4
		p.LRH.VCRC = ComputeVCRC(frame[s : s+n])
		binary.LittleEndian.PutUint16(frame[s+n:], p.LRH.VCRC)
	}
	return nil
}

// FinishFrame is Parser.Finish with a parser of its own.
func FinishFrame(frame []byte, first gopacket.LayerType, opts ParserOptions) error {
	return NewParser(first, opts).Finish(frame)
}

// truncFlag is a gopacket.DecodeFeedback that only remembers truncation.
type truncFlag bool

func (t *truncFlag) SetTruncated() { *t = true }
