package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
)

// ERFHeaderLength is the size of an ERF record header without extensions.
const ERFHeaderLength = 16

// ERFType is the record type of an Endace ERF record (low 7 bits of byte 8).
type ERFType uint8

// ERF record types that carry InfiniBand (Endace ERF types document; Wireshark erf.types.type).
const (
	ERFTypeInfiniBand     ERFType = 21 // an IB packet starting at the LRH
	ERFTypeInfiniBandLink ERFType = 25 // an IB link packet (flow control)
)

func (t ERFType) String() string {
	switch t {
	case ERFTypeInfiniBand:
		return "InfiniBand"
	case ERFTypeInfiniBandLink:
		return "InfiniBand link"
	}
	return fmt.Sprintf("ERF type %d", uint8(t))
}

// ERF is an Endace Extensible Record Format record header, the wrapping that
// Mellanox ibdump and Endace cards put around native InfiniBand packets
// (pcap LINKTYPE_ERF 197).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|              Timestamp (64, little-endian, 32.32 fixed)       |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|X|   Type      |    Flags      |       Record Length (rlen)    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Loss Counter / Color        |       Wire Length (wlen)      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  extension headers (8 bytes each) while X / each one's top bit |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// rlen is the whole record, padded to 8 bytes; wlen is the packet's length
// on the wire. The packet is the first wlen bytes after the headers.
type ERF struct {
	Contents []byte
	Payload  []byte

	Timestamp    uint64
	Type         ERFType
	HasExtension bool
	Flags        uint8
	RLen         uint16
	LCtr         uint16
	WLen         uint16
	Extensions   []byte
	Padding      []byte // record bytes after the packet

	short int // packet bytes WLen claims beyond the input (0 when whole)
}

var erfFields = []FieldSpan{{"Timestamp", 0, 8}, {"Type", 8, 1}, {"Flags", 9, 1}, {"RLen", 10, 2}, {"LCtr", 12, 2}, {"WLen", 14, 2}}

// LayerType returns LayerTypeERF.
func (e *ERF) LayerType() gopacket.LayerType { return LayerTypeERF }

// CanDecode returns LayerTypeERF.
func (e *ERF) CanDecode() gopacket.LayerClass { return LayerTypeERF }

// LayerContents returns the record header and extensions.
func (e *ERF) LayerContents() []byte { return e.Contents }

// LayerPayload returns the packet.
func (e *ERF) LayerPayload() []byte { return e.Payload }

// NextLayerType returns LayerTypeLRH for InfiniBand records.
func (e *ERF) NextLayerType() gopacket.LayerType {
	if e.Type == ERFTypeInfiniBand {
		return LayerTypeLRH
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the record header and its extensions.
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ERFHeaderLength {
		df.SetTruncated()
		return checkLength("ERF", erfFields, len(data))
	}
	e.Timestamp = binary.LittleEndian.Uint64(data[0:8])
	e.Type = ERFType(data[8] & 0x7F)
	e.HasExtension = data[8]&0x80 != 0
	e.Flags = data[9]
	e.RLen = binary.BigEndian.Uint16(data[10:12])
	e.LCtr = binary.BigEndian.Uint16(data[12:14])
	e.WLen = binary.BigEndian.Uint16(data[14:16])
	hdr := ERFHeaderLength
	for more := e.HasExtension; more; {
		if len(data) < hdr+8 {
			df.SetTruncated()
			return &DecodeError{Layer: "ERF", Field: "Extension", Offset: hdr, Need: 8, Have: len(data) - hdr, Err: ErrTruncated}
		}
		more = data[hdr]&0x80 != 0
		hdr += 8
	}
	if int(e.RLen) < hdr {
		return malformed("ERF", "RLen", 10, "record length %d is shorter than its %d header bytes", e.RLen, hdr)
	}
	e.Contents = data[:hdr]
	e.Extensions = data[ERFHeaderLength:hdr]
	if hdr+int(e.WLen) > int(e.RLen) {
		return malformed("ERF", "WLen", 14, "wire length %d exceeds the record length %d", e.WLen, e.RLen)
	}
	// Capture tools often cut the record's alignment padding; only a short
	// packet counts as truncation.
	rec := data[:min(len(data), int(e.RLen))]
	end := hdr + int(e.WLen)
	e.short = max(end-len(rec), 0)
	if len(rec) < end {
		df.SetTruncated()
		end = len(rec)
	}
	e.Payload = rec[hdr:end]
	e.Padding = rec[end:]
	return nil
}

// SerializeTo prepends the record header and appends the padding. With
// FixLengths, WLen is the payload length and RLen the whole record.
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		e.WLen = uint16(len(b.Bytes()))
		e.RLen = uint16(ERFHeaderLength + len(e.Extensions) + len(b.Bytes()) + len(e.Padding))
	}
	if len(e.Padding) > 0 {
		t, err := b.AppendBytes(len(e.Padding))
		if err != nil {
			return err
		}
		copy(t, e.Padding)
	}
	h, err := b.PrependBytes(ERFHeaderLength + len(e.Extensions))
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(h[0:8], e.Timestamp)
	h[8] = uint8(e.Type) & 0x7F
	if e.HasExtension {
		h[8] |= 0x80
	}
	h[9] = e.Flags
	binary.BigEndian.PutUint16(h[10:12], e.RLen)
	binary.BigEndian.PutUint16(h[12:14], e.LCtr)
	binary.BigEndian.PutUint16(h[14:16], e.WLen)
	copy(h[ERFHeaderLength:], e.Extensions)
	return nil
}

func decodeERF(data []byte, p gopacket.PacketBuilder) error {
	e := &ERF{}
	if err := e.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(e)
	return p.NextDecoder(e.NextLayerType())
}
