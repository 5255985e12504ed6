package decode

import "testing"

// TestLayerSetFitsHeaderSet checks that every layer's bit stays below bit
// 32, where HeaderSet puts the extended transport headers: a layer above
// it would share a HeaderSet bit with one of them.
func TestLayerSetFitsHeaderSet(t *testing.T) {
	if uint64(layerSetEnd) > 1<<32 {
		t.Errorf("the layers' bits end at %#x, past the 32 HeaderSet leaves them", uint64(layerSetEnd))
	}
	for lt, bit := range layerBits {
		if bit >= layerSetEnd {
			t.Errorf("layer type %d has bit %#x, past layerSetEnd", lt, uint64(bit))
		}
	}
}
