package layers_test

import (
	"bytes"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/fuzzseed"
	"github.com/ibwire/ibwire/layers"
)

// sameDecode checks that the fast path and the general path agree on a frame:
// the same error, layers, headers (as serialized bytes) and CRC verdicts.
func sameDecode(t testing.TB, frame []byte) {
	fast := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	slow := layers.NewSlowParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	ef, es := fast.Decode(frame), slow.Decode(frame)
	require.Equal(t, es == nil, ef == nil, "errors: fast %v, general %v", ef, es)
	if es != nil {
		require.Equal(t, es.Error(), ef.Error())
		return
	}
	require.Equal(t, slow.Decoded, fast.Decoded)
	sf, _ := slow.CheckICRC()
	ff, _ := fast.CheckICRC()
	require.Equal(t, sf, ff)
	require.Equal(t, slow.IPv4.Flags, fast.IPv4.Flags)
	require.Equal(t, slow.IPv4.Options, fast.IPv4.Options)
	require.Equal(t, slow.UDP.Trailing, fast.UDP.Trailing)
	bs, bf := gopacket.NewSerializeBuffer(), gopacket.NewSerializeBuffer()
	// gopacket cannot serialize every header it decodes (an odd IPv6
	// hop-by-hop option): both paths must then fail alike.
	errS := gopacket.SerializeLayers(bs, gopacket.SerializeOptions{}, slow.SerializableLayers()...)
	errF := gopacket.SerializeLayers(bf, gopacket.SerializeOptions{}, fast.SerializableLayers()...)
	require.Equal(t, errS, errF)
	require.True(t, bytes.Equal(bs.Bytes(), bf.Bytes()), "serialized headers differ")
}

func TestFastPathAgreesWithGeneralPath(t *testing.T) {
	frames, err := fuzzseed.Frames(1 << 20)
	require.NoError(t, err)
	n := 0
	for _, f := range frames {
		if f.LinkType != 1 {
			continue
		}
		sameDecode(t, f.Data)
		n++
	}
	t.Logf("%d Ethernet frames decoded both ways", n)
	require.Greater(t, n, 9000)
}

func FuzzFastPath(f *testing.F) {
	frames, err := fuzzseed.Frames(64)
	require.NoError(f, err)
	for _, fr := range frames {
		if fr.LinkType == 1 {
			f.Add(fr.Data)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) { sameDecode(t, frame) })
}
