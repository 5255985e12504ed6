package craft_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// The crafted iSER session: a CM REQ naming port 3260, every SEND an iSER
// message whose PDU decodes, the READ's data an RDMA WRITE to the Read
// STag the command named, the WRITE's an RDMA READ of the Write STag, and
// the SCSI responses SENDs with Invalidate of those STags.
func TestISERExample(t *testing.T) {
	tr, err := craft.ISERExample(craft.Config{})
	require.NoError(t, err)
	assert.Empty(t, tr.Findings)
	p := layers.NewParser(craft.RoCEv2.FirstLayer(), layers.ParserOptions{})
	var ops []layers.ISCSIOpcode
	stags := map[uint32]layers.ISCSIOpcode{}
	var writes, reads, invalidates int
	for i, f := range tr.Frames {
		require.NoError(t, p.Decode(f.Data), "frame %d", i+1)
		b := &p.BTH
		info := b.Opcode.Info()
		switch {
		case b.DestQP == 1 && i == 0:
			assert.Equal(t, layers.IPCMServiceID(layers.PortSpaceTCP, layers.ISERPort), p.MAD.CM.REQ.ServiceID)
		case info.Operation == layers.OpSend && b.DestQP != 1:
			var h layers.ISERHeader
			var u layers.ISCSIPDU
			require.NoError(t, h.DecodeFromBytes(b.PacketPayload()), "frame %d", i+1)
			require.NoError(t, u.DecodeFromBytes(h.Body), "frame %d", i+1)
			ops = append(ops, u.Opcode)
			if h.RSV() {
				stags[h.ReadSTag] = layers.ISCSISCSICommand
			}
			if h.WSV() {
				stags[h.WriteSTag] = layers.ISCSISCSICommand
			}
			if b.HasETH(layers.HdrIETH) {
				invalidates++
				assert.Contains(t, stags, b.IETH.RKey, "frame %d invalidates a STag a command named", i+1)
			}
		case b.HasETH(layers.HdrRETH) && info.Operation == layers.OpRDMAWrite:
			writes++
			assert.Contains(t, stags, b.RETH.RKey)
		case info.Operation == layers.OpRDMAReadRequest:
			reads++
			assert.Contains(t, stags, b.RETH.RKey)
		}
	}
	assert.Equal(t, []layers.ISCSIOpcode{layers.ISCSILoginReq, layers.ISCSILoginResp,
		layers.ISCSISCSICommand, layers.ISCSISCSIResponse, layers.ISCSISCSICommand, layers.ISCSISCSIResponse,
		layers.ISCSISCSICommand, layers.ISCSISCSIResponse, layers.ISCSISCSICommand, layers.ISCSISCSIResponse,
		layers.ISCSILogoutReq, layers.ISCSILogoutResp}, ops)
	assert.Equal(t, 3, writes, "one RDMA WRITE per READ(10)")
	assert.Equal(t, 1, reads, "one RDMA READ for the WRITE(10)")
	assert.Equal(t, 4, invalidates)
}

func TestISERHello(t *testing.T) {
	s, err := craft.NewISER(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Connect())
	require.NoError(t, s.Hello(4, 8, false))
	tr := s.Trace()
	var got []layers.ISERHeader
	p := layers.NewParser(craft.RoCEv2.FirstLayer(), layers.ParserOptions{})
	for _, f := range tr.Frames {
		require.NoError(t, p.Decode(f.Data))
		if p.BTH.DestQP != 1 && p.BTH.Opcode.Info().Operation == layers.OpSend {
			var h layers.ISERHeader
			require.NoError(t, h.DecodeFromBytes(p.BTH.PacketPayload()))
			assert.Len(t, p.BTH.PacketPayload(), layers.ISERHeaderLength)
			got = append(got, h)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, layers.ISERHello, got[0].Opcode)
	assert.Equal(t, uint16(4), got[0].IRDORD)
	assert.Equal(t, layers.ISERHelloReply, got[1].Opcode)
	assert.Equal(t, uint16(8), got[1].IRDORD)
	assert.False(t, got[1].Reject())
	_, err = craft.NewISER(craft.Config{Service: layers.ServiceUD})
	assert.Error(t, err)
}
