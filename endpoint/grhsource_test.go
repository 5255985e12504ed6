package endpoint_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/endpoint"
)

// TestGRHSource reads the sender back from GRHs as rxe writes them in
// front of a UD receive: IPv4 (20 zero bytes, then the IPv4 header) and
// IPv6 (the IPv6 header); anything else is refused.
func TestGRHSource(t *testing.T) {
	v4 := make([]byte, 40)
	v4[20] = 0x45
	copy(v4[32:36], []byte{192, 168, 77, 11})
	copy(v4[36:40], []byte{192, 168, 77, 1})
	v6 := make([]byte, 40)
	v6[0] = 0x60
	src6 := netip.MustParseAddr("fd00::11").As16()
	copy(v6[8:24], src6[:])
	mapped := make([]byte, 40)
	mapped[0] = 0x60
	m := netip.MustParseAddr("::ffff:10.0.0.7").As16()
	copy(mapped[8:24], m[:])
	for _, tc := range []struct {
		name string
		grh  []byte
		want netip.Addr
		ok   bool
	}{
		{"IPv4", v4, netip.MustParseAddr("192.168.77.11"), true},
		{"IPv6", v6, netip.MustParseAddr("fd00::11"), true},
		{"IPv4-mapped IPv6", mapped, netip.MustParseAddr("10.0.0.7"), true},
		{"short", v4[:39], netip.Addr{}, false},
		{"neither", make([]byte, 40), netip.Addr{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := endpoint.GRHSource(tc.grh)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
