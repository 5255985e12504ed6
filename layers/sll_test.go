package layers

import (
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ipv4UDP is IPv4 192.168.77.11 → 192.168.77.12, UDP 50000 → 4792, payload
// de ad be ef (checksums left 0: the parser does not check them; not 4791,
// whose payload would have to be a BTH).
var ipv4UDP = []byte{
	0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	0xc0, 0xa8, 0x4d, 0x0b, 0xc0, 0xa8, 0x4d, 0x0c,
	0xc3, 0x50, 0x12, 0xb8, 0x00, 0x0c, 0x00, 0x00,
	0xde, 0xad, 0xbe, 0xef,
}

// sllFrame: received (host), ARPHRD_ETHER, 6-byte address 02:00:00:00:00:01, IPv4.
var sllFrame = append([]byte{
	0x00, 0x00, 0x00, 0x01, 0x00, 0x06,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x08, 0x00,
}, ipv4UDP...)

// sll2Frame: IPv4, interface 3, ARPHRD_ETHER, outgoing, 6-byte address.
var sll2Frame = append([]byte{
	0x08, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x03,
	0x00, 0x01, 0x04, 0x06,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
}, ipv4UDP...)

func TestLinuxSLLDecode(t *testing.T) {
	var (
		sll     LinuxSLL
		sll2    LinuxSLL2
		ip4     gplayers.IPv4
		udp     gplayers.UDP
		payload gopacket.Payload
	)
	for _, tc := range []struct {
		name  string
		frame []byte
		first gopacket.LayerType
		lt    LinkType
		check func(t *testing.T)
		layer gopacket.SerializableLayer
	}{
		{"sll", sllFrame, LayerTypeLinuxSLL, LinkTypeLinuxSLL, func(t *testing.T) {
			assert.Equal(t, SLLHost, sll.PacketType)
			assert.Equal(t, uint16(1), sll.AddrType)
			assert.Equal(t, uint16(6), sll.AddrLen)
			assert.Equal(t, []byte{2, 0, 0, 0, 0, 1}, sll.Addr)
			assert.Equal(t, gplayers.EthernetTypeIPv4, sll.Protocol)
		}, &sll},
		{"sll2", sll2Frame, LayerTypeLinuxSLL2, LinkTypeLinuxSLL2, func(t *testing.T) {
			assert.Equal(t, gplayers.EthernetTypeIPv4, sll2.Protocol)
			assert.Equal(t, uint32(3), sll2.InterfaceIndex)
			assert.Equal(t, uint16(1), sll2.AddrType)
			assert.Equal(t, SLLOutgoing, sll2.PacketType)
			assert.Equal(t, "outgoing", sll2.PacketType.String())
			assert.Equal(t, []byte{2, 0, 0, 0, 0, 1}, sll2.Addr)
		}, &sll2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, err := FirstLayer(tc.lt, nil)
			require.NoError(t, err)
			require.Equal(t, tc.first, first)
			parser := gopacket.NewDecodingLayerParser(first, &sll, &sll2, &ip4, &udp, &payload)
			decoded := make([]gopacket.LayerType, 0, 4)
			require.NoError(t, parser.DecodeLayers(tc.frame, &decoded))
			assert.Equal(t, []gopacket.LayerType{first, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, gopacket.LayerTypePayload}, decoded)
			assert.False(t, parser.Truncated)
			assert.Equal(t, gplayers.UDPPort(4792), udp.DstPort)
			tc.check(t)

			// Decode → serialise gives the same bytes.
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, tc.layer, gopacket.Payload(ipv4UDP)))
			assert.Equal(t, tc.frame, buf.Bytes())

			dl := tc.layer.(gopacket.DecodingLayer)
			assert.Zero(t, testing.AllocsPerRun(100, func() { _ = dl.DecodeFromBytes(tc.frame, gopacket.NilDecodeFeedback) }))
			for n := range len(tc.frame) - len(ipv4UDP) {
				assert.Error(t, dl.DecodeFromBytes(tc.frame[:n], gopacket.NilDecodeFeedback))
			}
		})
	}
}

func TestLinuxSLLOddFields(t *testing.T) {
	// An address length beyond the 8-byte field (gopacket's own SLL
	// slices past it) and a protocol below 0x0600 (802.2 LLC).
	frame := []byte{0, 4, 0, 1, 0, 200, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x04, 0xaa}
	var s LinuxSLL
	require.NoError(t, s.DecodeFromBytes(frame, gopacket.NilDecodeFeedback))
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, s.Addr)
	assert.Equal(t, gopacket.LayerTypePayload, s.NextLayerType())
	assert.Equal(t, []byte{0xaa}, s.LayerPayload())
	s.Addr = make([]byte, 9)
	assert.Error(t, s.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}))
	assert.Equal(t, "Unknown(9)", SLLPacketType(9).String())
}

func TestFirstLayer(t *testing.T) {
	for _, tc := range []struct {
		lt    LinkType
		name  string
		frame []byte
		want  gopacket.LayerType
	}{
		{LinkTypeEthernet, "ETHERNET", nil, gplayers.LayerTypeEthernet},
		{LinkTypeRaw, "RAW", []byte{0x45}, gplayers.LayerTypeIPv4},
		{LinkTypeRaw, "RAW", []byte{0x60}, gplayers.LayerTypeIPv6},
		{LinkTypeIPv4, "IPV4", []byte{0x45}, gplayers.LayerTypeIPv4},
		{LinkTypeIPv6, "IPV6", []byte{0x60}, gplayers.LayerTypeIPv6},
		{12, "RAW", []byte{0x60}, gplayers.LayerTypeIPv6},
		{14, "RAW", []byte{0x45}, gplayers.LayerTypeIPv4},
		{LinkTypeLinuxSLL, "LINUX_SLL", nil, LayerTypeLinuxSLL},
		{LinkTypeLinuxSLL2, "LINUX_SLL2", nil, LayerTypeLinuxSLL2},
		{LinkTypeERF, "ERF", nil, LayerTypeERF},
		{LinkTypeInfiniBand, "INFINIBAND", nil, LayerTypeLRH},
	} {
		got, err := FirstLayer(tc.lt, tc.frame)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, tc.name, tc.lt.String())
	}
	for _, tc := range []struct {
		lt    LinkType
		frame []byte
		err   string
	}{
		{LinkTypeRaw, []byte{0x12}, "link type 101 (RAW) is not supported: IP version 1"},
		{LinkTypeNull, nil, "link type 0 (NULL) is not supported"},
		{4242, nil, "link type 4242 (Unknown(4242)) is not supported"},
	} {
		_, err := FirstLayer(tc.lt, tc.frame)
		var unsupported *UnsupportedLinkTypeError
		require.ErrorAs(t, err, &unsupported)
		assert.EqualError(t, err, tc.err)
	}
}

func TestLinuxSLLTruncationNamesTheField(t *testing.T) {
	var s LinuxSLL
	err := s.DecodeFromBytes(sllFrame[:9], gopacket.NilDecodeFeedback)
	assert.ErrorIs(t, err, ErrTruncated)
	assert.EqualError(t, err, "LinuxSLL.Addr: truncated at byte 6 of the LinuxSLL (need 8 bytes, have 3)")
	var s2 LinuxSLL2
	err = s2.DecodeFromBytes(sll2Frame[:11], gopacket.NilDecodeFeedback)
	assert.EqualError(t, err, "LinuxSLL2.AddrLen: truncated at byte 11 of the LinuxSLL2 (need 1 bytes, have 0)")
	// The packet API decodes them too (gopacket.NewPacket with the layer).
	pkt := gopacket.NewPacket(sll2Frame, LayerTypeLinuxSLL2, gopacket.Default)
	require.NotNil(t, pkt.Layer(LayerTypeLinuxSLL2))
	require.NotNil(t, pkt.Layer(gplayers.LayerTypeUDP))
}
