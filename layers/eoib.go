package layers

import (
	"encoding/binary"
	"slices"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// EoIBLength is the size of the Mellanox EoIB encapsulation header.
const EoIBLength = 4

// EoIB is the Mellanox Ethernet-over-InfiniBand encapsulation header that
// starts the payload of a UD packet carrying an Ethernet frame (a vNIC's
// traffic). Nothing in the IB headers announces it: Wireshark recognises it
// by heuristic, a UD payload whose first nibble is 0xC (LooksLikeEoIB).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|Sig|Ver|TCP|IP |R|F|M|SegOffset|        Segment ID (16)        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	...     Ethernet frame (or a segment of a jumbo frame)         ...
//
// Sig is 0b11; Ver, TCP and IP (checksum states) are 2 bits each; F says an
// FCS ends the frame; M says more segments follow. A frame with M set or a
// nonzero SegOffset is a segment of a larger frame, and Wireshark shows its
// bytes as data rather than as Ethernet.
type EoIB struct {
	Contents []byte
	Payload  []byte

	Signature    uint8 // 2 bits, 3 when present
	Version      uint8 // 2 bits
	TCPChecksum  uint8 // 2 bits
	IPChecksum   uint8 // 2 bits
	Reserved     uint8 // 1 bit
	FCS          bool
	MoreSegments bool
	SegOffset    uint8 // 5 bits
	SegID        uint16
}

// EoIB bit masks in its first 16 bits, as Wireshark defines them.
const (
	EoIBMaskVersion   = 0x3000
	EoIBMaskTCPChk    = 0x0C00
	EoIBMaskIPChk     = 0x0300
	EoIBMaskFCS       = 0x0040
	EoIBMaskMS        = 0x0020
	EoIBMaskSegOffset = 0x001F
)

var eoibFields = []FieldSpan{{"Signature/Version/Checksums", 0, 1}, {"Flags/SegOffset", 1, 1}, {"SegID", 2, 2}}

// LayerType returns LayerTypeEoIB.
func (e *EoIB) LayerType() gopacket.LayerType { return LayerTypeEoIB }

// CanDecode returns LayerTypeEoIB.
func (e *EoIB) CanDecode() gopacket.LayerClass { return LayerTypeEoIB }

// LayerContents returns the 4 header bytes.
func (e *EoIB) LayerContents() []byte { return e.Contents }

// LayerPayload returns the Ethernet frame or segment.
func (e *EoIB) LayerPayload() []byte { return e.Payload }

// Segmented reports a segment of a larger frame (M set or an offset).
func (e *EoIB) Segmented() bool { return e.MoreSegments || e.SegOffset != 0 }

// NextLayerType is Ethernet for a whole frame, payload for a segment.
func (e *EoIB) NextLayerType() gopacket.LayerType {
	if e.Segmented() {
		return gopacket.LayerTypePayload
	}
	return gplayers.LayerTypeEthernet
}

// DecodeFromBytes decodes the header in place.
func (e *EoIB) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < EoIBLength {
		df.SetTruncated()
		return checkLength("EoIB", eoibFields, len(data))
	}
	w := binary.BigEndian.Uint16(data[0:2])
	e.Signature = uint8(w >> 14)
	e.Version = uint8(w & EoIBMaskVersion >> 12)
	e.TCPChecksum = uint8(w & EoIBMaskTCPChk >> 10)
	e.IPChecksum = uint8(w & EoIBMaskIPChk >> 8)
	e.Reserved = uint8(w >> 7 & 1)
	e.FCS = w&EoIBMaskFCS != 0
	e.MoreSegments = w&EoIBMaskMS != 0
	e.SegOffset = uint8(w & EoIBMaskSegOffset)
	e.SegID = binary.BigEndian.Uint16(data[2:4])
	e.Contents, e.Payload = data[:EoIBLength], data[EoIBLength:]
	return nil
}

// SerializeTo prepends the header.
func (e *EoIB) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(EoIBLength)
	if err != nil {
		return err
	}
	w := uint16(e.Signature&3)<<14 | uint16(e.Version&3)<<12 | uint16(e.TCPChecksum&3)<<10 | uint16(e.IPChecksum&3)<<8 |
		uint16(e.Reserved&1)<<7 | uint16(e.SegOffset&0x1F)
	if e.FCS {
		w |= EoIBMaskFCS
	}
	if e.MoreSegments {
		w |= EoIBMaskMS
	}
	binary.BigEndian.PutUint16(h[0:2], w)
	binary.BigEndian.PutUint16(h[2:4], e.SegID)
	return nil
}

func decodeEoIB(data []byte, p gopacket.PacketBuilder) error {
	e := &EoIB{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	return p.NextDecoder(e.NextLayerType())
}

// LooksLikeEoIB is Wireshark's EoIB heuristic: the payload (pad included)
// of a UD packet whose first nibble is 0xC, long enough for the header.
func LooksLikeEoIB(op Opcode, payload []byte) bool {
	return op.Info().Service == ServiceUD && len(payload) >= EoIBLength && payload[0]&0xF0 == 0xC0
}

// EtherTypeEncapsulated is Wireshark's "Ethernet over IB" heuristic on an
// IBA payload (pad included): IPoIB-style framing, a 2-byte EtherType and 2
// zero bytes (RFC 4391 §6), before a packet of a type Wireshark dissects.
// Nothing positively identifies such payloads; Wireshark tries it on every
// payload that is not a MAD, and so do we, on demand.
func EtherTypeEncapsulated(payload []byte) (gplayers.EthernetType, bool) {
	if len(payload) < EoIBLength || payload[2] != 0 || payload[3] != 0 {
		return 0, false
	}
	t := binary.BigEndian.Uint16(payload)
	_, ok := slices.BinarySearch(wiresharkEtherTypes[:], t)
	return gplayers.EthernetType(t), ok
}

// wiresharkEtherTypes are the EtherTypes tshark 4.0.17 has a dissector for
// (its ethertype table, tshark -G decodes), sorted: the heuristic takes a
// payload only when the EtherType's dissector exists.
var wiresharkEtherTypes = [...]uint16{
	0x0059, 0x0061, 0x0065, 0x0067, 0x00FD, 0x0600, 0x0641, 0x0643, 0x0644, 0x0645, 0x0712, 0x0713,
	0x0800, 0x0806, 0x0842, 0x08F0, 0x08FF, 0x0BAD, 0x0BAF, 0x0C15, 0x2001, 0x2065, 0x2067, 0x22E5,
	0x22EA, 0x22F0, 0x22F1, 0x22F3, 0x22F4, 0x2323, 0x2452, 0x3E3F, 0x4305, 0x4742, 0x6000, 0x6003,
	0x6004, 0x6558, 0x8021, 0x8023, 0x8035, 0x8038, 0x8057, 0x8059, 0x809A, 0x809B, 0x80D5, 0x80E1,
	0x80F3, 0x80FD, 0x80FF, 0x8100, 0x8102, 0x8103, 0x8133, 0x8137, 0x814C, 0x8181, 0x81FD, 0x8204,
	0x8207, 0x8281, 0x86DD, 0x872D, 0x8783, 0x8808, 0x8809, 0x8847, 0x8848, 0x8863, 0x8864, 0x886C,
	0x886D, 0x886F, 0x8870, 0x8874, 0x887B, 0x888E, 0x8892, 0x8899, 0x889A, 0x889B, 0x88A1, 0x88A2,
	0x88A4, 0x88A8, 0x88A9, 0x88AB, 0x88AE, 0x88B4, 0x88B7, 0x88B8, 0x88BA, 0x88BB, 0x88C7, 0x88CA,
	0x88CC, 0x88CD, 0x88D8, 0x88D9, 0x88DC, 0x88DE, 0x88E1, 0x88E3, 0x88E5, 0x88E7, 0x88EE, 0x88F5,
	0x88F6, 0x88F7, 0x88F8, 0x88FB, 0x8901, 0x8902, 0x8906, 0x8909, 0x890D, 0x8911, 0x8914, 0x8915,
	0x8917, 0x891D, 0x8926, 0x892D, 0x892F, 0x893A, 0x893F, 0x8940, 0x8942, 0x8947, 0x894F, 0x8988,
	0x8FFD, 0x9000, 0x9021, 0x9022, 0x9100, 0x9104, 0x99FE, 0xA0ED, 0xAAAA, 0xABCD, 0xAEFE, 0xB4E3,
	0xBBBB, 0xC021, 0xC023, 0xC029, 0xC02B, 0xC02D, 0xC0DE, 0xC0DF, 0xC223, 0xCAFE, 0xD00D, 0xD28B,
	0xE555, 0xF052, 0xF1C1, 0xFCFC,
}

// PayloadWithPad returns the packet's payload and the pad bytes after it:
// the bytes Wireshark hands to payload heuristics (EoIB, Ethernet over IB).
func (b *BTH) PayloadWithPad() []byte {
	n := len(b.payload) + len(b.Trailer.Pad)
	if n > cap(b.payload) {
		return b.payload
	}
	return b.payload[:n]
}

// Names of the headers a payload heuristic finds at the start of a BTH
// payload, for HeaderBytes and FieldBytes: the parser does not decode them
// (decode reads them on demand), so they are located here.
const (
	EoIBHeader  = "EoIB"
	IPoIBHeader = "IPoIB" // the EtherType and reserved word of an EtherType-encapsulated payload
)

var payloadHeaderFields = map[string][]FieldSpan{
	EoIBHeader:  eoibFields,
	IPoIBHeader: {{"EtherType", 0, 2}, {"Reserved", 2, 2}},
}

// payloadHeader returns the bytes of a payload heuristic's header in the
// last frame; ok says whether name is such a header at all.
func (p *Parser) payloadHeader(name string) (b []byte, ok bool) {
	if _, ok := payloadHeaderFields[name]; !ok {
		return nil, false
	}
	if !p.Has(LayerTypeBTH) || p.BTH.PayloadType() == LayerTypeMAD {
		return nil, true
	}
	pl := p.BTH.PayloadWithPad()
	found := LooksLikeEoIB(p.BTH.Opcode, pl)
	if name == IPoIBHeader {
		_, encap := EtherTypeEncapsulated(pl)
		found = encap && !found
	}
	if !found {
		return nil, true
	}
	return pl[:EoIBLength], true
}
