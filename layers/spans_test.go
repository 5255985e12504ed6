package layers_test

import (
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// TestFieldBytes places headers and fields in frames of each encapsulation
// by the headers' field tables: RoCEv2 (Ethernet 14 bytes, IPv4 20, UDP 8,
// the BTH at 42), native IB with a GRH (LRH 8, GRH 40, the BTH at 48, the
// VCRC after the ICRC), and a MAD after a DETH.
func TestFieldBytes(t *testing.T) {
	rocev2 := madReadFrames(t, "../pcaps/conv_rocev2.pcap")[0]
	ib := madReadFrames(t, "../pcaps/conv_ib_grh.pcap")[0]
	mad := madReadFrames(t, "../pcaps/cm_reject.pcap")[0]
	tests := []struct {
		name          string
		first         gopacket.LayerType
		frame         []byte
		header, field string // field "" places the header
		lo, hi        int
		ok            bool
	}{
		{"ethernet", gplayers.LayerTypeEthernet, rocev2, "Ethernet", "", 0, 14, true},
		{"ethernet type", gplayers.LayerTypeEthernet, rocev2, "Ethernet", "EthernetType", 12, 14, true},
		{"ip header", gplayers.LayerTypeEthernet, rocev2, "IPv4", "", 14, 34, true},
		{"ip flags: the top bits of byte 6", gplayers.LayerTypeEthernet, rocev2, "IPv4", "Flags", 20, 21, true},
		{"ip fragment offset: 13 bits over two bytes", gplayers.LayerTypeEthernet, rocev2, "IPv4", "FragOffset", 20, 22, true},
		{"udp destination port", gplayers.LayerTypeEthernet, rocev2, "UDP", "DstPort", 36, 38, true},
		{"bth", gplayers.LayerTypeEthernet, rocev2, "BTH", "", 42, 54, true},
		{"bth psn", gplayers.LayerTypeEthernet, rocev2, "BTH", "PSN", 51, 54, true},
		{"bth bit fields: the byte that holds them", gplayers.LayerTypeEthernet, rocev2, "BTH", "SE/M/PadCnt/TVer", 43, 44, true},
		{"icrc: the frame's last 4 bytes", gplayers.LayerTypeEthernet, rocev2, "ICRC", "ICRC", len(rocev2) - 4, len(rocev2), true},
		{"no such field", gplayers.LayerTypeEthernet, rocev2, "BTH", "Nope", 0, 0, false},
		{"no such header in the frame", gplayers.LayerTypeEthernet, rocev2, "LRH", "DLID", 0, 0, false},
		{"lrh", layers.LayerTypeLRH, ib, "LRH", "", 0, 8, true},
		{"lrh reserved bits: byte 4's top 5", layers.LayerTypeLRH, ib, "LRH", "Reserved5", 4, 5, true},
		{"grh traffic class: across bytes 0 and 1", layers.LayerTypeLRH, ib, "GRH", "TClass", 8, 10, true},
		{"grh flow label: bytes 1-3", layers.LayerTypeLRH, ib, "GRH", "FlowLabel", 9, 12, true},
		{"grh source gid", layers.LayerTypeLRH, ib, "GRH", "SGID", 16, 32, true},
		{"bth after the grh", layers.LayerTypeLRH, ib, "BTH", "OpCode", 48, 49, true},
		{"vcrc: the last 2 bytes", layers.LayerTypeLRH, ib, "LRH", layers.VCRCField, len(ib) - 2, len(ib), true},
		{"icrc before the vcrc", layers.LayerTypeLRH, ib, "ICRC", "ICRC", len(ib) - 6, len(ib) - 2, true},
		{"deth", gplayers.LayerTypeEthernet, mad, "DETH", "SrcQP", 59, 62, true},
		{"mad after the deth", gplayers.LayerTypeEthernet, mad, "MAD", "", 62, 86, true},
		{"mad attribute id", gplayers.LayerTypeEthernet, mad, "MAD", "AttributeID", 78, 80, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := layers.NewParser(tc.first, layers.ParserOptions{})
			require.NoError(t, p.Decode(tc.frame))
			var lo, hi int
			var ok bool
			if tc.field == "" {
				lo, hi, ok = p.HeaderBytes(tc.header)
			} else {
				lo, hi, ok = p.FieldBytes(tc.header, tc.field)
			}
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, [2]int{tc.lo, tc.hi}, [2]int{lo, hi})
			}
		})
	}
}

// TestFieldBytesOfACutHeader: a frame cut inside a header places the bytes
// the frame has, and a header of the frame before is not placed in this one.
func TestFieldBytesOfACutHeader(t *testing.T) {
	frame := madReadFrames(t, "../pcaps/conv_rocev2.pcap")[0]
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	require.NoError(t, p.Decode(frame))
	_, _, ok := p.HeaderBytes("BTH")
	require.True(t, ok)
	require.Error(t, p.Decode(frame[:40])) // cut in the UDP header
	_, _, ok = p.HeaderBytes("BTH")
	assert.False(t, ok, "the last frame's BTH")
	lo, hi, ok := p.HeaderBytes("IPv4")
	assert.Equal(t, [2]int{14, 34}, [2]int{lo, hi})
	assert.True(t, ok)
}

// TestHeaderFieldsIsACopy: the tables stay the decoder's.
func TestHeaderFieldsIsACopy(t *testing.T) {
	name, fields := layers.HeaderFields(layers.LayerTypeBTH)
	require.Equal(t, "BTH", name)
	require.Equal(t, layers.FieldSpan{Name: "OpCode", Offset: 0, Size: 1}, fields[0])
	fields[0].Size = 99
	_, again := layers.HeaderFields(layers.LayerTypeBTH)
	assert.Equal(t, 1, again[0].Size)
}
