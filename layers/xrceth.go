package layers

import "github.com/google/gopacket"

// XRCETHLength is the size of the XRC ETH.
const XRCETHLength = 4

// XRCETH is the XRC Extended Transport Header (IBTA Vol 1 Annex A14): the
// shared receive queue that an XRC request targets.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                   XRCSRQ (24)                 |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type XRCETH struct {
	ethBase
	Reserved uint8
	XRCSRQ   uint32 // 24 bits
}

var xrcethFields = []FieldSpan{{"Reserved", 0, 1}, {"XRCSRQ", 1, 3}}

// LayerType returns LayerTypeXRCETH.
func (x *XRCETH) LayerType() gopacket.LayerType { return LayerTypeXRCETH }

// CanDecode returns LayerTypeXRCETH.
func (x *XRCETH) CanDecode() gopacket.LayerClass { return LayerTypeXRCETH }

// DecodeFromBytes decodes an XRCETH in place.
func (x *XRCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	w, err := x.splitWord("XRCETH", xrcethFields, data, df)
	x.setWord(w)
	return err
}

func (x *XRCETH) setWord(w uint32) { x.Reserved, x.XRCSRQ = uint8(w>>24), w&0xFFFFFF }

// SerializeTo prepends the header.
func (x *XRCETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependWord(b, uint32(x.Reserved)<<24|x.XRCSRQ&0xFFFFFF)
}
