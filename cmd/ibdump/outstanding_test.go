package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNVMeOutstanding: ibwire.nvme.outstanding is the queue depth after
// each command and completion. nvme_rdma_midstream.pcap's dd issues one 4
// KiB Read at a time (its MANIFEST: commands at frames 3, 12 ... 102, each
// answered before the next): 1 on every command, the first too (the
// look-ahead found the protocol at its completion), and 0 on every
// completion, frame 1's too (that of a Write sent before the excerpt).
func TestNVMeOutstanding(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", "../../pcaps/rxe/nvme_rdma_midstream.pcap", "-T", "fields",
		"-e", "ibwire.nvme.kind", "-e", "ibwire.nvme.outstanding", "-Y", "ibwire.nvme.outstanding")
	require.Zero(t, code, errOut)
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		counts[line]++
	}
	assert.Equal(t, map[string]int{"command\t1": 12, "completion\t0": 13}, counts)
}

// TestIOStatReadsAnalysisFields: -q with an io,stat column on a field the
// analysis fills (an upper layer's) runs the analysis; it used to run it
// only for ibwire.analysis.* and gave 0. On nvme_rdma_connect.pcap the
// admin queue holds an Asynchronous Event Request while it serves the
// next command: a depth of 2 in the first second.
func TestIOStatReadsAnalysisFields(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-q", "-r", "../../pcaps/rxe/nvme_rdma_connect.pcap", "-T", "json",
		"-z", "io,stat,1,MAX(ibwire.nvme.outstanding)ibwire.nvme.qid==0")
	require.Zero(t, code, errOut)
	var stat []struct {
		Columns []struct {
			Frames int     `json:"frames"`
			Value  float64 `json:"value"`
		} `json:"columns"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &stat), out)
	require.NotEmpty(t, stat, out)
	require.Len(t, stat[0].Columns, 1, out)
	assert.Positive(t, stat[0].Columns[0].Frames, out)
	assert.Equal(t, 2.0, stat[0].Columns[0].Value, out)
}

// TestSMB2Outstanding: ibwire.smb2.outstanding on pcaps/smbdirect.pcap,
// known from its craft script (pcaps/gen/smbdirect.go): eight request
// messages, each sent when nothing else waits, so 1 after each but the
// compound CREATE+READ (2); eight response messages, 0 after each but the
// WRITE's interim STATUS_PENDING, after which the WRITE still waits (1).
func TestSMB2Outstanding(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", smbdConv, "-T", "fields", "-e", "ibwire.smb2.outstanding", "-Y", "ibwire.smb2.outstanding")
	require.Zero(t, code, errOut)
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		counts[line]++
	}
	assert.Equal(t, map[string]int{"0": 7, "1": 8, "2": 1}, counts)
}
