package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// AtomicAckETHLength is the size of the Atomic Acknowledge ETH.
const AtomicAckETHLength = 8

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header (IBTA Vol 1
// §9.3.6): the value the remote location held before the atomic operation.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Original Remote Data (64)                    |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type AtomicAckETH struct {
	ethBase
	OrigRemoteData uint64
}

var atomicAckFields = []FieldSpan{{"OrigRemoteData", 0, 8}}

// LayerType returns LayerTypeAtomicAckETH.
func (a *AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// CanDecode returns LayerTypeAtomicAckETH.
func (a *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// DecodeFromBytes decodes an AtomicAckETH in place.
func (a *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split("AtomicAckETH", atomicAckFields, AtomicAckETHLength, data, df); err != nil {
		return err
	}
	a.fill(data)
	return nil
}

// fill decodes the fields from data, which holds the header whole.
func (a *AtomicAckETH) fill(data []byte) { a.OrigRemoteData = binary.BigEndian.Uint64(data[0:8]) }

// SerializeTo prepends the header.
func (a *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(AtomicAckETHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(buf, a.OrigRemoteData)
	return nil
}
