package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// ethBase is what every extended transport header shares: its bytes, what
// follows it, and which layer decodes that. An ETH carries no "next header"
// field on the wire — the BTH opcode decides the chain — so the BTH that
// decodes an ETH records the successor here (see BTH.DecodeFromBytes).
type ethBase struct {
	Contents []byte // the header's bytes
	Payload  []byte // what follows it, up to the end of the packet payload
	next     gopacket.LayerType
}

// LayerContents returns the header's bytes.
func (e *ethBase) LayerContents() []byte { return e.Contents }

// LayerPayload returns the bytes after the header (further ETHs and the payload).
func (e *ethBase) LayerPayload() []byte { return e.Payload }

// NextLayerType returns what the opcode places after this header; an ETH
// decoded on its own, outside a BTH, is assumed to be followed by payload.
func (e *ethBase) NextLayerType() gopacket.LayerType {
	if e.next == gopacket.LayerTypeZero {
		return gopacket.LayerTypePayload
	}
	return e.next
}

// split checks that data holds size bytes and slices it; on a short input it
// reports the first field that does not fit.
func (e *ethBase) split(layer string, spans []FieldSpan, size int, data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < size {
		df.SetTruncated()
		return checkLength(layer, spans, len(data))
	}
	e.Contents = data[:size]
	e.Payload = data[size:]
	return nil
}

// at places a header of size bytes at the start of d, which holds it whole,
// followed by next.
func (e *ethBase) at(d []byte, size int, next gopacket.LayerType) {
	e.Contents, e.Payload, e.next = d[:size], d[size:], next
}

// splitWord decodes a one-word (4-byte) ETH and returns the word.
func (e *ethBase) splitWord(layer string, spans []FieldSpan, data []byte, df gopacket.DecodeFeedback) (uint32, error) {
	if err := e.split(layer, spans, 4, data, df); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(data), nil
}

// prependWord serializes a one-word ETH.
func prependWord(b gopacket.SerializeBuffer, w uint32) error {
	buf, err := b.PrependBytes(4)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(buf, w)
	return nil
}
