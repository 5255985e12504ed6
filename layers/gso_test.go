package layers

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGSOSegmentSpan: the first segment keeps the run's headers with the
// lengths of a datagram of its own, and nothing of the rest.
func TestGSOSegmentSpan(t *testing.T) {
	v4 := make([]byte, 20+8+3*64)
	v4[0] = 0x45
	v6 := make([]byte, 40+8+3*64)
	v6[0] = 0x60
	tests := []struct {
		name          string
		encap         Encapsulation
		span          []byte
		udp, seg      int
		ok            bool
		lenAt         int // where the IP length lies
		ipLen, udpLen int
	}{
		{"IPv4", EncapRoCEv2IPv4, v4, 28, 64, true, 2, 20 + 8 + 64, 8 + 64},
		{"IPv6", EncapRoCEv2IPv6, v6, 48, 64, true, 4, 8 + 64, 8 + 64},
		{"RoCEv1 has no UDP", EncapRoCEv1, v6, 48, 64, false, 0, 0, 0},
		{"segment past the span", EncapRoCEv2IPv4, v4, 28, 4 * 64, false, 0, 0, 0},
		{"segment shorter than a BTH and an ICRC", EncapRoCEv2IPv4, v4, 28, 12, false, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := GSOSegmentSpan(nil, tc.encap, tc.span, tc.udp, tc.seg)
			assert.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Len(t, got, tc.udp+tc.seg)
			assert.Equal(t, tc.ipLen, int(binary.BigEndian.Uint16(got[tc.lenAt:])), "IP length")
			assert.Equal(t, tc.udpLen, int(binary.BigEndian.Uint16(got[tc.udp-4:])), "UDP length")
			assert.Zero(t, binary.BigEndian.Uint16(tc.span[tc.udp-4:]), "the run's own headers untouched")
		})
	}
}
