package correlate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

// TestReceivedPSNWraps: what a response says the responder received, at
// the ends of the 24-bit PSN space: a NAK of PSN 0 acknowledges the PSN
// before it, 2^24 - 1.
func TestReceivedPSNWraps(t *testing.T) {
	const ack, nak = layers.AETHSyndrome(0x1f), layers.AETHSyndrome(0x60)
	tests := []struct {
		name     string
		opcode   layers.Opcode
		syndrome layers.AETHSyndrome
		psn      layers.PSN
		want     uint32
		ok       bool
	}{
		{"ACK of PSN 0", 0x11, ack, 0, 0, true},
		{"NAK of PSN 0", 0x11, nak, 0, 0xFFFFFF, true},
		{"NAK of PSN 1", 0x11, nak, 1, 0, true},
		{"ACK of the last PSN", 0x11, ack, 0xFFFFFF, 0xFFFFFF, true},
		{"READ response only", 0x10, 0, 0xFFFFFF, 0xFFFFFF, true},
		{"a request says nothing", 0x04, 0, 7, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &layers.BTH{Opcode: tt.opcode, PSN: tt.psn}
			b.AETH.Syndrome = tt.syndrome
			got, ok := receivedPSN(b)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestPSNBeforeWraps: PSN order across the wrap of the 24-bit space.
func TestPSNBeforeWraps(t *testing.T) {
	tests := []struct {
		a, b uint32
		want bool
	}{
		{0xFFFFFF, 0, true},
		{0, 0xFFFFFF, false},
		{0xFFFFF0, 5, true},
		{5, 6, true},
		{6, 5, false},
		{5, 5, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, psnBefore(tt.a, tt.b), "%#x before %#x", tt.a, tt.b)
	}
}
