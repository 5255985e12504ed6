package tui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

const (
	nvmeMidstream = "../../pcaps/rxe/nvme_rdma_midstream.pcap"
	nvmeConnect   = "../../pcaps/rxe/nvme_rdma_connect.pcap"
	nfsMidstream  = "../../pcaps/rxe/nfs_rdma_v3_midstream.pcap"
	nfsMount      = "../../pcaps/rxe/nfs_rdma_v3_mount.pcap"
)

// collectCommands runs the commands view's collector over a capture as
// the view does: through the model's Scan.
func collectCommands(t *testing.T, path string) *cmdCollector {
	t.Helper()
	m := loadModel(t, path, "")
	col := newCmdCollector(m.Conversations())
	require.NoError(t, m.Scan(context.Background(), m.Status().Packets, func(p *decode.Packet) bool { col.add(p); return true }))
	col.finish()
	return col
}

// TestCommandsMidstream: nvme_rdma_midstream.pcap starts after the set-up.
// Its MANIFEST line, counted by hand: 12 Read commands, 64 B SEND ONLY at
// frames 3, 12 ... 102, each answered by a 16 B SEND with Invalidate at
// frames 10, 18 ... 108, cids 0x4044-0x404f, each with 4 RDMA WRITEs of
// data to the host. Every row is there with its three kinds of frame.
func TestCommandsMidstream(t *testing.T) {
	col := collectCommands(t, nvmeMidstream)
	require.Len(t, col.rows, 12)
	assert.Equal(t, 12, col.nvme)
	assert.Zero(t, col.rpc)
	for i, r := range col.rows {
		assert.Equal(t, "NVMe", r.proto)
		assert.Equal(t, "Read", r.name)
		assert.Equal(t, strconv.Itoa(0x4044+i), r.id)
		assert.Equal(t, 1, r.qid)
		assert.Equal(t, uint32(1), r.nsid)
		assert.Equal(t, uint32(8), r.blocks, "4 KiB in 512-byte blocks")
		assert.Equal(t, uint32(4096), r.bytes)
		assert.Equal(t, "Success", r.status)
		assert.False(t, r.failed)
		assert.Positive(t, r.lat)
		assert.Less(t, r.frame, r.reply)
		if i == 0 {
			// Recognised at its completion: its data came before, and
			// is not tied to it.
			assert.Empty(t, r.data)
			continue
		}
		require.Len(t, r.data, 4, "frame %d", r.frame)
		assert.Less(t, r.frame, r.data[0])
		assert.Less(t, r.data[3], r.reply)
	}
	assert.Equal(t, uint32(3), col.rows[0].frame)
	assert.Equal(t, uint32(10), col.rows[0].reply)
	assert.Equal(t, uint32(12), col.rows[1].frame)
	assert.Equal(t, uint32(18), col.rows[1].reply)
	assert.Equal(t, uint32(102), col.rows[11].frame)
	assert.Equal(t, uint32(108), col.rows[11].reply)
	cells, _ := col.rows[1].cells()
	assert.Equal(t, []string{"NVMe", cells[1], "1", "16453", "Read", "1", "8", "8", "4096", "Success", cells[10], "12", "18", "14-17"}, cells)
}

// TestCommandsCountsMatchManifests counts the rows by command over the
// excerpts in pcaps/rxe and, when they are beside the checkout, the whole
// captures of ../shared/pcaps-ulp, against the independent counts in
// their MANIFEST.md files: each command once, and as many completions as
// -z nvme,srt and -z rpc,srt match.
func TestCommandsCountsMatchManifests(t *testing.T) {
	for _, tc := range []struct {
		path    string
		shared  bool
		want    map[string]int // by "queue command" (NVMe: admin, I/O) or "procedure"
		replied int
	}{
		// pcaps/rxe/MANIFEST.md, counted with tshark 4.0.17 and by hand
		// (the multi-packet capsules tshark does not reassemble); the
		// sixth Write is cut (its capsule's last packet is past the end).
		{path: nvmeConnect, want: map[string]int{"admin Fabrics Property Set": 5, "admin Fabrics Connect": 2,
			"admin Fabrics Property Get": 11, "admin Get Log Page": 6, "admin Identify": 10, "admin Set Features": 3,
			"admin Asynchronous Event Request": 2, "admin Keep Alive": 1, "I/O Read": 3, "I/O Fabrics Connect": 1, "I/O Write": 5},
			replied: 47},
		// 21 calls, all answered, the first recognised at its reply;
		// counted with tshark 4.0.17 (-Y rpc.msgtyp==0 -T fields -e
		// rpc.program -e rpc.procedure, the RDMA calls).
		{path: nfsMidstream, want: map[string]int{"NFSv3 LOOKUP": 2, "NFSv3 CREATE": 1, "NFSv3 WRITE": 1,
			"NFSv3 MKDIR": 1, "NFSv3 RENAME": 1, "NFSv3 SYMLINK": 1, "NFSv3 READDIRPLUS": 3, "NFSACLv3 GETACL": 4,
			"NFSv3 REMOVE": 1, "NFSv3 FSSTAT": 1, "NFSv3 GETATTR": 4, "NFSv3 ACCESS": 1}, replied: 21},
		// ../shared/pcaps-ulp/MANIFEST.md: 44 admin-queue commands, 139
		// Reads and 136 Writes; 61 calls, all answered.
		{path: "nvme_rdma.pcap", shared: true},
		{path: "nfs_rdma_v3.pcap", shared: true, want: map[string]int{"NFSv3 READ": 12, "NFSv3 GETATTR": 9,
			"NFSv3 WRITE": 7, "NFSACLv3 GETACL": 7, "NFSv3 ACCESS": 6, "NFSv3 LOOKUP": 4, "NFSv3 READDIRPLUS": 4,
			"NFSv3 CREATE": 2, "NFSv3 FSINFO": 2, "NFSv3 FSSTAT": 1, "NFSv3 MKDIR": 1, "NFSv3 NULL": 1,
			"NFSv3 PATHCONF": 1, "NFSv3 REMOVE": 1, "NFSv3 RENAME": 1, "NFSv3 SYMLINK": 1, "NFSACLv3 NULL": 1},
			replied: 61},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			path := tc.path
			if tc.shared {
				path = filepath.Join("..", "..", "..", "shared", "pcaps-ulp", tc.path)
				if _, err := os.Stat(path); err != nil {
					t.Skipf("%s not beside the checkout", path)
				}
			}
			col := collectCommands(t, path)
			got := map[string]int{}
			replied, admin, fabrics := 0, 0, 0
			for _, r := range col.rows {
				key := r.name
				if r.proto == "NVMe" {
					q := "I/O"
					if r.qid == 0 {
						q = "admin"
						admin++
					}
					key = q + " " + r.name
					if strings.HasPrefix(r.name, "Fabrics") {
						fabrics++
					}
				}
				got[key]++
				if r.reply != 0 {
					replied++
				}
			}
			if tc.path == "nvme_rdma.pcap" {
				assert.Equal(t, 44, admin)
				assert.Equal(t, 139, got["I/O Read"])
				assert.Equal(t, 136, got["I/O Write"])
				assert.Equal(t, 21, fabrics)
				return
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.replied, replied)
		})
	}
}

// TestCommandsISERAndSMB2: the view lists iSER tasks and SMB2 requests as
// -z iscsi,srt and -z smb2,srt count them. pcaps/smbdirect.pcap: 9 SMB2
// requests (a compound CREATE+READ in one frame makes two rows), 8
// answered (the WRITE at its final response, not its interim
// STATUS_PENDING; the last ECHO never), SESSION_SETUP's
// STATUS_MORE_PROCESSING_REQUIRED not a failure (layers.SMB2Header.Failed).
// pcaps/rxe/iser_login.pcap: its MANIFEST's 34 SCSI Commands (tshark's
// iscsi.opcode count), 33 answered.
func TestCommandsISERAndSMB2(t *testing.T) {
	col := collectCommands(t, "../../pcaps/smbdirect.pcap")
	require.Len(t, col.rows, 9)
	assert.Equal(t, 9, col.other)
	byName := map[string][]*ulpCommand{}
	answered := 0
	for _, r := range col.rows {
		assert.Equal(t, "SMB2", r.proto)
		byName[r.name] = append(byName[r.name], r)
		if r.reply != 0 {
			answered++
		}
	}
	assert.Equal(t, 8, answered)
	require.Len(t, byName["CREATE"], 1)
	require.Len(t, byName["READ"], 1)
	assert.Equal(t, byName["CREATE"][0].frame, byName["READ"][0].frame, "one compound")
	assert.Equal(t, byName["CREATE"][0].reply, byName["READ"][0].reply)
	w := byName["WRITE"][0]
	assert.Equal(t, "STATUS_SUCCESS", w.status)
	assert.Equal(t, "48000", strconv.FormatInt(w.lat.Nanoseconds(), 10))
	ss := byName["SESSION_SETUP"]
	require.Len(t, ss, 2)
	assert.Equal(t, "STATUS_MORE_PROCESSING_REQUIRED", ss[0].status)
	assert.False(t, ss[0].failed)
	assert.False(t, ss[1].failed)
	assert.Zero(t, byName["ECHO"][0].reply)

	col = collectCommands(t, "../../pcaps/rxe/iser_login.pcap")
	require.Len(t, col.rows, 37, "2 Logins, a Text, 34 SCSI Commands")
	scsi, answered := 0, 0
	for _, r := range col.rows {
		assert.Equal(t, "iSER", r.proto)
		if r.name != "Login Command" && r.name != "Text Command" {
			scsi++
			if r.reply != 0 {
				answered++
			}
		}
	}
	assert.Equal(t, 34, scsi)
	assert.Equal(t, 33, answered, "the 15th WRITE(10)'s response is past the end")
}

// TestOpLatencyBuckets: each histogram is a row of the model's -z ...,srt
// tables, and each of its buckets lists, through enter, the commands
// whose latency the bucket counted: as many as it counts, for every
// connection and for all of them, over captures of each upper layer,
// with loss (retransmitted completions) and mid-stream.
func TestOpLatencyBuckets(t *testing.T) {
	for _, path := range []string{nvmeConnect, nvmeMidstream, "../../pcaps/rxe/nvme_rdma_loss.pcap", nfsMidstream,
		"../../pcaps/rxe/nfs_rdma_v3_loss.pcap", "../../pcaps/rxe/nfs_rdma_v41_mount.pcap", "../../pcaps/rxe/iser_login.pcap",
		"../../pcaps/rxe/iser_loss.pcap", "../../pcaps/smbdirect.pcap"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			col := collectCommands(t, path)
			check := func(s *srtSet, conv uint32) int {
				total := 0
				for _, h := range s.hist {
					require.NotZero(t, h.key, h.label)
					first, counts := h.buckets()
					n := 0
					for i, want := range counts {
						got := 0
						for _, c := range col.rows {
							if c.op == h.key && (conv == 0 || col.canon(c.conv) == conv) && bucketOf(c.lat) == first+i {
								got++
							}
						}
						assert.Equal(t, want, got, "%s %s, connection %d", h.label, bucketLabel(first+i), conv)
						n += want
					}
					assert.Equal(t, h.s.Count(), n, h.label)
					total += n
				}
				return total
			}
			all := check(&col.all, 0)
			assert.Positive(t, all)
			sum := 0
			for id, s := range col.byConv {
				assert.Equal(t, id, col.canon(id), "kept under the connection's own id")
				sum += check(s, id)
			}
			assert.Equal(t, all, sum, "the connections' histograms add up to all connections'")
		})
	}
}

// TestOpLatencyBucketOf: the buckets double from 1 µs.
func TestOpLatencyBucketOf(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		bucket int
		label  string
	}{
		{0, 0, "[0, 1)"}, {999 * time.Nanosecond, 0, "[0, 1)"}, {time.Microsecond, 1, "[1, 2)"},
		{1999 * time.Nanosecond, 1, "[1, 2)"}, {2 * time.Microsecond, 2, "[2, 4)"}, {739 * time.Microsecond, 10, "[512, 1024)"},
		{1024 * time.Microsecond, 11, "[1024, 2048)"}, {67809 * time.Microsecond, 17, "[65536, 131072)"},
	} {
		assert.Equal(t, tc.bucket, bucketOf(tc.d), tc.d)
		assert.Equal(t, tc.label, bucketLabel(bucketOf(tc.d)), tc.d)
	}
	assert.Equal(t, "████", bar(2, 4, 8))
	assert.Equal(t, "▏", bar(1, 1000, 8), "a count shows")
	assert.Equal(t, "█▌", bar(3, 16, 8))
	assert.Empty(t, bar(0, 4, 8))
}

// TestCommandsFailedAsTheModel: a command is shown failed when the model
// says so, as -z nvme,srt, rpc,srt, iscsi,srt and smb2,srt count their
// Errors: for every opcode, as many failed rows as the model's table has
// errors. An NFS reply whose procedure returned an error status
// (NFS3ERR_NOENT for a LOOKUP of a name not there) was executed: the RPC
// did not fail, and says its NFS status.
func TestCommandsFailedAsTheModel(t *testing.T) {
	for _, path := range []string{nvmeConnect, nfsMidstream, "../../pcaps/rxe/nfs_rdma_v3_loss.pcap",
		"../../pcaps/nfs_rdma_craft.pcap", "../../pcaps/rxe/iser_login.pcap", "../../pcaps/smbdirect.pcap"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			col := collectCommands(t, path)
			for _, h := range col.all.hist {
				failed := 0
				for _, c := range col.rows {
					if c.op == h.key && c.failed {
						failed++
					}
				}
				assert.Equal(t, h.errors, failed, h.label)
			}
			for _, c := range col.rows {
				if c.name == "NFSv3 LOOKUP" && c.status == "NFS3ERR_NOENT" {
					assert.False(t, c.failed, "frame %d", c.reply)
				}
			}
		})
	}
}

// TestCommandsRPCFailure: an RPC reply is failed when the model found it
// an error (decode.FindRPCError: denied, or accepted but not executed),
// whatever its status says.
func TestCommandsRPCFailure(t *testing.T) {
	reply := func(m layers.RPCMsg, nfs uint32, finding bool) *decode.Packet {
		p := &decode.Packet{}
		p.Number = 9
		m.Type = layers.RPCReply
		pk := &decode.RPCRDMAPacket{Kind: decode.RPCRDMAMessage, RPC: m, HasRPC: true, HasCall: true,
			Call: decode.RPCCallInfo{Frame: 3, XID: 7, Program: layers.RPCProgNFS, Version: 3, Procedure: 3}}
		if m.ReplyStat == layers.RPCAccepted && m.AcceptStat == layers.RPCSuccess {
			pk.NFSStatus, pk.HasNFSStatus = nfs, true
		}
		p.Analysis.RPCRDMA = pk
		if finding {
			p.Analysis.Findings |= 1 << decode.FindRPCError
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		p      *decode.Packet
		status string
		failed bool
	}{
		{"success", reply(layers.RPCMsg{}, 0, false), "NFS3_OK", false},
		{"NFS error", reply(layers.RPCMsg{}, 2, false), "NFS3ERR_NOENT", false},
		{"garbage args", reply(layers.RPCMsg{AcceptStat: layers.RPCGarbageArgs}, 0, true), layers.RPCGarbageArgs.String(), true},
		{"denied", reply(layers.RPCMsg{ReplyStat: layers.RPCDenied, RejectStat: layers.RPCAuthError}, 0, true),
			"denied " + layers.RPCAuthError.String(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := newCmdCollector(nil)
			col.add(tc.p)
			require.Len(t, col.rows, 1)
			assert.Equal(t, tc.status, col.rows[0].status)
			assert.Equal(t, tc.failed, col.rows[0].failed)
		})
	}
}
