package layers_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// NVMe-oF capsules from /work/shared/pcaps-ulp/nvme_rdma.pcap (rxe guests,
// nvmet-rdma); the expected values are what tshark 4.0.17 shows for them.
var (
	// Frame 226, RC SEND Only: "Opcode: 0x02 Read, Command ID: 0x0041,
	// Namespace Id: 0x00000001, PRP Or SGL: 0x1, SGL1 Descriptor Type: 0x4
	// Keyed Data Block, Sub Type 0xf, Address: 0xff384b7f43336000, Length:
	// 4096, Key: 0x00004408, Start LBA: 0x0000000000000000, Absolute
	// Number of Logical Blocks: 8".
	nvmeSQERead = mustHex("024041000100000000000000000000000000000000000000006033437f4b38ff001000084400004f" +
		"000000000000000007000000000000000000000000000000")
	// Frame 232, RC SEND Only with Invalidate: "SQ Head Pointer: 0x0002,
	// SQ Identifier: 0x0001, Command Identifier: 0x0041, Status Field: 0x0000".
	nvmeCQERead = mustHex("00000000000000000200010041000000")
	// Frame 91: the admin Fabrics Connect of the I/O controller: "fctype
	// 0x01, Record Format 0, Queue ID 0, Submission Queue Size 31, Keep
	// Alive Timeout 5000".
	nvmeSQEConnect = mustHex("7f400000010000000000000000000000000000000000000000541c417f4b38ff000400332400004f" +
		"000000001f00000088130000000000000000000000000000")
	// Frame 12: Property Get, cid 0x0001, attrib 0x01 (8 bytes), offset 0 (CAP).
	nvmeSQEPropGet = mustHex("7f400100040000000000000000000000000000000000000000000000000000000000000000000040" +
		"010000000000000000000000000000000000000000000000")
	// Frame 14: its CQE, the CAP value in DW0/DW1.
	nvmeCQEPropGet = mustHex("7f00000f200800000200000001000000")
	// Frame 163: Set Features (Number of Queues), cid 0x1016.
	nvmeSQESetFeatures = mustHex("09401610000000000000000000000000000000000000000000000000000000000000000000000040" +
		"070000000000000000000000000000000000000000000000")
)

func TestNVMeSQE(t *testing.T) {
	var s layers.NVMeSQE
	require.NoError(t, s.DecodeFromBytes(nvmeSQERead))
	assert.Equal(t, layers.NVMeOpRead, s.Opcode)
	assert.Equal(t, "Read", s.Opcode.Name(false))
	assert.Equal(t, "Get Log Page", s.Opcode.Name(true))
	assert.Equal(t, uint8(1), s.PSDT)
	assert.Equal(t, uint16(0x41), s.CID)
	assert.Equal(t, uint32(1), s.NSID)
	assert.Equal(t, layers.NVMeSGL{Address: 0xff384b7f43336000, Length: 4096, Key: 0x4408, Type: 4, Subtype: 0xf}, s.SGL)
	assert.True(t, s.SGL.Keyed())
	assert.Equal(t, uint64(0), s.SLBA())
	assert.Equal(t, uint32(8), s.Blocks())
	assert.False(t, s.IsFabrics())
	assert.Empty(t, s.InCapsule)

	require.NoError(t, s.DecodeFromBytes(nvmeSQEConnect))
	assert.True(t, s.IsFabrics())
	assert.Equal(t, layers.NVMeFabricsConnect, s.FabricsType())
	assert.Equal(t, "Connect", s.FabricsType().String())
	assert.Equal(t, uint16(0), s.ConnectRecFmt())
	assert.Equal(t, uint16(0), s.ConnectQID())
	assert.Equal(t, uint16(31), s.ConnectSQSize())
	assert.Equal(t, uint8(0), s.ConnectCAttr())
	assert.Equal(t, uint32(5000), s.ConnectKATO())
	assert.Equal(t, uint32(1024), s.SGL.Length)
	assert.Equal(t, uint32(0x2433), s.SGL.Key)

	require.NoError(t, s.DecodeFromBytes(nvmeSQEPropGet))
	assert.Equal(t, layers.NVMeFabricsPropertyGet, s.FabricsType())
	assert.Equal(t, uint16(1), s.CID)
	assert.Equal(t, uint8(1), s.PropertyAttrib())
	assert.Equal(t, uint32(0), s.PropertyOffset())
	assert.Equal(t, layers.NVMeSGL{Type: layers.NVMeSGLKeyedDataBlock}, s.SGL) // no data: a keyed descriptor of length 0

	require.NoError(t, s.DecodeFromBytes(nvmeSQESetFeatures))
	assert.Equal(t, "Set Features", s.Opcode.Name(true))
	assert.Equal(t, "Dataset Management", s.Opcode.Name(false))
	assert.Equal(t, "Number of Queues", s.FeatureID().String())

	err := s.DecodeFromBytes(nvmeSQERead[:63])
	assert.Error(t, err)
}

func TestNVMeCQE(t *testing.T) {
	var c layers.NVMeCQE
	require.NoError(t, c.DecodeFromBytes(nvmeCQERead))
	assert.Equal(t, layers.NVMeCQE{SQHD: 2, SQID: 1, CID: 0x41}, c)
	assert.True(t, c.Status.OK())
	assert.Equal(t, "Success", c.Status.String())

	require.NoError(t, c.DecodeFromBytes(nvmeCQEPropGet))
	assert.Equal(t, uint32(0x0f00007f), c.DW0) // CAP: MQES 127, TO 15
	assert.Equal(t, uint32(0x820), c.DW1)
	assert.Equal(t, uint16(1), c.CID)

	assert.Error(t, c.DecodeFromBytes(nvmeCQERead[:15]))
}

func TestNVMeStatus(t *testing.T) {
	for _, tc := range []struct {
		raw            uint16
		name           string
		sct, sc        uint8
		dnr, more, phs bool
	}{
		{0x0000, "Success", 0, 0, false, false, false},
		{0x0001, "Success", 0, 0, false, false, true},
		{0x0002, "Invalid Command Opcode", 0, 1, false, false, false},
		{0x8004, "Invalid Field in Command", 0, 2, true, false, false},
		{0x0100, "LBA Out of Range", 0, 0x80, false, false, false},
		{0x0200 | 0x82<<1, "Connect Invalid Parameters", 1, 0x82, false, false, false},
		{0x0400 | 0x81<<1, "Unrecovered Read Error", 2, 0x81, false, false, false},
		{0x4000 | 0x0e00 | 0x12<<1, "SCT 0x7 SC 0x12", 7, 0x12, false, true, false},
	} {
		s := layers.NVMeStatus(tc.raw)
		assert.Equal(t, tc.name, s.String(), "%#x", tc.raw)
		assert.Equal(t, tc.sct, s.SCT(), "%#x", tc.raw)
		assert.Equal(t, tc.sc, s.SC(), "%#x", tc.raw)
		assert.Equal(t, tc.dnr, s.DNR(), "%#x", tc.raw)
		assert.Equal(t, tc.more, s.More(), "%#x", tc.raw)
		assert.Equal(t, tc.phs, s.Phase(), "%#x", tc.raw)
	}
}

func TestNVMeConnectData(t *testing.T) {
	d := make([]byte, layers.NVMeConnectDataLength)
	copy(d, []byte{0xde, 0xad})
	d[16], d[17] = 0xff, 0xff
	copy(d[256:], "nqn.2024-01.lab.ulplab:nvme-ram0")
	copy(d[512:], "nqn.2014-08.org.nvmexpress:uuid:1")
	var c layers.NVMeConnectData
	require.NoError(t, c.DecodeFromBytes(d))
	assert.Equal(t, uint16(0xffff), c.CNTLID)
	assert.Equal(t, "nqn.2024-01.lab.ulplab:nvme-ram0", c.SubNQN)
	assert.Equal(t, "nqn.2014-08.org.nvmexpress:uuid:1", c.HostNQN)
	assert.Equal(t, d[:16], c.HostID)
	assert.Error(t, c.DecodeFromBytes(d[:1023]))
}

func TestNVMeRDMACMReq(t *testing.T) {
	// The CM REQ private data of the capture's I/O queue: after the IP-CM
	// header, recfmt 0, qid 1, hrqsize 128, hsqsize 127 (tshark's
	// nvme-rdma.cm.req.* values).
	priv := make([]byte, 92)
	copy(priv[36:], []byte{0, 0, 1, 0, 128, 0, 127, 0, 0xff, 0xff})
	r, ok := layers.DecodeNVMeRDMACMReq(priv)
	require.True(t, ok)
	assert.Equal(t, layers.NVMeRDMACMReq{QID: 1, HRQSize: 128, HSQSize: 127, CNTLID: 0xffff}, r)
	_, ok = layers.DecodeNVMeRDMACMReq(priv[:40])
	assert.False(t, ok)
}

func TestNVMeNames(t *testing.T) {
	assert.Equal(t, "Identify Controller", layers.NVMeCNS(1).String())
	assert.Equal(t, "Discovery", layers.NVMeLogPage(0x70).String())
	assert.Equal(t, "Keep Alive Timer", layers.NVMeFeature(0x0f).String())
	assert.Equal(t, "Unknown (0xee)", layers.NVMeOpcode(0xee).Name(false))
	assert.True(t, layers.NVMeOpKeepAlive.Known())
	assert.False(t, layers.NVMeOpcode(0xee).Known())
	assert.Equal(t, "Property Set", layers.NVMeFabricsPropertySet.String())
}

func FuzzNVMeCapsules(f *testing.F) {
	for _, s := range [][]byte{nvmeSQERead, nvmeCQERead, nvmeSQEConnect, nvmeSQEPropGet, nvmeCQEPropGet, nvmeSQESetFeatures} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s layers.NVMeSQE
		if s.DecodeFromBytes(data) == nil {
			_ = s.Opcode.Name(true) + s.Opcode.Name(false) + s.FabricsType().String() + s.CNS().String() +
				s.LogPageID().String() + s.FeatureID().String()
			if len(s.InCapsule) != len(data)-layers.NVMeSQELength {
				t.Fatalf("in-capsule data of %d bytes from %d", len(s.InCapsule), len(data))
			}
			var c layers.NVMeConnectData
			_ = c.DecodeFromBytes(s.InCapsule)
		}
		var c layers.NVMeCQE
		if c.DecodeFromBytes(data) == nil {
			_ = c.Status.String() + c.Status.SCTName()
		}
		_, _ = layers.DecodeNVMeRDMACMReq(data)
	})
}

// The encoders write back the real capsules the decoders read: the known
// answers are nvmet-rdma's and the Linux host's bytes.
func TestNVMeEncodeRoundTrip(t *testing.T) {
	for name, v := range map[string][]byte{"Read": nvmeSQERead, "Connect": nvmeSQEConnect, "Property Get": nvmeSQEPropGet,
		"Set Features": nvmeSQESetFeatures} {
		var s layers.NVMeSQE
		require.NoError(t, s.DecodeFromBytes(v), name)
		assert.Equal(t, v, s.AppendTo(nil), name)
	}
	for name, v := range map[string][]byte{"Read": nvmeCQERead, "Property Get": nvmeCQEPropGet} {
		var c layers.NVMeCQE
		require.NoError(t, c.DecodeFromBytes(v), name)
		assert.Equal(t, v, c.AppendTo(nil), name)
	}
	cd := layers.NVMeConnectData{HostID: []byte{15: 7}, CNTLID: 0xffff, SubNQN: "nqn.sub", HostNQN: "nqn.host"}
	b := cd.AppendTo(nil)
	var back layers.NVMeConnectData
	require.NoError(t, back.DecodeFromBytes(b))
	assert.Equal(t, []any{cd.HostID, cd.CNTLID, cd.SubNQN, cd.HostNQN}, []any{back.HostID, back.CNTLID, back.SubNQN, back.HostNQN})
	req := layers.NVMeRDMACMReq{QID: 1, HRQSize: 128, HSQSize: 127, CNTLID: 0xffff}
	priv := append(make([]byte, 36), req.AppendTo(nil)...)
	assert.Len(t, priv, 36+32)
	got, ok := layers.DecodeNVMeRDMACMReq(priv)
	require.True(t, ok)
	assert.Equal(t, req, got)
	rep := layers.NVMeRDMACMRep{CRQSize: 128}
	assert.Equal(t, []byte{0, 0, 128, 0}, rep.AppendTo(nil)[:4])
}
