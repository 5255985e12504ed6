package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// AtomicETHLength is the size of the Atomic Extended Transport Header.
const AtomicETHLength = 28

// AtomicETH is the Atomic Extended Transport Header (IBTA Vol 1 §9.3.4) of
// COMPARE_SWAP and FETCH_ADD. For FETCH_ADD, SwapAddData is the addend and
// CompareData is unused.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Virtual Address (64)                      |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          R_Key (32)                           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 Swap (or Add) Data (64)                       |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Compare Data (64)                        |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type AtomicETH struct {
	ethBase
	VA          uint64
	RKey        uint32
	SwapAddData uint64
	CompareData uint64
}

var atomicETHFields = []FieldSpan{{"VA", 0, 8}, {"R_Key", 8, 4}, {"SwapAddData", 12, 8}, {"CompareData", 20, 8}}

// LayerType returns LayerTypeAtomicETH.
func (a *AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// CanDecode returns LayerTypeAtomicETH.
func (a *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// DecodeFromBytes decodes an AtomicETH in place.
func (a *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := a.split("AtomicETH", atomicETHFields, AtomicETHLength, data, df); err != nil {
		return err
	}
	a.fill(data)
	return nil
}

// fill decodes the fields from data, which holds the header whole.
func (a *AtomicETH) fill(data []byte) {
	a.VA = binary.BigEndian.Uint64(data[0:8])
	a.RKey = binary.BigEndian.Uint32(data[8:12])
	a.SwapAddData = binary.BigEndian.Uint64(data[12:20])
	a.CompareData = binary.BigEndian.Uint64(data[20:28])
}

// SerializeTo prepends the header.
func (a *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(AtomicETHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(buf[0:8], a.VA)
	binary.BigEndian.PutUint32(buf[8:12], a.RKey)
	binary.BigEndian.PutUint64(buf[12:20], a.SwapAddData)
	binary.BigEndian.PutUint64(buf[20:28], a.CompareData)
	return nil
}
