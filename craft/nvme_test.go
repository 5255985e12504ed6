package craft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// The crafted NVMe-oF association: each queue's CM REQ names port 4420
// and carries the queue id and sizes, its REP the controller's receive
// queue size; every host SEND is a command capsule, every controller SEND
// a CQE answering the command with its id, the queue's SQ head one further
// each time, the status and latency the example asked for; the data moves
// by RDMA to and from the keyed SGL the command named, whose key the CQE
// invalidates.
func TestNVMeExample(t *testing.T) {
	tr, err := craft.NVMeExample(craft.Config{})
	require.NoError(t, err)
	p := layers.NewParser(craft.RoCEv2.FirstLayer(), layers.ParserOptions{})
	type sent struct {
		sqe   layers.NVMeSQE
		at    time.Time
		qid   uint16
		keys  bool
		frame int
	}
	var errs []craft.Finding
	qidOf := map[uint32]uint16{} // host QPN -> queue id, from the CM REQs
	pending := map[[2]uint16]sent{}
	sgl := map[uint32]layers.NVMeSGL{}
	var got []craft.NVMeExampleCommand
	var reps []uint16
	sqhd := map[uint16]uint16{}
	var writes, reads int
	for i, f := range tr.Frames {
		require.NoError(t, p.Decode(f.Data), "frame %d", i+1)
		b := &p.BTH
		info := b.Opcode.Info()
		switch {
		case b.DestQP == 1:
			cm := &p.MAD.CM
			switch cm.AttributeID {
			case layers.CMAttrREQ:
				assert.Equal(t, layers.IPCMServiceID(layers.PortSpaceTCP, layers.NVMeOFPort), cm.REQ.ServiceID)
				r, ok := layers.DecodeNVMeRDMACMReq(cm.REQ.PrivateData)
				require.True(t, ok)
				qidOf[cm.REQ.LocalQPN] = r.QID
				assert.Equal(t, r.HSQSize+1, r.HRQSize)
				assert.Equal(t, uint16(0xffff), r.CNTLID)
			case layers.CMAttrREP:
				reps = append(reps, uint16(cm.REP.PrivateData[2])|uint16(cm.REP.PrivateData[3])<<8)
			}
		case info.Operation == layers.OpSend:
			data := b.PacketPayload()
			if len(data) >= layers.NVMeSQELength { // host to controller
				var s layers.NVMeSQE
				require.NoError(t, s.DecodeFromBytes(data))
				qid, ok := qidOf[hostQP(b.DestQP)]
				require.True(t, ok, "frame %d: a command on a QP no CM REQ opened", i+1)
				if s.SGL.Keyed() && s.SGL.Length > 0 {
					sgl[s.SGL.Key] = s.SGL
				}
				if s.SGL.Type == layers.NVMeSGLDataBlock {
					assert.Equal(t, int(s.SGL.Length), len(s.InCapsule), "frame %d: in-capsule data", i+1)
				}
				pending[[2]uint16{qid, s.CID}] = sent{s, f.Time, qid, s.SGL.Keyed() && s.SGL.Length > 0, i + 1}
				continue
			}
			var c layers.NVMeCQE
			require.NoError(t, c.DecodeFromBytes(data))
			require.Len(t, data, layers.NVMeCQELength)
			cmd, ok := pending[[2]uint16{c.SQID, c.CID}]
			require.True(t, ok, "frame %d: CQE for no command", i+1)
			delete(pending, [2]uint16{c.SQID, c.CID})
			sqhd[c.SQID]++
			assert.Equal(t, sqhd[c.SQID], c.SQHD, "frame %d", i+1)
			assert.Equal(t, cmd.keys, b.HasETH(layers.HdrIETH), "frame %d: SEND with Invalidate when the command named a key", i+1)
			if cmd.keys {
				assert.Equal(t, cmd.sqe.SGL.Key, b.IETH.RKey)
			}
			if !c.Status.OK() {
				errs = append(errs, craft.Finding{Frame: i + 1, Kind: craft.FindingNVMeError, Ref: cmd.frame, Detail: c.Status.String()})
			}
			got = append(got, craft.NVMeExampleCommand{QID: cmd.qid, CID: c.CID, Opcode: uint8(cmd.sqe.Opcode),
				Fabrics: cmd.sqe.IsFabrics(), Status: c.Status, Latency: f.Time.Sub(cmd.at)})
		case info.Operation == layers.OpRDMAWrite && b.HasETH(layers.HdrRETH):
			writes++
			s, ok := sgl[b.RETH.RKey]
			require.True(t, ok, "frame %d: an RDMA WRITE to no command's buffer", i+1)
			assert.Equal(t, s.Address, b.RETH.VA)
			assert.Equal(t, s.Length, b.RETH.DMALength)
		case info.Operation == layers.OpRDMAReadRequest:
			reads++
			s, ok := sgl[b.RETH.RKey]
			require.True(t, ok, "frame %d: an RDMA READ of no command's buffer", i+1)
			assert.Equal(t, s.Address, b.RETH.VA)
			assert.Equal(t, s.Length, b.RETH.DMALength)
		}
	}
	assert.Empty(t, pending, "commands without a completion")
	assert.Equal(t, errs, tr.Findings, "a finding for each completion with an error status")
	require.Len(t, errs, 1)
	assert.Equal(t, "LBA Out of Range", errs[0].Detail)
	want := append([]craft.NVMeExampleCommand(nil), craft.NVMeExampleCommands...)
	for i := range want {
		want[i].Name = ""
	}
	assert.Equal(t, want, got)
	assert.Equal(t, []uint16{32, 128}, reps, "the REPs' controller receive queue sizes")
	assert.Equal(t, 2, writes, "the Identify's and the Read's RDMA WRITEs (FIRST counted once)")
	assert.Equal(t, 1, reads, "the Write's RDMA READ")
}

// hostQP maps a controller QPN (a command's destination) to its host's:
// the example's queues pair 0x11 with 0x12 and 0x13 with 0x14.
func hostQP(ctrl uint32) uint32 { return ctrl - 1 }

func TestNVMeQueueErrors(t *testing.T) {
	_, err := craft.NewNVMeQueue(craft.Config{Service: layers.ServiceUD}, 0, 31)
	assert.Error(t, err)
	q, err := craft.NewNVMeQueue(craft.Config{MTU: 256}, 1, 127)
	require.NoError(t, err)
	require.NoError(t, q.Connect())
	// 64 KiB at MTU 256 take longer than a 10 µs latency.
	err = q.Read(craft.NVMeIO{CID: 1, NSID: 1, Data: craft.Pattern(65536, 1), Latency: 10 * time.Microsecond})
	assert.ErrorContains(t, err, "past its latency")
	assert.ErrorContains(t, q.Write(craft.NVMeIO{CID: 2, NSID: 1, Data: craft.Pattern(100, 1)}), "blocks of 512")
	assert.Error(t, q.Command(craft.NVMeCommand{Dir: 9}))
}
