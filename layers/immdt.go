package layers

import "github.com/google/gopacket"

// ImmDtLength is the size of the Immediate Data ETH.
const ImmDtLength = 4

// ImmDt is the Immediate Data Extended Transport Header (IBTA Vol 1 §9.3.7):
// four bytes handed to the receiver in its completion.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Immediate Data                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type ImmDt struct {
	ethBase
	Value uint32 // big-endian as on the wire (verbs hands it over as __be32)
}

var immDtFields = []FieldSpan{{"ImmediateData", 0, 4}}

// LayerType returns LayerTypeImmDt.
func (i *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (i *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// DecodeFromBytes decodes an ImmDt in place.
func (i *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) (err error) {
	i.Value, err = i.splitWord("ImmDt", immDtFields, data, df)
	return err
}

func (i *ImmDt) setWord(w uint32) { i.Value = w }

// SerializeTo prepends the header.
func (i *ImmDt) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return prependWord(b, i.Value)
}
