package decode

import "testing"

// TestLayerSetFitsHeaderSet checks that every layer's bit stays below bit
// 32, where HeaderSet puts the extended transport headers: a layer above
// it would share a HeaderSet bit with one of them.
func TestLayerSetFitsHeaderSet(t *testing.T) {
	for lt, bit := range layerBits {
		if uint64(bit) >= 1<<32 {
			t.Errorf("layer type %d has bit %#x, past the 32 HeaderSet leaves the layers", lt, uint64(bit))
		}
	}
}
