package layers_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// TestEveryTruncationPointNamesLayerAndField cuts every vector frame at every
// byte and checks that decoding reports a *DecodeError naming a layer and a
// field, and never panics.
func TestEveryTruncationPointNamesLayerAndField(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.pcap"))
	require.NoError(t, err)
	cuts := 0
	for _, path := range files {
		for i, f := range readPcap(t, path) {
			p := layers.NewParser(firstLayer(f.linkType), layers.ParserOptions{})
			require.NoError(t, p.Decode(f.data))
			if !isRoCE(p) {
				continue // IPoIB frames of the native capture: not ours to check
			}
			for n := 0; n < len(f.data); n++ {
				cut := append([]byte(nil), f.data[:n]...)
				var err error
				require.NotPanics(t, func() { err = p.Decode(cut) }, "%s frame %d cut at %d", filepath.Base(path), i+1, n)
				var de *layers.DecodeError
				require.True(t, errors.As(err, &de), "%s frame %d cut at %d: %v", filepath.Base(path), i+1, n, err)
				assert.NotEmpty(t, de.Layer)
				assert.NotEmpty(t, de.Field)
				assert.ErrorIs(t, err, layers.ErrTruncated, "%s frame %d cut at %d: %v", filepath.Base(path), i+1, n, err)
				assert.LessOrEqual(t, de.FrameOffset, n, "%v", err)
				cuts++
			}
		}
	}
	t.Logf("%d truncation points checked", cuts)
}

func TestTruncationNamesTheFieldWhereTheFrameEnds(t *testing.T) {
	// Frame 6 of scapy-rocev2.pcap: RC RDMA WRITE ONLY, Ethernet/IPv4/UDP, BTH at byte 42.
	f := readPcap(t, filepath.Join(vectorsDir, "scapy-rocev2.pcap"))[5].data
	p := layers.NewParser(firstLayerEthernet, layers.ParserOptions{})
	tests := []struct {
		cut          int
		layer, field string
	}{
		{0, "Ethernet", "DstMAC"},
		{13, "Ethernet", "EthernetType"},
		{14 + 9, "IPv4", "Protocol"},
		{34 + 5, "UDP", "Length"},
		{42, "BTH", "OpCode"},
		{42 + 10, "BTH", "PSN"},
		{42 + 12 + 8, "RETH", "R_Key"},
		{42 + 12 + 14, "RETH", "DMALength"},
		{42 + 28 + 3, "Payload", "Data"},
		{len(f) - 1, "ICRC", "ICRC"},
	}
	for _, tt := range tests {
		err := p.Decode(append([]byte(nil), f[:tt.cut]...))
		var de *layers.DecodeError
		require.True(t, errors.As(err, &de), "cut %d: %v", tt.cut, err)
		assert.Equal(t, tt.layer+"."+tt.field, de.Layer+"."+de.Field, "cut %d: %v", tt.cut, err)
	}
}

func TestMalformedPadCount(t *testing.T) {
	// An RC ACK whose PadCnt claims three bytes of a payload it does not have.
	f := append([]byte(nil), readPcap(t, filepath.Join(vectorsDir, "scapy-rocev2.pcap"))[15].data...)
	f[42+1] |= 0x30
	p := layers.NewParser(firstLayerEthernet, layers.ParserOptions{})
	err := p.Decode(f)
	var de *layers.DecodeError
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, "BTH", de.Layer)
	assert.Equal(t, "PadCnt", de.Field)
	assert.ErrorIs(t, err, layers.ErrMalformed)
	assert.Equal(t, 43, de.FrameOffset)
}
