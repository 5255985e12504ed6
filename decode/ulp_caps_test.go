package decode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
)

// nvmeLossCommands are the commands of pcaps/rxe/nvme_rdma_loss.pcap (the
// first 598 frames of a run with netem loss 2%), each counted once however
// often its packets went on the wire, by "qid opcode" (a Fabrics command by
// its type). The single-packet ones are tshark 4.0.17's (-e
// nvme-rdma.cmd.qid -e nvme.cmd.opc -e nvme.fabrics.cmd.fctype, one per
// destination QP and PSN: it decodes the resent Property Set of frame 19
// and Property Get of frame 85 a second time); the multi-packet ones are
// counted by hand from the SEND FIRST packets of QP 0x13, one per PSN (the
// I/O queue's Connect at frame 171, then 35 Writes with 4 KiB in the
// capsule, cids 4-16, 1-16, 4097-4102), which tshark does not reassemble.
var nvmeLossCommands = map[string]int{
	"0x0000 fctype 0x00": 5,  // Property Set
	"0x0000 fctype 0x01": 2,  // Connect (discovery and admin queues)
	"0x0000 fctype 0x04": 11, // Property Get
	"0x0000 opc 0x02":    6,  // Get Log Page
	"0x0000 opc 0x06":    10, // Identify
	"0x0000 opc 0x09":    3,  // Set Features
	"0x0000 opc 0x0c":    2,  // Asynchronous Event Request (unanswered)
	"0x0000 opc 0x18":    2,  // Keep Alive
	"0x0001 fctype 0x01": 1,  // Connect of the I/O queue, in SEND FIRST + LAST
	"0x0001 opc 0x01":    35, // Write, each in SEND FIRST + 3 MIDDLE + LAST
	"0x0001 opc 0x02":    3,  // Read (partition scan)
}

// TestNVMeLossCommandsOnce: on a capture with NAKs and go-back-N
// retransmissions every command is counted exactly once (ibwire.nvme.cid,
// the analysis' match), on the packet that completed it at the target,
// also when the first copy of one of its packets never reached the capture
// point (frames 306-316, 508-514, 562-572: a Write whose SEND FIRST or a
// MIDDLE was lost is completed by its resent packets). A copy of a
// command's SEND ONLY (frames 19, 85) shows the same command, as tshark
// does, and counts nowhere.
func TestNVMeLossCommandsOnce(t *testing.T) {
	names := []string{"infiniband.bth.destqp", "infiniband.bth.psn", "nvme-rdma.cmd.qid", "nvme.cmd.opc",
		"nvme.fabrics.cmd.fctype", "ibwire.nvme.cid", "ibwire.nvme.kind", "ibwire.analysis.retransmission"}
	rows, a := nvmeRun(t, "../pcaps/rxe/nvme_rdma_loss.pcap", decode.AnalyzerOptions{}, names)
	require.Len(t, rows, 599)
	got := map[string]int{}
	seen := map[string]string{}
	var copies []int
	cqes := 0
	for frame, r := range rows {
		if r["ibwire.nvme.kind"] == "completion" && r["ibwire.nvme.cid"] != "" {
			cqes++
		}
		var key string
		switch {
		case r["nvme.fabrics.cmd.fctype"] != "":
			key = r["nvme-rdma.cmd.qid"] + " fctype " + r["nvme.fabrics.cmd.fctype"]
		case r["nvme.cmd.opc"] != "":
			key = r["nvme-rdma.cmd.qid"] + " opc " + r["nvme.cmd.opc"]
		default:
			continue
		}
		at := r["infiniband.bth.destqp"] + "/" + r["infiniband.bth.psn"]
		if r["ibwire.nvme.cid"] == "" {
			// A copy: the command of its PSN's counted packet, shown again.
			copies = append(copies, frame)
			assert.Equal(t, "1", r["ibwire.analysis.retransmission"], "frame %d", frame)
			assert.Equal(t, seen[at], key, "frame %d shows the command its first copy counted", frame)
			continue
		}
		got[key]++
		assert.Empty(t, seen[at], "frame %d counts the command of its PSN again", frame)
		seen[at] = key
	}
	assert.Equal(t, []int{19, 85}, copies)
	assert.Equal(t, nvmeLossCommands, got)
	// Every completion finds its command: 80 commands less the 2 AERs.
	assert.Equal(t, 78, cqes)
	srt := 0
	for _, row := range a.NVMeSRT().Rows() {
		srt += row.Count()
		if row.Command == "Write" {
			assert.Equal(t, 35, row.Count(), "Writes answered")
		}
	}
	assert.Equal(t, 78, srt)
}

// TestRPCRDMALossRepliesOnce: every RPC call of the loss and NFSv4.1
// captures is counted once and answered once. The calls are tshark
// 4.0.17's (-Y 'rpc.msgtyp == 0 && rpcordma' -e rpc.xid, one per XID: 19
// on RDMA in nfs_rdma_v3_loss.pcap beside the TCP portmap and MOUNT
// calls, 31 in nfs_rdma_v41_mount.pcap). In nfs_rdma_v3_loss.pcap the
// RDMA WRITE of a GETACL reply chunk was lost (frame 60 resends it): the
// client dropped the RDMA_NOMSG reply that came after the gap (frame 58)
// and took its resent copy (frame 61), on which the reply is counted;
// tshark shows an RPC reply on neither copy.
func TestRPCRDMALossRepliesOnce(t *testing.T) {
	for _, tt := range []struct {
		file       string
		calls      int
		replyFrame map[string]int // where a call's reply is, when it is checked
	}{
		{"nfs_rdma_v3_loss.pcap", 19, map[string]int{"0xdbb65956": 61}},
		{"nfs_rdma_v41_mount.pcap", 31, map[string]int{"0x924b249f": 412}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			rows := fieldsAll(t, "../pcaps/rxe/"+tt.file, decode.AnalyzerOptions{}, []string{"rpc.xid", "rpc.msgtyp"})
			calls, replies := map[string]int{}, map[string]int{}
			for frame, r := range rows {
				switch r["rpc.msgtyp"] {
				case "0":
					assert.Zero(t, calls[r["rpc.xid"]], "frame %d: a second call %s", frame, r["rpc.xid"])
					calls[r["rpc.xid"]] = frame
				case "1":
					assert.Zero(t, replies[r["rpc.xid"]], "frame %d: a second reply %s", frame, r["rpc.xid"])
					replies[r["rpc.xid"]] = frame
				}
			}
			assert.Len(t, calls, tt.calls)
			for xid := range calls {
				assert.NotZero(t, replies[xid], "call %s unanswered", xid)
			}
			assert.Len(t, replies, tt.calls)
			for xid, f := range tt.replyFrame {
				assert.Equal(t, f, replies[xid], xid)
			}
		})
	}
}
