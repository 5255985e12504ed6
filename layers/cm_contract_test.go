package layers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

func TestCMTimeout(t *testing.T) {
	// IBTA Vol 1 §12.6: 4.096 µs × 2^n; an MRA's Service Timeout of 20 is
	// 4.29 s. Only five bits count.
	for _, tc := range []struct {
		n    uint8
		want time.Duration
	}{{0, 4096 * time.Nanosecond}, {1, 8192 * time.Nanosecond}, {20, 4294967296 * time.Nanosecond},
		{31, 8796093022208 * time.Nanosecond}, {32, 4096 * time.Nanosecond}} {
		assert.Equal(t, tc.want, layers.CMTimeout(tc.n), "n=%d", tc.n)
	}
}
