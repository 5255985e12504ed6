package layers_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/internal/fuzzseed"
	"github.com/ibwire/ibwire/layers"
)

// truncated records the decode feedback's truncation flag.
type truncated bool

func (t *truncated) SetTruncated() { *t = true }

// FuzzMACControl decodes arbitrary MAC Control bodies, seeded with every
// PAUSE and PFC frame of the corpus: never a panic, a failure is a
// truncation naming a field (and the feedback hears of it), a whole PFC
// frame has every pause time, and a body serializes back to its own bytes.
func FuzzMACControl(f *testing.F) {
	frames, err := fuzzseed.Frames(64)
	if err != nil {
		f.Fatal(err)
	}
	for _, fr := range frames {
		if fr.LinkType == uint32(layers.LinkTypeEthernet) && len(fr.Data) > 14 && fr.Data[12] == 0x88 && fr.Data[13] == 0x08 {
			f.Add(fr.Data[14:])
		}
	}
	f.Add([]byte{0x00, 0x01, 0xff, 0xff})             // PAUSE
	f.Add([]byte{0x01, 0x01, 0x00, 0x08, 0x00})       // PFC cut in its first time
	f.Add([]byte{0x00, 0x03, 0x12, 0x34, 0x56, 0x78}) // MPCP Report
	f.Fuzz(func(t *testing.T, data []byte) {
		var m layers.MACControl
		var df truncated
		err := m.DecodeFromBytes(data, &df)
		if err != nil {
			var de *layers.DecodeError
			if !errors.As(err, &de) || de.Field == "" || !errors.Is(err, layers.ErrTruncated) || !bool(df) {
				t.Fatalf("error without a field or truncation: %v", err)
			}
			return
		}
		if m.Opcode == layers.MACControlPFC && !m.HasPauseTimeOf(layers.PFCPriorities-1) {
			t.Fatal("a whole PFC frame lacks a pause time")
		}
		if !bytes.Equal(m.Contents, data[:len(m.Contents)]) || len(m.Params) != len(m.Contents)-2 {
			t.Fatalf("contents %x, params %x of %x", m.Contents, m.Params, data)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := m.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), m.Contents) {
			t.Fatalf("serialized %x, decoded from %x", buf.Bytes(), m.Contents)
		}
	})
}
