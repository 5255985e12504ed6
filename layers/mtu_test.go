package layers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

func TestRXEPortMTU(t *testing.T) {
	// rxe_param.h: eth_mtu_int_to_enum(mtu) = rxe_mtu_int_to_enum(mtu - 80);
	// 1500 -> 1024 is what every rxe guest of the interop harness reports.
	tests := []struct {
		netdev int
		want   int // bytes; 0: no valid MTU
	}{
		{65536, 4096}, {9000, 4096}, {4176, 4096}, {4175, 2048},
		{2128, 2048}, {2127, 1024}, {2100, 1024}, {1500, 1024},
		{1104, 1024}, {1103, 512}, {592, 512}, {576, 256}, {336, 256}, {335, 0}, {0, 0},
	}
	for _, tt := range tests {
		m, ok := layers.RXEPortMTU(tt.netdev)
		assert.Equal(t, tt.want != 0, ok, "netdev MTU %d", tt.netdev)
		assert.Equal(t, tt.want, m.Bytes(), "netdev MTU %d", tt.netdev)
	}
}

func TestPathMTUOf(t *testing.T) {
	for _, n := range []int{256, 512, 1024, 2048, 4096} {
		m, ok := layers.PathMTUOf(n)
		assert.True(t, ok)
		assert.Equal(t, n, m.Bytes())
	}
	for _, n := range []int{0, 128, 1500, 8192} {
		_, ok := layers.PathMTUOf(n)
		assert.False(t, ok, "%d", n)
	}
}

// TestIsPathMTU: IsPathMTU says what PathMTUOf says of every size up to
// past the largest MTU, and finds the five.
func TestIsPathMTU(t *testing.T) {
	mtus := 0
	for n := -1; n <= 2*layers.MTU4096.Bytes(); n++ {
		_, ok := layers.PathMTUOf(n)
		assert.Equal(t, ok, layers.IsPathMTU(n), "%d bytes", n)
		if ok {
			mtus++
		}
	}
	assert.Equal(t, 5, mtus)
}
