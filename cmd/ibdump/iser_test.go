package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	iserLogin = "../../pcaps/rxe/iser_login.pcap"
	iserMid   = "../../pcaps/rxe/iser_midstream.pcap"
)

// The default line names the iSCSI PDU, its task and its latency; the
// values are tshark 4.0.17's for frames 116 and 122 (iscsi.opcode 0x01,
// iscsi.initiatortasktag 0x11000000, READ(10) LBA 0 length 8, iser.read_stag
// 0x0000167d; iscsi.opcode 0x21, status 0x00, iscsi.time 0.001737000).
func TestISERDefaultLine(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", iserLogin)
	require.Zero(t, code, errOut)
	assert.True(t, strings.HasSuffix(lineOf(t, out, 116), "RC Send Only QP 0x000012 PSN 9164809 A, iSER SCSI Command itt 0x11000000 READ(10) lba 0 blocks 8 length 4096, read stag 0x0000167d"), lineOf(t, out, 116))
	assert.True(t, strings.HasSuffix(lineOf(t, out, 122), ", IETH rkey 0x0000167d, iSER SCSI Response itt 0x11000000 Good [READ(10), latency 1737 µs]"), lineOf(t, out, 122))
	// The READ's data, RDMA WRITEs to its Read STag, name the task.
	assert.True(t, strings.HasSuffix(lineOf(t, out, 118), "length 1024, iSCSI READ(10) itt 0x11000000 data"), lineOf(t, out, 118))
	assert.Contains(t, lineOf(t, out, 6), "iSER Login Command itt 0x00000000 CSG 1 NSG 3")
	assert.Contains(t, lineOf(t, out, 80), "iSER SCSI Response itt 0x0a000000 Check Condition [MAINTENANCE IN, latency 1220 µs]")
}

func TestISCSISRT(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-q", "-r", iserLogin, "-z", "iscsi,srt")
	require.Zero(t, code, errOut)
	// tshark's iscsi.time of the three READ(10)s: 1.143, 1.418, 1.737 ms.
	assert.Regexp(t, `0x1 +0x28 READ\(10\) +3 +0 +1143\.000 +1432\.666 +1418\.000 +1737\.000 +1737\.000 +1737\.000`, out)
	assert.Regexp(t, `0x3 +- Login Command +2 +0 `, out)
	assert.Regexp(t, `MAINTENANCE IN +1 +1 `, out)

	// -Y selects the responses counted, as in tshark.
	out, errOut, code = ibdump(t, nil, "-q", "-r", iserLogin, "-z", "iser,srt", "-Y", "iscsi.scsiresponse.status == 0x02")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "MAINTENANCE IN")
	assert.NotContains(t, out, "READ(10)")

	out, errOut, code = ibdump(t, nil, "-q", "-r", iserMid, "-z", "iscsi,srt", "-T", "json")
	require.Zero(t, code, errOut)
	assert.Contains(t, out, `"command": "READ(10)",`)
	assert.Contains(t, out, `"count": 13,`)
}

// A capture that starts mid-stream: found by content; read from a file,
// decoded from its first packet (a look-ahead over the file's start finds
// the response that reveals the protocol), as -2 does; from a pipe, from
// that response on; -d names the QP; --disable-heuristic and
// --disable-protocol turn it off. tshark, lacking the CM REQ, decodes no
// iSER in it.
func TestISERMidstreamOptions(t *testing.T) {
	count := func(out string) int { return strings.Count(out, "iSER SCSI Command itt ") }
	for _, args := range [][]string{{"-r", iserMid}, {"-2", "-r", iserMid}} {
		out, _, code := ibdump(t, nil, args...)
		require.Zero(t, code)
		assert.Equal(t, 15, count(out), "tshark's count over the same frames of the capture with the CM: %v", args)
		assert.Contains(t, lineOf(t, out, 3), "iSER SCSI Command itt 0x09000000 READ(10) lba 920 blocks 8 length 4096", "%v", args)
	}
	pcap, err := os.ReadFile(iserMid)
	require.NoError(t, err)
	out, _, code := ibdump(t, pcap, "-r", "-")
	require.Zero(t, code)
	assert.Equal(t, 14, count(out))
	assert.NotContains(t, lineOf(t, out, 3), "iSER", "read once: seen before its response revealed the protocol")
	out, _, code = ibdump(t, nil, "-r", iserMid, "-d", "qp==0x12,iser", "--disable-heuristic", "iser")
	require.Zero(t, code)
	assert.Equal(t, 15, count(out))
	for _, off := range [][]string{{"--disable-heuristic", "iser"}, {"--disable-protocol", "iser", "-d", "qp==0x12,iser"}} {
		out, _, code = ibdump(t, nil, append([]string{"-r", iserMid}, off...)...)
		require.Zero(t, code)
		assert.NotContains(t, out, "iSER", "%v", off)
	}
}

// With two passes a SCSI Command names its response, as tshark -2 does:
// the same 33 iscsi.response_frame values (tshark 4.0.17 -2 -T fields,
// e.g. 23 -> 26, 29 -> 32).
func TestISERResponseFrame(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-2", "-r", iserLogin, "-Y", "iscsi.response_frame", "-T", "fields", "-e", "frame.number", "-e", "iscsi.response_frame")
	require.Zero(t, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, 33)
	assert.Equal(t, "23\t26", lines[0])
	assert.Equal(t, "29\t32", lines[1])
}
