package layers

import "github.com/google/gopacket"

// FETHLength is the size of the Flush ETH.
const FETHLength = 4

// FETH is the Flush Extended Transport Header of RC FLUSH (IBTA 1.5, Vol 1
// §9.3.11; Linux rxe_hdr.h FETH_PLT_MASK/FETH_SEL_MASK): which placement the
// flush makes durable or visible and how selective it is.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Reserved (26)                    |Sel| PlcTy |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type FETH struct {
	ethBase
	Reserved         uint32 // 26 bits
	SelectivityLevel uint8  // 2 bits: 0 memory region range, 1 whole memory region
	PlacementType    uint8  // 4 bits: bit 0 global visibility, bit 1 persistence
}

var fethFields = []FieldSpan{{"Reserved", 0, 4}}

// LayerType returns LayerTypeFETH.
func (f *FETH) LayerType() gopacket.LayerType { return LayerTypeFETH }

// CanDecode returns LayerTypeFETH.
func (f *FETH) CanDecode() gopacket.LayerClass { return LayerTypeFETH }

// DecodeFromBytes decodes a FETH in place.
func (f *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	w, err := f.splitWord("FETH", fethFields, data, df)
	f.setWord(w)
	return err
}

func (f *FETH) setWord(w uint32) {
	f.Reserved, f.SelectivityLevel, f.PlacementType = w>>6, uint8(w>>4)&3, uint8(w)&0xF
}

// SerializeTo prepends the header.
func (f *FETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependWord(b, f.Reserved<<6|uint32(f.SelectivityLevel&3)<<4|uint32(f.PlacementType&0xF))
}
