package layers

import "github.com/google/gopacket"

// IETHLength is the size of the Invalidate ETH.
const IETHLength = 4

// IETH is the Invalidate Extended Transport Header (IBTA Vol 1 §9.3.8): the
// R_Key that SEND with Invalidate asks the receiver to invalidate.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             R_Key                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type IETH struct {
	ethBase
	RKey uint32
}

var iethFields = []FieldSpan{{"R_Key", 0, 4}}

// LayerType returns LayerTypeIETH.
func (i *IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// CanDecode returns LayerTypeIETH.
func (i *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// DecodeFromBytes decodes an IETH in place.
func (i *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) (err error) {
	i.RKey, err = i.splitWord("IETH", iethFields, data, df)
	return err
}

func (i *IETH) setWord(w uint32) { i.RKey = w }

// SerializeTo prepends the header.
func (i *IETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependWord(b, i.RKey)
}
