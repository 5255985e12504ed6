package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTrapLines: the default line of a trap names it and its subject, with
// the values tshark 4.0.17 shows for the same frames of
// mgmt_traps_classportinfo.pcap (LIDADDR 0x2223 = 8739, PORTNO 0x29 = 41,
// KEY 0x3d3e3f40 ...).
func TestTrapLines(t *testing.T) {
	out, stderr, code := ibdump(t, nil, "../../pcaps/mgmt_traps_classportinfo.pcap")
	require.Zero(t, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 25)
	for _, tc := range []struct {
		frame int
		want  string
	}{
		{1, ", SubnTrap(Notice) lid 1 trap 64 (GID in service) gid 1617:1819:1a1b:1c1d:1e1f:2021:2223:2425 tid 0x0000000000005000, length 256"},
		{5, ", SubnTrap(Notice) lid 1 trap 68 (paths invalid) comp_mask 0x1c1d1e1f20212223 tid "},
		{7, ", SubnTrap(Notice) lid 1 trap 128 (link state change) lidaddr 8739 tid "},
		{8, ", SubnTrap(Notice) lid 1 trap 129 (local link integrity threshold) lidaddr 10024 port 41 tid "},
		{11, ", SubnTrap(Notice) lid 1 trap 144 (local changes) lidaddr 12337 capmask 0x34353637 tid "},
		{12, " trap 145 (system image GUID change) lidaddr 13108 sysimageguid 0x3738393a3b3c3d3e tid "},
		{13, " trap 256 (bad M_Key) lidaddr 13879 mkey 0x4243444546474849 method Unknown(0x3a) attr 0x3c3d tid "},
		{14, " trap 257 (bad P_Key) key 0x3d3e3f40 lidaddr1 14650 qp1 0x424344 lidaddr2 15164 qp2 0x464748 sl 4 tid "},
		{16, " trap 259 (bad P_Key at switch) pkey 0x4344 lidaddr1 16192 qp1 0x464748 lidaddr2 16706 qp2 0x4a4b4c sl 4 swlidaddr 28014 port 111 tid "},
		{17, ", SubnTrapResp(Notice) lid 2 trap 259 "},
		{18, ", SubnAdmReport(Notice) trap 64 (GID in service) gid 4647:4849:4a4b:4c4d:4e4f:5051:5253:5455 tid 0x0000000000006000"},
		{21, ", PerfGetResp(ClassPortInfo) tid 0x0000000000007000, length 256"},
		{23, ", SubnAdmGetResp(ClassPortInfo) tid 0x0000000000007001, length 256"},
		{24, ", SubnTrap(Notice) lid 1 vendor device 0x1003 tid 0x0000000000005100, length 256"},
		{25, ", SubnTrap(Notice) lid 1 vendor device 0x0080 tid 0x0000000000005101, length 256"},
	} {
		assert.Contains(t, lines[tc.frame-1], tc.want, "frame %d", tc.frame)
	}
}
