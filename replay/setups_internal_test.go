package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMTURange: a perftest peer at an MTU the capture does not segment
// the same at is refused with the -m to give it.
func TestMTURange(t *testing.T) {
	tests := []struct {
		r            MTURange
		peer         int
		ok           bool
		want, refuse string
	}{
		{MTURange{Min: 1024, Max: 1024}, 512, false, "give the peer -m 1024", "the peer's active MTU is 512, the capture's path MTU 1024"},
		{MTURange{Min: 1024, Max: 4096}, 512, false, "give the peer -m 1024", "only at path MTUs 1024 to 4096"},
		{MTURange{Min: 256, Max: 2048}, 4096, false, "give the peer -m 2048", "only at path MTUs 256 to 2048"},
		{MTURange{Min: 256, Max: 4096}, 1024, true, "", ""},
	}
	for _, tt := range tests {
		err := tt.r.checkPerftestPeer(tt.peer)
		if tt.ok {
			assert.NoError(t, err)
			continue
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.Contains(t, err.Error(), tt.refuse)
	}
}
