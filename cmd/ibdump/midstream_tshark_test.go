//go:build tshark

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTsharkMidstream: on the captures that start mid-stream (no CM
// exchange), tshark 4.0 decodes no NVMe-oF and no iSER (it needs the CM
// REQ's port), where ibdump, in one pass from the file, decodes every
// command and matches every one whose completion or response is in the
// file (TestMidstreamLookahead shows it is what -2 does). SMB Direct
// tshark finds by its heuristic on every SEND, but it reads no SMB2 from
// a message longer than a packet, so the first request, a WRITE in SEND
// FIRST..LAST, is not decoded, and it times no response (smb2.time is
// empty on all three); ibdump decodes the WRITE at its FIRST and matches
// every response.
func TestTsharkMidstream(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	cases := map[string]struct {
		// tshark's and ibdump's field of a request's command and of a
		// response's latency (the same names but for SMB2, whose ibdump
		// fields are ibwire.smb2.*), and request, the value of the first
		// that makes a request.
		tsharkCmd, tsharkLat, ourCmd, ourLat string
		request                              string
		tshark, ours                         [2]int // requests, responses matched
	}{
		// MANIFEST.md: 12 Reads, all answered.
		"nvme": {"nvme.cmd.opc", "nvme.cmd_latency", "nvme.cmd.opc", "nvme.cmd_latency", "", [2]int{0, 0}, [2]int{12, 12}},
		// MANIFEST.md: 15 SCSI Commands, 14 Responses (the last WRITE's is
		// past the end).
		"iser": {"iscsi.opcode", "iscsi.time", "iscsi.opcode", "iscsi.time", "0x01", [2]int{0, 0}, [2]int{15, 14}},
		// The crafted WRITE, READ and CLOSE.
		"smb_direct": {"smb2.flags.response", "smb2.time", "ibwire.smb2.response", "ibwire.smb2.latency", "0", [2]int{2, 0}, [2]int{3, 3}},
	}
	count := func(out, request string) (n [2]int) {
		for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			c := strings.Split(l, "\t")
			require.Len(t, c, 2, l)
			if c[0] != "" && (request == "" || c[0] == request) {
				n[0]++
			}
			if c[1] != "" {
				n[1]++
			}
		}
		return n
	}
	for _, tt := range midstreamCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			c := cases[tt.name]
			out, err := exec.Command("tshark", "-r", tt.path, "-T", "fields", "-e", c.tsharkCmd, "-e", c.tsharkLat).Output()
			require.NoError(t, err)
			assert.Equal(t, c.tshark, count(string(out), c.request), "tshark")
			out2, errOut, code := ibdump(t, nil, "-r", tt.path, "-T", "fields", "-e", c.ourCmd, "-e", c.ourLat)
			require.Zero(t, code, errOut)
			assert.Equal(t, c.ours, count(out2, c.request), "ibdump")
			first := strings.Split(strings.Split(string(out), "\n")[tt.first-1], "\t")[0]
			assert.Empty(t, first, "tshark: the first command is not decoded")
		})
	}
}
