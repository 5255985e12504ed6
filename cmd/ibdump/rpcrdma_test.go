package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nfsMount = "../../pcaps/rxe/nfs_rdma_v3_mount.pcap"
	nfsMid   = "../../pcaps/rxe/nfs_rdma_v3_midstream.pcap"
)

// The default line names the RPC call and its reply, with the chunks the
// call offers and the latency; the values are tshark 4.0.17's for frames
// 56-59 and 104-108 of the excerpt (rpcordma.xid 0x33c3b52a, msg_type 0
// then 1, reply chunk of 3 segments 256+28672+4 bytes, rpc.program
// 100227 rpc.procedure 1, rpc.time 0.003081; rpcordma.xid 0x3cc3b52a,
// write list of 1 segment of 4096 bytes, nfs.procedure_v3 6, rpc.time
// 0.003917).
func TestRPCRDMADefaultLine(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", nfsMount)
	require.Zero(t, code, errOut)
	for frame, want := range map[int]string{
		56:  "RC Send Only QP 0x000011 PSN 1654461 A, RPC-over-RDMA MSG xid 0x33c3b52a NFSACLv3 GETACL Call, reply chunk 3 segments 28932 bytes",
		58:  "rkey 0x00000c22 len 184, length 184, NFSACLv3 GETACL reply chunk xid 0x33c3b52a",
		59:  "RC Send Only QP 0x000011 PSN 15793576 A, RPC-over-RDMA NOMSG xid 0x33c3b52a NFSACLv3 GETACL Reply [latency 3081 µs]",
		104: "RPC-over-RDMA MSG xid 0x3cc3b52a NFSv3 READ Call, write list 1 segment 4096 bytes",
		106: "length 18, NFSv3 READ write chunk xid 0x3cc3b52a",
		108: "IETH rkey 0x00000981, RPC-over-RDMA MSG xid 0x3cc3b52a NFSv3 READ Reply [latency 3917 µs]",
	} {
		assert.True(t, strings.HasSuffix(lineOf(t, out, frame), want), "frame %d: %s", frame, lineOf(t, out, frame))
	}
	// Other packets keep their length.
	assert.True(t, strings.HasSuffix(lineOf(t, out, 57), "length 0"), lineOf(t, out, 57))
}

// -z rpc,srt on the whole capture: every procedure's calls counted once.
// tshark 4.0.17's -z rpc,srt,100003,3 (../shared/pcaps-ulp/MANIFEST.md)
// gives GETATTR 9 calls, min 0.000679, max 0.019564, avg 0.003650 s, as
// here; it counts READ 23 times (it dissects each READ reply whose data
// came by a write chunk twice), where the wire and ibdump have 12.
func TestRPCSRT(t *testing.T) {
	whole := filepath.Join("..", "..", "..", "shared", "pcaps-ulp", "nfs_rdma_v3.pcap")
	if _, err := os.Stat(whole); err != nil {
		t.Skipf("%s not beside the checkout", whole)
	}
	out, errOut, code := ibdump(t, nil, "-q", "-r", whole, "-z", "rpc,srt")
	require.Zero(t, code, errOut)
	assert.Regexp(t, `100003 +3 +1 NFSv3 GETATTR +9 +0 +679\.000 +3649\.888 +[0-9.]+ +[0-9.]+ +[0-9.]+ +19564\.000`, out)
	assert.Regexp(t, `100003 +3 +6 NFSv3 READ +12 +0 `, out)
	assert.Regexp(t, `100227 +3 +1 NFSACLv3 GETACL +7 +0 `, out)

	// -Y selects the replies counted; -T json.
	out, errOut, code = ibdump(t, nil, "-q", "-r", whole, "-z", "rpc,srt", "-Y", "rpc.program == 100227", "-T", "json")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, `"name": "NFSACLv3 GETACL",`)
	assert.Contains(t, out, `"count": 7,`)
	assert.NotContains(t, out, "NFSv3")
}

// A capture that starts mid-stream: found by content, and, read from a
// file, decoded from its first packet (a look-ahead over the file's start
// finds the reply that reveals the protocol), as tshark's heuristic
// decodes it; from a pipe, from the reply on. -2 decodes it from its
// first packet too; -d names the QP; --disable-heuristic and
// --disable-protocol (under either name) turn it off.
func TestRPCRDMAMidstreamOptions(t *testing.T) {
	out, _, code := ibdump(t, nil, "-r", nfsMid)
	require.Zero(t, code)
	assert.Contains(t, lineOf(t, out, 2), "RPC-over-RDMA MSG xid 0x54c3b52a NFSv3 LOOKUP Call", "the look-ahead found it")
	assert.Contains(t, lineOf(t, out, 4), "RPC-over-RDMA MSG xid 0x54c3b52a NFSv3 LOOKUP Reply NFS3ERR_NOENT [latency 3067 µs]")
	pcap, err := os.ReadFile(nfsMid)
	require.NoError(t, err)
	out, _, code = ibdump(t, pcap, "-r", "-")
	require.Zero(t, code)
	assert.NotContains(t, lineOf(t, out, 2), "RPC", "read once: seen before its reply revealed the protocol")
	assert.Contains(t, lineOf(t, out, 4), "RPC-over-RDMA MSG xid 0x54c3b52a NFSv3 LOOKUP Reply NFS3ERR_NOENT [latency 3067 µs]")

	// "answered by 3" is the transport's: the RC ACK of the SEND; the
	// RPC reply is rpc.reqframe's.
	out, _, code = ibdump(t, nil, "-2", "-r", nfsMid)
	require.Zero(t, code)
	assert.Contains(t, lineOf(t, out, 2), "RPC-over-RDMA MSG xid 0x54c3b52a NFSv3 LOOKUP Call [answered by 3]")
	out, _, code = ibdump(t, nil, "-2", "-r", nfsMid, "-T", "fields", "-e", "rpc.reqframe", "-Y", "frame.number == 2")
	require.Zero(t, code)
	assert.Equal(t, "4\n", out)

	for _, off := range [][]string{{"--disable-heuristic", "rpcrdma"}, {"--disable-protocol", "rpcordma", "-d", "qp==0x11,rpcrdma"}} {
		out, _, code = ibdump(t, nil, append([]string{"-r", nfsMid}, off...)...)
		require.Zero(t, code)
		assert.NotContains(t, out, "RPC", "%v", off)
	}
	out, _, code = ibdump(t, nil, "-r", nfsMid, "--disable-heuristic", "rpcrdma", "-d", "qp==0x11,rpcordma")
	require.Zero(t, code)
	assert.Contains(t, lineOf(t, out, 2), "NFSv3 LOOKUP Call")

	for _, bad := range [][]string{{"-d", "qp==0x11,nfs"}, {"--disable-heuristic", "rpc"}} {
		_, errOut, code := ibdump(t, nil, append([]string{"-r", nfsMid}, bad...)...)
		assert.NotZero(t, code, "%v", bad)
		assert.NotEmpty(t, errOut, "%v", bad)
	}
}

// An NFSv4 COMPOUND reply whose operation failed says which and how:
// nfs_rdma_v41_midstream.pcap frame 29 answers frame 27's SEQUENCE PUTFH
// LOOKUP GETFH GETATTR with status 2 (NFS4ERR_NOENT, RFC 8881 §15.1) and
// the results of SEQUENCE, PUTFH and LOOKUP, the last NFS4ERR_NOENT;
// tshark, which matches no reply with its call in that capture (no CM
// exchange), shows the call's operations alike.
func TestNFS4ReplyLine(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", "../../pcaps/rxe/nfs_rdma_v41_midstream.pcap")
	require.Zero(t, code, errOut)
	assert.Contains(t, lineOf(t, out, 27), "xid 0xad4b249f NFSv4 COMPOUND Call SEQUENCE PUTFH LOOKUP GETFH GETATTR")
	assert.True(t, strings.HasSuffix(lineOf(t, out, 29), "xid 0xad4b249f NFSv4 COMPOUND Reply NFS4ERR_NOENT (LOOKUP) [latency 921 µs]"), lineOf(t, out, 29))
	out, errOut, code = ibdump(t, nil, "-r", "../../pcaps/rxe/nfs_rdma_v41_midstream.pcap", "-T", "fields", "-e", "nfs.opcode", "-e", "nfs.nfsstat4",
		"-Y", "frame.number == 29")
	require.Zero(t, code, errOut)
	assert.Equal(t, "53,22,15\t2,0,0,2\n", out)
}

// A capture whose snapshot length cut the reply chunk's WRITE before the
// RPC reply (nfs_rdma_v3_mount.pcap with frame 58, the WRITE of the
// GETACL reply's 184 bytes, kept to its headers and 8 bytes): the NOMSG
// of frame 59 still answers the call, with the latency of the whole
// capture's reply, and says its RPC message was not captured.
func TestRPCRDMANoMsgReplyCut(t *testing.T) {
	data, err := os.ReadFile(nfsMount)
	require.NoError(t, err)
	var out []byte
	out = append(out, data[:24]...)
	for off, n := 24, 1; off < len(data); n++ {
		incl := int(binary.LittleEndian.Uint32(data[off+8:]))
		rec := append([]byte(nil), data[off:off+16+incl]...)
		if n == 58 {
			keep := 14 + 20 + 8 + 12 + 16 + 8
			binary.LittleEndian.PutUint32(rec[8:], uint32(keep))
			rec = rec[:16+keep]
		}
		out = append(out, rec...)
		off += 16 + incl
	}
	path := filepath.Join(t.TempDir(), "cut.pcap")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	text, errOut, code := ibdump(t, nil, "-r", path)
	require.Zero(t, code, errOut)
	assert.True(t, strings.HasSuffix(lineOf(t, text, 59), "RPC-over-RDMA NOMSG xid 0x33c3b52a NFSACLv3 GETACL Reply (its RPC message not captured) [latency 3081 µs]"),
		lineOf(t, text, 59))
	text, errOut, code = ibdump(t, nil, "-q", "-r", path, "-z", "expert")
	require.Zero(t, code, errOut)
	assert.Contains(t, text, "RPC call with no reply at the end of the capture\n                                            frames 110\n", "only the last call, as in the whole capture")
}

// TestRPCResentCallLine: a resent NFS call's line names its procedure, as
// its first copy's does, without a latency (it starts nothing).
func TestRPCResentCallLine(t *testing.T) {
	data, err := os.ReadFile("../../pcaps/rxe/nfs_rdma_v3_mount.pcap")
	require.NoError(t, err)
	// Frame 32, the FSINFO call, sent twice: the pcap record is copied
	// after itself (a 24-byte file header, then 16-byte record headers).
	off := 24
	for frame := 1; frame < 32; frame++ {
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	}
	end := off + 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	resent := append(append(append([]byte(nil), data[:end]...), data[off:end]...), data[end:]...)
	path := filepath.Join(t.TempDir(), "resent.pcap")
	require.NoError(t, os.WriteFile(path, resent, 0o644))

	out, _, code := ibdump(t, nil, "-c", "33", path)
	require.Zero(t, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 33)
	assert.Contains(t, lines[31], "NFSv3 FSINFO Call")
	assert.Contains(t, lines[32], "NFSv3 FSINFO Call")
	assert.Contains(t, lines[32], "[retransmission of 32]")
}

// TestNFS4MainOpcode: nfs.main_opcode names what a COMPOUND is about as
// tshark 4.0 does, the operations of its lowest tier. The answers are
// tshark's on the NFSv4.1 captures (tshark -T fields -e nfs.opcode -e
// nfs.main_opcode), one per distinct operation list.
func TestNFS4MainOpcode(t *testing.T) {
	want := map[string]string{
		"53,22,9": "9", "53,22,3,9": "3", "53,22,18,10,3,9": "18", "53,22,15,10,9": "15", "42": "42",
		"53,58": "58", "53,24,52": "52", "53,24,10,9": "24,9", "53,22,9,4": "4", "53,22,38": "38",
		"53,22,26": "26", "43": "43", "53,22,25": "25",
		"44": "44", "53,22,28": "28", "53,22,32,22,29": "29", "53,22,38,9": "38", "53,22,6,10,9": "6", "57": "57",
		// A reply that ends at its failed LOOKUP, which tshark leaves
		// undecoded mid-stream: the tier rule's answer.
		"53,22,15": "15",
	}
	seen := map[string]bool{}
	for _, capture := range []string{"../../pcaps/rxe/nfs_rdma_v41_mount.pcap", "../../pcaps/rxe/nfs_rdma_v41_midstream.pcap"} {
		out, _, code := ibdump(t, nil, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,", "-e", "nfs.opcode", "-e", "nfs.main_opcode", capture)
		require.Zero(t, code)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			ops, main, _ := strings.Cut(line, "\t")
			if ops == "" {
				continue
			}
			w, ok := want[ops]
			require.True(t, ok, "%s: operations %s not in tshark's table", capture, ops)
			assert.Equal(t, w, main, "%s: operations %s", capture, ops)
			seen[ops] = true
		}
	}
	assert.Len(t, seen, len(want), "every operation list of the table occurs")
}
