package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// Port mirroring: a switch copies a port's frames to a collector inside
// GRE (RFC 2784, with the RFC 2890 key and sequence number) and an ERSPAN
// header (draft-foschiano-erspan-03). A capture at the collector holds the
// mirrored RoCE frame whole after those headers, so it decodes and
// correlates like one taken on the port itself.
//
// Type I is GRE protocol 0x88BE without a sequence number and no ERSPAN
// header; type II is 0x88BE with a sequence number and an 8-byte header
// (gopacket's ERSPANII); type III is 0x22EB with a 12-byte header and an
// optional 8-byte platform-specific subheader.

var (
	greFields      = []FieldSpan{{"Flags/Version", 0, 2}, {"Protocol", 2, 2}}
	erspanIIFields = []FieldSpan{{"Version/VLAN", 0, 2}, {"CoS/En/T/SessionID", 2, 2}, {"Reserved/Index", 4, 4}}
)

// EthernetTypeERSPANIII is the GRE protocol type of ERSPAN type III.
const EthernetTypeERSPANIII gplayers.EthernetType = 0x22EB

// GRE is gopacket's GRE header with its length checked before decoding:
// gopacket's reads the optional fields without looking at the data's length.
// Source routing (the R bit, deprecated by RFC 2784) is not decoded.
type GRE struct {
	gplayers.GRE
}

// DecodeFromBytes decodes a GRE header, or fails with a *DecodeError when
// data is shorter than its flags say or asks for source routing.
func (g *GRE) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 4 {
		df.SetTruncated()
		return &DecodeError{Layer: "GRE", Field: "Protocol", Need: 4, Have: len(data), Err: ErrTruncated}
	}
	if data[0]&0x40 != 0 {
		return &DecodeError{Layer: "GRE", Field: "Flags", Err: ErrMalformed, Detail: "source routing (R bit) is not decoded"}
	}
	need := 4
	for _, bit := range []byte{0x80, 0x20, 0x10} { // checksum, key, sequence number
		if data[0]&bit != 0 {
			need += 4
		}
	}
	if data[1]&0x80 != 0 { // acknowledgment number (PPTP's enhanced GRE)
		need += 4
	}
	if len(data) < need {
		df.SetTruncated()
		return &DecodeError{Layer: "GRE", Field: "Flags", Need: need, Have: len(data), Err: ErrTruncated,
			Detail: "the flags ask for optional fields the data does not hold"}
	}
	g.GRERouting = nil
	return g.GRE.DecodeFromBytes(data, df)
}

// NextLayerType is the layer the GRE protocol type names; ERSPAN type I (no
// sequence number) carries the mirrored frame directly.
func (g *GRE) NextLayerType() gopacket.LayerType {
	if g.Protocol == gplayers.EthernetTypeERSPAN && !g.SeqPresent {
		return gplayers.LayerTypeEthernet
	}
	return g.GRE.NextLayerType()
}

// ERSPANII is gopacket's ERSPAN type II header with its length checked.
//
//	0                   1                   2                   3
//	0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Ver  |          VLAN         | COS | En|T|    Session ID     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|      Reserved         |                  Index                |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type ERSPANII struct {
	gplayers.ERSPANII
}

// DecodeFromBytes decodes the 8-byte header, or fails on shorter data.
func (e *ERSPANII) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		df.SetTruncated()
		return &DecodeError{Layer: "ERSPANII", Field: "Index", Need: 8, Have: len(data), Err: ErrTruncated}
	}
	return e.ERSPANII.DecodeFromBytes(data, df)
}

// ERSPANIII is the ERSPAN type III header (draft-foschiano-erspan-03
// §4.3), with Wireshark's field names (erspan.*) in the comments.
//
//	0                   1                   2                   3
//	0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Ver  |          VLAN         | COS |BSO|T|     Session ID    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Timestamp                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             SGT               |P|    FT   |   Hw ID   |D|Gra|O|
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Platform Specific SubHeader (8 octets, when O)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type ERSPANIII struct {
	gplayers.BaseLayer
	Version     uint8  // erspan.version: 2 for type III
	VLAN        uint16 // erspan.vlan
	CoS         uint8  // erspan.cos
	BSO         uint8  // erspan.bso: bad, short or oversized frame
	Truncated   bool   // erspan.truncated
	SessionID   uint16 // erspan.spanid
	Timestamp   uint32 // erspan.timestamp, in Granularity's unit
	SGT         uint16 // erspan.sgt: security group tag
	P           bool   // erspan.p
	FrameType   uint8  // erspan.ft: 0 Ethernet frame, 2 IP packet
	HardwareID  uint8  // erspan.hw
	Direction   bool   // erspan.direction: true for egress
	Granularity uint8  // erspan.gra: 0 100 µs, 1 100 ns, 2 IEEE 1588, 3 user-defined
	O           bool   // erspan.o: a platform-specific subheader follows
	Platform    []byte // the subheader, when O
}

// LayerType returns LayerTypeERSPANIII.
func (e *ERSPANIII) LayerType() gopacket.LayerType { return LayerTypeERSPANIII }

// CanDecode returns LayerTypeERSPANIII.
func (e *ERSPANIII) CanDecode() gopacket.LayerClass { return LayerTypeERSPANIII }

// NextLayerType is Ethernet for a mirrored Ethernet frame (FrameType 0) and
// the payload otherwise.
func (e *ERSPANIII) NextLayerType() gopacket.LayerType {
	if e.FrameType == 0 {
		return gplayers.LayerTypeEthernet
	}
	return gopacket.LayerTypePayload
}

var erspanIIIFields = []FieldSpan{{"Version/VLAN", 0, 2}, {"CoS/BSO/T/SessionID", 2, 2}, {"Timestamp", 4, 4},
	{"SGT", 8, 2}, {"P/FT/HwID/D/Gra/O", 10, 2}, {"Platform", 12, 8}}

// DecodeFromBytes decodes the header, keeping slices into data. It changes
// e only when the header decodes: a parser reuses one ERSPANIII for a mirror
// nested in a mirror, and a failed inner header must not leave its fields
// under the outer one's Contents.
func (e *ERSPANIII) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := checkLength("ERSPANIII", erspanIIIFields[:5], len(data)); err != nil {
		df.SetTruncated()
		return err
	}
	be := binary.BigEndian
	w0, w2 := be.Uint16(data), be.Uint16(data[2:])
	var h ERSPANIII
	h.Version, h.VLAN = uint8(w0>>12), w0&0x0fff
	if h.Version != 2 {
		return &DecodeError{Layer: "ERSPANIII", Field: "Version", Err: ErrMalformed, Detail: fmt.Sprintf("version %d under GRE type 0x22EB, want 2", h.Version)}
	}
	h.CoS, h.BSO, h.Truncated, h.SessionID = uint8(w2>>13), uint8(w2>>11&3), w2&0x0400 != 0, w2&0x03ff
	h.Timestamp, h.SGT = be.Uint32(data[4:]), be.Uint16(data[8:])
	w10 := be.Uint16(data[10:])
	h.P, h.FrameType, h.HardwareID = w10&0x8000 != 0, uint8(w10>>10&0x1f), uint8(w10>>4&0x3f)
	h.Direction, h.Granularity, h.O = w10&0x8 != 0, uint8(w10>>1&3), w10&1 != 0
	n := 12
	if h.O {
		if err := checkLength("ERSPANIII", erspanIIIFields, len(data)); err != nil {
			df.SetTruncated()
			return err
		}
		h.Platform, n = data[12:20], 20
	}
	h.BaseLayer = gplayers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	*e = h
	return nil
}

// SerializeTo prepends the header (and the platform subheader when O).
func (e *ERSPANIII) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	n := 12
	if e.O {
		n = 20
	}
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	be := binary.BigEndian
	be.PutUint16(h, uint16(e.Version&0xf)<<12|e.VLAN&0x0fff)
	w2 := uint16(e.CoS&7)<<13 | uint16(e.BSO&3)<<11 | e.SessionID&0x03ff
	if e.Truncated {
		w2 |= 0x0400
	}
	be.PutUint16(h[2:], w2)
	be.PutUint32(h[4:], e.Timestamp)
	be.PutUint16(h[8:], e.SGT)
	w10 := uint16(e.FrameType&0x1f)<<10 | uint16(e.HardwareID&0x3f)<<4 | uint16(e.Granularity&3)<<1
	for _, f := range []struct {
		set bool
		bit uint16
	}{{e.P, 0x8000}, {e.Direction, 0x8}, {e.O, 1}} {
		if f.set {
			w10 |= f.bit
		}
	}
	be.PutUint16(h[10:], w10)
	if e.O {
		copy(h[12:20], e.Platform)
	}
	return nil
}

func decodeERSPANIII(data []byte, p gopacket.PacketBuilder) error {
	e := &ERSPANIII{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	return p.NextDecoder(e.NextLayerType())
}
