package layers_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// madReadFrames reads every frame of a classic pcap file.
func madReadFrames(t testing.TB, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, path)
		out = append(out, data)
	}
}

// madTSV reads a tshark -T fields file into one map per frame.
func madTSV(t testing.TB, path string) []map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	head := strings.Split(lines[0], "\t")
	var rows []map[string]string
	for _, line := range lines[1:] {
		row := map[string]string{}
		for j, v := range strings.Split(line, "\t") {
			row[head[j]] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// madOf returns the MAD of a decoded packet and the bytes it was decoded from.
func madOf(t testing.TB, p gopacket.Packet) (*layers.MAD, []byte) {
	t.Helper()
	l := p.Layer(layers.LayerTypeMAD)
	if l == nil {
		return nil, nil
	}
	m := l.(*layers.MAD)
	return m, append(append([]byte(nil), m.Contents...), m.Payload...)
}

// TestMADsMatchTshark decodes the 43 native-IB frames (SMPs, SA PathRecord,
// CM REQ/REP/RTU) and compares every MAD field tshark 4.0.17 printed for
// the same frames; each MAD re-serializes to its own bytes.
func TestMADsMatchTshark(t *testing.T) {
	frames := madReadFrames(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	rows := madTSV(t, filepath.Join(vectorsDir, "derived-ib-native-linktype147-userdlt.tshark-fields.tsv"))
	require.Len(t, rows, len(frames))
	checked := map[string]int{}
	for i, row := range rows {
		p := gopacket.NewPacket(frames[i], layers.LayerTypeLRH, gopacket.Default)
		require.Nil(t, p.ErrorLayer(), "frame %d", i+1)
		m, raw := madOf(t, p)
		if row["infiniband.mad.mgmtclass"] == "" {
			assert.Nil(t, m, "frame %d has no MAD for tshark", i+1)
			continue
		}
		require.NotNil(t, m, "frame %d", i+1)
		num := func(k string) uint64 {
			v, err := strconv.ParseUint(row[k], 0, 64)
			require.NoError(t, err, "frame %d %s=%q", i+1, k, row[k])
			checked[k]++
			return v
		}
		assert.Equal(t, num("infiniband.mad.mgmtclass"), uint64(m.MgmtClass), "frame %d", i+1)
		assert.Equal(t, num("infiniband.mad.method"), uint64(m.Method), "frame %d", i+1)
		assert.Equal(t, num("infiniband.mad.attributeid"), uint64(m.AttributeID), "frame %d", i+1)
		assert.Equal(t, num("infiniband.mad.transactionid"), m.TransactionID, "frame %d", i+1)
		assert.True(t, strings.HasSuffix(row["_ws.col.Info"], m.Info()), "frame %d: %q vs %q", i+1, row["_ws.col.Info"], m.Info())
		body := p.Layer(m.NextLayerType())
		require.NotNil(t, body, "frame %d: no %v layer", i+1, m.NextLayerType())
		if m.MgmtClass == layers.MgmtClassCM {
			cm := body.(*layers.CM)
			if row["infiniband.cm.req.localqpn"] != "" {
				assert.Equal(t, num("infiniband.cm.req.localqpn"), uint64(cm.REQ.LocalQPN), "frame %d", i+1)
				assert.Equal(t, num("infiniband.cm.req.serviceid"), uint64(cm.REQ.ServiceID), "frame %d", i+1)
				assert.False(t, cm.REQ.ServiceID.IsIPCM(), "IPoIB-CM service IDs are not IP-CM")
			}
			if row["infiniband.cm.rep.localqpn"] != "" {
				assert.Equal(t, num("infiniband.cm.rep.localqpn"), uint64(cm.REP.LocalQPN), "frame %d", i+1)
			}
		}
		out, err := m.Bytes()
		require.NoError(t, err)
		assert.Equal(t, raw, out, "frame %d: decode then serialize", i+1)
	}
	assert.Equal(t, 17, checked["infiniband.mad.transactionid"], "MAD frames")
	assert.Equal(t, 3, checked["infiniband.cm.req.localqpn"], "REQ frames")
	assert.Equal(t, 3, checked["infiniband.cm.rep.localqpn"], "REP frames")
}

// TestSMPDirectedSMInfo checks the directed-route SubnGet/SubnGetResp(SMInfo)
// of frames 1 and 2 field by field (values read with the IBTA §14.2.5.13 layout).
func TestSMPDirectedSMInfo(t *testing.T) {
	frames := madReadFrames(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	for _, tc := range []struct {
		frame     int
		direction bool
		ret       []byte
		want      layers.SMInfo
	}{
		{1, false, []byte{0, 0, 0, 0}, layers.SMInfo{SMState: layers.SMStateNotActive}},
		{2, true, []byte{0, 6, 1, 0}, layers.SMInfo{GUID: 0x0002c9020020b4dd, ActCount: 37434, SMState: layers.SMStateMaster}},
	} {
		p := gopacket.NewPacket(frames[tc.frame-1], layers.LayerTypeLRH, gopacket.Default)
		dr, ok := p.Layer(layers.LayerTypeSMPDirected).(*layers.SMPDirected)
		require.True(t, ok, "frame %d", tc.frame)
		assert.Equal(t, tc.direction, dr.Direction())
		assert.Equal(t, uint16(0), dr.Status())
		assert.Equal(t, uint8(1), dr.HopPointer())
		assert.Equal(t, uint8(2), dr.HopCount())
		assert.Equal(t, uint16(0xFFFF), dr.DrSLID)
		assert.Equal(t, uint16(0xFFFF), dr.DrDLID)
		assert.Equal(t, []byte{0, 2, 3, 0}, dr.InitialPath[:4])
		assert.Equal(t, tc.ret, dr.ReturnPath[:4])
		si, ok := dr.SMInfo()
		require.True(t, ok)
		assert.Equal(t, tc.want, si)
		_, ok = dr.PortInfo()
		assert.False(t, ok, "an SMInfo SMP has no PortInfo")
		m := p.Layer(layers.LayerTypeMAD).(*layers.MAD)
		assert.Equal(t, m.Status, layers.DirectedRouteStatus(dr.Direction(), dr.Status()))
		assert.Equal(t, m.ClassSpecific, layers.DirectedRouteClassSpecific(dr.HopPointer(), dr.HopCount()))
	}
}

// TestSAPathRecord checks the SubnAdmGet/GetResp(PathRecord) of frames 32-33.
func TestSAPathRecord(t *testing.T) {
	frames := madReadFrames(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	p := gopacket.NewPacket(frames[32], layers.LayerTypeLRH, gopacket.Default)
	sa, ok := p.Layer(layers.LayerTypeSA).(*layers.SA)
	require.True(t, ok)
	assert.Equal(t, layers.SAAttrPathRecord, sa.AttributeID)
	assert.Equal(t, layers.MethodGetResp, sa.Method)
	assert.Equal(t, layers.RMPPHeader{Status: 0}, sa.RMPP)
	assert.Equal(t, uint16(8), sa.AttributeOffset, "64-byte records")
	assert.Equal(t, uint64(0x340c), sa.ComponentMask)
	pr, ok := sa.PathRecord()
	require.True(t, ok)
	assert.Equal(t, net.ParseIP("fe80::2:c903:0:1895"), pr.DGID)
	assert.Equal(t, net.ParseIP("fe80::2:c902:24:f636"), pr.SGID)
	assert.Equal(t, uint16(2), pr.DLID)
	assert.Equal(t, uint16(4), pr.SLID)
	assert.True(t, pr.Reversible)
	assert.Equal(t, uint16(0xFFFF), pr.PKey)
	assert.Equal(t, layers.PathSelector(2), pr.MTUSelector)
	assert.Equal(t, 2048, pr.MTU.Bytes())
	assert.Equal(t, "10 Gb/s", pr.Rate.String())
	assert.Equal(t, uint8(18), pr.PacketLifeTime)

	var rec [layers.PathRecordLength]byte
	require.NoError(t, pr.MarshalTo(rec[:]))
	assert.Equal(t, sa.Data[:layers.PathRecordLength], rec[:], "PathRecord re-encodes")
}

// TestPathRecordOffsets pins every PathRecord field to its IBTA bit position.
func TestPathRecordOffsets(t *testing.T) {
	want := layers.PathRecord{ServiceID: 0x0102030405060708, DGID: net.ParseIP("fe80::1"), SGID: net.ParseIP("fe80::2"),
		DLID: 0x1122, SLID: 0x3344, RawTraffic: true, Reserved44: 5, FlowLabel: 0xABCDE, HopLimit: 0x7F, TClass: 0x5A,
		Reversible: true, NumbPath: 0x55, PKey: 0x8001, QoSClass: 0xFED, SL: 0xC, MTUSelector: 2, MTU: layers.MTU4096,
		RateSelector: 1, Rate: 16, PacketLifeTimeSelector: 3, PacketLifeTime: 0x2A, Preference: 9,
		Reserved58: []byte{1, 2, 3, 4, 5, 6}}
	var d [layers.PathRecordLength]byte
	require.NoError(t, want.MarshalTo(d[:]))
	assert.Equal(t, "8001", hexOf(d[50:52]))
	assert.Equal(t, "0102030405060708", hexOf(d[0:8]), "ServiceID")
	assert.Equal(t, "11223344", hexOf(d[40:44]), "DLID, SLID")
	assert.Equal(t, "dabcde7f", hexOf(d[44:48]), "RawTraffic|Reserved|FlowLabel|HopLimit")
	assert.Equal(t, "5ad5", hexOf(d[48:50]), "TClass, Reversible|NumbPath")
	assert.Equal(t, "fedc", hexOf(d[52:54]), "QoSClass|SL")
	assert.Equal(t, byte(9), d[57], "Preference")
	assert.Equal(t, "010203040506", hexOf(d[58:64]))
	assert.Equal(t, byte(2<<6|5), d[54])
	assert.Equal(t, byte(1<<6|16), d[55])
	assert.Equal(t, byte(3<<6|0x2A), d[56])
	assert.Equal(t, want, layers.DecodePathRecord(d[:]))
	assert.Error(t, want.MarshalTo(d[:10]))
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var s []byte
	for _, c := range b {
		s = append(s, digits[c>>4], digits[c&15])
	}
	return string(s)
}

// TestSMPAttributes decodes NodeInfo, PortInfo and NodeDescription from
// data laid out by hand at the IBTA offsets, through a LID-routed SMP that
// is serialized and decoded again.
func TestSMPAttributes(t *testing.T) {
	ni := make([]byte, layers.SMPDataLength)
	ni[0], ni[1], ni[2], ni[3] = 1, 1, 2, 36
	binary.BigEndian.PutUint64(ni[4:], 0x1111)
	binary.BigEndian.PutUint64(ni[12:], 0x2222)
	binary.BigEndian.PutUint64(ni[20:], 0x3333)
	binary.BigEndian.PutUint16(ni[28:], 8)
	binary.BigEndian.PutUint16(ni[30:], 0xC738)
	binary.BigEndian.PutUint32(ni[32:], 0xA0)
	ni[36], ni[37], ni[38], ni[39] = 7, 0x00, 0x02, 0xC9

	pi := make([]byte, layers.SMPDataLength)
	binary.BigEndian.PutUint64(pi[8:], 0xfe80000000000000)
	binary.BigEndian.PutUint16(pi[16:], 0x0004)
	binary.BigEndian.PutUint16(pi[18:], 0x0001)
	binary.BigEndian.PutUint32(pi[20:], 0x02510868)
	pi[28], pi[31] = 1, 2
	pi[32], pi[33], pi[34], pi[35], pi[36], pi[41] = 0x74, 0x52, 0x43, 0x22, 0x40, 0x45
	pi[42], pi[43], pi[51], pi[53] = 0xF3, 0x40, 0x92, 0x21
	pi[57], pi[58], pi[59] = 1, 2, 3

	for _, tc := range []struct {
		attr  layers.SMPAttribute
		data  []byte
		check func(t *testing.T, s *layers.SMP)
	}{
		{layers.SMPAttrNodeInfo, ni, func(t *testing.T, s *layers.SMP) {
			got, ok := s.NodeInfo()
			require.True(t, ok)
			assert.Equal(t, layers.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: layers.NodeTypeSwitch, NumPorts: 36,
				SystemImageGUID: 0x1111, NodeGUID: 0x2222, PortGUID: 0x3333, PartitionCap: 8, DeviceID: 0xC738,
				Revision: 0xA0, LocalPortNum: 7, VendorID: 0x0002C9}, got)
			assert.Equal(t, "Switch", got.NodeType.String())
		}},
		{layers.SMPAttrPortInfo, pi, func(t *testing.T, s *layers.SMP) {
			got, ok := s.PortInfo()
			require.True(t, ok)
			assert.Equal(t, uint64(0xfe80000000000000), got.GIDPrefix)
			assert.Equal(t, uint16(4), got.LID)
			assert.Equal(t, uint16(1), got.MasterSMLID)
			assert.Equal(t, uint32(0x02510868), got.CapabilityMask)
			assert.Equal(t, uint8(1), got.LocalPortNum)
			assert.Equal(t, uint8(2), got.LinkWidthActive)
			assert.Equal(t, uint8(7), got.LinkSpeedSupported)
			assert.Equal(t, layers.PortStateActive, got.PortState)
			assert.Equal(t, layers.PortPhysicalState(5), got.PortPhysicalState)
			assert.Equal(t, "LinkUp", got.PortPhysicalState.String())
			assert.Equal(t, uint8(1), got.MKeyProtectBits)
			assert.Equal(t, uint8(3), got.LMC)
			assert.Equal(t, uint8(2), got.LinkSpeedActive)
			assert.Equal(t, layers.MTU2048, got.NeighborMTU)
			assert.Equal(t, layers.MTU4096, got.MTUCap)
			assert.Equal(t, uint8(7), got.VLStallCount)
			assert.Equal(t, uint8(0x13), got.HOQLife)
			assert.Equal(t, uint8(4), got.OperationalVLs)
			assert.True(t, got.ClientReregister)
			assert.Equal(t, uint8(0x12), got.SubnetTimeOut)
			assert.Equal(t, uint8(2), got.LocalPhyErrors)
			assert.Equal(t, uint8(1), got.OverrunErrors)
			assert.Equal(t, uint32(0x010203), got.LinkRoundTripLatency)
		}},
		{layers.SMPAttrNodeDescription, append([]byte("switch-1 HCA-1"), make([]byte, 50)...), func(t *testing.T, s *layers.SMP) {
			got, ok := s.NodeDescription()
			require.True(t, ok)
			assert.Equal(t, "switch-1 HCA-1", got)
			_, ok = s.NodeInfo()
			assert.False(t, ok)
		}},
	} {
		t.Run(tc.attr.String(), func(t *testing.T) {
			m := layers.NewMAD(layers.MgmtClassSubnLID, layers.MethodGetResp, uint16(tc.attr), 42)
			m.SMP.MKey, m.SMP.Data = 0x0123456789abcdef, tc.data
			raw, err := m.Bytes()
			require.NoError(t, err)
			require.Len(t, raw, layers.MADLength)
			assert.Equal(t, tc.data, raw[64:128], "SMP data at MAD byte 64")
			var got layers.MAD
			require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
			assert.Equal(t, uint64(0x0123456789abcdef), got.SMP.MKey)
			assert.Equal(t, layers.LayerTypeSMP, got.NextLayerType())
			tc.check(t, &got.SMP)
			again, err := got.Bytes()
			require.NoError(t, err)
			assert.Equal(t, raw, again)
		})
	}
}

// TestPerfMgtCounters builds PortCounters and PortCountersExtended, checks
// fields at their IBTA §16.1.3.5/§16.1.4.10 offsets and decodes them back.
func TestPerfMgtCounters(t *testing.T) {
	pc := layers.PortCounters{PortSelect: 1, CounterSelect: 0xFFFF, SymbolErrorCounter: 0x0102,
		LinkErrorRecoveryCounter: 3, LinkDownedCounter: 4, PortRcvErrors: 5, PortRcvRemotePhysicalErrors: 6,
		PortRcvSwitchRelayErrors: 7, PortXmitDiscards: 8, PortXmitConstraintErrors: 9, PortRcvConstraintErrors: 10,
		LocalLinkIntegrityErrors: 0xB, ExcessiveBufferOverrunErrors: 0xC, VL15Dropped: 0x0D0E,
		PortXmitData: 0x11111111, PortRcvData: 0x22222222, PortXmitPkts: 0x33333333, PortRcvPkts: 0x44444444,
		PortXmitWait: 0x55555555}
	m := layers.NewMAD(layers.MgmtClassPerf, layers.MethodGetResp, uint16(layers.PerfAttrPortCounters), 7)
	m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
	require.NoError(t, pc.MarshalTo(m.PerfMgt.Data))
	raw, err := m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, byte(1), raw[65], "PortSelect")
	assert.Equal(t, []byte{1, 2}, raw[68:70], "SymbolErrorCounter")
	assert.Equal(t, byte(0xBC), raw[83], "LocalLinkIntegrityErrors|ExcessiveBufferOverrunErrors")
	assert.Equal(t, []byte{0x0D, 0x0E}, raw[86:88], "VL15Dropped")
	assert.Equal(t, []byte{0x55, 0x55, 0x55, 0x55}, raw[104:108], "PortXmitWait")
	var got layers.MAD
	require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
	gotPC, ok := got.PerfMgt.PortCounters()
	require.True(t, ok)
	assert.Equal(t, pc, gotPC)
	_, ok = got.PerfMgt.PortCountersExtended()
	assert.False(t, ok)
	assert.Equal(t, "PERF (PortCounters)", got.Info())

	ext := layers.PortCountersExtended{PortSelect: 2, CounterSelect: 0xFF00, PortXmitData: 1 << 40, PortRcvData: 2,
		PortXmitPkts: 3, PortRcvPkts: 4, PortUnicastXmitPkts: 5, PortUnicastRcvPkts: 6, PortMulticastXmitPkts: 7,
		PortMulticastRcvPkts: 8}
	m = layers.NewMAD(layers.MgmtClassPerf, layers.MethodGetResp, uint16(layers.PerfAttrPortCountersExtended), 8)
	m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
	require.NoError(t, ext.MarshalTo(m.PerfMgt.Data))
	raw, err = m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 0, 1, 0, 0, 0, 0, 0}, raw[72:80], "PortXmitData at data byte 8")
	assert.Equal(t, byte(8), raw[64+71], "PortMulticastRcvPkts ends at data byte 71")
	require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
	gotExt, ok := got.PerfMgt.PortCountersExtended()
	require.True(t, ok)
	assert.Equal(t, ext, gotExt)
	assert.Error(t, pc.MarshalTo(make([]byte, 10)))
	assert.Error(t, ext.MarshalTo(make([]byte, 10)))
}

// TestSARMPPHeader decodes an RMPP DATA segment header laid out by hand.
func TestSARMPPHeader(t *testing.T) {
	raw := make([]byte, layers.MADLength)
	raw[0], raw[1], raw[2], raw[3] = 1, byte(layers.MgmtClassSubnAdm), 2, byte(layers.MethodGetTableResp)
	binary.BigEndian.PutUint16(raw[16:], uint16(layers.SAAttrNodeRecord))
	raw[24], raw[25], raw[26], raw[27] = 1, 1, 0x1F<<3|7, 0
	binary.BigEndian.PutUint32(raw[28:], 1)
	binary.BigEndian.PutUint32(raw[32:], 700)
	binary.BigEndian.PutUint64(raw[36:], 0xAABB)
	binary.BigEndian.PutUint16(raw[44:], 27)
	binary.BigEndian.PutUint64(raw[48:], 0x10)
	var m layers.MAD
	require.NoError(t, m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
	r := m.SA.RMPP
	assert.Equal(t, layers.RMPPHeader{Version: 1, Type: layers.RMPPTypeData, RRespTime: 0x1F,
		Flags: layers.RMPPFlagActive | layers.RMPPFlagFirst | layers.RMPPFlagLast, Data1: 1, Data2: 700}, r)
	assert.Equal(t, uint32(1), r.SegmentNumber())
	assert.Equal(t, uint32(700), r.PayloadLength())
	assert.Equal(t, uint32(700), r.NewWindowLast())
	assert.Equal(t, "Active|First|Last", r.Flags.String())
	assert.Equal(t, "DATA", r.Type.String())
	assert.Equal(t, uint64(0xAABB), m.SA.SMKey)
	assert.Equal(t, uint16(27), m.SA.AttributeOffset)
	assert.Equal(t, uint64(0x10), m.SA.ComponentMask)
	assert.Len(t, m.SA.Data, layers.SADataLength)
	_, ok := m.SA.PathRecord()
	assert.False(t, ok)
	assert.Equal(t, "SubnAdmGetTableResp(NodeRecord)", m.Info())
	out, err := m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, raw, out)
}

// TestMADBodyTruncation cuts a MAD of each class at every byte: the error
// is a *DecodeError of class ErrTruncated naming the layer and the field the
// cut falls in, with its offset counted from the MAD's start.
func TestMADBodyTruncation(t *testing.T) {
	for _, tc := range []struct {
		class layers.MgmtClass
		layer string
		attr  uint16
	}{
		{layers.MgmtClassSubnLID, "SMP", 0x11},
		{layers.MgmtClassSubnDirected, "SMPDirected", 0x20},
		{layers.MgmtClassSubnAdm, "SA", 0x35},
		{layers.MgmtClassPerf, "PerfMgt", 0x12},
		{layers.MgmtClassCM, "CM", 0x10},
		{layers.MgmtClassCM, "CM", 0x01},
	} {
		raw, err := layers.NewMAD(tc.class, layers.MethodGet, tc.attr, 1).Bytes()
		require.NoError(t, err)
		for n := 0; n < layers.MADLength; n++ {
			var m layers.MAD
			var df truncFeedback
			err := m.DecodeFromBytes(raw[:n], &df)
			var de *layers.DecodeError
			require.True(t, errors.As(err, &de), "%s cut at %d: %v", tc.layer, n, err)
			assert.ErrorIs(t, err, layers.ErrTruncated)
			assert.True(t, bool(df), "SetTruncated at %d", n)
			want := tc.layer
			if n < layers.MADHeaderLength {
				want = "MAD"
			}
			assert.Equal(t, want, de.Layer, "cut at %d", n)
			assert.NotEmpty(t, de.Field)
			assert.True(t, de.Offset <= n && n < de.Offset+de.Need, "%s.%s at %d+%d does not hold the cut at %d", de.Layer, de.Field, de.Offset, de.Need, n)
			assert.Equal(t, n-de.Offset, de.Have)
		}
		var m layers.MAD
		require.NoError(t, m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback), tc.layer)
	}
}

type truncFeedback bool

func (f *truncFeedback) SetTruncated() { *f = true }

// TestMADNames checks the String methods of the MAD code types.
func TestMADNames(t *testing.T) {
	for _, tc := range []struct {
		v    interface{ String() string }
		want string
	}{
		{layers.SMPAttrSMInfo, "SMInfo"}, {layers.SMPAttrLinearFDB, "LinearForwardingTable"},
		{layers.SMPAttrPKeyTable, "P_KeyTable"}, {layers.SMPAttribute(0x99), "Reserved(0x0099)"},
		{layers.SMPAttribute(0xFF01), "Vendor(0xff01)"},
		{layers.SAAttrPathRecord, "PathRecord"}, {layers.SAAttrInformInfoRecord, "InformInfoRecord"},
		{layers.SAAttrMCMemberRecord, "MCMemberRecord"}, {layers.SAAttribute(0x99), "Reserved(0x0099)"},
		{layers.PerfAttrPortCountersExtended, "PortCountersExtended"}, {layers.PerfAttribute(0x99), "Unknown(0x0099)"},
		{layers.RMPPTypeAbort, "ABORT"}, {layers.RMPPType(9), "Reserved(9)"}, {layers.RMPPFlags(0), "None"},
		{layers.RMPPFlags(1), "Active"}, {layers.RMPPStatus(119), "Inconsistent Last and PayloadLength"},
		{layers.RMPPStatus(50), "Reserved(50)"}, {layers.RMPPStatus(200), "ClassSpecific(200)"},
		{layers.MTU256, "256"}, {layers.MTU4096, "4096"}, {layers.PathMTU(0), "Reserved(0)"},
		{layers.StaticRate(2), "2.5 Gb/s"}, {layers.StaticRate(16), "100 Gb/s"}, {layers.StaticRate(1), "Reserved(1)"},
		{layers.PathSelector(3), "LargestAvailable"}, {layers.NodeTypeCA, "Channel Adapter"},
		{layers.NodeType(9), "Reserved(9)"}, {layers.PortStateArmed, "Armed"}, {layers.SMStateStandby, "Standby"},
		{layers.PortPhysicalState(3), "Disabled"}, {layers.PortPhysicalState(12), "Reserved(12)"},
	} {
		assert.Equal(t, tc.want, tc.v.String())
	}
	m := layers.MAD{MgmtClass: layers.MgmtClassSubnLID, Method: layers.MethodTrapRepress, AttributeID: 2}
	assert.Equal(t, "SubnTrapResp(Notice)", m.Info())
	m = layers.MAD{MgmtClass: 0x09, Method: layers.MethodGet}
	assert.Equal(t, "Vendor(0x09) Get", m.Info())
	raw, err := m.Bytes()
	require.NoError(t, err)
	assert.Len(t, raw, layers.MADHeaderLength, "no body for a class ibwire does not decode")
}

// TestSMPSerializeRejectsOversizedFields checks that a field longer than its
// region is an error, not a silent truncation.
func TestSMPSerializeRejectsOversizedFields(t *testing.T) {
	m := layers.NewMAD(layers.MgmtClassSubnLID, layers.MethodGet, uint16(layers.SMPAttrNodeInfo), 1)
	m.SMP.Data = make([]byte, 65)
	_, err := m.Bytes()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Data")
	d := layers.NewMAD(layers.MgmtClassSubnDirected, layers.MethodGet, uint16(layers.SMPAttrNodeInfo), 1)
	d.SMPDirected.InitialPath = bytes.Repeat([]byte{1}, 65)
	_, err = d.Bytes()
	assert.Error(t, err)
}

// BenchmarkDecodeSMPDirected decodes the SubnGetResp(SMInfo) MAD of frame 2.
func BenchmarkDecodeSMPDirected(b *testing.B) {
	frames := madReadFrames(b, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	_, raw := madOf(b, gopacket.NewPacket(frames[1], layers.LayerTypeLRH, gopacket.Default))
	var m layers.MAD
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if err := m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}
