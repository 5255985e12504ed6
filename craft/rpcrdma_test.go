package craft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// The crafted NFSv3-over-RDMA exchange: a CM REQ naming port 20049, every
// client SEND an RPC-over-RDMA call whose RPC header decodes, every server
// SEND its reply after the latency the example asked for, the READ's data
// an RDMA WRITE into the write chunk the call offered (the reply's write
// list saying how much), the WRITE's an RDMA READ of its read chunk at the
// position where the inline call ends, the READDIR's reply an RDMA WRITE
// into the reply chunk announced by RDMA_NOMSG, and each reply a SEND with
// Invalidate of the one handle its call named.
func TestRPCRDMAExample(t *testing.T) {
	tr, err := craft.RPCRDMAExample(craft.Config{})
	require.NoError(t, err)
	assert.Empty(t, tr.Findings)
	p := layers.NewParser(craft.RoCEv2.FirstLayer(), layers.ParserOptions{})
	type call struct {
		proc    uint32
		at      time.Time
		handles []layers.RPCRDMASegment
		inline  int
	}
	calls := map[uint32]call{}
	var got []craft.RPCExampleCall
	var procs []layers.RPCRDMAProc
	written := map[uint32]int{} // RDMA WRITE bytes by handle
	read := map[uint32]uint32{} // RDMA READ lengths by handle
	var wkey uint32             // the R_Key of the RDMA WRITE going on (its FIRST packet's RETH)
	for i, f := range tr.Frames {
		require.NoError(t, p.Decode(f.Data), "frame %d", i+1)
		b := &p.BTH
		info := b.Opcode.Info()
		switch {
		case b.DestQP == 1:
			if p.MAD.CM.AttributeID == layers.CMAttrREQ {
				assert.Equal(t, layers.IPCMServiceID(layers.PortSpaceTCP, layers.RPCRDMAPort), p.MAD.CM.REQ.ServiceID)
			}
		case info.Operation == layers.OpSend:
			var h layers.RPCRDMAHeader
			require.NoError(t, h.DecodeFromBytes(b.PacketPayload()), "frame %d", i+1)
			procs = append(procs, h.Proc)
			if b.DestQP == craft.DefaultResponder.QPN { // a call
				var m layers.RPCMsg
				require.NoError(t, m.DecodeFromBytes(h.Body), "frame %d", i+1)
				assert.Equal(t, h.XID, m.XID)
				c := call{proc: m.Procedure, at: f.Time, inline: len(h.Body)}
				c.handles = append(append(append(c.handles, h.Reads...), h.Writes...), h.Reply...)
				for _, s := range h.Reads {
					assert.Equal(t, uint32(len(h.Body)), s.Position, "frame %d: the read chunk's position", i+1)
				}
				calls[h.XID] = c
				continue
			}
			c, ok := calls[h.XID]
			require.True(t, ok, "frame %d: a reply to no call", i+1)
			got = append(got, craft.RPCExampleCall{Procedure: c.proc, Latency: f.Time.Sub(c.at)})
			if len(c.handles) == 1 {
				require.True(t, b.HasETH(layers.HdrIETH), "frame %d", i+1)
				assert.Equal(t, c.handles[0].Handle, b.IETH.RKey)
			}
			for _, s := range h.Writes {
				assert.Equal(t, int(s.Length), written[s.Handle], "frame %d: the write list says what was written", i+1)
			}
			for _, s := range h.Reply {
				assert.Equal(t, int(s.Length), written[s.Handle])
				assert.Empty(t, h.Body)
			}
			if h.Proc == layers.RPCRDMAMsg {
				var m layers.RPCMsg
				require.NoError(t, m.DecodeFromBytes(h.Body), "frame %d", i+1)
				assert.Equal(t, layers.RPCReply, m.Type)
			}
		case info.Operation == layers.OpRDMAWrite:
			if b.HasETH(layers.HdrRETH) {
				wkey = b.RETH.RKey
			}
			written[wkey] += len(b.PacketPayload())
		case info.Operation == layers.OpRDMAReadRequest:
			read[b.RETH.RKey] = b.RETH.DMALength
		}
	}
	want := append([]craft.RPCExampleCall(nil), craft.RPCExampleCalls...)
	for i := range want {
		want[i].Name = ""
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []layers.RPCRDMAProc{0, 0, 0, 0, 0, 0, 0, 0, 0, layers.RPCRDMANoMsg}, procs)
	assert.Equal(t, map[uint32]uint32{0xc02: 1024}, read, "the WRITE's read chunk")
	assert.Len(t, written, 2, "the READ's write chunk and the READDIR's reply chunk")
}

func TestRPCRDMAErrors(t *testing.T) {
	_, err := craft.NewRPCRDMA(craft.Config{Service: layers.ServiceUC})
	assert.Error(t, err)
	r, err := craft.NewRPCRDMA(craft.Config{MTU: 256})
	require.NoError(t, err)
	require.NoError(t, r.Connect())
	_, err = r.Call(craft.RPCCall{Program: layers.RPCProgNFS, Version: 3, Procedure: 6, WriteData: craft.Pattern(65536, 1), Latency: 5 * time.Microsecond})
	assert.ErrorContains(t, err, "past its latency")
	_, err = r.Call(craft.RPCCall{Program: layers.RPCProgNFS, Version: 3, Procedure: 16, ReplyChunk: true, ReplyChunkSize: 8, Results: make([]byte, 64)})
	assert.ErrorContains(t, err, "reply chunk of 8")
	xid, err := r.Call(craft.RPCCall{XID: 77, Program: layers.RPCProgNFS, Version: 3})
	require.NoError(t, err)
	assert.Equal(t, uint32(77), xid)
}
