package layers_test

import (
	"errors"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// Raw native-IB frames (LINKTYPE_INFINIBAND). tshark 4.0.17 -V on them:
//
//	rawIPv4: LRH LNH 0x0, PktLen 10; "RWH - Raw Header" Reserved 0000,
//	Ethertype IPv4 (0x0800); Variant CRC 0x1234; then "Internet Protocol
//	Version 4, Src: 10.0.0.1, Dst: 10.0.0.2" and ICMP.
//	rawARP: RWH Ethertype ARP (0x0806), "Who has 10.0.0.2? Tell 10.0.0.1".
//	rawIPv6: LRH LNH 0x1, PktLen 14; "Internet Protocol Version 6, Src:
//	fe80::1, Dst: fe80::2" nested in the InfiniBand tree; ICMPv6.
const (
	rawIPv4 = "0000000100" + "0a0002" + "00000800" + "4500001c0001000040017cdf0a0000010a000002" + "0800f7ff00000000" + "1234"
	rawARP  = "0000000100" + "0a0002" + "00000806" + "0001080006040001020000000001" + "0a000001" + "000000000000" + "0a000002" + "1234"
	rawIPv6 = "0001000100" + "0e0002" + "6000000000083a40fe800000000000000000000000000001fe800000000000000000000000000002" + "8000000000000000" + "1234"
)

func TestRawPacketsDecodeTheirEtherType(t *testing.T) {
	tests := []struct {
		name      string
		frame     string
		want      []gopacket.LayerType
		etherType gplayers.EthernetType
	}{
		{"RWH IPv4", rawIPv4, []gopacket.LayerType{layers.LayerTypeLRH, layers.LayerTypeRWH, gplayers.LayerTypeIPv4}, gplayers.EthernetTypeIPv4},
		{"RWH ARP", rawARP, []gopacket.LayerType{layers.LayerTypeLRH, layers.LayerTypeRWH, gplayers.LayerTypeARP}, gplayers.EthernetTypeARP},
		{"raw IPv6", rawIPv6, []gopacket.LayerType{layers.LayerTypeLRH, gplayers.LayerTypeIPv6}, 0},
		{"RWH unknown EtherType", "0000000100" + "050002" + "000088b5" + "aaaaaaaaaaaaaaaa" + "1234",
			[]gopacket.LayerType{layers.LayerTypeLRH, layers.LayerTypeRWH, gopacket.LayerTypePayload}, 0x88b5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := mustHex(tt.frame)
			p := layers.NewParser(layers.LayerTypeLRH, layers.ParserOptions{})
			require.NoError(t, p.Decode(frame))
			assert.Equal(t, tt.want, p.Decoded)
			assert.Equal(t, uint16(0x3412), p.LRH.VCRC, "the VCRC is little-endian")
			assert.Equal(t, layers.EncapNone, p.Encapsulation())
			if p.Has(layers.LayerTypeRWH) {
				assert.Equal(t, tt.etherType, p.RWH.EtherType)
				assert.Equal(t, uint16(0), p.RWH.Reserved)
				assert.Equal(t, frame[8:12], p.RWH.Contents)
			}
			if p.Has(gplayers.LayerTypeIPv4) {
				assert.Equal(t, "10.0.0.1", p.IPv4.SrcIP.String())
				assert.Equal(t, "10.0.0.2", p.IPv4.DstIP.String())
			}
			if p.Has(gplayers.LayerTypeIPv6) {
				assert.Equal(t, "fe80::1", p.IPv6.SrcIP.String())
				assert.Equal(t, gplayers.IPProtocolICMPv6, p.IPv6.NextHeader)
			}
			assert.Zero(t, testing.AllocsPerRun(20, func() { _ = p.Decode(frame) }))
		})
	}
}

func TestRawPacketCutShortNamesRWHField(t *testing.T) {
	frame := mustHex(rawIPv4)
	tests := []struct {
		cut          int
		layer, field string
	}{
		{9, "RWH", "Reserved"},
		{11, "RWH", "EtherType"},
		{20, "IPv4", "TTL"},
	}
	for _, tt := range tests {
		p := layers.NewParser(layers.LayerTypeLRH, layers.ParserOptions{})
		err := p.Decode(frame[:tt.cut])
		var de *layers.DecodeError
		require.True(t, errors.As(err, &de), "cut at %d: %v", tt.cut, err)
		assert.ErrorIs(t, err, layers.ErrTruncated)
		assert.Equal(t, tt.layer, de.Layer, "cut at %d: %v", tt.cut, err)
		assert.Equal(t, tt.field, de.Field, "cut at %d: %v", tt.cut, err)
		assert.True(t, p.Has(layers.LayerTypeLRH), "the LRH before the cut stays decoded")
	}
}

func TestRWHSerializeRoundTrip(t *testing.T) {
	frame := mustHex(rawIPv4)
	var r layers.RWH
	require.NoError(t, r.DecodeFromBytes(frame[8:], gopacket.NilDecodeFeedback))
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &r, gopacket.Payload(r.Payload)))
	assert.Equal(t, frame[8:], buf.Bytes())
}

// TestEoIBHeader: tshark 4.0.17's infiniband.eoib.* fields on these
// headers (version, tcp_chk, ip_chk, fcs, ms, ip_seg_offset, ip_seg_id).
func TestEoIBHeader(t *testing.T) {
	tests := []struct {
		hdr          string
		ver, tcp, ip uint8
		fcs, ms      bool
		off          uint8
		id           uint16
		segmented    bool
		next         gopacket.LayerType
	}{
		{hdr: "c0000000", next: gplayers.LayerTypeEthernet},
		{hdr: "c0250007", ms: true, off: 5, id: 7, segmented: true, next: gopacket.LayerTypePayload},
		{hdr: "d6c1abcd", ver: 1, tcp: 1, ip: 2, fcs: true, off: 1, id: 0xabcd, segmented: true, next: gopacket.LayerTypePayload},
	}
	for _, tt := range tests {
		var e layers.EoIB
		require.NoError(t, e.DecodeFromBytes(mustHex(tt.hdr+"0102"), gopacket.NilDecodeFeedback))
		assert.Equal(t, uint8(3), e.Signature, tt.hdr)
		assert.Equal(t, tt.ver, e.Version, tt.hdr)
		assert.Equal(t, tt.tcp, e.TCPChecksum, tt.hdr)
		assert.Equal(t, tt.ip, e.IPChecksum, tt.hdr)
		assert.Equal(t, tt.fcs, e.FCS, tt.hdr)
		assert.Equal(t, tt.ms, e.MoreSegments, tt.hdr)
		assert.Equal(t, tt.off, e.SegOffset, tt.hdr)
		assert.Equal(t, tt.id, e.SegID, tt.hdr)
		assert.Equal(t, tt.segmented, e.Segmented(), tt.hdr)
		assert.Equal(t, tt.next, e.NextLayerType(), tt.hdr)
		assert.Equal(t, []byte{1, 2}, e.Payload)
		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, e.SerializeTo(buf, gopacket.SerializeOptions{}))
		assert.Equal(t, mustHex(tt.hdr), buf.Bytes(), "round trip")
	}
	var e layers.EoIB
	err := e.DecodeFromBytes([]byte{0xc0, 0}, gopacket.NilDecodeFeedback)
	var de *layers.DecodeError
	require.True(t, errors.As(err, &de))
	assert.Equal(t, "EoIB", de.Layer)
	assert.Equal(t, "SegID", de.Field)
}

func TestPayloadHeuristics(t *testing.T) {
	ud, rc := layers.Opcode(0x64), layers.Opcode(0x04)
	assert.True(t, layers.LooksLikeEoIB(ud, []byte{0xc0, 0, 0, 0}))
	assert.False(t, layers.LooksLikeEoIB(rc, []byte{0xc0, 0, 0, 0}), "EoIB rides UD only")
	assert.False(t, layers.LooksLikeEoIB(ud, []byte{0xb0, 0, 0, 0}))
	assert.False(t, layers.LooksLikeEoIB(ud, []byte{0xc0, 0, 0}))

	tests := []struct {
		payload string
		want    gplayers.EthernetType
		ok      bool
	}{
		{"0800000045", gplayers.EthernetTypeIPv4, true}, // the public softroce capture's IPoIB frames
		{"86dd000060", gplayers.EthernetTypeIPv6, true},
		{"0806000000", gplayers.EthernetTypeARP, true},
		{"0800000145", 0x0800, false}, // reserved bytes not zero
		{"1234000000", 0x1234, false}, // no dissector for the EtherType
		{"080000", 0, false},
	}
	for _, tt := range tests {
		et, ok := layers.EtherTypeEncapsulated(mustHex(tt.payload))
		assert.Equal(t, tt.ok, ok, tt.payload)
		if tt.ok || et != 0 {
			assert.Equal(t, tt.want, et, tt.payload)
		}
	}
}
