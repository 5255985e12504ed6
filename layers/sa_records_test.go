package layers

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// saSeq is 200 bytes of SA data counting up from first, as the records of
// pcaps/mgmt_sa_records.pcap carry; the want values below are what tshark
// 4.0.17 printed for those frames (-T fields -e infiniband.sa.lid ...).
func saSeq(first byte) []byte {
	d := make([]byte, SADataLength)
	for i := range d {
		d[i] = first + byte(i)
	}
	return d
}

func TestDecodeTableRID(t *testing.T) {
	tests := []struct {
		frame int
		attr  SAAttribute
		first byte
		want  TableRID
	}{
		{2, SAAttrNodeRecord, 0x2d, TableRID{LID: 0x2d2e}},
		{4, SAAttrPortInfoRecord, 0x67, TableRID{LID: 0x6768, PortNum: 0x69}},
		{6, SAAttrSLtoVLMappingTableRecord, 0xa1, TableRID{LID: 0xa1a2, InputPortNum: 0xa3, OutputPortNum: 0xa4}},
		{14, SAAttrMulticastFDBRecord, 0x89, TableRID{LID: 0x898a, Position: 0x08, BlockNum: 0x018c}},
		{16, SAAttrVLArbitrationTableRecord, 0xc3, TableRID{LID: 0xc3c4, OutputPortNum: 0xc5, BlockNum: 0xc6}},
		{20, SAAttrPKeyTableRecord, 0x37, TableRID{LID: 0x3738, BlockNum: 0x393a, PortNum: 0x3b}},
		{22, SAAttrGUIDInfoRecord, 0x71, TableRID{LID: 0x7172, BlockNum: 0x73}},
	}
	for _, tt := range tests {
		got, ok := tt.attr.DecodeTableRID(saSeq(tt.first))
		require.True(t, ok, "frame %d", tt.frame)
		assert.Equal(t, tt.want, got, "frame %d %v", tt.frame, tt.attr)
	}
	for _, a := range []SAAttribute{SAAttrPathRecord, SAAttrLinkRecord, SAAttrInformInfoRecord} {
		_, ok := a.DecodeTableRID(saSeq(0))
		assert.False(t, ok, "%v has no table RID", a)
	}
	_, ok := SAAttrNodeRecord.DecodeTableRID(make([]byte, 7))
	assert.False(t, ok, "short record")
}

func TestSMPBody(t *testing.T) {
	// Frame 2, SubnAdmGetResp(NodeRecord): tshark shows NodeInfo after the
	// 4-byte RID (BaseVersion 0x31, NodeGUID 0x3d3e3f4041424344) and the
	// NodeDescription at byte 44.
	rec := saSeq(0x2d)
	copy(rec[44:108], append([]byte("ibwire-sw02 NodeRecord"), make([]byte, 42)...))
	ni, ok := SAAttrNodeRecord.SMPBody(rec, SMPAttrNodeInfo)
	require.True(t, ok)
	assert.Len(t, ni, SMPDataLength)
	assert.Equal(t, uint8(0x31), ni.NodeInfo().BaseVersion)
	assert.Equal(t, uint64(0x3d3e3f4041424344), ni.NodeInfo().NodeGUID)
	nd, ok := SAAttrNodeRecord.SMPBody(rec, SMPAttrNodeDescription)
	require.True(t, ok)
	assert.Equal(t, "ibwire-sw02 NodeRecord", nd.NodeDescription())
	// Frame 4, PortInfoRecord: PortInfo's LID 0x7b7c at byte 4+16.
	pi, ok := SAAttrPortInfoRecord.SMPBody(saSeq(0x67), SMPAttrPortInfo)
	require.True(t, ok)
	assert.Equal(t, uint16(0x7b7c), pi.PortInfo().LID)
	// Frame 22, GUIDInfoRecord: GUID 0 0x797a7b7c7d7e7f80 after the 8-byte RID.
	gi, ok := SAAttrGUIDInfoRecord.SMPBody(saSeq(0x71), SMPAttrGUIDInfo)
	require.True(t, ok)
	assert.Equal(t, uint64(0x797a7b7c7d7e7f80), gi.GUID(0))

	_, ok = SAAttrNodeRecord.SMPBody(rec, SMPAttrPortInfo)
	assert.False(t, ok, "a NodeRecord holds no PortInfo")
	_, ok = SAAttrPathRecord.SMPBody(rec, SMPAttrNodeInfo)
	assert.False(t, ok, "a PathRecord wraps no SMP attribute")
	_, ok = SAAttrNodeRecord.SMPBody(rec[:100], SMPAttrNodeDescription)
	assert.False(t, ok, "the window must fit")
}

func TestDecodeInformInfo(t *testing.T) {
	// Frame 26, SubnAdmGetResp(InformInfo).
	assert.Equal(t, InformInfo{
		GID: net.ParseIP("e5e6:e7e8:e9ea:ebec:edee:eff0:f1f2:f3f4"), LIDRangeBegin: 0xf5f6, LIDRangeEnd: 0xf7f8,
		IsGeneric: 0xfb, Subscribe: 0xfc, Type: 0xfdfe, TrapNumberDeviceID: 0xff00, QPN: 0x010203, RespTimeValue: 0x04,
		ProducerTypeVendorID: 0x060708,
	}, DecodeInformInfo(saSeq(0xe5)))
	// Frame 28, SubnAdmGetResp(InformInfoRecord).
	assert.Equal(t, InformInfoRecord{
		SubscriberGID: net.ParseIP("1f20:2122:2324:2526:2728:292a:2b2c:2d2e"), Enum: 0x2f30,
		InformInfo: InformInfo{
			GID: net.ParseIP("3738:393a:3b3c:3d3e:3f40:4142:4344:4546"), LIDRangeBegin: 0x4748, LIDRangeEnd: 0x494a,
			IsGeneric: 0x4d, Subscribe: 0x4e, Type: 0x4f50, TrapNumberDeviceID: 0x5152, QPN: 0x535455,
			RespTimeValue: 0x16, ProducerTypeVendorID: 0x58595a,
		},
	}, DecodeInformInfoRecord(saSeq(0x1f)))
}

func TestDecodeSARecords(t *testing.T) {
	// Frame 30, LinkRecord.
	assert.Equal(t, LinkRecord{FromLID: 0x595a, FromPort: 0x5b, ToPort: 0x5c, ToLID: 0x5d5e}, DecodeLinkRecord(saSeq(0x59)))
	// Frame 32, ServiceRecord: tshark's four ServiceData items are its 64 bytes.
	d := saSeq(0x93)
	assert.Equal(t, ServiceRecord{
		ServiceID: 0x939495969798999a, ServiceGID: net.ParseIP("9b9c:9d9e:9fa0:a1a2:a3a4:a5a6:a7a8:a9aa"), ServicePKey: 0xabac,
		ServiceLease: 0xafb0b1b2, ServiceKey: d[32:48], ServiceName: d[48:112], ServiceData: d[112:176],
	}, DecodeServiceRecord(d))
	assert.Equal(t, byte(0xb3), d[32], "tshark's ServiceKey starts b3b4")
	assert.Equal(t, byte(0x03), d[112], "tshark's first ServiceData starts 0304")
	// Frame 40, TraceRecord.
	assert.Equal(t, TraceRecord{GIDPrefix: 0x7b7c7d7e7f808182, IDGeneration: 0x8384, NodeType: 0x86,
		NodeID: 0x8788898a8b8c8d8e, ChassisID: 0x8f90919293949596, EntryPortID: 0x9798999a9b9c9d9e,
		ExitPortID: 0x9fa0a1a2a3a4a5a6, EntryPort: 0xa7, ExitPort: 0xa8}, DecodeTraceRecord(saSeq(0x7b)))
	// Frame 44, ServiceAssociationRecord.
	d = saSeq(0xef)
	assert.Equal(t, ServiceAssociationRecord{ServiceKey: d[0:16], ServiceName: d[16:80]}, DecodeServiceAssociationRecord(d))
}

func TestDecodeMultiPathRecord(t *testing.T) {
	// Frame 42, SubnAdmGetMultiResp(MultiPathRecord) with 3 SGIDs and 2 DGIDs.
	d := saSeq(0xb5)
	d[15], d[16] = 3, 2
	m := DecodeMultiPathRecord(d)
	assert.Equal(t, MultiPathRecord{RawTraffic: true, FlowLabel: 0x05b6b7, HopLimit: 0xb8, TClass: 0xb9, Reversible: true,
		NumbPath: 0x3a, PKey: 0xbbbc, SL: 0x0e, MTUSelector: 2, MTU: 0x3f, RateSelector: 3, Rate: 0,
		PacketLifeTimeSelector: 3, PacketLifeTime: 1, IndependenceSelector: 3, GIDScope: 3, SGIDCount: 3, DGIDCount: 2,
		GIDs: d[24:104]}, m)
	for i, want := range []string{"cdce:cfd0:d1d2:d3d4:d5d6:d7d8:d9da:dbdc", "ddde:dfe0:e1e2:e3e4:e5e6:e7e8:e9ea:ebec",
		"edee:eff0:f1f2:f3f4:f5f6:f7f8:f9fa:fbfc", "fdfe:ff00:102:304:506:708:90a:b0c", "d0e:f10:1112:1314:1516:1718:191a:1b1c"} {
		g, ok := m.GID(i)
		require.True(t, ok, "GID %d", i)
		assert.Equal(t, want, g.String(), "GID %d", i)
	}
	_, ok := m.GID(5)
	assert.False(t, ok)
	// Counts past the data: only the GIDs it holds.
	d[15], d[16] = 200, 200
	assert.Len(t, DecodeMultiPathRecord(d).GIDs, 16*11)
}

// TestSARecord: a GetTableResp's records are AttributeOffset 8-byte words
// apart (IBTA Vol 1 §15.2.5: an SMInfoRecord is 28 bytes, so 4 words);
// other methods hold one record.
func TestSARecord(t *testing.T) {
	s := SA{AttributeID: SAAttrSMInfoRecord, Method: MethodGetTableResp, AttributeOffset: 4, Data: saSeq(0)}
	for i, want := range map[int]byte{0: 0, 1: 32, 5: 160} {
		r, ok := s.Record(i)
		require.True(t, ok, "record %d", i)
		assert.Equal(t, want, r[0], "record %d", i)
	}
	_, ok := s.Record(6) // 192 + 28 > 200
	assert.False(t, ok)
	s.Method = MethodGetResp
	_, ok = s.Record(1)
	assert.False(t, ok, "a GetResp holds one record")
	s.Method, s.AttributeOffset = MethodGetTableResp, 0
	_, ok = s.Record(1)
	assert.False(t, ok, "no stride")
	assert.Equal(t, 0, SAAttrMultiPathRecord.RecordLength())
	assert.Equal(t, 108, SAAttrNodeRecord.RecordLength())
}

func TestSARecordsDoNotAllocate(t *testing.T) {
	d := saSeq(0x10)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_ = DecodeMultiPathRecord(d)
		_ = DecodeServiceRecord(d)
		_ = DecodeInformInfoRecord(d)
		_, _ = SAAttrNodeRecord.SMPBody(d, SMPAttrNodeInfo)
		_, _ = SAAttrMulticastFDBRecord.DecodeTableRID(d)
	}))
}
