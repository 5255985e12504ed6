package device

import (
	"net/netip"
	"testing"

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
	m, err := PathMTU(2048)
	require.NoError(t, err)
	assert.Equal(t, 2048, m.Bytes())
	_, err = PathMTU(1500)
	assert.EqualError(t, err, "MTU 1500: want 256, 512, 1024, 2048 or 4096")
}
