package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nvmeConnect = "../../pcaps/rxe/nvme_rdma_connect.pcap"
	nvmeMid     = "../../pcaps/rxe/nvme_rdma_midstream.pcap"
)

// lineOf returns the output line of frame n: one line per packet, in order.
func lineOf(t *testing.T, out string, n int) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	require.Greater(t, len(lines), n-1)
	return lines[n-1]
}

// The default line names the NVMe-oF command and its completion; the
// values are tshark 4.0.17's for frames 226 and 232 of the excerpt
// (nvme.cmd.opc 0x02, nvme.cmd.cid 0x0041, nvme.cmd.nsid 1, nvme.cmd.slba
// 0, nvme.cmd.nlb 8, nvme-rdma.cmd.qid 1; nvme.cqe.cid 0x0041, status 0,
// nvme.cmd_latency 1.28 ms).
func TestNVMeDefaultLine(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", nvmeConnect)
	require.Zero(t, code, errOut)
	assert.True(t, strings.HasSuffix(lineOf(t, out, 226), "RC Send Only QP 0x000013 PSN 15651280 A, NVMe Read qid 1 cid 65 nsid 1 lba 0 len 8"), lineOf(t, out, 226))
	assert.True(t, strings.HasSuffix(lineOf(t, out, 232), ", IETH rkey 0x00004408, NVMe CQE cid 65 Success [Read, latency 1280 µs]"), lineOf(t, out, 232))
	// A Connect whose capsule spans two packets, named on its last.
	assert.Contains(t, lineOf(t, out, 171), "RC Send Last QP 0x000013 PSN 15651279 A, NVMe Fabrics Connect qid 1 cid 0 queue 1 sqsize 128 subnqn nqn.2024-01.lab.ulplab:nvme-ram0")
	// Other packets keep their length.
	assert.True(t, strings.HasSuffix(lineOf(t, out, 228), "length 1024"), lineOf(t, out, 228))
}

func TestNVMeSRT(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-q", "-r", nvmeConnect, "-z", "nvme,srt")
	require.Zero(t, code, errOut)
	// tshark's nvme.cmd_latency of the three Reads: 1.28, 0.729, 0.495 ms.
	assert.Regexp(t, `I/O +0x2 Read +3 +0 +495\.000 +834\.666 +729\.000 +1280\.000 +1280\.000 +1280\.000`, out)
	// Identify: tshark shows 10, all answered; the Asynchronous Event
	// Requests have no completion and no row.
	assert.Regexp(t, `admin +0x6 Identify +10 +0 `, out)
	assert.NotContains(t, out, "Asynchronous Event")

	// -Y selects the completions counted, as in tshark.
	out, errOut, code = ibdump(t, nil, "-q", "-r", nvmeConnect, "-z", "nvme,srt", "-Y", "nvme-rdma.cmd.qid == 1")
	require.Zero(t, code, errOut)
	assert.Regexp(t, `I/O +0x2 Read +3 `, out)
	assert.NotContains(t, out, "Identify")

	out, errOut, code = ibdump(t, nil, "-q", "-r", nvmeMid, "-z", "nvme,srt", "-T", "json")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, `"command": "Read",`)
	assert.Contains(t, out, `"count": 12,`)
}

// A capture that starts mid-stream: found by content; read from a file,
// decoded from its first packet (a look-ahead over the file's start finds
// the completion that reveals the protocol), as -2 does; from a pipe,
// from that completion on; -d names the QP; --disable-heuristic and
// --disable-protocol turn it off.
func TestNVMeMidstreamOptions(t *testing.T) {
	// All 12 Reads (frames 3, 12 ... 102) and the completion of a Write
	// sent before the excerpt (frame 1).
	for _, args := range [][]string{{"-r", nvmeMid}, {"-2", "-r", nvmeMid}} {
		out, _, code := ibdump(t, nil, args...)
		require.Zero(t, code)
		assert.Equal(t, 12, strings.Count(out, "NVMe Read qid 1 cid "), "%v", args)
		assert.Contains(t, lineOf(t, out, 3), "NVMe Read qid 1 cid 16452 nsid 1 lba 0 len 8", "%v", args)
		assert.Contains(t, lineOf(t, out, 1), "NVMe CQE cid 16451 Success", "%v", args)
		assert.Contains(t, lineOf(t, out, 10), "NVMe CQE cid 16452 Success [Read, latency 2957 µs]", "%v", args)
	}
	pcap, err := os.ReadFile(nvmeMid)
	require.NoError(t, err)
	out, _, code := ibdump(t, pcap, "-r", "-")
	require.Zero(t, code)
	assert.NotContains(t, lineOf(t, out, 3), "NVMe", "read once: seen before its completion revealed the protocol")
	assert.Contains(t, lineOf(t, out, 10), "NVMe CQE cid 16452 Success [Read, latency 2957 µs]")
	assert.Contains(t, lineOf(t, out, 12), "NVMe Read qid 1 cid 16453 nsid 1")

	out, _, code = ibdump(t, nil, "-r", nvmeMid, "--disable-heuristic", "nvme-rdma")
	require.Zero(t, code)
	assert.NotContains(t, out, "NVMe")

	out, _, code = ibdump(t, nil, "-r", nvmeMid, "--disable-heuristic", "nvme-rdma", "-d", "qp==0x13,nvme-rdma")
	require.Zero(t, code)
	assert.Contains(t, lineOf(t, out, 1), "NVMe CQE cid ")
	assert.Contains(t, lineOf(t, out, 3), "NVMe Read qid 1 cid 16452 nsid 1")

	out, _, code = ibdump(t, nil, "-r", nvmeConnect, "--disable-protocol", "nvme-rdma", "-d", "qp==0x13,nvme-rdma")
	require.Zero(t, code)
	assert.NotContains(t, out, "NVMe")

	for _, bad := range [][]string{{"-d", "qp==0x13,sdp"}, {"-d", "qp==zz,nvme-rdma"}, {"--disable-protocol", "sdp"}} {
		_, errOut, code := ibdump(t, nil, append([]string{"-r", nvmeMid}, bad...)...)
		assert.NotZero(t, code, "%v", bad)
		assert.NotEmpty(t, errOut, "%v", bad)
	}
}
