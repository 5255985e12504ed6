package layers

import "github.com/google/gopacket"

// CNPLength is the size of the reserved block after the BTH of a RoCEv2 CNP.
const CNPLength = 16

// CNP is the body of a RoCEv2 Congestion Notification Packet (opcode 0x81,
// IBTA Annex A17 §A17.9.3): 16 reserved bytes after a BTH whose DestQP names
// the QP to slow down, with BECN set by convention. The native-IB CNP (0x80,
// Annex A10) has no such block.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                                                               |
//	+                        Reserved (128)                         +
//	|                                                               |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type CNP struct {
	ethBase
	Reserved [CNPLength]byte
}

var cnpFields = []FieldSpan{{"Reserved", 0, CNPLength}}

// LayerType returns LayerTypeCNP.
func (c *CNP) LayerType() gopacket.LayerType { return LayerTypeCNP }

// CanDecode returns LayerTypeCNP.
func (c *CNP) CanDecode() gopacket.LayerClass { return LayerTypeCNP }

// DecodeFromBytes decodes the reserved block in place.
func (c *CNP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := c.split("CNP", cnpFields, CNPLength, data, df); err != nil {
		return err
	}
	c.fill(data)
	return nil
}

// fill decodes the reserved block from data, which holds it whole.
func (c *CNP) fill(data []byte) { copy(c.Reserved[:], data) }

// SerializeTo prepends the reserved block.
func (c *CNP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(CNPLength)
	if err != nil {
		return err
	}
	copy(buf, c.Reserved[:])
	return nil
}
