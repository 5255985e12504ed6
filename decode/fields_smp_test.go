package decode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// mgmtCase is a frame and tshark's values of some of its fields.
type mgmtCase struct {
	name  string
	file  string
	frame int
	want  map[string]string
}

// TestMgmtFieldsAsTshark: the SMP, SA and PerfMgt values are tshark
// 4.0.17's (tshark -T fields -E occurrence=a on the same frames; the
// crafted file read as user DLT 147), "" where tshark has no such field in
// the frame. Every occurrence counts: tshark files an SMInfo's data twice
// and a PathRecord MAD's SA item three times.
func TestMgmtFieldsAsTshark(t *testing.T) {
	const mgmt = "../pcaps/mgmt_smp_sa_perf.pcap"
	tests := []mgmtCase{
		{"LID-routed SubnGet(NodeInfo)", mgmt, 1, map[string]string{
			"infiniband.smplid.mkey": "0x0102030405060708", "infiniband.smplid.smpdata": strings.Repeat("00", 64),
			"infiniband.nodeinfo.baseversion": "0x00", "infiniband.smpdirected.hopcount": "", "infiniband.sa.drdlid": "",
		}},
		{"SubnGetResp(NodeInfo)", mgmt, 2, map[string]string{
			"infiniband.nodeinfo.baseversion": "0x11", "infiniband.nodeinfo.classversion": "0x12",
			"infiniband.nodeinfo.nodetype": "0x13", "infiniband.nodeinfo.numports": "0x14",
			"infiniband.nodeinfo.systemimageguid": "0x15161718191a1b1c", "infiniband.nodeinfo.nodeguid": "0x1d1e1f2021222324",
			"infiniband.nodeinfo.portguid": "0x25262728292a2b2c", "infiniband.nodeinfo.partitioncap": "0x2d2e",
			"infiniband.nodeinfo.deviceid": "0x2f30", "infiniband.nodeinfo.revision": "0x31323334",
			"infiniband.nodeinfo.localportnum": "0x35", "infiniband.nodeinfo.vendorid": "0x363738",
			"infiniband.portinfo.lid": "",
		}},
		{"SubnGetResp(PortInfo)", mgmt, 4, map[string]string{
			"infiniband.portinfo.m_key": "0x8182838485868788", "infiniband.portinfo.guid": "0x898a8b8c8d8e8f90",
			"infiniband.portinfo.lid": "0x9192", "infiniband.portinfo.mastersmlid": "0x9394",
			"infiniband.portinfo.capabilitymask": "0x95969798", "infiniband.portinfo.capabilitymask.issm": "0x00000000",
			"infiniband.portinfo.capabilitymask.trapsupported":                     "0x00000001",
			"infiniband.portinfo.capabilitymask.smdisabled":                        "0x00000001",
			"infiniband.portinfo.capabilitymask.systemimageguidsupported":          "0x00000000",
			"infiniband.portinfo.capabilitymask.otherlocalchangesnoticesupported":  "0x00000001",
			"infiniband.portinfo.capabilitymask.linkspeedwidthpairstablesupported": "0x00000000",
			"infiniband.portinfo.diagcode":                                         "0x999a", "infiniband.portinfo.m_keyleaseperiod": "0x9b9c",
			"infiniband.portinfo.localportnum": "0x9d", "infiniband.portinfo.linkwidthenabled": "0x9e",
			"infiniband.portinfo.linkspeedsupported": "0x0a", "infiniband.portinfo.portstate": "0x01",
			"infiniband.portinfo.portphysicalstate": "0x0a", "infiniband.portinfo.linkdowndefaultstate": "0x02",
			"infiniband.portinfo.m_keyprotectbits": "0x02", "infiniband.portinfo.lmc": "0x03",
			"infiniband.portinfo.linkspeedactive": "0x0a", "infiniband.portinfo.linkspeedenabled": "0x04",
			"infiniband.portinfo.neighbormtu": "0x0a", "infiniband.portinfo.mastersmsl": "0x05",
			"infiniband.portinfo.vlcap": "0x0a", "infiniband.portinfo.inittype": "0x06",
			"infiniband.portinfo.inittypereply": "0x0a", "infiniband.portinfo.mtucap": "0x0a",
			"infiniband.portinfo.vlstallcount": "0x05", "infiniband.portinfo.hoqlife": "0x0b",
			"infiniband.portinfo.operationalvls": "0x0a", "infiniband.portinfo.partitionenforcementinbound": "0x01",
			"infiniband.portinfo.partitionenforcementoutbound": "0x01", "infiniband.portinfo.filterrawinbound": "0x00",
			"infiniband.portinfo.filterrawoutbound": "0x00", "infiniband.portinfo.m_keyviolations": "0xadae",
			"infiniband.portinfo.guidcap": "0xb3", "infiniband.portinfo.clientreregister": "0x01",
			"infiniband.portinfo.subnettimeout": "0x14", "infiniband.portinfo.resptimevalue": "0x15",
			"infiniband.portinfo.localphyerrors": "0x0b", "infiniband.portinfo.overrunerrors": "0x06",
			"infiniband.portinfo.maxcredithint": "0xb7b8", "infiniband.portinfo.linkroundtriplatency": "0xbabbbc",
		}},
		{"SubnGetResp(SMInfo): the data twice", mgmt, 5, map[string]string{
			"infiniband.sminfo.guid": "0x2122232425262728", "infiniband.sminfo.sm_key": "0x292a2b2c2d2e2f30",
			"infiniband.sminfo.actcount": "0x31323334", "infiniband.sminfo.priority": "0x03", "infiniband.sminfo.smstate": "0x05",
			"infiniband.smplid.smpdata": seqHex(0x21, 64) + "," + seqHex(0x21, 64),
		}},
		{"SubnGetResp(NodeDescription)", mgmt, 6, map[string]string{
			"infiniband.nodedescription.nodestring": "ibwire-sw01 HCA-1", "infiniband.smplid.smpdata": "69627769726" + "52d73773031204843412d31" + strings.Repeat("00", 47),
		}},
		{"SubnGetResp(SwitchInfo)", mgmt, 14, map[string]string{
			"infiniband.switchinfo.lifetimevalue": "0x11", "infiniband.switchinfo.portstatechange": "0x01",
			"infiniband.switchinfo.optimizedsltovlmappingprogramming": "0x00", "infiniband.switchinfo.inboundenforcementcap": "0x01",
			"infiniband.switchinfo.filterrawoutboundcap": "0x01", "infiniband.switchinfo.enhancedportzero": "0x00",
			"infiniband.switchinfo.lidsperport": "0x8d8e", "infiniband.switchinfo.guid": "",
		}},
		{"SubnGetResp(GUIDInfo): SwitchInfo's GUID field, once per GUID", mgmt, 15, map[string]string{
			"infiniband.switchinfo.guid": "0x8182838485868788,0x898a8b8c8d8e8f90,0x9192939495969798,0x999a9b9c9d9e9fa0," +
				"0xa1a2a3a4a5a6a7a8,0xa9aaabacadaeafb0,0xb1b2b3b4b5b6b7b8,0xb9babbbcbdbebfc0",
		}},
		{"SubnGetResp(P_KeyTable)", mgmt, 16, map[string]string{
			"infiniband.p_keytable.p_keybase": "0x0182,0x0384,0x0586,0x0788,0x098a,0x0b8c,0x0d8e,0x0f90,0x1192,0x1394,0x1596," +
				"0x1798,0x199a,0x1b9c,0x1d9e,0x1fa0,0x21a2,0x23a4,0x25a6,0x27a8,0x29aa,0x2bac,0x2dae,0x2fb0,0x31b2,0x33b4,0x35b6," +
				"0x37b8,0x39ba,0x3bbc,0x3dbe,0x3fc0",
			"infiniband.p_keytable.p_keytableblock": seqHex(0x81, 64),
		}},
		{"SubnGetResp(SLtoVLMappingTable)", mgmt, 17, map[string]string{
			"infiniband.sltovlmappingtable.sltovllowbits":  "0x01,0x02,0x03,0x04,0x05,0x06,0x07,0x08",
			"infiniband.sltovlmappingtable.sltovlhighbits": "0x08,0x08,0x08,0x08,0x08,0x08,0x08,0x08",
		}},
		{"SubnGetResp(VLArbitrationTable)", mgmt, 18, map[string]string{
			"infiniband.vlarbitrationtable.vl": strings.Repeat("0x01,0x03,0x05,0x07,0x09,0x0b,0x0d,0x0f,", 3) +
				"0x01,0x03,0x05,0x07,0x09,0x0b,0x0d,0x0f",
		}},
		{"SubnGetResp(LinearForwardingTable): 64 ports", mgmt, 19, map[string]string{
			"infiniband.linearforwardingtable.port": byteList(0x81, 64),
		}},
		{"SubnGetResp(RandomForwardingTable)", mgmt, 20, map[string]string{
			"infiniband.randomforwardingtable.port": "0x84,0x88,0x8c,0x90,0x94,0x98,0x9c,0xa0,0xa4,0xa8,0xac,0xb0,0xb4,0xb8,0xbc,0xc0",
			"infiniband.randomforwardingtable.lmc":  "0x00,0x00,0x00,0x00,0x01,0x01,0x01,0x01,0x02,0x02,0x02,0x02,0x03,0x03,0x03,0x03",
		}},
		{"SubnGetResp(MulticastForwardingTable): the first 16 masks", mgmt, 21, map[string]string{
			"infiniband.multicastforwardingtable.portmask": "0x8182,0x8384,0x8586,0x8788,0x898a,0x8b8c,0x8d8e,0x8f90,0x9192," +
				"0x9394,0x9596,0x9798,0x999a,0x9b9c,0x9d9e,0x9fa0",
		}},
		{"SubnGetResp(LinkSpeedWidthPairsTable)", mgmt, 22, map[string]string{
			"infiniband.linkspeedwidthpairstable.numtables": "0x81", "infiniband.linkspeedwidthpairstable.speedten": "0x01",
			"infiniband.linkspeedwidthpairstable.portmask": seqHex(0x82, 32),
		}},
		{"SubnGetResp(VendorDiag)", mgmt, 23, map[string]string{
			"infiniband.vendordiag.nextindex": "0x8182", "infiniband.vendordiag.diagdata": seqHex(0x83, 62),
		}},
		{"SubnGetResp(LedInfo)", mgmt, 24, map[string]string{"infiniband.ledinfo.ledmask": "0x01"}},
		{"directed-route SubnGetResp(NodeInfo)", mgmt, 8, map[string]string{
			"infiniband.smpdirected.d": "0x0000000000000000", "infiniband.smpdirected.smpstatus": "0x8000",
			"infiniband.smpdirected.hoppointer": "0x02", "infiniband.smpdirected.hopcount": "0x02",
			"infiniband.smplid.mkey": "0x1122334455667788", "infiniband.smpdirected.drslid": "0xffff",
			"infiniband.smpdirected.drdlid": "0xffff", "infiniband.smplid": "",
			"infiniband.smpdirected.initialpath": "000307" + strings.Repeat("00", 61),
			"infiniband.smpdirected.returnpath":  "000105" + strings.Repeat("00", 61),
			"infiniband.smplid.smpdata":          seqHex(0x41, 64), "infiniband.nodeinfo.baseversion": "0x41",
		}},
		{"SubnAdmGetResp(PathRecord)", mgmt, 10, map[string]string{
			"infiniband.rmpp": strings.Repeat("00", 12), "infiniband.rmpp.rmpptype": "0x00", "infiniband.rmpp.data2": "0x00000000",
			"infiniband.rmpp.segmentnumber": "", "infiniband.rmpp.transferreddata": "",
			"infiniband.sa.smkey": "0x0000000000000001", "infiniband.sa.attributeoffset": "0x0008",
			"infiniband.sa.componentmask": "0x000000000000340c", "infiniband.sa.subnetadmindata": "",
			"infiniband.pathrecord.dgid": "3a3b:3c3d:3e3f:4041:4243:4445:4647:4849",
			"infiniband.pathrecord.sgid": "4a4b:4c4d:4e4f:5051:5253:5455:5657:5859",
			"infiniband.pathrecord.dlid": "0x5a5b", "infiniband.pathrecord.slid": "0x5c5d",
			"infiniband.pathrecord.rawtraffic": "0x00", "infiniband.pathrecord.flowlabel": "0x0e5f60",
			"infiniband.pathrecord.hoplimit": "0x61", "infiniband.pathrecord.tclass": "0x62",
			"infiniband.pathrecord.reversible": "0x00", "infiniband.pathrecord.numbpath": "0x63",
			"infiniband.pathrecord.p_key": "0x6465", "infiniband.pathrecord.sl": "0x0007",
			"infiniband.pathrecord.mtuselector": "0x01", "infiniband.pathrecord.mtu": "0x28",
			"infiniband.pathrecord.rateselector": "0x01", "infiniband.pathrecord.rate": "0x29",
			"infiniband.pathrecord.packetlifetimeselector": "0x01", "infiniband.pathrecord.packetlifetime": "0x2a",
			"infiniband.pathrecord.preference": "0x6b", "infiniband.smplid.smpdata": "",
		}},
		{"SubnAdmGetResp(MCMemberRecord)", mgmt, 26, map[string]string{
			"infiniband.sa.componentmask":       "0x00000000000130c7",
			"infiniband.mcmemberrecord.mgid":    "9293:9495:9697:9899:9a9b:9c9d:9e9f:a0a1",
			"infiniband.mcmemberrecord.portgid": "a2a3:a4a5:a6a7:a8a9:aaab:acad:aeaf:b0b1",
			"infiniband.mcmemberrecord.q_key":   "0xb2b3b4b5", "infiniband.mcmemberrecord.mlid": "0xb6b7",
			"infiniband.mcmemberrecord.mtuselector": "0x02", "infiniband.mcmemberrecord.mtu": "0x38",
			"infiniband.mcmemberrecord.tclass": "0xb9", "infiniband.mcmemberrecord.p_key": "0xbabb",
			"infiniband.mcmemberrecord.rateselector": "0x02", "infiniband.mcmemberrecord.rate": "0x3c",
			"infiniband.mcmemberrecord.packetlifetimeselector": "0x02", "infiniband.mcmemberrecord.packetlifetime": "0x3d",
			"infiniband.mcmemberrecord.sl": "0x0b", "infiniband.mcmemberrecord.flowlabel": "0x0ebfc0",
			"infiniband.mcmemberrecord.hoplimit": "0xc1", "infiniband.mcmemberrecord.scope": "0x0c",
			"infiniband.mcmemberrecord.joinstate": "0x02", "infiniband.mcmemberrecord.proxyjoin": "0x01",
			"infiniband.pathrecord.dgid": "", "infiniband.sa.subnetadmindata": "",
		}},
		{"SubnAdmGetTableResp(PathRecord) as one RMPP DATA segment", mgmt, 27, map[string]string{
			"infiniband.rmpp":             "0101af000000000100000054",
			"infiniband.rmpp.rmppversion": "0x01", "infiniband.rmpp.rmpptype": "0x01",
			"infiniband.rmpp.rresptime": "0x0a", "infiniband.rmpp.rmppflags": "0x0f", "infiniband.rmpp.rmppstatus": "0x00",
			"infiniband.rmpp.data1": "", "infiniband.rmpp.data2": "",
			"infiniband.rmpp.segmentnumber": "0x00000001", "infiniband.rmpp.payloadlength": "0x00000054",
			"infiniband.rmpp.transferreddata": "0000000000000000000800000000000000000000" + seqHex(0x11, 64) + strings.Repeat("00", 136),
			"infiniband.pathrecord.dlid":      "0x393a",
		}},
		{"PerfGetResp(PortCounters)", mgmt, 12, map[string]string{
			"infiniband.portcounters.portselect": "0x53", "infiniband.portcounters.counterselect": "0x5455",
			"infiniband.portcounters.symbolerrorcounter": "22103", "infiniband.portcounters.linkerrorrecoverycounter": "88",
			"infiniband.portcounters.linkdownedcounter": "89", "infiniband.portcounters.portrcverrors": "23131",
			"infiniband.portcounters.portrcvremotephysicalerrors": "23645",
			"infiniband.portcounters.portrcvswitchrelayerrors":    "24159", "infiniband.portcounters.portxmitdiscards": "24673",
			"infiniband.portcounters.portxmitconstrainterrors": "98", "infiniband.portcounters.portrcvconstrainterrors": "99",
			"infiniband.portcounters.locallinkintegrityerrors": "6", "infiniband.portcounters.excessivebufferoverrunerrors": "5",
			"infiniband.portcounters.vl15dropped": "26729", "infiniband.portcounters.portxmitdata": "1785425005",
			"infiniband.portcounters.portrcvdata": "1852797041", "infiniband.portcounters.portxmitpkts": "1920169077",
			"infiniband.portcounters.portrcvpkts": "1987541113", "infiniband.portcounters_ext.portselect": "",
		}},
		{"PerfGetResp(PortCountersExtended)", mgmt, 13, map[string]string{
			"infiniband.portcounters_ext.portselect": "0x62", "infiniband.portcounters_ext.counterselect": "0x6364",
			"infiniband.portcounters_ext.portxmitdata":          "7596001834950356848",
			"infiniband.portcounters_ext.portrcvdata":           "8174723217654970232",
			"infiniband.portcounters_ext.portxmitpkts":          "8753444600359583616",
			"infiniband.portcounters_ext.portrcvpkts":           "9332165983064197000",
			"infiniband.portcounters_ext.portunicastxmitpkts":   "9910887365768810384",
			"infiniband.portcounters_ext.portunicastrcvpkts":    "10489608748473423768",
			"infiniband.portcounters_ext.portmulticastxmitpkts": "11068330131178037152",
			"infiniband.portcounters_ext.portmulticastrcvpkts":  "11647051513882650536",
			"infiniband.portcounters.portselect":                "",
		}},
	}
	// A real subnet manager's traffic, when the third-party captures are
	// at hand (they carry no licence, so they stay outside the repository).
	if dir := os.Getenv("IBWIRE_EXTRA_PCAPS"); dir != "" {
		sm := filepath.Join(dir, "srinivaskoritala__rdma-softroce-demo__infiniband.pcap")
		tests = append(tests,
			mgmtCase{"real directed-route SubnGetResp(SMInfo)", sm, 2, map[string]string{
				"infiniband.smpdirected.smpstatus": "0x8000", "infiniband.smpdirected.hoppointer": "0x01",
				"infiniband.smpdirected.hopcount": "0x02", "infiniband.sminfo.guid": "0x0002c9020020b4dd",
				"infiniband.sminfo.actcount": "0x0000923a", "infiniband.sminfo.smstate": "0x03",
			}},
			mgmtCase{"real SubnAdmGetResp(PathRecord)", sm, 33, map[string]string{
				"infiniband.pathrecord.dgid": "fe80::2:c903:0:1895", "infiniband.pathrecord.sgid": "fe80::2:c902:24:f636",
				"infiniband.pathrecord.dlid": "0x0002", "infiniband.pathrecord.slid": "0x0004",
				"infiniband.pathrecord.p_key": "0xffff", "infiniband.pathrecord.mtu": "0x04", "infiniband.pathrecord.rate": "0x03",
				"infiniband.pathrecord.packetlifetime": "0x12", "infiniband.pathrecord.reversible": "0x01",
				"infiniband.pathrecord.numbpath": "0x00", "infiniband.sa.attributeoffset": "0x0008",
			}},
		)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := decodeFrame(t, tc.file, tc.frame)
			for name, want := range tc.want {
				assert.Equal(t, want, fieldText(t, p, name), name)
			}
		})
	}
}

// TestMgmtNodeOccurrences: the header items print the 256-byte MAD, and
// infiniband.sa.drdlid then the SA data (200 bytes) and the PathRecord (64),
// as tshark 4.0.17 does on mgmt_smp_sa_perf.pcap.
func TestMgmtNodeOccurrences(t *testing.T) {
	const mgmt = "../pcaps/mgmt_smp_sa_perf.pcap"
	for _, tc := range []struct {
		frame int
		field string
		bytes []int // length of each occurrence
	}{
		{1, "infiniband.smplid", []int{256}},
		{8, "infiniband.smpdirected", []int{256}},
		{8, "infiniband.smplid", nil},
		{10, "infiniband.sa.drdlid", []int{256, 200, 64}},
		{26, "infiniband.sa.drdlid", []int{256, 200, 64}},
		{5, "infiniband.smplid.smpdata", []int{64, 64}},
		{2, "infiniband.smplid.smpdata", []int{64}},
		{16, "infiniband.smplid.smpdata", []int{64}},
		{19, "infiniband.smplid.smpdata", []int{64, 64}},
	} {
		p := decodeFrame(t, mgmt, tc.frame)
		var got []int
		if s := fieldText(t, p, tc.field); s != "" {
			for _, v := range strings.Split(s, ",") {
				got = append(got, len(v)/2)
			}
		}
		assert.Equal(t, tc.bytes, got, "frame %d %s", tc.frame, tc.field)
	}
}

// seqHex is n bytes counting up from first, in hex: the crafted bodies.
func seqHex(first byte, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := first + byte(i)
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	}
	return b.String()
}

// byteList is n one-byte values counting up from first as -T fields -E
// occurrence=a prints them: "0x81,0x82,...".
func byteList(first byte, n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = "0x" + seqHex(first+byte(i), 1)
	}
	return strings.Join(vs, ",")
}

// TestEveryFieldOnMgmtFrames asks every registered field of every frame of
// captures with and without MADs: a getter must report absence, not
// panic, whatever the packet (infiniband.rmpp.transferreddata once sliced
// the SA body of packets that had none).
func TestEveryFieldOnMgmtFrames(t *testing.T) {
	for _, file := range []string{"../pcaps/mgmt_smp_sa_perf.pcap", "../pcaps/cm_reject.pcap", "../pcaps/rc_send.pcap"} {
		r, err := capture.Open(file)
		require.NoError(t, err)
		d := decode.NewDecoder(decode.Options{})
		var rec capture.Packet
		frames := 0
		for r.NextInto(&rec) == nil {
			p := d.Decode(rec)
			frames++
			for _, f := range decode.Fields() {
				var v decode.Value
				assert.NotPanics(t, func() {
					for i := 0; i < 100 && f.GetOccurrence(p, i, &v); i++ {
						_ = f.String(&v)
					}
				}, "%s frame %d %s", file, rec.Number, f.Name)
			}
		}
		r.Close()
		assert.NotZero(t, frames, file)
	}
}
