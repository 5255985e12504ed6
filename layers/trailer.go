package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// Trailer is the end of an IB transport packet: the pad bytes that round the
// payload up to a multiple of four (BTH.PadCount of them, IBTA Vol 1 §9.2.6)
// and the invariant CRC (§7.8.1). Wireshark counts pad bytes as payload; ibwire
// splits them off so payload lengths are what the application sent.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  pad (0-3 bytes)  |          ICRC (32, little-endian)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The ICRC is a standard CRC-32 whose value is sent least significant byte
// first; tshark shows the four wire bytes read big-endian (see ICRCWire).
// Native IB adds a link-level VCRC after the ICRC; it belongs to the LRH.
type Trailer struct {
	Contents []byte // pad and ICRC bytes
	Pad      []byte
	ICRC     uint32 // the CRC value
}

var trailerFields = []FieldSpan{{"ICRC", 0, ICRCLength}}

// LayerType returns LayerTypeTrailer.
func (t *Trailer) LayerType() gopacket.LayerType { return LayerTypeTrailer }

// CanDecode returns LayerTypeTrailer.
func (t *Trailer) CanDecode() gopacket.LayerClass { return LayerTypeTrailer }

// LayerContents returns the pad and ICRC bytes.
func (t *Trailer) LayerContents() []byte { return t.Contents }

// LayerPayload returns nil: nothing follows the ICRC inside the transport packet.
func (t *Trailer) LayerPayload() []byte { return nil }

// NextLayerType returns LayerTypeZero.
func (t *Trailer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes pad bytes followed by the ICRC: data is exactly the
// trailer, so its length less four is the pad count.
func (t *Trailer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < ICRCLength {
		df.SetTruncated()
		return checkLength("ICRC", trailerFields, len(data))
	}
	t.set(data)
	return nil
}

// set sets the trailer from data, at least ICRCLength bytes: the pad, then
// the ICRC.
func (t *Trailer) set(data []byte) {
	n := len(data) - ICRCLength
	t.Contents = data
	t.Pad = data[:n]
	t.ICRC = binary.LittleEndian.Uint32(data[n:])
}

// ICRCWire returns the four ICRC bytes read big-endian, the number tshark
// prints as infiniband.invariant.crc.
func (t *Trailer) ICRCWire() uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], t.ICRC)
	return binary.BigEndian.Uint32(b[:])
}

// SerializeTo appends the pad bytes and the ICRC. FinishFrame fills in the
// ICRC once the whole frame exists.
func (t *Trailer) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.AppendBytes(len(t.Pad) + ICRCLength)
	if err != nil {
		return err
	}
	n := copy(buf, t.Pad)
	binary.LittleEndian.PutUint32(buf[n:], t.ICRC)
	return nil
}
