package layers_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// cmREQRping is the 256-byte CM REQ MAD rping sent over RoCEv2 (Linux rxe),
// from pcaps/rxe/rping.pcap frame 3 (UDP payload after BTH and DETH).
// ibwire decodes it as:
//
//	MAD: BaseVersion 1, MgmtClass 0x07 (CM), ClassVersion 2, Method 0x03 Send,
//	     TransactionID 0x000000021026f808, AttributeID 0x0010 (ConnectRequest)
//	REQ: LocalCommID 0x08f82610, ServiceID 0x0000000001061c06 (IP-CM, TCP
//	     port space, port 7174), LocalCAGUID 0x505400fffe770011,
//	     LocalQPN 0x000011, ResponderResources 1, InitiatorDepth 1,
//	     RemoteCMResponseTimeout 20, RC, no E2E flow control,
//	     StartingPSN 2378069, LocalCMResponseTimeout 20, RetryCount 7,
//	     P_Key 0xffff, PathMTU 1024, RNRRetryCount 7, MaxCMRetries 15,
//	     Primary: LIDs 0xffff/0xffff, ::ffff:192.168.77.11 -> ::ffff:192.168.77.12,
//	     FlowLabel 0x7327d, HopLimit 64, LocalACKTimeout 19; no alternate path
//	IP-CM: version 0.0, IPv4, SrcPort 48809, 192.168.77.11 -> 192.168.77.12
var cmREQRping = mustHex("0107020300000000000000021026f808001000000000000008f82610000000000000000001061c06505400fffe77001100000000" +
	"000000000000110100000001000000a0244955a7ffff37f0ffffffff00000000000000000000ffffc0a84d0b0000000000000000" +
	"0000ffffc0a84d0c7327d00000400098000000000000000000000000000000000000000000000000000000000000000000000000" +
	"00000000000000000040bea9000000000000000000000000c0a84d0b000000000000000000000000c0a84d0c0000000000000000" +
	"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// fill returns n distinct-looking bytes starting at seed.
func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

func TestCMREQFromRping(t *testing.T) {
	require.Len(t, cmREQRping, layers.MADLength)
	var m layers.MAD
	require.NoError(t, m.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback))
	assert.Equal(t, layers.MgmtClassCM, m.MgmtClass)
	assert.Equal(t, uint8(2), m.ClassVersion)
	assert.Equal(t, layers.MethodSend, m.Method)
	assert.Equal(t, uint64(0x21026f808), m.TransactionID)
	assert.Equal(t, "CM: ConnectRequest", m.Info())
	assert.Equal(t, layers.LayerTypeCM, m.NextLayerType())
	r := m.CM.REQ
	assert.Equal(t, layers.CMReq{
		LocalCommID: 0x08f82610, ServiceID: 0x0000000001061c06, LocalCAGUID: 0x505400fffe770011,
		LocalQPN: 0x11, ResponderResources: 1, InitiatorDepth: 1, RemoteCMResponseTimeout: 20,
		TransportServiceType: layers.CMTransportRC, StartingPSN: 2378069, LocalCMResponseTimeout: 20,
		RetryCount: 7, PKey: 0xFFFF, PathMTU: layers.MTU1024, RNRRetryCount: 7, MaxCMRetries: 15,
		Primary: layers.CMPath{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: net.ParseIP("192.168.77.11"),
			RemoteGID: net.ParseIP("192.168.77.12"), FlowLabel: 0x7327d, HopLimit: 64, LocalACKTimeout: 19},
		Alternate:   layers.CMPath{LocalGID: make(net.IP, 16), RemoteGID: make(net.IP, 16)},
		PrivateData: cmREQRping[164:],
		IPCM: layers.IPCMHeader{Valid: true, IPVersion: 4, SrcPort: 48809, SrcIP: net.IP{192, 168, 77, 11},
			DstIP: net.IP{192, 168, 77, 12}, ConsumerPrivateData: cmREQRping[200:]},
	}, r)
	assert.True(t, r.ServiceID.IsIPCM())
	assert.Equal(t, layers.PortSpaceTCP, r.ServiceID.PortSpace())
	assert.Equal(t, uint16(7174), r.ServiceID.Port())
	assert.Len(t, []byte(r.IPCM.SrcIP), 4, "IPv4 in its 4-byte form")
	out, err := m.Bytes()
	require.NoError(t, err)
	assert.Equal(t, cmREQRping, out)
}

// TestRpingCMExchange follows rping's connection set-up and tear-down over
// RoCEv2 (REQ, REP, RTU, DREQ, DREP on QP1) through gopacket's packet API.
func TestRpingCMExchange(t *testing.T) {
	path := "../pcaps/rxe/rping.pcap"
	if _, err := os.Stat(path); err != nil {
		t.Skip("rping.pcap not present:", err)
	}
	var seq []layers.CMAttribute
	cms := map[layers.CMAttribute]layers.CM{}
	for i, frame := range madReadFrames(t, path) {
		p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
		m, raw := madOf(t, p)
		if m == nil {
			continue
		}
		require.Nil(t, p.ErrorLayer(), "frame %d", i+1)
		cm, ok := p.Layer(layers.LayerTypeCM).(*layers.CM)
		require.True(t, ok, "frame %d", i+1)
		seq = append(seq, cm.AttributeID)
		cms[cm.AttributeID] = *cm
		out, err := m.Bytes()
		require.NoError(t, err)
		assert.Equal(t, raw, out, "frame %d: decode then serialize", i+1)
	}
	require.Equal(t, []layers.CMAttribute{layers.CMAttrREQ, layers.CMAttrREP, layers.CMAttrRTU,
		layers.CMAttrDREQ, layers.CMAttrDREP}, seq)
	req, rep, rtu, dreq, drep := cms[layers.CMAttrREQ].REQ, cms[layers.CMAttrREP].REP, cms[layers.CMAttrRTU].RTU,
		cms[layers.CMAttrDREQ].DREQ, cms[layers.CMAttrDREP].DREP
	assert.True(t, req.IPCM.Valid)
	assert.Equal(t, "192.168.77.11", req.IPCM.SrcIP.String())
	assert.Equal(t, "192.168.77.12", req.IPCM.DstIP.String())
	assert.Equal(t, uint16(7174), req.ServiceID.Port(), "rping's default port")
	assert.Equal(t, req.LocalCommID, rep.RemoteCommID)
	assert.Equal(t, []uint32{req.LocalCommID, rep.LocalCommID}, []uint32{rtu.LocalCommID, rtu.RemoteCommID})
	assert.Equal(t, []uint32{req.LocalCommID, rep.LocalCommID}, []uint32{dreq.LocalCommID, dreq.RemoteCommID})
	assert.Equal(t, []uint32{rep.LocalCommID, req.LocalCommID}, []uint32{drep.LocalCommID, drep.RemoteCommID})
	assert.Equal(t, rep.LocalQPN, dreq.RemoteQPN, "the client disconnects the server's QP")
	assert.Equal(t, layers.MTU1024, req.PathMTU)
}

// cmCase builds one CM message from fields and names bytes it must land on
// (offsets from the start of the MAD, after IBTA Vol 1 Tables 106-120).
type cmCase struct {
	attr  layers.CMAttribute
	build func(c *layers.CM)
	at    map[int][]byte
	get   func(c *layers.CM) any
}

var cmCases = []cmCase{
	{layers.CMAttrREQ, func(c *layers.CM) {
		c.REQ = layers.CMReq{LocalCommID: 0x01020304, Reserved4: 0xABCDEF, ServiceID: 0x1000000000000404,
			LocalCAGUID: 0x0002c90300001895, Reserved24: 0x5, LocalQKey: 0x11223344, LocalQPN: 0xABCDEF,
			ResponderResources: 4, LocalEECN: 0x123456, InitiatorDepth: 3, RemoteEECN: 0x654321,
			RemoteCMResponseTimeout: 20, TransportServiceType: layers.CMTransportUC, EndToEndFlowControl: true,
			StartingPSN: 0xFEDCBA, LocalCMResponseTimeout: 19, RetryCount: 6, PKey: 0x8001, PathMTU: layers.MTU4096,
			RDCExists: true, RNRRetryCount: 5, MaxCMRetries: 15, SRQ: true, ExtendedTransportType: layers.CMExtendedXRC,
			Primary: layers.CMPath{LocalLID: 4, RemoteLID: 1, LocalGID: net.ParseIP("fe80::2:c902:24:f636"),
				RemoteGID: net.ParseIP("fe80::2:c902:20:b4dd"), FlowLabel: 0xABCDE, Reserved0: 1, PacketRate: 3,
				TrafficClass: 0x20, HopLimit: 1, SL: 7, SubnetLocal: true, Reserved1: 2, LocalACKTimeout: 19, Reserved2: 4},
			Alternate: layers.CMPath{LocalLID: 5, RemoteLID: 6, LocalGID: net.ParseIP("fe80::5"),
				RemoteGID: net.ParseIP("fe80::6"), FlowLabel: 1, PacketRate: 16, SL: 1, LocalACKTimeout: 31},
			PrivateData: fill(92, 0x40)}
	}, map[int][]byte{24: {1, 2, 3, 4}, 32: {0x10, 0, 0, 0, 0, 0, 4, 4}, 56: {0xAB, 0xCD, 0xEF, 4},
		67: {20<<3 | 1<<1 | 1}, 68: {0xFE, 0xDC, 0xBA, 19<<3 | 6}, 72: {0x80, 0x01, 5<<4 | 8 | 5, 15<<4 | 8 | 1},
		76: {0, 4, 0, 1, 0xfe, 0x80}, 112: {0xAB, 0xCD, 0xE0, 0x43, 0x20, 1, 7<<4 | 8 | 2, 19<<3 | 4},
		120: {0, 5, 0, 6, 0xfe, 0x80}, 164: {0x40, 0x41}}, func(c *layers.CM) any { return c.REQ }},
	{layers.CMAttrMRA, func(c *layers.CM) {
		c.MRA = layers.CMMra{LocalCommID: 1, RemoteCommID: 2, MessageMRAed: 2, Reserved8: 1, ServiceTimeout: 17,
			Reserved9: 3, PrivateData: fill(222, 1)}
	}, map[int][]byte{28: {0, 0, 0, 2}, 32: {2<<6 | 1, 17<<3 | 3, 1, 2}}, func(c *layers.CM) any { return c.MRA }},
	{layers.CMAttrREJ, func(c *layers.CM) {
		c.REJ = layers.CMRej{LocalCommID: 1, RemoteCommID: 2, MessageRejected: 1, RejectInfoLength: 8,
			Reason: layers.RejConsumerDefined, ARI: fill(72, 0x80), PrivateData: fill(148, 2)}
	}, map[int][]byte{32: {1 << 6, 8 << 1, 0, 28, 0x80, 0x81}, 108: {2, 3}}, func(c *layers.CM) any { return c.REJ }},
	{layers.CMAttrREP, func(c *layers.CM) {
		c.REP = layers.CMRep{LocalCommID: 0x10, RemoteCommID: 0x20, LocalQKey: 0x30, LocalQPN: 0xFC0407,
			Reserved15: 1, LocalEECN: 0x40, Reserved19: 2, StartingPSN: 0xD40B55, Reserved23: 3, ResponderResources: 4,
			InitiatorDepth: 5, TargetACKDelay: 15, FailoverAccepted: layers.CMFailover(2), EndToEndFlowControl: true,
			RNRRetryCount: 7, SRQ: true, Reserved27: 9, LocalCAGUID: 0x0002c9020020b4dc, PrivateData: fill(196, 3)}
	}, map[int][]byte{36: {0xFC, 0x04, 0x07, 1}, 44: {0xD4, 0x0B, 0x55, 3, 4, 5, 15<<3 | 2<<1 | 1, 7<<5 | 1<<4 | 9},
		52: {0, 2, 0xc9, 2}, 60: {3, 4}}, func(c *layers.CM) any { return c.REP }},
	{layers.CMAttrRTU, func(c *layers.CM) {
		c.RTU = layers.CMRtu{LocalCommID: 1, RemoteCommID: 2, PrivateData: fill(224, 4)}
	}, map[int][]byte{24: {0, 0, 0, 1, 0, 0, 0, 2, 4, 5}}, func(c *layers.CM) any { return c.RTU }},
	{layers.CMAttrDREQ, func(c *layers.CM) {
		c.DREQ = layers.CMDreq{LocalCommID: 1, RemoteCommID: 2, RemoteQPN: 0x000011, Reserved11: 1, PrivateData: fill(220, 5)}
	}, map[int][]byte{32: {0, 0, 0x11, 1, 5, 6}}, func(c *layers.CM) any { return c.DREQ }},
	{layers.CMAttrDREP, func(c *layers.CM) {
		c.DREP = layers.CMDrep{LocalCommID: 1, RemoteCommID: 2, PrivateData: fill(224, 6)}
	}, map[int][]byte{32: {6, 7}, 255: {6 + 223}}, func(c *layers.CM) any { return c.DREP }},
	{layers.CMAttrSIDRReq, func(c *layers.CM) {
		c.SIDRReq = layers.CMSidrReq{RequestID: 9, PKey: 0xFFFF, Reserved6: 1, ServiceID: 0x1000, PrivateData: fill(216, 7)}
	}, map[int][]byte{24: {0, 0, 0, 9, 0xFF, 0xFF, 0, 1}, 38: {0x10, 0, 7}}, func(c *layers.CM) any { return c.SIDRReq }},
	{layers.CMAttrSIDRRep, func(c *layers.CM) {
		c.SIDRRep = layers.CMSidrRep{RequestID: 9, Status: layers.SIDRRedirect, AdditionalInfoLength: 72, Reserved6: 2,
			QPN: 0x123456, Reserved11: 3, ServiceID: 0x0000000001111388, QKey: 0x80010000, AdditionalInfo: fill(72, 8),
			PrivateData: fill(136, 9)}
	}, map[int][]byte{28: {4, 72, 0, 2, 0x12, 0x34, 0x56, 3, 0, 0, 0, 0, 1, 0x11, 0x13, 0x88, 0x80, 1, 0, 0, 8},
		120: {9}}, func(c *layers.CM) any { return c.SIDRRep }},
	{layers.CMAttrLAP, func(c *layers.CM) {
		c.LAP = layers.CMLap{LocalCommID: 1, RemoteCommID: 2, Reserved8: 3, RemoteQPN: 0xABCDEF, RemoteCMResponseTimeout: 20,
			Reserved15: 1, Reserved16: 4, AlternateLocalLID: 5, AlternateRemoteLID: 6,
			AlternateLocalGID: net.ParseIP("fe80::7"), AlternateRemoteGID: net.ParseIP("fe80::8"), AlternateFlowLabel: 0x12345,
			Reserved58: 9, AlternateTrafficClass: 0x20, AlternateHopLimit: 64, Reserved61: 2, AlternatePacketRate: 7,
			AlternateSL: 3, AlternateSubnetLocal: true, Reserved62: 1, AlternateLocalACKTimeout: 18, Reserved63: 2,
			PrivateData: fill(168, 10)}
	}, map[int][]byte{32: {0, 0, 0, 3, 0xAB, 0xCD, 0xEF, 20<<3 | 1, 0, 0, 0, 4, 0, 5, 0, 6, 0xfe, 0x80},
		80: {0x12, 0x34, 0x59, 0x20, 64, 2<<6 | 7, 3<<4 | 8 | 1, 18<<3 | 2, 10}}, func(c *layers.CM) any { return c.LAP }},
	{layers.CMAttrAPR, func(c *layers.CM) {
		c.APR = layers.CMApr{LocalCommID: 1, RemoteCommID: 2, AdditionalInfoLength: 16, APStatus: layers.APRInvalidGID,
			Reserved10: 3, AdditionalInfo: fill(72, 11), PrivateData: fill(148, 12)}
	}, map[int][]byte{32: {16, 8, 0, 3, 11}, 108: {12}}, func(c *layers.CM) any { return c.APR }},
	{layers.CMAttrClassPortInfo, func(c *layers.CM) { c.Data = fill(232, 13) },
		map[int][]byte{24: {13}}, func(c *layers.CM) any { return c.Data }},
}

// TestCMRoundTrip builds every CM message from fields, checks the bytes it
// lands on, decodes it back to the same fields and re-serializes it to the
// same bytes.
func TestCMRoundTrip(t *testing.T) {
	for _, tc := range cmCases {
		t.Run(tc.attr.Abbrev(), func(t *testing.T) {
			m := layers.NewCMMAD(tc.attr, 0x0000000bbf9ed13f)
			tc.build(&m.CM)
			raw, err := m.Bytes()
			require.NoError(t, err)
			require.Len(t, raw, layers.MADLength)
			assert.Equal(t, []byte{1, 7, 2, 3}, raw[:4])
			for off, want := range tc.at {
				assert.Equal(t, want, raw[off:off+len(want)], "bytes at MAD offset %d", off)
			}
			var got layers.MAD
			require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
			assert.Equal(t, tc.attr, got.CM.AttributeID)
			assert.Equal(t, tc.get(&m.CM), tc.get(&got.CM))
			again, err := got.Bytes()
			require.NoError(t, err)
			assert.Equal(t, raw, again)

			// A decode resets what the previous message left.
			require.NoError(t, got.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback))
			if tc.attr != layers.CMAttrREQ {
				assert.Zero(t, tc.get(&got.CM))
			}
		})
	}
}

// TestCMIPCMBuild builds IP-CM REQ and SIDR_REQ messages from the header
// fields alone and reads them back, for IPv4 and IPv6.
func TestCMIPCMBuild(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src, dst net.IP
		ipv      uint8
	}{
		{"IPv4", net.ParseIP("10.0.0.1"), net.ParseIP("10.0.0.2"), 4},
		{"IPv6", net.ParseIP("fd00::1"), net.ParseIP("fd00::2"), 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sid := layers.IPCMServiceID(layers.PortSpaceTCP, 4420)
			hdr := layers.IPCMHeader{Valid: true, IPVersion: tc.ipv, SrcPort: 50000, SrcIP: tc.src, DstIP: tc.dst,
				ConsumerPrivateData: []byte("nvme")}
			m := layers.NewCMMAD(layers.CMAttrREQ, 1)
			m.CM.REQ = layers.CMReq{ServiceID: sid, IPCM: hdr}
			raw, err := m.Bytes()
			require.NoError(t, err)
			pd := raw[164:]
			assert.Equal(t, []byte{0, tc.ipv << 4, 0xC3, 0x50}, pd[:4])
			assert.Equal(t, []byte(tc.src[len(tc.src)-4:]), pd[16:20], "source address ends at byte 20")
			assert.Equal(t, []byte("nvme"), pd[36:40])
			var got layers.MAD
			require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
			h := got.CM.REQ.IPCM
			assert.True(t, h.Valid)
			assert.True(t, tc.src.Equal(h.SrcIP), "%v", h.SrcIP)
			assert.True(t, tc.dst.Equal(h.DstIP), "%v", h.DstIP)
			assert.Equal(t, uint16(50000), h.SrcPort)
			assert.Equal(t, "nvme", string(h.ConsumerPrivateData[:4]))
			assert.Len(t, h.ConsumerPrivateData, 92-layers.IPCMHeaderLength)
			assert.Equal(t, tc.src.To4() == nil, len(h.SrcIP) == 16)

			s := layers.NewCMMAD(layers.CMAttrSIDRReq, 2)
			s.CM.SIDRReq = layers.CMSidrReq{ServiceID: layers.IPCMServiceID(layers.PortSpaceUDP, 7471), IPCM: hdr}
			raw, err = s.Bytes()
			require.NoError(t, err)
			require.NoError(t, got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback))
			assert.True(t, got.CM.SIDRReq.IPCM.Valid)
			assert.True(t, tc.dst.Equal(got.CM.SIDRReq.IPCM.DstIP))
			assert.Equal(t, layers.PortSpaceUDP, got.CM.SIDRReq.ServiceID.PortSpace())
		})
	}
	m := layers.NewCMMAD(layers.CMAttrREQ, 1)
	m.CM.REQ.IPCM = layers.IPCMHeader{Valid: true, IPVersion: 4, SrcIP: net.ParseIP("fd00::1")}
	_, err := m.Bytes()
	assert.ErrorContains(t, err, "IPv4")
	m.CM.REQ = layers.CMReq{PrivateData: make([]byte, 93)}
	_, err = m.Bytes()
	assert.ErrorContains(t, err, "REQ.PrivateData")
}

// TestCMTruncationEveryPoint cuts the rping REQ at every byte: decoding
// never panics and names the layer and the REQ field the cut falls in.
func TestCMTruncationEveryPoint(t *testing.T) {
	fields := map[string]bool{}
	for n := 0; n < len(cmREQRping); n++ {
		var m layers.MAD
		var df truncFeedback
		err := m.DecodeFromBytes(cmREQRping[:n], &df)
		var de *layers.DecodeError
		require.True(t, errors.As(err, &de), "cut at %d: %v", n, err)
		assert.ErrorIs(t, err, layers.ErrTruncated)
		assert.True(t, bool(df))
		assert.True(t, de.Offset <= n && n < de.Offset+de.Need, "%s.%s does not hold byte %d", de.Layer, de.Field, n)
		if n < layers.MADHeaderLength {
			assert.Equal(t, "MAD", de.Layer)
		} else {
			assert.Equal(t, "CM", de.Layer)
			assert.True(t, strings.HasPrefix(de.Field, "REQ."), de.Field)
		}
		assert.Contains(t, err.Error(), de.Layer+"."+de.Field)
		fields[de.Field] = true
	}
	for _, f := range []string{"REQ.LocalCommID", "REQ.ServiceID", "REQ.PrimaryLocalGID", "REQ.AlternateLocalACKTimeout",
		"REQ.PrivateData", "TransactionID"} {
		assert.True(t, fields[f], "no cut reported %s", f)
	}
	// Every other message kind too, without panicking.
	for _, tc := range cmCases {
		m := layers.NewCMMAD(tc.attr, 1)
		tc.build(&m.CM)
		raw, err := m.Bytes()
		require.NoError(t, err)
		for n := layers.MADHeaderLength; n < len(raw); n++ {
			var got layers.MAD
			err := got.DecodeFromBytes(raw[:n], gopacket.NilDecodeFeedback)
			var de *layers.DecodeError
			require.True(t, errors.As(err, &de), "%v cut at %d", tc.attr, n)
			assert.True(t, de.Offset <= n && n < de.Offset+de.Need, "%v: %s does not hold byte %d", tc.attr, de.Field, n)
		}
	}
}

func TestCMDecodeAllocatesNothing(t *testing.T) {
	var m layers.MAD
	allocs := testing.AllocsPerRun(200, func() {
		if err := m.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.True(t, m.CM.REQ.IPCM.Valid)
}

func TestServiceID(t *testing.T) {
	nvme := layers.IPCMServiceID(layers.PortSpaceTCP, 4420)
	assert.Equal(t, layers.ServiceID(0x0000000001061144), nvme, "PROTOCOL.md §1.7 NVMe-oF example")
	assert.True(t, nvme.IsIPCM())
	assert.Equal(t, uint8(0x06), nvme.Protocol())
	assert.Equal(t, layers.PortSpaceTCP, nvme.PortSpace())
	assert.Equal(t, uint16(4420), nvme.Port())
	assert.Equal(t, "0x0000000001061144", nvme.String())
	assert.True(t, layers.IPCMServiceID(layers.PortSpaceIB, 1).IsIPCM())
	assert.False(t, layers.IPCMServiceID(layers.PortSpaceIPoIB, 1).IsIPCM(), "IPoIB port space has no 0x01 prefix")
	assert.False(t, layers.ServiceID(0x1000000000000404).IsIPCM(), "IPoIB-CM")
	assert.False(t, layers.ServiceID(0x0000000101061144).IsIPCM())
}

func TestCMNames(t *testing.T) {
	for _, tc := range []struct {
		v    fmt.Stringer
		want string
	}{
		{layers.CMAttrREQ, "ConnectRequest"}, {layers.CMAttrMRA, "MsgRcptAck"}, {layers.CMAttrREJ, "ConnectReject"},
		{layers.CMAttrREP, "ConnectReply"}, {layers.CMAttrRTU, "ReadyToUse"}, {layers.CMAttrDREQ, "DisconnectRequest"},
		{layers.CMAttrDREP, "DisconnectReply"}, {layers.CMAttrSIDRReq, "ServiceIDResReq"},
		{layers.CMAttrSIDRRep, "ServiceIDResReqResp"}, {layers.CMAttrLAP, "LoadAlternatePath"},
		{layers.CMAttrAPR, "AlternatePathResponse"}, {layers.CMAttrClassPortInfo, "ClassPortInfo"},
		{layers.CMAttribute(0x30), "Unknown(0x0030)"},
		{layers.CMTransportRD, "RD"}, {layers.CMTransportExtended, "Extended"}, {layers.CMExtendedXRC, "XRC"},
		{layers.CMFailover(1), "NotSupported"}, {layers.CMRejectedMessage(2), "Other"}, {layers.CMMRAedMessage(2), "LAP"},
		{layers.RejNoQP, "No QP available"}, {layers.RejStaleConnection, "Stale connection"},
		{layers.RejConsumerDefined, "Consumer Reject"}, {layers.RejInvalidAltFlowLabel, "Invalid Alternate Flow Label"},
		{layers.RejVendorOptionNotSupported, "Vendor Option Not Supported"}, {layers.CMRejectReason(34), "Reserved(34)"},
		{layers.SIDRValid, "QPN valid"}, {layers.SIDRUnsupportedVersion, "Unsupported class version"},
		{layers.CMSIDRStatus(6), "Reserved(6)"}, {layers.APRLoaded, "Alternate path loaded"},
		{layers.APRInvalidSL, "Invalid alternate SL"}, {layers.CMAPRStatus(14), "Reserved(14)"},
		{layers.PortSpaceTCP, "TCP"}, {layers.PortSpaceIB, "IB"}, {layers.PortSpace(7), "Unknown(0x0007)"},
	} {
		assert.Equal(t, tc.want, tc.v.String())
	}
	assert.Equal(t, "SIDR_REP", layers.CMAttrSIDRRep.Abbrev())
	assert.Equal(t, "Unknown(0x0030)", layers.CMAttribute(0x30).Abbrev())
	rej := layers.CMRej{RejectInfoLength: 100, ARI: make([]byte, 72)}
	assert.Len(t, rej.AdditionalInfo(), 72, "RejectInfoLength is clamped to the ARI")
}

// ExampleNewCMMAD builds the REP that answers a REQ and reads it back.
func ExampleNewCMMAD() {
	var req layers.MAD
	if err := req.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback); err != nil {
		panic(err)
	}
	rep := layers.NewCMMAD(layers.CMAttrREP, req.TransactionID)
	rep.CM.REP = layers.CMRep{LocalCommID: 0xa611f467, RemoteCommID: req.CM.REQ.LocalCommID, LocalQPN: 0x12,
		StartingPSN: 1000, ResponderResources: req.CM.REQ.InitiatorDepth, InitiatorDepth: req.CM.REQ.ResponderResources,
		RNRRetryCount: 7}
	raw, err := rep.Bytes()
	if err != nil {
		panic(err)
	}
	var got layers.MAD
	if err := got.DecodeFromBytes(raw, gopacket.NilDecodeFeedback); err != nil {
		panic(err)
	}
	ip := req.CM.REQ.IPCM
	fmt.Printf("%s from %v:%d to port %d\n", req.Info(), ip.SrcIP, ip.SrcPort, req.CM.REQ.ServiceID.Port())
	fmt.Printf("%s QPN 0x%06x remote comm ID 0x%08x\n", got.Info(), got.CM.REP.LocalQPN, got.CM.REP.RemoteCommID)
	// Output:
	// CM: ConnectRequest from 192.168.77.11:48809 to port 7174
	// CM: ConnectReply QPN 0x000012 remote comm ID 0x08f82610
}

func BenchmarkDecodeCMREQ(b *testing.B) {
	var m layers.MAD
	b.ReportAllocs()
	b.SetBytes(int64(len(cmREQRping)))
	for b.Loop() {
		if err := m.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSerializeCMREQ(b *testing.B) {
	var m layers.MAD
	require.NoError(b, m.DecodeFromBytes(cmREQRping, gopacket.NilDecodeFeedback))
	buf := gopacket.NewSerializeBuffer()
	ls := m.SerializableLayers()
	b.ReportAllocs()
	for b.Loop() {
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
			b.Fatal(err)
		}
	}
}
