package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nfs41Mount = "../../pcaps/rxe/nfs_rdma_v41_mount.pcap"
	nfs41Mid   = "../../pcaps/rxe/nfs_rdma_v41_midstream.pcap"
	nvmeLoss   = "../../pcaps/rxe/nvme_rdma_loss.pcap"
	nfs3Loss   = "../../pcaps/rxe/nfs_rdma_v3_loss.pcap"
	iserLoss   = "../../pcaps/rxe/iser_loss.pcap"
)

// countLines runs ibdump with args and counts its output lines, each once
// per distinct line when unique (a call by its XID, a command by its QP
// and PSN).
func countLines(t *testing.T, args ...string) map[string]int {
	t.Helper()
	out, errOut, code := ibdump(t, nil, args...)
	require.Zero(t, code, errOut)
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		got[l]++
	}
	return got
}

// byColumns counts the lines of lines by their columns from the first one
// on (the first one being what makes a line unique).
func byColumns(lines map[string]int) map[string]int {
	got := map[string]int{}
	for l := range lines {
		_, rest, _ := strings.Cut(l, "\t")
		got[rest]++
	}
	return got
}

// The NFSv4.1 calls, one per XID, by procedure and COMPOUND operations,
// are tshark 4.0.17's (tshark -r F -Y 'rpc.msgtyp == 0' -T fields -E
// occurrence=a -E aggregator=' ' -e rpc.xid -e rpc.procedure -e
// nfs.opcode, pcaps/rxe/MANIFEST.md), every operation of every COMPOUND
// (OPEN followed by GETFH ACCESS GETATTR, CREATE by GETFH GETATTR).
func TestNFS41CallsMatchTshark(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want map[string]int
	}{
		{"mount", []string{"-r", nfs41Mount}, map[string]int{
			"0\t": 1, "1\t42": 2, "1\t43": 1, "1\t53 58": 1, "1\t53 24 52": 1, "1\t53 24 10 9": 1,
			"1\t53 22 9": 13, "1\t53 22 3 9": 3, "1\t53 22 18 10 3 9": 2, "1\t53 22 15 10 9": 2,
			"1\t53 22 9 4": 1, "1\t53 22 38": 1, "1\t53 22 26": 1, "1\t53 22 25": 1}},
		// Mid-stream: the second pass names the calls before the first
		// reply that revealed the protocol.
		{"midstream", []string{"-2", "-r", nfs41Mid}, map[string]int{
			"1\t53 22 9": 6, "1\t53 22 26": 3, "1\t53 22 9 4": 2, "1\t53 22 6 10 9": 2, "1\t57": 1, "1\t44": 1,
			"1\t53 22 38 9": 1, "1\t53 22 32 22 29": 1, "1\t53 22 3 9": 1, "1\t53 22 28": 1, "1\t53 22 18 10 3 9": 1,
			"1\t53 22 15 10 9": 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := countLines(t, append(tt.args, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator= ",
				"-e", "rpc.xid", "-e", "rpc.procedure", "-e", "nfs.opcode", "-Y", "rpc.msgtyp == 0")...)
			for l, n := range calls {
				assert.Equal(t, 1, n, "call %q decoded twice", l)
			}
			assert.Equal(t, tt.want, byColumns(calls))
			replies := countLines(t, append(tt.args, "-T", "fields", "-e", "rpc.xid", "-Y", "rpc.msgtyp == 1")...)
			assert.Len(t, replies, len(calls), "every call answered once")
		})
	}

	// -z rpc,srt counts each COMPOUND once: tshark 4.0.17's -z
	// rpc,srt,100003,4 says 31, as it dissects the READ reply of frame
	// 128 (its data came by a write chunk) twice.
	out, errOut, code := ibdump(t, nil, "-q", "-r", nfs41Mount, "-z", "rpc,srt")
	require.Zero(t, code, errOut)
	assert.Regexp(t, `100003 +4 +0 NFSv4 NULL +1 +0 +6824\.000 `, out)
	assert.Regexp(t, `100003 +4 +1 NFSv4 COMPOUND +30 +0 +584\.000 `, out)
}

// nvme_rdma_loss.pcap's commands, one per destination QP and PSN, by
// queue and command (pcaps/rxe/MANIFEST.md: tshark 4.0.17 for those in one
// packet, by hand from the SEND FIRST packets for the 35 Writes and the I/O
// queue's Connect), counted by the analysis' match (ibwire.nvme.cid); and
// the packets resent after an ACK timeout, which show their command again,
// as tshark does, and count nowhere.
func TestNVMeLossCommandsMatchTshark(t *testing.T) {
	cmds := countLines(t, "-r", nvmeLoss, "-T", "fields", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn",
		"-e", "nvme-rdma.cmd.qid", "-e", "nvme.cmd.opc", "-e", "nvme.fabrics.cmd.fctype",
		"-Y", "(nvme.cmd.opc || nvme.fabrics.cmd.fctype) && ibwire.nvme.cid")
	byCmd := map[string]int{}
	for l, n := range cmds {
		assert.Equal(t, 1, n, "command %q decoded twice", l)
		c := strings.Split(l, "\t")
		require.Len(t, c, 5, l)
		byCmd[strings.Join(c[2:], " ")]++
	}
	assert.Equal(t, map[string]int{
		"0x0000  0x00": 5, "0x0000  0x01": 2, "0x0000  0x04": 11, "0x0000 0x02 ": 6, "0x0000 0x06 ": 10,
		"0x0000 0x09 ": 3, "0x0000 0x0c ": 2, "0x0000 0x18 ": 2,
		"0x0001  0x01": 1, "0x0001 0x01 ": 35, "0x0001 0x02 ": 3,
	}, byCmd)

	resent := countLines(t, "-r", nvmeLoss, "-T", "fields", "-e", "frame.number", "-e", "ibwire.analysis.retransmission",
		"-e", "nvme.fabrics.cmd.fctype", "-e", "ibwire.nvme.cid", "-Y", "frame.number == 19 || frame.number == 85")
	assert.Equal(t, map[string]int{"19\t1\t0x00\t": 1, "85\t1\t0x04\t": 1}, resent)

	// -z nvme,srt: each answered command once; the 2 Asynchronous Event
	// Requests are never answered.
	out, errOut, code := ibdump(t, nil, "-q", "-r", nvmeLoss, "-z", "nvme,srt", "-T", "json")
	require.Zero(t, code, errOut)
	var rows []struct {
		Queue, Command string
		Count          int
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	got := map[string]int{}
	for _, r := range rows {
		got[r.Queue+" "+r.Command] = r.Count
	}
	assert.Equal(t, map[string]int{"admin Get Log Page": 6, "admin Identify": 10, "admin Set Features": 3,
		"admin Keep Alive": 2, "admin Fabrics Property Set": 5, "admin Fabrics Connect": 2,
		"admin Fabrics Property Get": 11, "I/O Write": 35, "I/O Read": 3, "I/O Fabrics Connect": 1}, got)
}

// nfs_rdma_v3_loss.pcap: the 19 calls over RDMA, one per XID, by program
// and procedure, are tshark 4.0.17's; all are answered in ibdump, the
// GETACL whose reply chunk's WRITE was lost on frame 61, the copy the
// client took (tshark shows 18 replies: none for it).
func TestNFS3LossCallsMatchTshark(t *testing.T) {
	calls := countLines(t, "-r", nfs3Loss, "-T", "fields", "-e", "rpc.xid", "-e", "rpc.program", "-e", "rpc.procedure",
		"-Y", "rpc.msgtyp == 0")
	for l, n := range calls {
		assert.Equal(t, 1, n, "call %q decoded twice", l)
	}
	assert.Equal(t, map[string]int{"100003\t0": 1, "100003\t1": 3, "100003\t4": 3, "100003\t19": 2, "100003\t3": 2,
		"100003\t20": 1, "100003\t17": 1, "100003\t6": 1, "100003\t8": 1, "100227\t0": 1, "100227\t1": 3},
		byColumns(calls))
	out, errOut, code := ibdump(t, nil, "-q", "-r", nfs3Loss, "-z", "rpc,srt")
	require.Zero(t, code, errOut)
	assert.Regexp(t, `100227 +3 +1 NFSACLv3 GETACL +3 +0 `, out)
	reply := countLines(t, "-r", nfs3Loss, "-T", "fields", "-e", "frame.number", "-Y", "rpc.xid == 0xdbb65956 && rpc.msgtyp == 1")
	assert.Equal(t, map[string]int{"61": 1}, reply)
}

// iser_loss.pcap's iSCSI PDUs, one per destination QP and PSN, by opcode
// and SCSI command, are tshark 4.0.17's (pcaps/rxe/MANIFEST.md), counted
// by the analysis' match (ibwire.iscsi.command); the SEND FIRST resent
// after an ACK timeout (frame 476) shows its PDU again, as tshark does,
// and counts nowhere.
func TestISERLossPDUsMatchTshark(t *testing.T) {
	pdus := countLines(t, "-r", iserLoss, "-T", "fields", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn",
		"-e", "iscsi.opcode", "-e", "ibwire.iscsi.command", "-Y", "iscsi.opcode && ibwire.iscsi.command")
	got := map[string]int{}
	for l, n := range pdus {
		assert.Equal(t, 1, n, "PDU %q decoded twice", l)
		c := strings.Split(l, "\t")
		require.Len(t, c, 4, l)
		got[c[2]+" "+c[3]]++
	}
	want := map[string]int{"0x03 Login Command": 2, "0x23 Login Command": 2, "0x04 Text Command": 1, "0x24 Text Command": 1}
	for cmd, n := range map[string]int{"INQUIRY": 4, "TEST UNIT READY": 2, "SERVICE ACTION IN(16)": 2, "MODE SENSE(6)": 6,
		"REPORT LUNS": 1, "MAINTENANCE IN": 1, "READ(10)": 3, "WRITE(10)": 43} {
		want["0x01 "+cmd] = n
		want["0x21 "+cmd] = n
	}
	want["0x21 WRITE(10)"] = 42 // the last one's response is past the end
	assert.Equal(t, want, got)
	resent := countLines(t, "-r", iserLoss, "-T", "fields", "-e", "ibwire.analysis.retransmission", "-e", "iscsi.opcode",
		"-e", "iscsi.initiatortasktag", "-e", "ibwire.iscsi.command", "-Y", "frame.number == 476")
	assert.Equal(t, map[string]int{"1\t0x01\t0x3c000000\t": 1}, resent)
}
