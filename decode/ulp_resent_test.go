package decode_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestResentCopiesShowULP: a packet resent on the loss captures shows the
// upper layer its first copy carried, with tshark 4.0.17's values (tshark
// -r F -T fields -E occurrence=a -e ... on both frames: it decodes every
// copy), and is matched with nothing there (ibwire's per-command fields
// and the outstanding count stay on the copy the analysis counted).
//
// Where tshark differs on copies, ours stands:
//   - iser_loss frame 486, the SCSI Response of the WRITE(10) sent at 472
//     and resent at 476: tshark times it from the copy (iscsi.request_frame
//     476, iscsi.time 0.010711); the initiator waited from 472 (2.302 s).
//   - nvme_rdma_loss frame 249, the CQE of frame 233 resent: tshark shows
//     it as nvme-rdma.unknown_data ("Dissection unsupported"); it is the
//     same CQE (cid 0x0001, Success), shown as such.
//   - iser_loss frame 359, a SEND MIDDLE of WRITE data: tshark reads an
//     iSER header out of the data (iser.flags 0x18); a MIDDLE has none.
func TestResentCopiesShowULP(t *testing.T) {
	cases := []struct {
		name        string
		pcap        string
		copy, first int
		want        map[string]string // tshark's values on the copy
		// ours are fields tshark does not give, on the copy ("" absent).
		ours map[string]string
	}{
		{"iSER SEND FIRST resent after an ACK timeout", "../pcaps/rxe/iser_loss.pcap", 476, 472,
			map[string]string{"iscsi.opcode": "0x01", "iscsi.initiatortasktag": "0x3c000000", "iscsi.cmdsn": "59",
				"iscsi.scsicommand.expecteddatatransferlength": "4096", "iscsi.datasegmentlength": "4096", "iser.flags": "0x10"},
			map[string]string{"ibwire.iscsi.kind": "message", "ibwire.iscsi.request_frame": "", "ibwire.iscsi.outstanding": ""}},
		{"NVMe Property Set resent after an ACK timeout", "../pcaps/rxe/nvme_rdma_loss.pcap", 19, 16,
			map[string]string{"nvme.fabrics.cmd.fctype": "0x00", "nvme.fabrics.cmd.cid": "0x1000",
				"nvme.fabrics.cmd.prop_get_set.offset": "0x00000014", "nvme.fabrics.prop_get_set.cc": "0x00460060"},
			map[string]string{"ibwire.nvme.kind": "command", "ibwire.nvme.cmd_frame": "", "ibwire.nvme.outstanding": ""}},
		{"NVMe Property Get resent after an ACK timeout", "../pcaps/rxe/nvme_rdma_loss.pcap", 85, 82,
			map[string]string{"nvme.fabrics.cmd.fctype": "0x04", "nvme.fabrics.cmd.cid": "0x4001",
				"nvme.fabrics.cmd.prop_get_set.offset": "0x0000001c"},
			map[string]string{"ibwire.nvme.cmd_frame": "", "ibwire.nvme.outstanding": ""}},
		{"NVMe CQE resent after a NAK (tshark: unknown data)", "../pcaps/rxe/nvme_rdma_loss.pcap", 249, 233,
			map[string]string{},
			map[string]string{"nvme.cqe.cid": "0x0001", "nvme.cqe.status": "0x0000", "ibwire.nvme.cmd_frame": "", "ibwire.nvme.latency": ""}},
	}
	// A Read's RDMA WRITE MIDDLE lost (frame 231 is followed by the LAST,
	// 232): the NAK makes the target resend MIDDLE and LAST, which
	// tshark ties to the Read of frame 226, each to the packet before it.
	resentData := []struct {
		frame int
		want  map[string]string
	}{
		{247, map[string]string{"nvme.fabrics.cmd_pkt": "226", "nvme-rdma.write_to_host_req": "1", "nvme-rdma.write_to_host_prev": "231"}},
		{248, map[string]string{"nvme.fabrics.cmd_pkt": "226", "nvme-rdma.write_to_host_req": "1", "nvme-rdma.write_to_host_prev": "247"}},
	}

	run := func(t *testing.T, pcap string, names []string) []map[string]string {
		rows, _ := fieldValues(t, pcap, decode.AnalyzerOptions{}, append(names, "ibwire.analysis.retransmission"), true)
		return rows
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			for n := range tt.want {
				names = append(names, n)
			}
			for n := range tt.ours {
				names = append(names, n)
			}
			rows := run(t, tt.pcap, names)
			require.Greater(t, len(rows), tt.copy)
			cp, first := rows[tt.copy], rows[tt.first]
			assert.Equal(t, "1", cp["ibwire.analysis.retransmission"], "frame %d is a copy", tt.copy)
			for n, v := range tt.want {
				assert.Equal(t, v, cp[n], "%s on the copy", n)
				assert.Equal(t, first[n], cp[n], "%s as on the first copy", n)
			}
			for n, v := range tt.ours {
				assert.Equal(t, v, cp[n], "%s on the copy", n)
			}
		})
	}
	t.Run("NVMe RDMA WRITE resent after a NAK", func(t *testing.T) {
		rows := run(t, "../pcaps/rxe/nvme_rdma_loss.pcap", []string{"nvme.fabrics.cmd_pkt", "nvme-rdma.write_to_host_req",
			"nvme-rdma.write_to_host_prev", "ibwire.nvme.cmd_frame"})
		for _, d := range resentData {
			for n, v := range d.want {
				got, ok := rows[d.frame][n]
				assert.True(t, ok, "%s on frame %d", n, d.frame)
				assert.Equal(t, v, got, "%s on frame %d", n, d.frame)
			}
			assert.Empty(t, rows[d.frame]["ibwire.nvme.cmd_frame"], "frame %d counts nowhere", d.frame)
		}
	})
}

// resendFrames copies the capture at path with each of frames sent again
// right after itself (1 µs later): a copy the analysis marks a
// retransmission. It returns the new file and, for each frame, the
// numbers of its first copy and of its copy in it.
func resendFrames(t *testing.T, path string, frames ...int) (string, map[int][2]int) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	out := filepath.Join(t.TempDir(), "resent.pcap")
	var w *capture.Writer
	at := map[int][2]int{}
	n := 0
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		if w == nil {
			w, err = capture.Create(out, capture.FormatPcap, cp.LinkType, true)
			require.NoError(t, err)
		}
		p := capture.Packet{Data: append([]byte(nil), cp.Data...), LinkType: cp.LinkType, Time: cp.Time, Length: cp.Length}
		require.NoError(t, w.WritePacket(p))
		n++
		if slices.Contains(frames, cp.Number) {
			p.Time = p.Time.Add(time.Microsecond)
			require.NoError(t, w.WritePacket(p))
			n++
			at[cp.Number] = [2]int{n - 1, n}
		}
	}
	require.NoError(t, w.Close())
	require.Len(t, at, len(frames))
	return out, at
}

// TestRPCResentShowsMessage: an NFSv3 FSINFO call and its reply
// (nfs_rdma_v3_mount.pcap frames 32 and 34) each sent again: the copies
// show the RPC-over-RDMA header and the RPC message tshark 4.0.17 shows
// on them (the values are its, on the first copies), and match nothing:
// -z rpc,srt and the calls counted are those of the capture without the
// copies. tshark also names the reply copy's program and procedure from
// the call (rpc.program 100003, rpc.procedure 19); ours are on the reply
// that counted.
func TestRPCResentShowsMessage(t *testing.T) {
	const mount = "../pcaps/rxe/nfs_rdma_v3_mount.pcap"
	names := []string{"rpcordma.xid", "rpcordma.msg_type", "rpc.xid", "rpc.msgtyp", "rpc.program", "rpc.procedure",
		"rpc.replystat", "ibwire.rpc.call_frame", "ibwire.rpc.outstanding", "ibwire.analysis.retransmission"}
	path, at := resendFrames(t, mount, 32, 34)
	rows, a := fieldValues(t, path, decode.AnalyzerOptions{}, names, false)
	_, base := fieldValues(t, mount, decode.AnalyzerOptions{}, names, false)
	cases := []struct {
		name  string
		frame int
		want  map[string]string
	}{
		{"call", 32, map[string]string{"rpcordma.xid": "0x2dc3b52a", "rpcordma.msg_type": "0", "rpc.xid": "0x2dc3b52a",
			"rpc.msgtyp": "0", "rpc.program": "100003", "rpc.procedure": "19"}},
		{"reply", 34, map[string]string{"rpcordma.xid": "0x2dc3b52a", "rpcordma.msg_type": "0", "rpc.xid": "0x2dc3b52a",
			"rpc.msgtyp": "1", "rpc.replystat": "0"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			first, cp := rows[at[tt.frame][0]], rows[at[tt.frame][1]]
			assert.Equal(t, "1", cp["ibwire.analysis.retransmission"])
			for n, v := range tt.want {
				assert.Equal(t, v, first[n], "%s on the first copy", n)
				assert.Equal(t, v, cp[n], "%s on the copy", n)
			}
			assert.NotEmpty(t, first["ibwire.rpc.call_frame"], "the first copy is matched")
			assert.Empty(t, cp["ibwire.rpc.call_frame"], "the copy is not")
			assert.NotEmpty(t, first["ibwire.rpc.outstanding"])
			assert.Empty(t, cp["ibwire.rpc.outstanding"], "the copy counts nowhere")
		})
	}
	count := func(a *decode.Analyzer) map[string]int {
		m := map[string]int{}
		for _, r := range a.RPCSRT().Rows() {
			m[r.Name] = r.Count()
		}
		return m
	}
	assert.Equal(t, count(base), count(a), "-z rpc,srt as without the copies")
	assert.NotEmpty(t, count(a))
}

// TestSMBDirectResentShowsMessage: the SMB Direct negotiate request and
// the first SESSION_SETUP's Data Transfer of smbdirect.pcap (frames 4 and
// 12) each sent again: the copies show the same smb_direct.* values as
// their first copies (tshark 4.0.17 decodes both copies alike), the
// negotiate copy read as a negotiate. Their SMB2 headers are left to the
// copy that counted: the SMB2 commands seen, the requests matched and the
// outstanding count are those of the capture without the copies.
// (tshark reads the SMB2 header on the copy too, as a second request.)
func TestSMBDirectResentShowsMessage(t *testing.T) {
	const smbd = "../pcaps/smbdirect.pcap"
	names := []string{"smb_direct.version.min", "smb_direct.max_receive_size", "smb_direct.credits.requested",
		"smb_direct.remaining_length", "smb_direct.data_length", "smb_direct.data_offset", "ibwire.smb2.command",
		"ibwire.smb2.request_frame", "ibwire.smb2.outstanding", "ibwire.analysis.retransmission"}
	path, at := resendFrames(t, smbd, 4, 12)
	rows, _ := fieldValues(t, path, decode.AnalyzerOptions{}, names, true)
	base, _ := fieldValues(t, smbd, decode.AnalyzerOptions{}, names, true)
	cases := []struct {
		name  string
		frame int
		want  []string // fields the copy shows as its first copy did
	}{
		{"negotiate request", 4, []string{"smb_direct.version.min", "smb_direct.max_receive_size", "smb_direct.credits.requested"}},
		{"data transfer", 12, []string{"smb_direct.credits.requested", "smb_direct.remaining_length", "smb_direct.data_length", "smb_direct.data_offset"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			first, cp := rows[at[tt.frame][0]], rows[at[tt.frame][1]]
			assert.Equal(t, "1", cp["ibwire.analysis.retransmission"])
			for _, n := range tt.want {
				require.NotEmpty(t, first[n], "%s on the first copy", n)
				assert.Equal(t, first[n], cp[n], "%s on the copy", n)
			}
			assert.Empty(t, cp["ibwire.smb2.command"], "no SMB2 request started again")
			assert.Empty(t, cp["ibwire.smb2.outstanding"], "the copy counts nowhere")
		})
	}
	tally := func(rows []map[string]string) map[string]int {
		m := map[string]int{}
		for _, r := range rows {
			for _, f := range []string{"ibwire.smb2.command", "ibwire.smb2.request_frame", "ibwire.smb2.outstanding"} {
				if v := r[f]; v != "" {
					m[f+"="+v]++
				}
			}
		}
		return m
	}
	// Frame numbers after the copies moved by one or two.
	shift := func(rows []map[string]string) []map[string]string {
		var out []map[string]string
		for i, r := range rows {
			if i == at[4][1] || i == at[12][1] {
				continue
			}
			out = append(out, r)
		}
		return out
	}
	got, want := tally(shift(rows)), tally(base)
	for k := range want {
		if strings.HasPrefix(k, "ibwire.smb2.request_frame=") {
			delete(want, k)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "ibwire.smb2.request_frame=") {
			delete(got, k)
		}
	}
	assert.Equal(t, want, got, "SMB2 commands and outstanding counts as without the copies")
}
