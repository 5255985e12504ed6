//go:build tshark

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTsharkResentCopies: on the loss captures, the packets resent after
// an ACK timeout or a NAK carry the upper-layer fields tshark 4.0 prints
// on them, value for value (-E occurrence=a). The divergences on copies
// (decode/ulp_resent_test.go) are left out: iscsi.request_frame and
// iscsi.time of the response that follows a resent command (tshark times
// it from the copy), and the resent NVMe CQE tshark cannot decode.
func TestTsharkResentCopies(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	cases := []struct {
		name   string
		pcap   string
		frames []string
		fields []string
	}{
		{"iSER SEND FIRST", iserLoss, []string{"476"}, []string{"iscsi.opcode", "iscsi.flags", "iscsi.initiatortasktag",
			"iscsi.scsicommand.expecteddatatransferlength", "iscsi.cmdsn", "iscsi.expstatsn", "iscsi.datasegmentlength",
			"iscsi.immediatedata", "iser.flags", "iser.write_stag", "iser.read_stag", "iser.read_base_offset"}},
		{"NVMe Property Set and Get", nvmeLoss, []string{"19", "85"}, []string{"nvme-rdma.cmd.qid", "nvme.fabrics.cmd.opc",
			"nvme.fabrics.cmd.cid", "nvme.fabrics.cmd.fctype", "nvme.fabrics.cmd.prop_get_set.offset",
			"nvme.fabrics.prop_get_set.cc", "nvme.fabrics.prop_get_set.cc.iosqes"}},
		{"NVMe RDMA WRITE after a NAK", nvmeLoss, []string{"247", "248"}, []string{"nvme.fabrics.cmd_pkt",
			"nvme-rdma.write_to_host_req", "nvme-rdma.write_to_host_prev"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-r", tt.pcap, "-Y", "frame.number == " + strings.Join(tt.frames, " || frame.number == "),
				"-T", "fields", "-E", "occurrence=a", "-e", "frame.number"}
			for _, f := range tt.fields {
				args = append(args, "-e", f)
			}
			want, err := exec.Command("tshark", append([]string{"-n"}, args...)...).Output()
			require.NoError(t, err)
			got, errOut, code := ibdump(t, nil, args...)
			require.Zero(t, code, errOut)
			assert.Len(t, strings.Split(strings.TrimSpace(string(want)), "\n"), len(tt.frames))
			for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				assert.NotContains(t, l, "\t\t", "tshark prints every field: %q", l)
			}
			assert.Equal(t, strings.ToLower(string(want)), strings.ToLower(got))
		})
	}
}
