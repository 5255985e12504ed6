package capture

import (
	"net"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"

	"github.com/ibwire/ibwire/layers"
)

func build(t *testing.T, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...))
	return buf.Bytes()
}

func TestMatchRoCE(t *testing.T) {
	mac1, mac2 := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	eth := func(et gplayers.EthernetType) *gplayers.Ethernet {
		return &gplayers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: et}
	}
	vlan := func(et gplayers.EthernetType) *gplayers.Dot1Q { return &gplayers.Dot1Q{VLANIdentifier: 7, Type: et} }
	ip4 := func(proto gplayers.IPProtocol) *gplayers.IPv4 {
		return &gplayers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: net.IP{192, 168, 77, 11}, DstIP: net.IP{192, 168, 77, 12}}
	}
	ip6 := func(next gplayers.IPProtocol) *gplayers.IPv6 {
		return &gplayers.IPv6{Version: 6, HopLimit: 64, NextHeader: next, SrcIP: net.ParseIP("fe80::1"), DstIP: net.ParseIP("fe80::2")}
	}
	udp := func(src, dst gplayers.UDPPort) *gplayers.UDP { return &gplayers.UDP{SrcPort: src, DstPort: dst} }
	bth := gopacket.Payload(make([]byte, 16)) // stands in for BTH + ICRC
	withOptions := ip4(gplayers.IPProtocolUDP)
	withOptions.Options = []gplayers.IPv4Option{{OptionType: 0x94, OptionLength: 4, OptionData: []byte{0, 0}}} // router alert: IHL 6
	fragment := ip4(gplayers.IPProtocolUDP)
	fragment.FragOffset = 185 // a later fragment whose data happens to hold 4791 where ports would be
	const dot1q, roce1 = gplayers.EthernetTypeDot1Q, layers.EthernetTypeRoCEv1
	v4, v6, udpP, tcpP := gplayers.EthernetTypeIPv4, gplayers.EthernetTypeIPv6, gplayers.IPProtocolUDP, gplayers.IPProtocolTCP

	for _, tc := range []struct {
		name  string
		frame []byte
		want  bool
	}{
		{"ipv4 udp dst 4791", build(t, eth(v4), ip4(udpP), udp(49152, 4791), bth), true},
		{"ipv4 udp src 4791", build(t, eth(v4), ip4(udpP), udp(4791, 49152), bth), true},
		{"ipv4 with options", build(t, eth(v4), withOptions, udp(49152, 4791), bth), true},
		{"ipv6 udp dst 4791", build(t, eth(v6), ip6(udpP), udp(49152, 4791), bth), true},
		{"ipv6 udp src 4791", build(t, eth(v6), ip6(udpP), udp(4791, 1), bth), true},
		{"roce v1 0x8915", build(t, eth(roce1), bth), true},
		{"vlan ipv4 udp 4791", build(t, eth(dot1q), vlan(v4), ip4(udpP), udp(49152, 4791), bth), true},
		{"vlan ipv6 udp 4791", build(t, eth(dot1q), vlan(v6), ip6(udpP), udp(4791, 4791), bth), true},
		{"vlan roce v1", build(t, eth(dot1q), vlan(roce1), bth), true},
		{"ipv4 tcp 18515 (perftest exchange)", build(t, eth(v4), ip4(tcpP), &gplayers.TCP{SrcPort: 40000, DstPort: 18515}, bth), false},
		{"ipv4 udp 4792", build(t, eth(v4), ip4(udpP), udp(49152, 4792), bth), false},
		{"ipv4 later fragment", build(t, eth(v4), fragment, gopacket.Payload{0x12, 0xb7, 0x12, 0xb7, 0, 8, 0, 0}), false},
		{"ipv6 tcp", build(t, eth(v6), ip6(tcpP), &gplayers.TCP{SrcPort: 4791, DstPort: 4791}, bth), false},
		{"vlan ipv4 tcp", build(t, eth(dot1q), vlan(v4), ip4(tcpP), &gplayers.TCP{SrcPort: 1, DstPort: 18515}, bth), false},
		{"two vlan tags", build(t, eth(dot1q), vlan(dot1q), vlan(v4), ip4(udpP), udp(1, 4791), bth), false},
		{"arp", build(t, eth(gplayers.EthernetTypeARP), gopacket.Payload(make([]byte, 28))), false},
		{"ipv4 cut before the ports", build(t, eth(v4), ip4(udpP))[:34], false},
		{"empty", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MatchRoCE(tc.frame))
		})
	}
}

func TestFilter(t *testing.T) {
	prog := RoCEFilter()
	prog[0].K = 0 // RoCEFilter hands out copies
	assert.NotEqual(t, prog, RoCEFilter())
	// tcpdump -dd 'ether proto 0x8915' (libpcap 1.10).
	f, err := NewFilter([]bpf.RawInstruction{{Op: 0x28, K: 12}, {Op: 0x15, Jf: 1, K: 0x8915}, {Op: 0x6, K: 262144}, {Op: 0x6}})
	require.NoError(t, err)
	assert.True(t, f.Match(append(make([]byte, 12), 0x89, 0x15)))
	assert.False(t, f.Match(append(make([]byte, 12), 0x08, 0x00)))
	_, err = NewFilter([]bpf.RawInstruction{{Op: 0x15, Jt: 9}}) // jumps out of the program
	assert.Error(t, err)
}
