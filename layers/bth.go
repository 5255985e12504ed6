package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// Sizes of the BTH and what surrounds it.
const (
	BTHLength         = 12 // Base Transport Header
	DCExtensionLength = 8  // extra BTH bytes of Mellanox Dynamically Connected transport
	ICRCLength        = 4  // invariant CRC at the end of every transport packet
)

// Cut reports a BTH whose packet ended before its extended headers or its
// ICRC: the base header is valid, and so is each extended header HasETH
// names; the payload is what there was of it.
func (b *BTH) Cut() bool { return b.Contents != nil && b.Trailer.Contents == nil }

// PeekDestQP reads the destination QP of the BTH that b starts with,
// without decoding it (for demultiplexing before a full decode); false
// when b is shorter than a BTH.
func PeekDestQP(b []byte) (qpn uint32, ok bool) {
	if len(b) < BTHLength {
		return 0, false
	}
	return uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7]), true
}

// BTH is the Base Transport Header (IBTA Vol 1 §9.2), which starts every IB
// transport packet, together with what its opcode says follows it.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    OpCode     |S|M|Pad| TVer  |            P_Key              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|F|B|   Resv6   |              Destination QP (24)              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A|   Resv7     |                    PSN (24)                   |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// F and B are FECN and BECN (Annex A17 RoCEv2 / A10 congestion control; IBTA
// 1.2 calls the byte Resv8a). The wire carries no "next header" field: the
// opcode alone decides which extended headers follow, so DecodeFromBytes
// decodes them too, into the ETH fields below, and records for each what
// follows it. Registering BTH.DecodingLayers() with a DecodingLayerParser
// lists them as layers of their own. The packet ends with the payload, PadCnt
// pad bytes and the ICRC, which DecodeFromBytes splits off into Trailer.
type BTH struct {
	// Contents is the BTH (with the DC extension when present); Payload is
	// everything after it up to the pad bytes: extended headers, then payload.
	Contents []byte
	Payload  []byte

	Opcode   Opcode
	SE       bool  // solicited event
	MigReq   bool  // migration state
	PadCount uint8 // bytes of pad after the payload, 0-3
	TVer     uint8 // transport header version, 0
	PKey     uint16
	FECN     bool
	BECN     bool
	Resv6    uint8 // 6 reserved bits after FECN/BECN
	DestQP   uint32
	AckReq   bool
	Resv7    uint8
	PSN      PSN

	// DCExtension is the 8 bytes that Mellanox DC puts after the BTH of
	// opcodes 0x40-0x5F; set only when DecodeDC is true.
	DCExtension []byte

	// Extended headers; each is valid when Opcode.Info().Has(its kind).
	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	FETH         FETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	CNP          CNP

	// Trailer holds the pad bytes and the ICRC.
	Trailer Trailer

	// DecodeDC is a decode option, kept across packets: treat opcodes
	// 0x40-0x5F as Mellanox Dynamically Connected transport, whose BTH is 20
	// bytes, instead of the IBTA's Reliable Datagram (Wireshark always does).
	DecodeDC bool

	payload     []byte
	payloadType gopacket.LayerType
	first       gopacket.LayerType
	// eths has a bit for each extended header decoded (1<<HeaderKind):
	// all the opcode calls for, unless the data ended before one (a
	// capture cut the packet short), when the base header and those before
	// it stay valid.
	eths uint16
}

var bthFields = []FieldSpan{{"OpCode", 0, 1}, {"SE/M/PadCnt/TVer", 1, 1}, {"P_Key", 2, 2},
	{"FECN/BECN/Resv6", 4, 1}, {"DestQP", 5, 3}, {"AckReq/Resv7", 8, 1}, {"PSN", 9, 3}}

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// LayerContents returns the BTH bytes.
func (b *BTH) LayerContents() []byte { return b.Contents }

// LayerPayload returns the extended headers and the payload, without pad and ICRC.
func (b *BTH) LayerPayload() []byte { return b.Payload }

// NextLayerType returns the first extended header, or the payload's type.
func (b *BTH) NextLayerType() gopacket.LayerType { return b.first }

// Info returns the opcode table entry.
func (b *BTH) Info() *OpcodeInfo { return b.Opcode.Info() }

// HeaderLength is the number of bytes of BTH, DC extension and extended headers.
func (b *BTH) HeaderLength() int { return len(b.Contents) + len(b.Payload) - len(b.payload) }

// PacketPayload returns the payload the packet carries (pad excluded).
func (b *BTH) PacketPayload() []byte { return b.payload }

// PayloadType is the layer type of the payload: LayerTypeMAD for datagrams
// to or from QP0/QP1, gopacket.LayerTypePayload otherwise.
func (b *BTH) PayloadType() gopacket.LayerType { return b.payloadType }

// HasETH reports whether the packet carries the extended header of kind k
// and it was decoded: the opcode calls for it, and the data did not end
// before it. Read an ETH field only when this says so: the ETH structs keep
// the previous packet's values otherwise.
func (b *BTH) HasETH(k HeaderKind) bool { return b.eths&(1<<k) != 0 }

// ETHs is the set of extended headers decoded, a bit 1<<k for each kind k
// HasETH reports.
func (b *BTH) ETHs() uint16 { return b.eths }

// ETH returns the embedded extended header of kind k (nil for HdrNone).
func (b *BTH) ETH(k HeaderKind) ExtendedHeader {
	switch k {
	case HdrRDETH:
		return &b.RDETH
	case HdrDETH:
		return &b.DETH
	case HdrXRCETH:
		return &b.XRCETH
	case HdrFETH:
		return &b.FETH
	case HdrRETH:
		return &b.RETH
	case HdrAtomicETH:
		return &b.AtomicETH
	case HdrAETH:
		return &b.AETH
	case HdrAtomicAckETH:
		return &b.AtomicAckETH
	case HdrImmDt:
		return &b.ImmDt
	case HdrIETH:
		return &b.IETH
	case HdrCNP:
		return &b.CNP
	}
	return nil
}

// ExtendedHeader is what every ETH layer implements.
type ExtendedHeader interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
	LayerContents() []byte
	setNext(gopacket.LayerType)
}

func (e *ethBase) setNext(t gopacket.LayerType) { e.next = t }

// layerTypeOf maps header kinds to their layer types.
var layerTypeOf = [...]*gopacket.LayerType{
	HdrRDETH: &LayerTypeRDETH, HdrDETH: &LayerTypeDETH, HdrXRCETH: &LayerTypeXRCETH, HdrFETH: &LayerTypeFETH,
	HdrRETH: &LayerTypeRETH, HdrAtomicETH: &LayerTypeAtomicETH, HdrAETH: &LayerTypeAETH,
	HdrAtomicAckETH: &LayerTypeAtomicAckETH, HdrImmDt: &LayerTypeImmDt, HdrIETH: &LayerTypeIETH, HdrCNP: &LayerTypeCNP,
}

// LayerType returns the gopacket layer type of header kind h.
func (h HeaderKind) LayerType() gopacket.LayerType {
	if int(h) < len(layerTypeOf) && layerTypeOf[h] != nil {
		return *layerTypeOf[h]
	}
	return gopacket.LayerTypeZero
}

// DecodingLayers returns the BTH and its embedded extended headers, for
// gopacket.NewDecodingLayerParser: the ETH instances are the ones the BTH
// tells what follows them.
func (b *BTH) DecodingLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{b, &b.RDETH, &b.DETH, &b.XRCETH, &b.FETH, &b.RETH, &b.AtomicETH,
		&b.AETH, &b.AtomicAckETH, &b.ImmDt, &b.IETH, &b.CNP}
}

// ethLayout is what an opcode's header list says about a packet's layout,
// worked out once per opcode so that decoding one is straight-line code.
// The IBTA places extended headers in the order of their kinds, so a set
// of kinds says the order too.
type ethLayout struct {
	eths  uint16                      // 1<<kind for each header
	n     uint8                       // headers
	size  uint8                       // bytes of extended headers
	udMAD bool                        // a UD opcode with a DETH: its payload is a MAD to or from QP0/QP1
	lts   [maxETHs]gopacket.LayerType // each header's layer type, in wire order (the first after the BTH's)
	// off is where each header starts after the BTH; next is the layer
	// type after it, LayerTypeZero for the last (the payload's, known
	// only per packet).
	off  [HdrCNP + 1]uint8
	next [HdrCNP + 1]gopacket.LayerType
}

// nextAfter is the layer type after header k; pt is the payload's.
func (l *ethLayout) nextAfter(k HeaderKind, pt gopacket.LayerType) gopacket.LayerType {
	if n := l.next[k]; n != gopacket.LayerTypeZero {
		return n
	}
	return pt
}

// ethLayouts is indexed by opcode.
var ethLayouts = func() (t [256]ethLayout) {
	for op := range t {
		info := Opcode(op).Info()
		l := &t[op]
		hs := info.HeaderList()
		off := 0
		for i, k := range hs {
			if i > 0 {
				if k <= hs[i-1] {
					panic("layers: opcode table: extended headers out of the IBTA's order for " + info.Name)
				}
				l.next[hs[i-1]] = k.LayerType()
			}
			l.off[k] = uint8(off)
			off += k.Size()
			l.eths |= 1 << k
			l.lts[i] = k.LayerType()
		}
		l.n, l.size = uint8(len(hs)), uint8(off)
		l.udMAD = info.Has(HdrDETH) && info.Service == ServiceUD
		if len(hs) > 0 {
			if hs[0] != HdrDETH && l.udMAD {
				panic("layers: a UD opcode whose DETH does not follow the BTH")
			}
		}
	}
	return t
}()

// DecodeFromBytes decodes the BTH, the extended headers its opcode calls
// for, and the trailer. data must end with the ICRC (the caller trims link
// padding: UDP, GRH.PayLen and LRH.PktLen all delimit it).
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < BTHLength {
		b.eths, b.Contents = 0, nil
		df.SetTruncated()
		return checkLength("BTH", bthFields, len(data))
	}
	w0 := binary.BigEndian.Uint32(data[0:4])
	w1 := binary.BigEndian.Uint32(data[4:8])
	w2 := binary.BigEndian.Uint32(data[8:12])
	op := Opcode(w0 >> 24)
	pad := int(w0>>20) & 3
	b.Opcode = op
	b.SE = w0&0x800000 != 0
	b.MigReq = w0&0x400000 != 0
	b.PadCount = uint8(pad)
	b.TVer = uint8(w0>>16) & 0x0F
	b.PKey = uint16(w0)
	b.FECN = w1&0x80000000 != 0
	b.BECN = w1&0x40000000 != 0
	b.Resv6 = uint8(w1>>24) & 0x3F
	b.DestQP = w1 & 0xFFFFFF
	b.AckReq = w2&0x80000000 != 0
	b.Resv7 = uint8(w2>>24) & 0x7F
	b.PSN = PSN(w2 & PSNMask)

	hdr := BTHLength
	if b.DCExtension != nil {
		b.DCExtension = nil
	}
	if b.DecodeDC && op >= 0x40 && op <= 0x5F {
		if len(data) < BTHLength+DCExtensionLength {
			return b.dcCut(data, df)
		}
		b.DCExtension = data[BTHLength : BTHLength+DCExtensionLength]
		hdr += DCExtensionLength
	}

	// The ICRC closes every transport packet; what lies before it is
	// headers, payload and pad.
	l := &ethLayouts[op]
	end := len(data) - ICRCLength
	ethEnd := hdr + int(l.size)
	if ethEnd > end {
		return b.decodeShort(data, hdr, df)
	}
	payloadEnd := end - pad
	var padErr error
	if payloadEnd < ethEnd {
		// The headers are still decoded, so the malformed packet can be
		// shown with everything it carries.
		padErr = padCountError(pad, end-ethEnd)
		payloadEnd = ethEnd
	}

	pt := gopacket.LayerTypePayload
	if l.udMAD {
		// The DETH comes first: its source QP is in its second word.
		srcQP := binary.BigEndian.Uint32(data[hdr+4:hdr+8]) & 0xFFFFFF
		if b.DestQP <= 1 || srcQP <= 1 {
			pt = LayerTypeMAD
		}
	}
	b.payloadType = pt

	// Decode each extended header and tell it what follows it: the data
	// holds them all (checked above), so none can fail.
	hp := data[hdr:payloadEnd]
	b.first = pt
	if e := l.eths; e != 0 {
		b.first = l.lts[0]
		const rare = 1<<HdrRDETH | 1<<HdrDETH | 1<<HdrXRCETH | 1<<HdrFETH | 1<<HdrAtomicETH |
			1<<HdrAtomicAckETH | 1<<HdrIETH | 1<<HdrCNP
		if e&rare != 0 {
			if e&(1<<HdrRDETH) != 0 {
				d := hp[l.off[HdrRDETH]:]
				b.RDETH.at(d, RDETHLength, l.nextAfter(HdrRDETH, pt))
				b.RDETH.setWord(binary.BigEndian.Uint32(d))
			}
			if e&(1<<HdrDETH) != 0 {
				d := hp[l.off[HdrDETH]:]
				b.DETH.at(d, DETHLength, l.nextAfter(HdrDETH, pt))
				b.DETH.fill(d)
			}
			if e&(1<<HdrXRCETH) != 0 {
				d := hp[l.off[HdrXRCETH]:]
				b.XRCETH.at(d, XRCETHLength, l.nextAfter(HdrXRCETH, pt))
				b.XRCETH.setWord(binary.BigEndian.Uint32(d))
			}
			if e&(1<<HdrFETH) != 0 {
				d := hp[l.off[HdrFETH]:]
				b.FETH.at(d, FETHLength, l.nextAfter(HdrFETH, pt))
				b.FETH.setWord(binary.BigEndian.Uint32(d))
			}
			if e&(1<<HdrAtomicETH) != 0 {
				d := hp[l.off[HdrAtomicETH]:]
				b.AtomicETH.at(d, AtomicETHLength, l.nextAfter(HdrAtomicETH, pt))
				b.AtomicETH.fill(d)
			}
			if e&(1<<HdrAtomicAckETH) != 0 {
				d := hp[l.off[HdrAtomicAckETH]:]
				b.AtomicAckETH.at(d, AtomicAckETHLength, l.nextAfter(HdrAtomicAckETH, pt))
				b.AtomicAckETH.fill(d)
			}
			if e&(1<<HdrIETH) != 0 {
				d := hp[l.off[HdrIETH]:]
				b.IETH.at(d, IETHLength, l.nextAfter(HdrIETH, pt))
				b.IETH.setWord(binary.BigEndian.Uint32(d))
			}
			if e&(1<<HdrCNP) != 0 {
				d := hp[l.off[HdrCNP]:]
				b.CNP.at(d, CNPLength, l.nextAfter(HdrCNP, pt))
				b.CNP.fill(d)
			}
		}
		if e&(1<<HdrRETH) != 0 {
			d := hp[l.off[HdrRETH]:]
			b.RETH.at(d, RETHLength, l.nextAfter(HdrRETH, pt))
			b.RETH.fill(d)
		}
		if e&(1<<HdrAETH) != 0 {
			d := hp[l.off[HdrAETH]:]
			b.AETH.at(d, AETHLength, l.nextAfter(HdrAETH, pt))
			b.AETH.setWord(binary.BigEndian.Uint32(d))
		}
		if e&(1<<HdrImmDt) != 0 {
			d := hp[l.off[HdrImmDt]:]
			b.ImmDt.at(d, ImmDtLength, l.nextAfter(HdrImmDt, pt))
			b.ImmDt.setWord(binary.BigEndian.Uint32(d))
		}
	}
	b.eths = l.eths

	b.Contents = data[:hdr]
	b.Payload = hp
	b.payload = hp[l.size:]
	b.Trailer.set(data[payloadEnd:]) // what lies after the payload, at least the ICRC
	return padErr
}

// padCountError reports a pad count larger than the payload; kept out of
// DecodeFromBytes, whose every packet would otherwise pay for its
// arguments' room.
//
//go:noinline
func padCountError(pad, payload int) error {
	return malformed("BTH", "PadCnt", 1, "pad count %d exceeds the %d bytes of payload", pad, payload)
}

// dcCut reports a DC BTH whose data ends inside its extension.
func (b *BTH) dcCut(data []byte, df gopacket.DecodeFeedback) error {
	b.eths, b.Contents = 0, nil
	df.SetTruncated()
	return &DecodeError{Layer: "BTH", Field: "DCExtension", Offset: BTHLength, Need: DCExtensionLength, Have: len(data) - BTHLength, Err: ErrTruncated}
}

// decodeShort decodes a BTH whose data ends before its extended headers or
// its ICRC: it reports where, and keeps what the data holds whole.
func (b *BTH) decodeShort(data []byte, hdr int, df gopacket.DecodeFeedback) error {
	b.eths, b.Contents = 0, nil
	end := len(data) - ICRCLength
	ethEnd := hdr
	for _, k := range b.Opcode.Info().HeaderList() {
		if ethEnd+k.Size() > end {
			df.SetTruncated()
			err := b.ETH(k).DecodeFromBytes(data[ethEnd:max(end, ethEnd)], df)
			if de, ok := err.(*DecodeError); ok {
				de.Offset += ethEnd
				de.Detail = "before the 4-byte ICRC"
				err = de
			}
			b.decodeCut(data, hdr)
			return err
		}
		ethEnd += k.Size()
	}
	b.decodeCut(data, hdr)
	df.SetTruncated()
	return &DecodeError{Layer: "ICRC", Field: "ICRC", Offset: ethEnd, Need: ICRCLength, Have: len(data) - ethEnd, Err: ErrTruncated}
}

// decodeCut decodes the extended headers the data holds whole, for a
// packet whose data ends before one of them or before its ICRC: a capture's
// snapshot length cuts packets so, and the headers it kept are still what
// was sent. The bytes after them are the payload as far as it was
// captured; there is no trailer.
func (b *BTH) decodeCut(data []byte, hdr int) {
	off := hdr
	for _, k := range b.Opcode.Info().HeaderList() {
		if off+k.Size() > len(data) {
			break
		}
		if b.ETH(k).DecodeFromBytes(data[off:off+k.Size()], gopacket.NilDecodeFeedback) != nil {
			break
		}
		off += k.Size()
		b.eths |= 1 << k
	}
	b.Contents = data[:hdr]
	b.Payload = data[hdr:]
	b.payload = data[off:]
	b.payloadType = gopacket.LayerTypePayload
	b.Trailer = Trailer{}
}

// SerializeTo prepends the BTH (and DC extension). The extended headers,
// payload and Trailer are serialized as layers of their own. With
// FixLengths, PadCount is taken from the trailer's pad bytes.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		b.PadCount = uint8(len(b.Trailer.Pad)) & 3
	}
	n := BTHLength + len(b.DCExtension)
	h, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	h[0] = byte(b.Opcode)
	h[1] = b.PadCount&3<<4 | b.TVer&0x0F
	if b.SE {
		h[1] |= 0x80
	}
	if b.MigReq {
		h[1] |= 0x40
	}
	binary.BigEndian.PutUint16(h[2:4], b.PKey)
	binary.BigEndian.PutUint32(h[4:8], b.DestQP&0xFFFFFF)
	h[4] = b.Resv6 & 0x3F
	if b.FECN {
		h[4] |= 0x80
	}
	if b.BECN {
		h[4] |= 0x40
	}
	binary.BigEndian.PutUint32(h[8:12], uint32(b.PSN)&PSNMask|uint32(b.Resv7&0x7F)<<24)
	if b.AckReq {
		h[8] |= 0x80
	}
	copy(h[BTHLength:], b.DCExtension)
	return nil
}

// SerializableLayers returns the BTH, its extended headers in wire order,
// the given payload and the trailer: what gopacket.SerializeLayers needs to
// rebuild the transport packet.
func (b *BTH) SerializableLayers(payload []byte) []gopacket.SerializableLayer {
	ls := []gopacket.SerializableLayer{b}
	for _, k := range b.Info().HeaderList() {
		ls = append(ls, b.ETH(k))
	}
	return append(ls, gopacket.Payload(payload), &b.Trailer)
}

// decodeBTH is the packet-API decoder: it adds the BTH, each extended header,
// the payload (or the MAD it carries) and the trailer, in wire order.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{}
	if err := b.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(b)
	for _, k := range b.Info().HeaderList() {
		p.AddLayer(b.ETH(k))
	}
	if len(b.payload) > 0 {
		if err := addPayload(b.payloadType, b.payload, p); err != nil {
			return err
		}
	}
	p.AddLayer(&b.Trailer)
	return nil
}

// addPayload adds a transport payload to a packet: a MAD with its class body
// when the BTH says so, else a plain application payload.
func addPayload(t gopacket.LayerType, data []byte, p gopacket.PacketBuilder) error {
	if t == LayerTypeMAD {
		return addMADLayers(data, p)
	}
	pl := gopacket.Payload(data)
	p.AddLayer(&pl)
	p.SetApplicationLayer(&pl)
	return nil
}
