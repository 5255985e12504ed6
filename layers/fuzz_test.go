package layers_test

import (
	"bytes"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/internal/fuzzseed"
	"github.com/ibwire/ibwire/layers"
)

// fuzzFirstLayers are the starting layers a fuzz input can select with its
// first byte: every link type ibwire decodes, and the inner entry points.
var fuzzFirstLayers = []gopacket.LayerType{
	gplayers.LayerTypeEthernet, layers.LayerTypeLRH, layers.LayerTypeERF,
	layers.LayerTypeGRH, layers.LayerTypeBTH, gplayers.LayerTypeIPv4, gplayers.LayerTypeIPv6,
}

func seedFrames(f *testing.F) {
	frames, err := fuzzseed.Frames(64)
	if err != nil {
		f.Fatal(err)
	}
	for _, fr := range frames {
		sel := byte(0)
		switch fr.LinkType {
		case 247:
			sel = 1
		case 197:
			sel = 2
		}
		f.Add(sel, fr.Data)
	}
}

// FuzzParser decodes arbitrary bytes from every entry point: it must never
// panic, and an error must be a *DecodeError naming a layer and a field.
func FuzzParser(f *testing.F) {
	seedFrames(f)
	parsers := make([]*layers.Parser, len(fuzzFirstLayers))
	dcParsers := make([]*layers.Parser, len(fuzzFirstLayers))
	for i, t := range fuzzFirstLayers {
		parsers[i] = layers.NewParser(t, layers.ParserOptions{})
		dcParsers[i] = layers.NewParser(t, layers.ParserOptions{DecodeDC: true})
	}
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		for _, ps := range [][]*layers.Parser{parsers, dcParsers} {
			p := ps[int(sel)%len(ps)]
			err := p.Decode(data)
			if err != nil {
				de, ok := err.(*layers.DecodeError)
				if !ok || de.Layer == "" || de.Field == "" {
					t.Fatalf("error without layer and field: %v", err)
				}
				continue
			}
			p.CheckICRC()
			p.CheckVCRC()
		}
	})
}

// FuzzRoundTrip checks that decode → serialize → decode is stable: a frame
// that decodes serializes to bytes that decode to the same headers and that
// serialize to themselves.
func FuzzRoundTrip(f *testing.F) {
	seedFrames(f)
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		first := fuzzFirstLayers[int(sel)%len(fuzzFirstLayers)]
		p := layers.NewParser(first, layers.ParserOptions{})
		if p.Decode(data) != nil || !p.Has(layers.LayerTypeBTH) {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, p.SerializableLayers()...); err != nil {
			return // a header whose fields do not fit back (the fields were read from a shorter frame)
		}
		once := append([]byte(nil), buf.Bytes()...)
		q := layers.NewParser(first, layers.ParserOptions{})
		if err := q.Decode(once); err != nil {
			t.Fatalf("serialized frame does not decode: %v\n%x", err, once)
		}
		if p.BTH.Opcode != q.BTH.Opcode || p.BTH.PSN != q.BTH.PSN || p.BTH.DestQP != q.BTH.DestQP ||
			!bytes.Equal(p.BTH.PacketPayload(), q.BTH.PacketPayload()) || p.BTH.Trailer.ICRC != q.BTH.Trailer.ICRC {
			t.Fatalf("round trip changed the BTH: %+v vs %+v", p.BTH.Info().Name, q.BTH.Info().Name)
		}
		buf2 := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf2, gopacket.SerializeOptions{}, q.SerializableLayers()...); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, buf2.Bytes()) {
			t.Fatalf("second serialization differs:\n%x\n%x", once, buf2.Bytes())
		}
	})
}
