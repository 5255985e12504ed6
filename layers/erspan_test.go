package layers_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// erspanIIIWithPlatform is an ERSPAN type III header with every field set
// and a platform subheader. tshark 4.0.17 on it (-T fields -e erspan.version
// -e erspan.vlan -e erspan.cos -e erspan.bso -e erspan.truncated
// -e erspan.spanid -e erspan.timestamp -e erspan.sgt -e erspan.p -e erspan.ft
// -e erspan.hw -e erspan.direction -e erspan.gra -e erspan.o):
//
//	2	291	5	2	1	682	16909060	48879	1	0	42	1	3	1
var erspanIIIWithPlatform = "2123b6aa01020304beef82af04000011deadbeef"

func TestERSPANIIIKnownAnswer(t *testing.T) {
	data, err := hex.DecodeString(erspanIIIWithPlatform + "0102")
	require.NoError(t, err)
	var e layers.ERSPANIII
	require.NoError(t, e.DecodeFromBytes(data, gopacket.NilDecodeFeedback))
	platform, _ := hex.DecodeString("04000011deadbeef")
	want := layers.ERSPANIII{Version: 2, VLAN: 291, CoS: 5, BSO: 2, Truncated: true, SessionID: 682, Timestamp: 16909060,
		SGT: 48879, P: true, FrameType: 0, HardwareID: 42, Direction: true, Granularity: 3, O: true, Platform: platform}
	want.Contents, want.Payload = data[:20], data[20:]
	assert.Equal(t, want, e)
	assert.Equal(t, gplayers.LayerTypeEthernet, e.NextLayerType())

	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, e.SerializeTo(buf, gopacket.SerializeOptions{}))
	assert.Equal(t, data[:20], buf.Bytes(), "serialises back to the same bytes")
}

// TestMirroredFramesDecode: a RoCE conversation mirrored with ERSPAN type
// II and III decodes through GRE and ERSPAN to the mirrored frame, whose
// headers (and ICRC) are those of the original.
func TestMirroredFramesDecode(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpWrite, Data: craft.Pattern(3000, 1), VA: 0x1000, RKey: 7}}, craft.Faults{}))
	frames := c.Trace().Frames
	tests := []struct {
		typ    int
		erspan gopacket.LayerType
	}{{2, gplayers.LayerTypeERSPANII}, {3, layers.LayerTypeERSPANIII}}
	for _, tt := range tests {
		mirrored, err := craft.Mirror{Type: tt.typ, Session: 0x155}.Wrap(frames)
		require.NoError(t, err)
		p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
		orig := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
		for i, f := range mirrored {
			require.NoError(t, p.Decode(f.Data), "type %d frame %d", tt.typ, i+1)
			require.NoError(t, orig.Decode(frames[i].Data))
			assert.Equal(t, []gopacket.LayerType{gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeGRE, tt.erspan},
				p.Decoded[:4], "type %d frame %d", tt.typ, i+1)
			assert.Equal(t, orig.Decoded, p.Decoded[4:], "the mirrored frame's own stack")
			assert.Equal(t, orig.IPv4.SrcIP, p.IPv4.SrcIP, "the mirrored frame's addresses")
			assert.Equal(t, orig.BTH.PSN, p.BTH.PSN)
			assert.Equal(t, orig.BTH.Trailer.ICRC, p.BTH.Trailer.ICRC)
			status, _ := p.CheckICRC()
			assert.Equal(t, layers.CRCGood, status, "the ICRC verifies over the mirrored frame")
			assert.Equal(t, uint32(i+1), p.GRE.Seq)
		}
		assert.Equal(t, uint16(0x155), map[int]uint16{2: p.ERSPANII.SessionID, 3: p.ERSPANIII.SessionID}[tt.typ])
	}
}

// TestMirrorHeadersCut: GRE and ERSPAN headers cut short fail with a
// DecodeError naming the layer, never a panic (gopacket's own GRE and
// ERSPAN II decoders index past the end).
func TestMirrorHeadersCut(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(10, 1)}}, craft.Faults{}))
	for _, typ := range []int{2, 3} {
		mirrored, err := craft.Mirror{Type: typ}.Wrap(c.Trace().Frames[:1])
		require.NoError(t, err)
		full := mirrored[0].Data
		for _, tc := range []struct {
			cut   int
			layer string
		}{{34 + 2, "GRE"}, {34 + 6, "GRE"}, {34 + 8 + 5, map[int]string{2: "ERSPANII", 3: "ERSPANIII"}[typ]}} {
			frame := append([]byte(nil), full[:tc.cut]...)
			frame[16], frame[17] = 0, byte(tc.cut-14) // IPv4 total length: the cut is the packet's end
			p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
			err := p.Decode(frame)
			var de *layers.DecodeError
			require.True(t, errors.As(err, &de), "type %d cut at %d: %v", typ, tc.cut, err)
			assert.Equal(t, tc.layer, de.Layer, "type %d cut at %d: %v", typ, tc.cut, err)
			assert.ErrorIs(t, err, layers.ErrTruncated)
		}
	}
}

// TestNestedMirrorBadInnerHeader: a mirror of a mirror decodes both ERSPAN
// III headers into the parser's one ERSPANIII; an inner header that fails
// (here its version) leaves the outer one whole, fields and bytes alike. The
// fuzzer found the outer Contents kept under the inner header's fields.
func TestNestedMirrorBadInnerHeader(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(10, 1)}}, craft.Faults{}))
	inner, err := craft.Mirror{Type: 3, Session: 7}.Wrap(c.Trace().Frames[:1])
	require.NoError(t, err)
	const innerERSPAN = 14 + 20 + 8   // Ethernet, IPv4, GRE with a sequence number
	inner[0].Data[innerERSPAN] = 0x30 // version 3
	outer, err := craft.Mirror{Type: 3, Session: 9}.Wrap(inner)
	require.NoError(t, err)
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	err = p.Decode(outer[0].Data)
	var de *layers.DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, "Version", de.Field)
	require.True(t, p.Has(layers.LayerTypeERSPANIII))
	e := p.ERSPANIII
	assert.Equal(t, uint8(2), e.Version)
	assert.Equal(t, uint16(9), e.SessionID)
	assert.Equal(t, outer[0].Data[innerERSPAN:innerERSPAN+12], e.Contents)
}

// FuzzMirror decodes arbitrary bytes after Ethernet, IPv4 and GRE headers:
// never a panic, and an ERSPAN III header that decodes serialises back to
// its bytes.
func FuzzMirror(f *testing.F) {
	c, err := craft.New(craft.Config{})
	require.NoError(f, err)
	require.NoError(f, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(40, 1)}}, craft.Faults{}))
	for _, typ := range []int{2, 3} {
		mirrored, err := craft.Mirror{Type: typ}.Wrap(c.Trace().Frames)
		require.NoError(f, err)
		for _, m := range mirrored {
			f.Add(m.Data[34:])
		}
	}
	head := c.Trace().Frames[0].Data[:34]
	f.Fuzz(func(t *testing.T, gre []byte) {
		frame := append(append([]byte(nil), head...), gre...)
		frame[23] = 47 // IPv4 protocol GRE
		frame[16], frame[17] = byte((len(frame)-14)>>8), byte(len(frame)-14)
		p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
		_ = p.Decode(frame)
		if p.Has(layers.LayerTypeERSPANIII) {
			buf := gopacket.NewSerializeBuffer()
			e := p.ERSPANIII
			require.NoError(t, e.SerializeTo(buf, gopacket.SerializeOptions{}))
			assert.Equal(t, e.Contents, buf.Bytes())
		}
	})
}

// TestERSPANTypeI: GRE protocol 0x88BE without a sequence number is ERSPAN
// type I, whose mirrored frame follows the GRE header directly.
func TestERSPANTypeI(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(10, 1)}}, craft.Faults{}))
	orig := c.Trace().Frames[0].Data
	mirrored, err := craft.Mirror{Type: 2}.Wrap(c.Trace().Frames[:1])
	require.NoError(t, err)
	m := mirrored[0].Data
	// Outer Ethernet and IPv4, then a 4-byte GRE header with no flags.
	frame := append(append(append([]byte(nil), m[:34]...), 0, 0, 0x88, 0xbe), orig...)
	frame[16], frame[17] = byte((len(frame)-14)>>8), byte(len(frame)-14)
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	require.NoError(t, p.Decode(frame))
	assert.Equal(t, []gopacket.LayerType{gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeGRE, gplayers.LayerTypeEthernet},
		p.Decoded[:4])
	assert.True(t, p.Has(layers.LayerTypeBTH))
	status, _ := p.CheckICRC()
	assert.Equal(t, layers.CRCGood, status)
}
