package device

import (
	"net/netip"
	"testing"

	"github.com/ibwire/ibwire/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMTUHelpers(t *testing.T) {
	// The kernel's rule (rxe_net.c, eth_mtu_int_to_enum): the largest IB
	// MTU not above the netdev MTU less 80 bytes of headers. Below 336 the
	// kernel finds none; ibpeer still needs one and takes 256.
	for _, tt := range []struct{ netdev, ib int }{
		{1500, 1024}, {9000, 4096}, {65536, 4096}, {576, 256}, {300, 256}, {335, 256}, {336, 256},
		{2048, 1024}, {2100, 1024}, {2127, 1024}, {2128, 2048}, {4175, 2048}, {4176, 4096},
	} {
		assert.Equal(t, tt.ib, ibMTUBelow(tt.netdev), "netdev MTU %d", tt.netdev)
	}
	assert.Equal(t, 4096, ActiveMTU(netip.MustParseAddr("127.0.0.1")), "loopback")
	assert.Equal(t, 4096, ActiveMTU(netip.MustParseAddr("127.0.0.2")), "inside lo's 127.0.0.0/8")
	assert.Equal(t, 1024, ActiveMTU(netip.MustParseAddr("192.0.2.1")), "no interface: 1024")
	m, err := layers.ParsePathMTU(2048)
	require.NoError(t, err)
	assert.Equal(t, 2048, m.Bytes())
	_, err = layers.ParsePathMTU(1500)
	assert.EqualError(t, err, "MTU 1500: want 256, 512, 1024, 2048 or 4096")
}

// TestActiveMTUOn: the port MTU is the kernel's rule applied to the
// netdev MTU of the interface found either way, by the address itself or
// by a subnet that holds it, as for pingpong's UD size check and
// perftest's proposal alike (both call ActiveMTU).
func TestActiveMTUOn(t *testing.T) {
	eth := func(prefix string, mtu int) ifaceNet { return ifaceNet{netip.MustParsePrefix(prefix), mtu} }
	nets := []ifaceNet{
		eth("127.0.0.1/8", 65536),
		eth("192.168.77.1/24", 2100),
		eth("10.0.0.1/16", 9000),
		eth("10.0.5.1/24", 1500), // a narrower subnet inside 10.0.0.0/16, listed later
		eth("fd00::1/64", 4176),
	}
	for _, tt := range []struct {
		addr string
		want int // layers.RXEPortMTU of the interface's MTU, in bytes
	}{
		{"127.0.0.1", 4096},           // on lo, 65536: 4096
		{"127.0.0.2", 4096},           // lo's subnet
		{"192.168.77.1", 1024},        // 2100 - 80 = 2020: 1024, not 2048
		{"192.168.77.11", 1024},       // the same netdev by its subnet
		{"10.0.5.1", 1024},            // the address's own interface beats the wider subnet listed first
		{"10.0.5.9", 4096},            // by subnet: the first that holds it
		{"::ffff:192.168.77.1", 1024}, // mapped
		{"fd00::1", 4096},             // 4176 - 80 = 4096
		{"192.0.2.1", 1024},           // on no interface
	} {
		assert.Equal(t, tt.want, activeMTUOn(netip.MustParseAddr(tt.addr), nets), tt.addr)
	}
}
