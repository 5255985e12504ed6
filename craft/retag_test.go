package craft_test

import (
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// TestSetDSCP: the rewritten frame has the new DSCP, its old ECN bits, an
// IPv4 checksum gopacket recomputes to the same value, and an ICRC that
// still verifies.
func TestSetDSCP(t *testing.T) {
	for _, e := range []craft.Encap{craft.RoCEv2, craft.RoCEv2IPv6} {
		t.Run(e.String(), func(t *testing.T) {
			c, err := craft.New(craft.Config{Encap: e, DSCP: 26, ECN: craft.CE})
			require.NoError(t, err)
			require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(40, 1)}}, craft.Faults{}))
			f := c.Frames()[0]
			require.NoError(t, craft.SetDSCP(&f, 48))
			pkt := gopacket.NewPacket(f.Data, gplayers.LayerTypeEthernet, gopacket.Default)
			if e == craft.RoCEv2 {
				ip := pkt.Layer(gplayers.LayerTypeIPv4).(*gplayers.IPv4)
				assert.Equal(t, uint8(48<<2|3), ip.TOS)
				want := ip.Checksum
				require.NoError(t, ip.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{ComputeChecksums: true}))
				assert.Equal(t, want, ip.Checksum)
			} else {
				ip := pkt.Layer(gplayers.LayerTypeIPv6).(*gplayers.IPv6)
				assert.Equal(t, uint8(48<<2|3), ip.TrafficClass)
			}
			p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
			require.NoError(t, p.Decode(f.Data))
			status, _ := p.CheckICRC()
			assert.Equal(t, layers.CRCGood, status)
		})
	}
}

// TestRecomputeICRC: an untouched frame keeps its ICRC; an edited one gets
// the ICRC that verifies.
func TestRecomputeICRC(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(40, 1)}}, craft.Faults{}))
	f := c.Frames()[0]
	orig := append([]byte(nil), f.Data...)
	require.NoError(t, craft.RecomputeICRC(&f))
	assert.Equal(t, orig, f.Data)
	f.Data[len(f.Data)-10] ^= 0xff // a payload byte
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	require.NoError(t, p.Decode(f.Data))
	status, _ := p.CheckICRC()
	require.Equal(t, layers.CRCBad, status)
	require.NoError(t, craft.RecomputeICRC(&f))
	require.NoError(t, p.Decode(f.Data))
	status, _ = p.CheckICRC()
	assert.Equal(t, layers.CRCGood, status)
}
