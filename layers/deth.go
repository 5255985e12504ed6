package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// DETHLength is the size of the Datagram ETH.
const DETHLength = 8

// GSIQKey is the well-known Q_Key of QP1, the General Services Interface
// that carries CM and SA MADs (IBTA Vol 1 §13.5.1).
const GSIQKey = 0x80010000

// DETH is the Datagram Extended Transport Header (IBTA Vol 1 §9.3.2) of UD
// and RD packets: the Q_Key the receiver checks and the sender's QP.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Q_Key (32)                           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 Source QP (24)                |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type DETH struct {
	ethBase
	QKey     uint32
	Reserved uint8
	SrcQP    uint32 // 24 bits
}

var dethFields = []FieldSpan{{"Q_Key", 0, 4}, {"Reserved", 4, 1}, {"SrcQP", 5, 3}}

// LayerType returns LayerTypeDETH.
func (d *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns LayerTypeDETH.
func (d *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// DecodeFromBytes decodes a DETH in place.
func (d *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := d.split("DETH", dethFields, DETHLength, data, df); err != nil {
		return err
	}
	d.fill(data)
	return nil
}

// fill decodes the fields from data, which holds the header whole.
func (d *DETH) fill(data []byte) {
	d.QKey = binary.BigEndian.Uint32(data[0:4])
	d.Reserved = data[4]
	d.SrcQP = binary.BigEndian.Uint32(data[4:8]) & 0xFFFFFF
}

// SerializeTo prepends the header.
func (d *DETH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(DETHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf[0:4], d.QKey)
	binary.BigEndian.PutUint32(buf[4:8], uint32(d.Reserved)<<24|d.SrcQP&0xFFFFFF)
	return nil
}
