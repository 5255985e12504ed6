package decode_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestSARecordFields: the SA record fields of pcaps/mgmt_sa_records.pcap,
// every occurrence, as tshark 4.0.17 prints them (-T fields -E
// occurrence=a -e FIELD on the same frames, through user DLT 147).
func TestSARecordFields(t *testing.T) {
	const sa = "../pcaps/mgmt_sa_records.pcap"
	tests := []struct {
		frame       int
		field, want string
		what        string
	}{
		{2, "infiniband.sa.lid", "0x2d2e", "NodeRecord RID"},
		{2, "infiniband.nodeinfo.nodeguid", "0x3d3e3f4041424344", "NodeRecord's NodeInfo after the RID"},
		{2, "infiniband.nodedescription.nodestring", "ibwire-sw02 NodeRecord", "and its NodeDescription"},
		{2, "infiniband.smplid.smpdata", "", "NodeInfo has no item of its own"},
		{2, "infiniband.sa.subnetadmindata", "", "tshark never adds it"},
		{4, "infiniband.sa.endportlid", "0x6768", "PortInfoRecord"},
		{4, "infiniband.sa.portnum", "0x69", ""},
		{4, "infiniband.sa.lid", "", "a PortInfoRecord's LID is its EndportLID"},
		{4, "infiniband.portinfo.lid", "0x7b7c", "PortInfo after the RID"},
		{6, "infiniband.sa.inputportnum", "0xa3", "SLtoVLMappingTableRecord"},
		{6, "infiniband.sa.outputportnum", "0xa4", ""},
		{14, "infiniband.sa.position", "0x08", "MulticastForwardingTableRecord"},
		{14, "infiniband.sa.blocknum_ninebit", "0x018c", ""},
		{16, "infiniband.sa.blocknum_eightbit", "0xc6", "VLArbitrationTableRecord"},
		{18, "infiniband.sminfo.guid", "0x0102030405060708", "SMInfoRecord"},
		{18, "infiniband.smplid.smpdata", "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40", "SMInfo's subtree"},
		{20, "infiniband.sa.blocknum_sixteenbit", "0x393a", "P_KeyTableRecord"},
		{20, "infiniband.sa.portnum", "0x3b", ""},
		{22, "infiniband.switchinfo.guid", "0x797a7b7c7d7e7f80,0x8182838485868788,0x898a8b8c8d8e8f90,0x9192939495969798,0x999a9b9c9d9e9fa0,0xa1a2a3a4a5a6a7a8,0xa9aaabacadaeafb0,0xb1b2b3b4b5b6b7b8", "GUIDInfoRecord"},
		{24, "infiniband.linkspeedwidthpairstable.numtables", "0xab", "LinkSpeedWidthPairsTableRecord: no RID"},
		{26, "infiniband.informinfo.qpn", "0x010203", "InformInfo"},
		{26, "infiniband.informinfo.producertypevendorid", "0x060708", ""},
		{26, "infiniband.informinforecord.enum", "", "an InformInfo is no record"},
		{28, "infiniband.informinforecord.subscribergid", "1f20:2122:2324:2526:2728:292a:2b2c:2d2e", "InformInfoRecord"},
		{28, "infiniband.informinfo.gid", "3738:393a:3b3c:3d3e:3f40:4142:4344:4546", "its InformInfo after the 24-byte RID"},
		{28, "infiniband.informinfo.resptimevalue", "0x16", ""},
		{30, "infiniband.linkrecord.tolid", "0x5d5e", "LinkRecord"},
		{32, "infiniband.linkrecord.servicelease", "0xafb0b1b2", "ServiceRecord under linkrecord's names"},
		{32, "infiniband.linkrecord.servicedata", "030405060708090a0b0c0d0e0f101112,131415161718191a1b1c1d1e1f202122,232425262728292a2b2c2d2e2f303132,333435363738393a3b3c3d3e3f404142", "four 16-byte items"},
		{40, "infiniband.tracerecord.nodetype", "0x86", "TraceRecord"},
		{40, "infiniband.tracerecord.exitport", "0xa8", ""},
		{42, "infiniband.multipathrecord.flowlabel", "0x05b6b7", "MultiPathRecord"},
		{42, "infiniband.multipathrecord.sl", "0x0e", ""},
		{42, "infiniband.multipathrecord.gidscope", "0x03", ""},
		{42, "infiniband.multipathrecord.sdgid", "cdce:cfd0:d1d2:d3d4:d5d6:d7d8:d9da:dbdc,ddde:dfe0:e1e2:e3e4:e5e6:e7e8:e9ea:ebec,edee:eff0:f1f2:f3f4:f5f6:f7f8:f9fa:fbfc,fdfe:ff00:102:304:506:708:90a:b0c,d0e:f10:1112:1314:1516:1718:191a:1b1c", "3 SGIDs then 2 DGIDs"},
		{44, "infiniband.serviceassociationrecord.servicename", "ibwire.example/service", "ServiceAssociationRecord"},
		{44, "infiniband.serviceassociationrecord.servicekey", "eff0f1f2f3f4f5f6f7f8f9fafbfcfdfe", ""},
		{45, "infiniband.portinfo.lid", "0x2021", "GetTableResp of 2 PortInfoRecords: the first only"},
		{46, "infiniband.sminfo.guid", "0x4a4b4c4d4e4f5051", "GetTableResp of 3 SMInfoRecords: the first only"},
		{47, "infiniband.linkrecord.tolid", "0xa1a2", "GetTableResp of 4 LinkRecords: the first only"},
	}
	for _, tt := range tests {
		p := decodeFrame(t, sa, tt.frame)
		assert.Equal(t, tt.want, fieldText(t, p, tt.field), "frame %d %s (%s)", tt.frame, tt.field, tt.what)
	}
}

// TestSARecordItems: infiniband.sa.drdlid occurs for the whole MAD, the
// 200-byte attribute and, for the records tshark heads with their name,
// that record's item; tshark's ServiceRecord item runs 4 bytes past the
// MAD, into the ICRC (0xce133bc7 in frame 32).
func TestSARecordItems(t *testing.T) {
	const sa = "../pcaps/mgmt_sa_records.pcap"
	tests := []struct {
		frame int
		sizes []int // bytes of each occurrence
		tail  string
	}{
		{2, []int{256, 200}, ""},           // NodeRecord
		{26, []int{256, 200, 36}, ""},      // InformInfo
		{28, []int{256, 200, 36}, ""},      // InformInfoRecord
		{30, []int{256, 200, 3}, "5c5d5e"}, // LinkRecord: ToPort, ToLID
		{32, []int{256, 200, 176}, "595ace133bc7"},
		{36, []int{256, 200, 64}, ""}, // PathRecord
		{38, []int{256, 200, 64}, ""}, // MCMemberRecord, from its Q_Key
		{40, []int{256, 200, 46}, ""}, // TraceRecord
		{42, []int{256, 200, 200}, ""},
		{44, []int{256, 200, 80}, ""},
	}
	for _, tt := range tests {
		p := decodeFrame(t, sa, tt.frame)
		occ := strings.Split(fieldText(t, p, "infiniband.sa.drdlid"), ",")
		var sizes []int
		for _, o := range occ {
			sizes = append(sizes, len(o)/2)
		}
		assert.Equal(t, tt.sizes, sizes, "frame %d", tt.frame)
		if tt.tail != "" {
			assert.True(t, strings.HasSuffix(occ[len(occ)-1], tt.tail), "frame %d: %s", tt.frame, occ[len(occ)-1])
		}
	}
}

// TestSAReserved: infiniband.reserved in SA MADs: BTH, DETH, MAD header, SA
// header, then the record's RID and body, as tshark 4.0.17 prints them.
func TestSAReserved(t *testing.T) {
	const sa = "../pcaps/mgmt_sa_records.pcap"
	tests := []struct {
		frame int
		want  string
	}{
		{2, "00,00,0000,0000,2f30"},                  // NodeRecord RID
		{4, "00,00,0000,0000,6a"},                    // PortInfoRecord RID
		{20, "00,00,0000,0000,3c3d3e"},               // P_KeyTableRecord RID
		{22, "00,00,0000,0000,75767778"},             // GUIDInfoRecord RID
		{28, "00,00,0000,0000,313233343536,4b4c,57"}, // InformInfoRecord RID, then its InformInfo's
		{30, "00,00,0000,0000"},                      // LinkRecord: none
		{36, "00,00,0000,0000,0708090a0b0c0d0e"},     // PathRecord's first 8 bytes
		{42, "00,00,0000,0000,c2,c6c7c8c9cacbcc"},    // MultiPathRecord
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, fieldText(t, decodeFrame(t, sa, tt.frame), "infiniband.reserved"), "frame %d", tt.frame)
	}
}

// TestSARecordSummary: the one-line summary names each MAD's method and
// attribute as tshark 4.0.17's Info column does (its text after "QP=0x000001 ").
func TestSARecordSummary(t *testing.T) {
	want := []string{"SubnAdmGet(NodeRecord)", "SubnAdmGetResp(NodeRecord)", "SubnAdmGet(PortInfoRecord)",
		"SubnAdmGetResp(PortInfoRecord)", "SubnAdmGetTable(SLtoVLMappingTableRecord)", "SubnAdmGetResp(SLtoVLMappingTableRecord)",
		"SubnAdmGet(SwitchInfoRecord)", "SubnAdmGetResp(SwitchInfoRecord)", "SubnAdmGet(LinearForwardingTableRecord)",
		"SubnAdmGetResp(LinearForwardingTableRecord)", "SubnAdmGet(RandomForwardingTableRecord)",
		"SubnAdmGetResp(RandomForwardingTableRecord)", "SubnAdmGet(MulticastForwardingTableRecord)",
		"SubnAdmGetResp(MulticastForwardingTableRecord)", "SubnAdmGet(VLArbitrationTableRecord)",
		"SubnAdmGetResp(VLArbitrationTableRecord)", "SubnAdmGet(SMInfoRecord)", "SubnAdmGetResp(SMInfoRecord)",
		"SubnAdmGet(P_KeyTableRecord)", "SubnAdmGetResp(P_KeyTableRecord)", "SubnAdmSet(GuidInfoRecord)",
		"SubnAdmGetResp(GuidInfoRecord)", "SubnAdmGet(LinkSpeedWidthPairsTableRecord)",
		"SubnAdmGetResp(LinkSpeedWidthPairsTableRecord)", "SubnAdmSet(InformInfo)", "SubnAdmGetResp(InformInfo)",
		"SubnAdmGet(InformInfoRecord)", "SubnAdmGetResp(InformInfoRecord)", "SubnAdmGet(LinkRecord)",
		"SubnAdmGetResp(LinkRecord)", "SubnAdmSet(ServiceRecord)", "SubnAdmGetResp(ServiceRecord)",
		"SubnAdmDelete(ServiceRecord)", "SubnAdmDeleteResp(ServiceRecord)", "SubnAdmGet(PathRecord)",
		"SubnAdmGetResp(PathRecord)", "SubnAdmDelete(MCMemberRecord)", "SubnAdmDeleteResp(MCMemberRecord)",
		"SubnAdmGetTraceTable(TraceRecord)", "SubnAdmGetTableResp(TraceRecord)", "SubnAdmGetMulti(MultiPathRecord)",
		"SubnAdmGetMultiResp(MultiPathRecord)", "SubnAdmGet(ServiceAssociationRecord)",
		"SubnAdmGetResp(ServiceAssociationRecord)", "SubnAdmGetTableResp(PortInfoRecord)",
		"SubnAdmGetTableResp(SMInfoRecord)", "SubnAdmGetTableResp(LinkRecord)"}
	for i, w := range want {
		assert.Equal(t, w, decodeFrame(t, "../pcaps/mgmt_sa_records.pcap", i+1).Headers.MAD.Info(), "frame %d", i+1)
	}
}

// TestSARecordFieldsAnyBytes: every field's every occurrence can be asked
// of an SA MAD of any attribute with any data, whole or cut short, without
// a panic (the getters index records by their layouts).
func TestSARecordFieldsAnyBytes(t *testing.T) {
	r, err := capture.Open("../pcaps/mgmt_sa_records.pcap")
	require.NoError(t, err)
	defer r.Close()
	var rec capture.Packet
	require.NoError(t, r.NextInto(&rec))
	const mad = 8 + 12 + 8 // LRH, BTH, DETH
	orig := append([]byte(nil), rec.Data...)
	rnd := rand.New(rand.NewPCG(1, 2))
	dec := decode.NewDecoder(decode.Options{})
	var v decode.Value
	seen := map[string]bool{}
	for _, attr := range []uint16{0x01, 0x02, 0x03, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x20, 0x30,
		0x31, 0x33, 0x35, 0x36, 0x38, 0x39, 0x3a, 0x3b, 0xf3, 0xffff} {
		for _, cut := range []int{len(orig), mad + 256, mad + 255, mad + 100, mad + 30} {
			data := append([]byte(nil), orig...)
			data[mad+16], data[mad+17] = byte(attr>>8), byte(attr)
			for i := mad + 24; i < mad+256; i++ {
				data[i] = byte(rnd.Uint32())
			}
			rec.Data = data[:cut]
			p := dec.Decode(rec)
			for _, f := range decode.Fields() {
				for i := 0; i < 300 && f.GetOccurrence(p, i, &v); i++ {
					_ = f.String(&v)
					seen[f.Name] = true
				}
			}
		}
	}
	// The whole frames reached every record's fields.
	for _, f := range []string{"infiniband.sa.position", "infiniband.linkrecord.servicedata", "infiniband.multipathrecord.sdgid",
		"infiniband.tracerecord.exitport", "infiniband.nodeinfo.vendorid", "infiniband.informinforecord.enum"} {
		assert.True(t, seen[f], f)
	}
}
