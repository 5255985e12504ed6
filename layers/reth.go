package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// RETHLength is the size of the RDMA Extended Transport Header.
const RETHLength = 16

// RETH is the RDMA Extended Transport Header (IBTA Vol 1 §9.3.3): where an
// RDMA WRITE or READ goes and how long it is. An AtomicETH starts the same way.
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
//	|                        DMA Length (32)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type RETH struct {
	ethBase
	VA        uint64
	RKey      uint32
	DMALength uint32
}

var rethFields = []FieldSpan{{"VA", 0, 8}, {"R_Key", 8, 4}, {"DMALength", 12, 4}}

// LayerType returns LayerTypeRETH.
func (r *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (r *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// DecodeFromBytes decodes a RETH in place.
func (r *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := r.split("RETH", rethFields, RETHLength, data, df); err != nil {
		return err
	}
	r.fill(data)
	return nil
}

// fill decodes the fields from data, which holds the header whole.
func (r *RETH) fill(data []byte) {
	r.VA = binary.BigEndian.Uint64(data[0:8])
	r.RKey = binary.BigEndian.Uint32(data[8:12])
	r.DMALength = binary.BigEndian.Uint32(data[12:16])
}

// SerializeTo prepends the header.
func (r *RETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(RETHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(buf[0:8], r.VA)
	binary.BigEndian.PutUint32(buf[8:12], r.RKey)
	binary.BigEndian.PutUint32(buf[12:16], r.DMALength)
	return nil
}
