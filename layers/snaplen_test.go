package layers_test

import (
	"errors"
	"testing"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// TestSnaplenCutKeepsTheHeaders cuts real rxe packets where a capture's
// snapshot length cuts them: the BTH and each extended header the data
// holds whole stay decoded (Wireshark shows them too), HasETH says which,
// and the frame's error says where it was cut.
func TestSnaplenCutKeepsTheHeaders(t *testing.T) {
	frames := readPcap(t, "../pcaps/rxe/rping.pcap")
	read, ack := frames[7].data, frames[6].data // frame 8 RDMA READ request (74 bytes), frame 7 ACK (62)
	tests := []struct {
		name     string
		frame    []byte
		cut      int
		bth      bool // the BTH is among the decoded layers
		reth     bool
		aeth     bool
		isCut    bool
		errLayer string // the header the cut falls in
		psn      layers.PSN
	}{
		{"READ whole", read, len(read), true, true, false, false, "", 2378069},
		{"READ without its ICRC", read, len(read) - 4, true, true, false, true, "ICRC", 2378069},
		{"READ cut inside the RETH", read, 64, true, false, false, true, "RETH", 2378069},
		{"READ cut after the BTH", read, 54, true, false, false, true, "RETH", 2378069},
		{"READ cut inside the BTH", read, 50, false, false, false, false, "BTH", 0},
		{"ACK cut inside the AETH", ack, 56, true, false, false, true, "AETH", 2280988},
		{"ACK without its ICRC", ack, len(ack) - 4, true, false, true, true, "ICRC", 2280988},
	}
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	for _, tt := range tests {
		err := p.Decode(tt.frame[:tt.cut])
		if tt.errLayer == "" {
			require.NoError(t, err, tt.name)
		} else {
			var de *layers.DecodeError
			require.True(t, errors.As(err, &de), "%s: %v", tt.name, err)
			assert.Equal(t, tt.errLayer, de.Layer, tt.name)
			assert.ErrorIs(t, err, layers.ErrTruncated, tt.name)
		}
		assert.Equal(t, tt.bth, p.Has(layers.LayerTypeBTH), "%s: BTH decoded", tt.name)
		if !tt.bth {
			continue
		}
		assert.Equal(t, tt.reth, p.BTH.HasETH(layers.HdrRETH), "%s: RETH", tt.name)
		assert.Equal(t, tt.aeth, p.BTH.HasETH(layers.HdrAETH), "%s: AETH", tt.name)
		assert.Equal(t, tt.isCut, p.BTH.Cut(), "%s: cut", tt.name)
		assert.Equal(t, tt.psn, p.BTH.PSN, "%s: PSN", tt.name)
		if tt.reth {
			assert.Equal(t, uint32(64), p.BTH.RETH.DMALength, tt.name)
		}
	}
}
