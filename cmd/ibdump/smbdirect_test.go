package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	smbdConv = "../../pcaps/smbdirect.pcap"
	smbdMid  = "../../pcaps/smbdirect_midstream.pcap"
)

// TestDifferentialTsharkSMBDirect compares every smb_direct.* field with
// tshark 4.0.17's decoding, checked in under testdata/tshark/smb_direct
// (made by testdata/tshark/regen.sh testdata/tshark/smb_direct/fields.txt
// testdata/tshark/smb_direct CAPTURE): tshark finds SMB Direct by a
// heuristic on every SEND, ibdump by the CM's port 445 or, mid-stream, by
// the SMB2 header in a Data Transfer; both find the same messages.
func TestDifferentialTsharkSMBDirect(t *testing.T) {
	compared := compareEveryTsv(t, "testdata/tshark/smb_direct/*.tsv")
	// 21 + 19 SMB Direct messages with 5 to 12 values each.
	assert.Greater(t, compared, 250)
	t.Logf("%d field values compared with tshark", compared)
}

// TestSMBDirectDefaultLine checks what the default line says of each
// message: the negotiate, the SMB2 commands with their MessageId, the
// response's status and latency, a compound, a fragmented response read at
// the SEND FIRST that holds its headers, an interim STATUS_PENDING.
func TestSMBDirectDefaultLine(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-r", smbdConv)
	require.Zero(t, code, errOut)
	for frame, want := range map[int]string{
		4:  "RC Send Only QP 0x000012 PSN 256 A, SMBDirect NegotiateRequest credits 255 max receive 8192",
		6:  "RC Send Only QP 0x000011 PSN 2048 A, SMBDirect NegotiateResponse v1.0 credits 255 granted 255 max r/w 1048576",
		10: "SMBDirect DataMessage credits 255/1 SMB2 NEGOTIATE Response id 0 STATUS_SUCCESS [latency 24 µs]",
		14: "SMB2 SESSION_SETUP Response id 1 STATUS_MORE_PROCESSING_REQUIRED [latency 24 µs]",
		26: "SMB2 CREATE Response id 4 STATUS_SUCCESS [latency 24 µs]; READ Response id 5 STATUS_SUCCESS [latency 24 µs], fragment, 4048 bytes to follow",
		35: "RC Send First QP 0x000011 PSN 2061, SMBDirect DataMessage credits 255/1, last fragment of 2, 12216 bytes",
	} {
		assert.True(t, strings.HasSuffix(lineOf(t, out, frame), want), "frame %d: %s", frame, lineOf(t, out, frame))
	}
	assert.Contains(t, out, "SMB2 WRITE Response id 6 STATUS_PENDING [latency 24 µs]")
	assert.Contains(t, out, "SMB2 WRITE Response id 6 STATUS_SUCCESS [latency 48 µs]")
	assert.Contains(t, out, "SMBDirect DataMessage credits 255/1 response requested, no data")
}

// TestSMBDirectMidstream: without the CM exchange and the negotiate,
// ibdump finds the connection by the SMB2 header in its first Data
// Transfer and matches every request with its response but the last (an
// ECHO the capture does not answer); the same commands as with the set-up.
func TestSMBDirectMidstream(t *testing.T) {
	count := func(capture string) (requests, matched map[string]int) {
		out, errOut, code := ibdump(t, nil, "-r", capture, "-T", "fields", "-E", "occurrence=a", "-Y", "ibwire.smb2",
			"-e", "ibwire.smb2.command", "-e", "ibwire.smb2.response", "-e", "ibwire.smb2.request_frame")
		require.Zero(t, code, errOut)
		requests, matched = map[string]int{}, map[string]int{}
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			cols := strings.Split(line, "\t")
			require.Len(t, cols, 3, line)
			cmds, resp := strings.Split(cols[0], ","), strings.Split(cols[1], ",")
			for i, c := range cmds {
				if resp[i] == "0" {
					requests[c]++
				}
			}
			if cols[2] != "" {
				for _, c := range cmds[:len(strings.Split(cols[2], ","))] {
					matched[c]++
				}
			}
		}
		return requests, matched
	}
	fullReq, fullMatched := count(smbdConv)
	midReq, midMatched := count(smbdMid)
	assert.Equal(t, map[string]int{"NEGOTIATE": 1, "SESSION_SETUP": 2, "TREE_CONNECT": 1, "CREATE": 1, "READ": 1, "WRITE": 1, "CLOSE": 1, "ECHO": 1}, fullReq)
	// Responses matched: the WRITE twice (its interim and final responses).
	assert.Equal(t, map[string]int{"NEGOTIATE": 1, "SESSION_SETUP": 2, "TREE_CONNECT": 1, "CREATE": 1, "READ": 1, "WRITE": 2, "CLOSE": 1}, fullMatched)
	delete(fullReq, "NEGOTIATE")
	delete(fullMatched, "NEGOTIATE")
	assert.Equal(t, fullReq, midReq)
	assert.Equal(t, fullMatched, midMatched)

	// --disable-heuristic smb_direct leaves the mid-stream capture undecoded.
	out, errOut, code := ibdump(t, nil, "-r", smbdMid, "--disable-heuristic", "smb_direct", "-Y", "smb_direct")
	require.Zero(t, code, errOut)
	assert.Empty(t, strings.TrimSpace(out))
}

// TestSMB2SRT: -z smb2,srt counts each request answered once, to its final
// response (the WRITE's interim STATUS_PENDING is not one: 48 µs, not
// 24), SESSION_SETUP's STATUS_MORE_PROCESSING_REQUIRED not an error (the
// next leg of the authentication), and the ECHO nothing answered not at
// all: a two-pass run (-2) flags its frame smb2_no_response.
func TestSMB2SRT(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-q", "-z", "smb2,srt", "-T", "json", "-r", smbdConv)
	require.Zero(t, code, errOut)
	var rows []struct {
		Command string  `json:"command"`
		Count   int     `json:"count"`
		Errors  int     `json:"errors"`
		Max     float64 `json:"max_us"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
	got := map[string][3]float64{}
	for _, r := range rows {
		got[r.Command] = [3]float64{float64(r.Count), float64(r.Errors), r.Max}
	}
	assert.Equal(t, map[string][3]float64{"NEGOTIATE": {1, 0, 24}, "SESSION_SETUP": {2, 0, 24}, "TREE_CONNECT": {1, 0, 24},
		"CREATE": {1, 0, 24}, "READ": {1, 0, 24}, "WRITE": {1, 0, 48}, "CLOSE": {1, 0, 24}}, got)
	out, errOut, code = ibdump(t, nil, "-2", "-r", smbdConv, "-Y", "ibwire.analysis.smb2_no_response", "-T", "fields", "-e", "frame.number", "-e", "ibwire.smb2.command")
	require.Zero(t, code, errOut)
	assert.Equal(t, "54\tECHO\n", out)
}
