package layers

import "github.com/google/gopacket"

// RDETHLength is the size of the Reliable Datagram ETH.
const RDETHLength = 4

// RDETH is the Reliable Datagram Extended Transport Header (IBTA Vol 1 §9.3.1):
// the end-to-end context of an RD packet.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                  EE-Context (24)              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type RDETH struct {
	ethBase
	Reserved  uint8
	EEContext uint32 // 24 bits
}

var rdethFields = []FieldSpan{{"Reserved", 0, 1}, {"EEContext", 1, 3}}

// LayerType returns LayerTypeRDETH.
func (r *RDETH) LayerType() gopacket.LayerType { return LayerTypeRDETH }

// CanDecode returns LayerTypeRDETH.
func (r *RDETH) CanDecode() gopacket.LayerClass { return LayerTypeRDETH }

// DecodeFromBytes decodes an RDETH in place.
func (r *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	w, err := r.splitWord("RDETH", rdethFields, data, df)
	r.setWord(w)
	return err
}

func (r *RDETH) setWord(w uint32) { r.Reserved, r.EEContext = uint8(w>>24), w&0xFFFFFF }

// SerializeTo prepends the header.
func (r *RDETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependWord(b, uint32(r.Reserved)<<24|r.EEContext&0xFFFFFF)
}
