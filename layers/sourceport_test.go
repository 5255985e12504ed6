package layers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

func TestSourcePorts(t *testing.T) {
	tests := []struct {
		name string
		got  uint16
		want uint16
	}{
		// Seen in pcaps/rxe: QPs 0x11 and 0x11 (rc_pingpong, write_bw), and QP1 (rping's CM).
		{"rc 0x11-0x11", layers.RXESourcePort(0x11, 0x11), 49441},
		{"qp1", layers.RXEUDSourcePort(1), 55410},
		// rdma_flow_label_to_udp_sport: 0xC000 | (fl & 0x3FFF) ^ (fl >> 14).
		{"flow label 0xFFFFF", layers.FlowLabelSourcePort(0xFFFFF), 0xC000 | (0x3FFF ^ 0x3F)},
		{"flow label above 20 bits ignored", layers.FlowLabelSourcePort(0x1_00001), 0xC001},
		{"symmetric", layers.RXESourcePort(9, 5), layers.RXESourcePort(5, 9)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got, tt.name)
	}
}
