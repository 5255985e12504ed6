package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// Sizes of the link-level framing of native InfiniBand.
const (
	LRHLength  = 8
	VCRCLength = 2
)

// LRH is the Local Route Header (IBTA Vol 1 §7.7) that starts every packet
// on an InfiniBand link, with the link's variant CRC that ends it.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  VL   | LVer  |  SL   |Rsv|LNH|     Destination LID (16)      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| Reserved5 |    PktLen (11)      |       Source LID (16)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	...                     packet up to the ICRC                   ...
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   VCRC (16, little-endian)    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PktLen counts 4-byte words from the LRH to the end of the ICRC; the VCRC
// follows them. The payload handed on stops before the VCRC.
type LRH struct {
	Contents []byte
	Payload  []byte

	VL        uint8 // virtual lane; 15 is the management lane
	LVer      uint8
	SL        uint8
	Reserved2 uint8
	LNH       LinkNextHeader
	DLID      uint16
	Reserved5 uint8
	PktLen    uint16 // in 4-byte words
	SLID      uint16

	VCRC    uint16
	HasVCRC bool   // false when the capture cut the packet before its VCRC
	Padding []byte // bytes after the VCRC (capture padding)

	short int // bytes PktLen and the VCRC claim beyond the input (0 when whole)
}

// LinkNextHeader is the LRH's LNH field: what follows the LRH.
type LinkNextHeader uint8

// LNH values (IBTA Vol 1 §7.7.3).
const (
	LNHRaw       LinkNextHeader = 0 // raw packet with a Raw Header (ethertype)
	LNHIPv6      LinkNextHeader = 1 // raw IPv6 packet
	LNHIBALocal  LinkNextHeader = 2 // BTH follows
	LNHIBAGlobal LinkNextHeader = 3 // GRH then BTH follow
)

var lnhNames = [...]string{"Raw", "IPv6 (non-IBA)", "IBA local", "IBA global"}

func (l LinkNextHeader) String() string {
	if int(l) < len(lnhNames) {
		return lnhNames[l]
	}
	return fmt.Sprintf("Unknown(%d)", uint8(l))
}

var lrhFields = []FieldSpan{{"VL/LVer", 0, 1}, {"SL/LNH", 1, 1}, {"DLID", 2, 2}, {"PktLen", 4, 2}, {"SLID", 6, 2}}

// LayerType returns LayerTypeLRH.
func (l *LRH) LayerType() gopacket.LayerType { return LayerTypeLRH }

// CanDecode returns LayerTypeLRH.
func (l *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// LayerContents returns the 8 LRH bytes.
func (l *LRH) LayerContents() []byte { return l.Contents }

// LayerPayload returns the packet between the LRH and the VCRC.
func (l *LRH) LayerPayload() []byte { return l.Payload }

// NextLayerType follows LNH: a BTH, a GRH, a raw IPv6 packet, or an RWH.
func (l *LRH) NextLayerType() gopacket.LayerType {
	switch l.LNH {
	case LNHIBALocal:
		return LayerTypeBTH
	case LNHIBAGlobal:
		return LayerTypeGRH
	case LNHIPv6:
		return gplayers.LayerTypeIPv6
	}
	return LayerTypeRWH
}

// DecodeFromBytes decodes the LRH and splits off the VCRC. A packet shorter
// than PktLen says is reported through df.SetTruncated, as gopacket's IPv4 does.
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < LRHLength {
		df.SetTruncated()
		return checkLength("LRH", lrhFields, len(data))
	}
	l.VL = data[0] >> 4
	l.LVer = data[0] & 0x0F
	l.SL = data[1] >> 4
	l.Reserved2 = data[1] >> 2 & 3
	l.LNH = LinkNextHeader(data[1] & 3)
	l.DLID = binary.BigEndian.Uint16(data[2:4])
	l.Reserved5 = data[4] >> 3
	l.PktLen = binary.BigEndian.Uint16(data[4:6]) & 0x7FF
	l.SLID = binary.BigEndian.Uint16(data[6:8])
	n := int(l.PktLen) * 4
	if n < LRHLength {
		return malformed("LRH", "PktLen", 4, "packet length of %d words is shorter than the LRH", l.PktLen)
	}
	l.Contents = data[:LRHLength]
	l.HasVCRC, l.VCRC, l.Padding, l.short = false, 0, nil, max(n+VCRCLength-len(data), 0)
	switch {
	case len(data) < n:
		df.SetTruncated()
		l.Payload = data[LRHLength:]
	case len(data) < n+VCRCLength:
		df.SetTruncated()
		l.Payload = data[LRHLength:n]
	default:
		l.Payload = data[LRHLength:n]
		l.VCRC = binary.LittleEndian.Uint16(data[n:])
		l.HasVCRC = true
		l.Padding = data[n+VCRCLength:]
	}
	return nil
}

// SerializeTo prepends the LRH and appends the VCRC (filled by FinishFrame).
// With FixLengths, PktLen covers what the buffer holds.
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		l.PktLen = uint16((len(b.Bytes())+LRHLength)/4) & 0x7FF
	}
	h, err := b.PrependBytes(LRHLength)
	if err != nil {
		return err
	}
	h[0] = l.VL<<4 | l.LVer&0x0F
	h[1] = l.SL<<4 | l.Reserved2&3<<2 | uint8(l.LNH)&3
	binary.BigEndian.PutUint16(h[2:4], l.DLID)
	binary.BigEndian.PutUint16(h[4:6], uint16(l.Reserved5&0x1F)<<11|l.PktLen&0x7FF)
	binary.BigEndian.PutUint16(h[6:8], l.SLID)
	t, err := b.AppendBytes(VCRCLength + len(l.Padding))
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint16(t, l.VCRC)
	copy(t[VCRCLength:], l.Padding)
	return nil
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	l := &LRH{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return p.NextDecoder(l.NextLayerType())
}
