package layers

import (
	"encoding/binary"
	"net"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// GRHLength is the size of the Global Route Header.
const GRHLength = 40

// NxtHdrBTH is the GRH next-header value that announces a BTH (IBTA Vol 1 §8.3.1).
const NxtHdrBTH = 0x1B

// GRH is the Global Route Header (IBTA Vol 1 §8.3): an IPv6-shaped header that
// routes between subnets, and the first header of RoCE v1 (Annex A16).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| IPVer |    TClass     |            Flow Label (20)            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          PayLen (16)          |    NxtHdr     |    HopLmt     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Source GID (128)                          |
//	|                  Destination GID (128)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PayLen counts the bytes after the GRH up to and including the ICRC, so it
// also tells where Ethernet padding of a short RoCE v1 frame begins.
type GRH struct {
	Contents []byte
	Payload  []byte

	IPVer     uint8
	TClass    uint8
	FlowLabel uint32
	PayLen    uint16
	NxtHdr    uint8
	HopLmt    uint8
	SGID      net.IP // 16 bytes, sliced from the packet
	DGID      net.IP

	Padding []byte // bytes after PayLen (Ethernet minimum-frame padding)

	short int // bytes PayLen claims beyond the input (0 when whole)
}

var grhFields = []FieldSpan{{"IPVer/TClass/FlowLabel", 0, 4}, {"PayLen", 4, 2}, {"NxtHdr", 6, 1},
	{"HopLmt", 7, 1}, {"SGID", 8, 16}, {"DGID", 24, 16}}

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// LayerContents returns the 40 GRH bytes.
func (g *GRH) LayerContents() []byte { return g.Contents }

// LayerPayload returns the PayLen bytes after the GRH.
func (g *GRH) LayerPayload() []byte { return g.Payload }

// NextLayerType returns LayerTypeBTH when NxtHdr is 0x1B.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NxtHdr == NxtHdrBTH {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// NetworkFlow returns the GID pair, so a GRH is a gopacket.NetworkLayer.
func (g *GRH) NetworkFlow() gopacket.Flow {
	return gopacket.NewFlow(gplayers.EndpointIPv6, g.SGID, g.DGID)
}

// DecodeFromBytes decodes the GRH and trims what follows to PayLen. A packet
// shorter than PayLen is reported through df.SetTruncated.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < GRHLength {
		df.SetTruncated()
		return checkLength("GRH", grhFields, len(data))
	}
	w := binary.BigEndian.Uint32(data[0:4])
	g.IPVer = uint8(w >> 28)
	g.TClass = uint8(w >> 20)
	g.FlowLabel = w & 0xFFFFF
	g.PayLen = binary.BigEndian.Uint16(data[4:6])
	g.NxtHdr = data[6]
	g.HopLmt = data[7]
	g.SGID = net.IP(data[8:24])
	g.DGID = net.IP(data[24:40])
	g.Contents = data[:GRHLength]
	end := GRHLength + int(g.PayLen)
	g.short = max(end-len(data), 0)
	if len(data) < end {
		df.SetTruncated()
		g.Payload, g.Padding = data[GRHLength:], nil
		return nil
	}
	g.Payload = data[GRHLength:end]
	g.Padding = data[end:]
	return nil
}

// SerializeTo prepends the GRH and appends its Padding. With FixLengths,
// PayLen covers the buffer before the padding.
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		g.PayLen = uint16(len(b.Bytes()))
	}
	if len(g.Padding) > 0 {
		// What followed PayLen (Ethernet padding of a short RoCEv1 frame)
		// goes back where it was, so decode then serialize is exact.
		t, err := b.AppendBytes(len(g.Padding))
		if err != nil {
			return err
		}
		copy(t, g.Padding)
	}
	h, err := b.PrependBytes(GRHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h[0:4], uint32(g.IPVer&0xF)<<28|uint32(g.TClass)<<20|g.FlowLabel&0xFFFFF)
	binary.BigEndian.PutUint16(h[4:6], g.PayLen)
	h[6] = g.NxtHdr
	h[7] = g.HopLmt
	copy(h[8:24], g.SGID.To16())
	copy(h[24:40], g.DGID.To16())
	return nil
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	p.SetNetworkLayer(g)
	return p.NextDecoder(g.NextLayerType())
}
