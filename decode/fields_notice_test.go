package decode_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/decode"
)

const trapsFile = "../pcaps/mgmt_traps_classportinfo.pcap"

// TestNoticeAndClassPortInfoAsTshark: the infiniband.notice.*,
// infiniband.trap.* and infiniband.classportinfo.* values of
// pcaps/mgmt_traps_classportinfo.pcap are tshark 4.0.17's (tshark -T
// fields -E occurrence=a, the file read as user DLT 147), "" where tshark
// has no such field in the frame. Trap 259's details are left out: tshark
// stops at its DataValid (layers' TestTrapDetailsAsTshark has them).
func TestNoticeAndClassPortInfoAsTshark(t *testing.T) {
	tests := []struct {
		name  string
		frame int
		want  map[string]string
	}{
		{"SubnTrap trap 64", 1, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0040",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x0001",
			"infiniband.notice.datadetails":          "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445",
			"infiniband.trap.gidaddr":                "1617:1819:1a1b:1c1d:1e1f:2021:2223:2425",
			"infiniband.trap.lidaddr":                "",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 68", 5, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0044",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x0005",
			"infiniband.notice.datadetails":          "1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f5051",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.comp_mask":              "0x1c1d1e1f20212223",
			"infiniband.trap.wait_for_repath":        "0x00",
			"infiniband.trap.lidaddr":                "",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 128", 7, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x01",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0080",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x0007",
			"infiniband.notice.datadetails":          "22232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f5051525354555657",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "0x2223",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 129", 8, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x01",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0081",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x01",
			"infiniband.notice.noticecount":          "0x0008",
			"infiniband.notice.datadetails":          "25262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "0x2728",
			"infiniband.trap.portno":                 "0x29",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 144", 11, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0090",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x000b",
			"infiniband.notice.datadetails":          "2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "0x3031",
			"infiniband.trap.otherlocalchanges":      "0x01",
			"infiniband.trap.capabilitymask":         "0x34353637",
			"infiniband.trap.linkspeecenabledchange": "0x00",
			"infiniband.trap.linkwidthenabledchange": "0x00",
			"infiniband.trap.nodedescriptionchange":  "0x01",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 145", 12, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0091",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x01",
			"infiniband.notice.noticecount":          "0x000c",
			"infiniband.notice.datadetails":          "3132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263646566",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "0x3334",
			"infiniband.trap.systemimageguid":        "0x3738393a3b3c3d3e",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 256", 13, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x02",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0100",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x000d",
			"infiniband.notice.datadetails":          "3435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263646566676869",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "0x3637",
			"infiniband.trap.drslid":                 "0x3839",
			"infiniband.trap.method":                 "0x3a",
			"infiniband.trap.attributeid":            "0x3c3d",
			"infiniband.trap.attributemodifier":      "0x3e3f4041",
			"infiniband.trap.mkey":                   "0x4243444546474849",
			"infiniband.trap.drnotice":               "0x00",
			"infiniband.trap.drpathtruncated":        "0x01",
			"infiniband.trap.drhopcount":             "0x0b",
			"infiniband.trap.drnoticereturnpath":     "4c4d4e4f505152535455565758595a5b5c5d5e5f60616263646566676869",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 257", 14, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x02",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0101",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x01",
			"infiniband.notice.noticecount":          "0x000e",
			"infiniband.notice.datadetails":          "3738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c",
			"infiniband.trap.gidaddr":                "",
			"infiniband.trap.lidaddr":                "",
			"infiniband.trap.lidaddr1":               "0x393a",
			"infiniband.trap.lidaddr2":               "0x3b3c",
			"infiniband.trap.key":                    "0x3d3e3f40",
			"infiniband.trap.sl":                     "0x04",
			"infiniband.trap.qp1":                    "0x424344",
			"infiniband.trap.qp2":                    "0x464748",
			"infiniband.trap.gidaddr1":               "494a:4b4c:4d4e:4f50:5152:5354:5556:5758",
			"infiniband.trap.gidaddr2":               "595a:5b5c:5d5e:5f60:6162:6364:6566:6768",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		{"SubnTrap trap 259 (tshark stops at DataValid)", 16, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x02",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0103",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x01",
			"infiniband.notice.noticecount":          "0x0010",
			"infiniband.classportinfo":               "",
		}},
		{"SubnAdmReport(Notice)", 18, map[string]string{
			"infiniband.sa.subnetadmindata":          "",
			"infiniband.classportinfo.baseversion":   "",
			"infiniband.notice.isgeneric":            "0x01",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x000002",
			"infiniband.notice.trapnumberdeviceid":   "0x0040",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x0011",
			"infiniband.notice.datadetails":          "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f707172737475",
			"infiniband.trap.gidaddr":                "4647:4849:4a4b:4c4d:4e4f:5051:5253:5455",
			"infiniband.trap.lidaddr":                "",
			"infiniband.trap.datavalid":              "",
			"infiniband.trap.swlidaddr":              "",
			"infiniband.classportinfo":               "",
		}},
		// Vendor notices: tshark reads DataDetails by the DeviceID whatever
		// IsGeneric says, so DeviceID 0x0080 shows trap 128's LIDADDR.
		{"SubnTrap(Notice) vendor device 0x1003", 24, map[string]string{
			"infiniband.notice.isgeneric":            "0x00",
			"infiniband.notice.type":                 "0x04",
			"infiniband.notice.producertypevendorid": "0x0002c9",
			"infiniband.notice.trapnumberdeviceid":   "0x1003",
			"infiniband.notice.issuerlid":            "0x0002",
			"infiniband.notice.noticetoggle":         "0x00",
			"infiniband.notice.noticecount":          "0x0030",
			"infiniband.notice.datadetails":          "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5",
			"infiniband.trap.lidaddr":                "",
			"infiniband.trap.gidaddr":                "",
		}},
		{"SubnTrap(Notice) vendor device 0x0080", 25, map[string]string{
			"infiniband.notice.isgeneric":            "0x00",
			"infiniband.notice.producertypevendorid": "0x0002c9",
			"infiniband.notice.trapnumberdeviceid":   "0x0080",
			"infiniband.notice.noticecount":          "0x0031",
			"infiniband.notice.datadetails":          "b0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5",
			"infiniband.trap.lidaddr":                "0xb0b1",
			"infiniband.trap.gidaddr":                "",
		}},
		{"PerfGetResp(ClassPortInfo)", 21, map[string]string{
			"infiniband.sa.subnetadmindata":            "",
			"infiniband.classportinfo.baseversion":     "0x21",
			"infiniband.classportinfo.classversion":    "0x22",
			"infiniband.classportinfo.capabilitymask":  "0x2324",
			"infiniband.classportinfo.capabilitymask2": "0x01293139",
			"infiniband.classportinfo.resptimevalue":   "0x08",
			"infiniband.classportinfo.redirectgid":     "292a:2b2c:2d2e:2f30:3132:3334:3536:3738",
			"infiniband.classportinfo.redirecttc":      "0x39",
			"infiniband.classportinfo.redirectsl":      "0x03",
			"infiniband.classportinfo.redirectfl":      "0x0a3b3c",
			"infiniband.classportinfo.redirectlid":     "0x3d3e",
			"infiniband.classportinfo.redirectpkey":    "0x3f40",
			"infiniband.classportinfo.reserved":        "0x41,0x61",
			"infiniband.classportinfo.redirectqp":      "0x424344",
			"infiniband.classportinfo.redirectqkey":    "0x45464748",
			"infiniband.classportinfo.trapgid":         "494a:4b4c:4d4e:4f50:5152:5354:5556:5758",
			"infiniband.classportinfo.traptc":          "0x59",
			"infiniband.classportinfo.trapsl":          "0x05",
			"infiniband.classportinfo.trapfl":          "0x0a5b5c",
			"infiniband.classportinfo.traplid":         "0x5d5e",
			"infiniband.classportinfo.trappkey":        "0x5f60",
			"infiniband.classportinfo.trapqp":          "0x626364",
			"infiniband.classportinfo.trapqkey":        "0x65666768",
			"infiniband.notice.isgeneric":              "",
			"infiniband.trap.gidaddr":                  "",
			"infiniband.trap.lidaddr":                  "",
			"infiniband.trap.datavalid":                "",
			"infiniband.trap.swlidaddr":                "",
			"infiniband.classportinfo":                 "1",
		}},
		{"SubnAdmGet(ClassPortInfo)", 22, map[string]string{
			"infiniband.sa.subnetadmindata":            "",
			"infiniband.classportinfo.baseversion":     "0x00",
			"infiniband.classportinfo.classversion":    "0x00",
			"infiniband.classportinfo.capabilitymask":  "0x0000",
			"infiniband.classportinfo.capabilitymask2": "0x00000000",
			"infiniband.classportinfo.resptimevalue":   "0x00",
			"infiniband.classportinfo.redirectgid":     "::",
			"infiniband.classportinfo.redirecttc":      "0x00",
			"infiniband.classportinfo.redirectsl":      "0x00",
			"infiniband.classportinfo.redirectfl":      "0x000000",
			"infiniband.classportinfo.redirectlid":     "0x0000",
			"infiniband.classportinfo.redirectpkey":    "0x0000",
			"infiniband.classportinfo.reserved":        "0x00,0x00",
			"infiniband.classportinfo.redirectqp":      "0x000000",
			"infiniband.classportinfo.redirectqkey":    "0x00000000",
			"infiniband.classportinfo.trapgid":         "::",
			"infiniband.classportinfo.traptc":          "0x00",
			"infiniband.classportinfo.trapsl":          "0x00",
			"infiniband.classportinfo.trapfl":          "0x000000",
			"infiniband.classportinfo.traplid":         "0x0000",
			"infiniband.classportinfo.trappkey":        "0x0000",
			"infiniband.classportinfo.trapqp":          "0x000000",
			"infiniband.classportinfo.trapqkey":        "0x00000000",
			"infiniband.notice.isgeneric":              "",
			"infiniband.trap.gidaddr":                  "",
			"infiniband.trap.lidaddr":                  "",
			"infiniband.trap.datavalid":                "",
			"infiniband.trap.swlidaddr":                "",
			"infiniband.classportinfo":                 "",
		}},
		{"SubnAdmGetResp(ClassPortInfo)", 23, map[string]string{
			"infiniband.sa.subnetadmindata":            "",
			"infiniband.classportinfo.baseversion":     "0x71",
			"infiniband.classportinfo.classversion":    "0x72",
			"infiniband.classportinfo.capabilitymask":  "0x7374",
			"infiniband.classportinfo.capabilitymask2": "0x03abb3bb",
			"infiniband.classportinfo.resptimevalue":   "0x18",
			"infiniband.classportinfo.redirectgid":     "797a:7b7c:7d7e:7f80:8182:8384:8586:8788",
			"infiniband.classportinfo.redirecttc":      "0x89",
			"infiniband.classportinfo.redirectsl":      "0x08",
			"infiniband.classportinfo.redirectfl":      "0x0a8b8c",
			"infiniband.classportinfo.redirectlid":     "0x8d8e",
			"infiniband.classportinfo.redirectpkey":    "0x8f90",
			"infiniband.classportinfo.reserved":        "0x91,0xb1",
			"infiniband.classportinfo.redirectqp":      "0x929394",
			"infiniband.classportinfo.redirectqkey":    "0x95969798",
			"infiniband.classportinfo.trapgid":         "999a:9b9c:9d9e:9fa0:a1a2:a3a4:a5a6:a7a8",
			"infiniband.classportinfo.traptc":          "0xa9",
			"infiniband.classportinfo.trapsl":          "0x0a",
			"infiniband.classportinfo.trapfl":          "0x0aabac",
			"infiniband.classportinfo.traplid":         "0xadae",
			"infiniband.classportinfo.trappkey":        "0xafb0",
			"infiniband.classportinfo.trapqp":          "0xb2b3b4",
			"infiniband.classportinfo.trapqkey":        "0xb5b6b7b8",
			"infiniband.notice.isgeneric":              "",
			"infiniband.trap.gidaddr":                  "",
			"infiniband.trap.lidaddr":                  "",
			"infiniband.trap.datavalid":                "",
			"infiniband.trap.swlidaddr":                "",
			"infiniband.classportinfo":                 "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decodeFrame(t, trapsFile, tt.frame)
			for name, want := range tt.want {
				assert.Equal(t, want, fieldText(t, p, name), name)
			}
		})
	}
}

// TestNoticeAndClassPortInfoOccurrences: the items other fields add for
// these attributes, by the length of each occurrence, as tshark 4.0.17
// shows them on the same frames: an SMP Notice's data three times (the
// attribute, the notice, its DataDetails), an SA Notice's twice, the SA
// data as infiniband.sa.drdlid's second item, and no
// infiniband.sa.subnetadmindata.
func TestNoticeAndClassPortInfoOccurrences(t *testing.T) {
	for _, tc := range []struct {
		frame int
		field string
		bytes []int
	}{
		{1, "infiniband.smplid.smpdata", []int{64, 64, 54}},
		{16, "infiniband.smplid.smpdata", []int{64, 64, 54}},
		{17, "infiniband.smplid.smpdata", []int{64, 64, 54}},
		{18, "infiniband.smplid.smpdata", []int{64, 54}},
		{19, "infiniband.sa.drdlid", []int{256, 200}},
		{23, "infiniband.sa.drdlid", []int{256, 200}},
		{23, "infiniband.smplid.smpdata", nil},
		{21, "infiniband.smplid.smpdata", nil},
		{18, "infiniband.sa.subnetadmindata", nil},
		{22, "infiniband.sa.subnetadmindata", nil},
	} {
		p := decodeFrame(t, trapsFile, tc.frame)
		var got []int
		if s := fieldText(t, p, tc.field); s != "" {
			for _, v := range strings.Split(s, ",") {
				got = append(got, len(v)/2)
			}
		}
		assert.Equal(t, tc.bytes, got, "frame %d %s", tc.frame, tc.field)
	}
}

// TestEveryFieldOnTrapFrames asks every registered field of every frame of
// the trap capture, every occurrence: a getter must report absence, not
// panic, and the Notice and ClassPortInfo getters must not allocate.
func TestEveryFieldOnTrapFrames(t *testing.T) {
	for n := 1; n <= 23; n++ {
		p := decodeFrame(t, trapsFile, n)
		for _, f := range decode.Fields() {
			var v decode.Value
			assert.NotPanics(t, func() {
				for i := 0; i < 100 && f.GetOccurrence(p, i, &v); i++ {
					_ = f.String(&v)
				}
			}, "frame %d %s", n, f.Name)
			if strings.HasPrefix(f.Name, "infiniband.notice") || strings.HasPrefix(f.Name, "infiniband.trap") ||
				strings.HasPrefix(f.Name, "infiniband.classportinfo") {
				assert.Zero(t, testing.AllocsPerRun(10, func() {
					for i := 0; f.GetOccurrence(p, i, &v); i++ {
					}
				}), "frame %d %s", n, f.Name)
			}
		}
	}
}
