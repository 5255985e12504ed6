package layers_test

import (
	"net"
	"path/filepath"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

func layerTypes(p gopacket.Packet) []gopacket.LayerType {
	var ts []gopacket.LayerType
	for _, l := range p.Layers() {
		ts = append(ts, l.LayerType())
	}
	return ts
}

// TestPacketAPI decodes through gopacket.NewPacket and the registrations
// (UDP 4791, ethertype 0x8915, LINKTYPE_INFINIBAND, LINKTYPE_ERF).
func TestPacketAPI(t *testing.T) {
	rocev2 := readPcap(t, filepath.Join(vectorsDir, "scapy-rocev2.pcap"))
	uts := readPcap(t, filepath.Join(vectorsDir, "scapy-uts-known-answers.pcap"))
	native := readPcap(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	tests := []struct {
		name  string
		data  []byte
		first gopacket.LayerType
		want  []gopacket.LayerType
	}{
		{"RoCEv2 WRITE ONLY with immediate", rocev2[9].data, gplayers.LayerTypeEthernet, []gopacket.LayerType{
			gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, layers.LayerTypeBTH,
			layers.LayerTypeRETH, layers.LayerTypeImmDt, gopacket.LayerTypePayload, layers.LayerTypeTrailer}},
		{"RoCEv2 READ request", rocev2[10].data, gplayers.LayerTypeEthernet, []gopacket.LayerType{
			gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, layers.LayerTypeBTH,
			layers.LayerTypeRETH, layers.LayerTypeTrailer}},
		{"RoCEv2 atomic ACK", rocev2[22].data, gplayers.LayerTypeEthernet, []gopacket.LayerType{
			gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, layers.LayerTypeBTH,
			layers.LayerTypeAETH, layers.LayerTypeAtomicAckETH, layers.LayerTypeTrailer}},
		{"RoCEv2 CNP", rocev2[28].data, gplayers.LayerTypeEthernet, []gopacket.LayerType{
			gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, layers.LayerTypeBTH,
			layers.LayerTypeCNP, layers.LayerTypeTrailer}},
		{"RoCEv1 WRITE ONLY", uts[1].data, gplayers.LayerTypeEthernet, []gopacket.LayerType{
			gplayers.LayerTypeEthernet, layers.LayerTypeGRH, layers.LayerTypeBTH, layers.LayerTypeRETH,
			gopacket.LayerTypePayload, layers.LayerTypeTrailer}},
		{"native IB SMP on QP0", native[0].data, layers.LayerTypeLRH, []gopacket.LayerType{
			layers.LayerTypeLRH, layers.LayerTypeBTH, layers.LayerTypeDETH, layers.LayerTypeMAD,
			layers.LayerTypeSMPDirected, layers.LayerTypeTrailer}},
		{"native IB with GRH", native[2].data, layers.LayerTypeLRH, []gopacket.LayerType{
			layers.LayerTypeLRH, layers.LayerTypeGRH, layers.LayerTypeBTH, layers.LayerTypeDETH,
			gopacket.LayerTypePayload, layers.LayerTypeTrailer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := gopacket.NewPacket(tt.data, tt.first, gopacket.Default)
			require.Nil(t, p.ErrorLayer(), "%v", p.ErrorLayer())
			assert.Equal(t, tt.want, layerTypes(p))
		})
	}
	// The ETHs of a packet-API BTH are the ones its opcode says.
	p := gopacket.NewPacket(rocev2[9].data, gplayers.LayerTypeEthernet, gopacket.Default)
	reth := p.Layer(layers.LayerTypeRETH).(*layers.RETH)
	assert.Equal(t, uint32(0x5678), reth.RKey)
	assert.Equal(t, uint32(0x01020304), p.Layer(layers.LayerTypeImmDt).(*layers.ImmDt).Value)
	assert.Equal(t, layers.LayerTypeImmDt, reth.NextLayerType())
}

func TestLinkTypeRegistration(t *testing.T) {
	assert.Equal(t, layers.LayerTypeLRH, gplayers.LinkType(layers.LinkTypeInfiniBand).LayerType())
	assert.Equal(t, layers.LayerTypeERF, gplayers.LinkType(layers.LinkTypeERF).LayerType())
	assert.Equal(t, layers.LayerTypeGRH, layers.EthernetTypeRoCEv1.LayerType())
	assert.Equal(t, layers.LayerTypeBTH, layers.UDPPortRoCEv2.LayerType())
	// ERF records decode through the link type too.
	native := readPcap(t, filepath.Join(vectorsDir, "derived-ib-native-linktype247.pcap"))
	erf := erfRecord(native[0].data)
	p := gopacket.NewPacket(erf, gplayers.LinkType(layers.LinkTypeERF), gopacket.Default)
	require.Nil(t, p.ErrorLayer())
	require.NotNil(t, p.Layer(layers.LayerTypeERF))
	assert.Equal(t, layers.ERFTypeInfiniBand, p.Layer(layers.LayerTypeERF).(*layers.ERF).Type)
	require.NotNil(t, p.Layer(layers.LayerTypeLRH))
}

// erfRecord wraps an IB packet in an ERF type 21 record padded to 8 bytes.
func erfRecord(pkt []byte) []byte {
	buf := gopacket.NewSerializeBuffer()
	e := &layers.ERF{Type: layers.ERFTypeInfiniBand, Flags: 5, Timestamp: 0x5f5e100_00000000,
		Padding: make([]byte, (8-(16+len(pkt))%8)%8)}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, e, gopacket.Payload(pkt)); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// TestSerializeFromFieldsThenFinish builds frames from field values in every
// encapsulation, fills the CRCs in a pass over the finished frame, and checks
// that they decode back with good CRCs.
func TestSerializeFromFieldsThenFinish(t *testing.T) {
	payload := []byte("hello, rdma!!") // 13 bytes: 3 pad bytes
	bth := func(op layers.Opcode) *layers.BTH {
		b := &layers.BTH{Opcode: op, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0xFFFFFF}
		b.Trailer.Pad = make([]byte, (4-len(payload)%4)%4)
		return b
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := func(t gplayers.EthernetType) *gplayers.Ethernet {
		return &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: t}
	}
	gid := func(last byte) net.IP { return net.IP{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last} }
	tests := []struct {
		name  string
		first gopacket.LayerType
		outer func() []gopacket.SerializableLayer
		enc   layers.Encapsulation
	}{
		{"RoCEv2/IPv4", gplayers.LayerTypeEthernet, func() []gopacket.SerializableLayer {
			ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}, TOS: 2}
			return []gopacket.SerializableLayer{eth(gplayers.EthernetTypeIPv4), ip, &gplayers.UDP{SrcPort: 49152, DstPort: 4791}}
		}, layers.EncapRoCEv2IPv4},
		{"RoCEv2/IPv6", gplayers.LayerTypeEthernet, func() []gopacket.SerializableLayer {
			ip := &gplayers.IPv6{Version: 6, HopLimit: 64, NextHeader: gplayers.IPProtocolUDP, SrcIP: gid(1), DstIP: gid(2), FlowLabel: 0x12345}
			return []gopacket.SerializableLayer{eth(gplayers.EthernetTypeIPv6), ip, &gplayers.UDP{SrcPort: 49152, DstPort: 4791}}
		}, layers.EncapRoCEv2IPv6},
		{"RoCEv1", gplayers.LayerTypeEthernet, func() []gopacket.SerializableLayer {
			return []gopacket.SerializableLayer{eth(layers.EthernetTypeRoCEv1), &layers.GRH{IPVer: 6, NxtHdr: layers.NxtHdrBTH, HopLmt: 1, SGID: gid(1), DGID: gid(2)}}
		}, layers.EncapRoCEv1},
		{"IB local", layers.LayerTypeLRH, func() []gopacket.SerializableLayer {
			return []gopacket.SerializableLayer{&layers.LRH{VL: 0, LNH: layers.LNHIBALocal, DLID: 4, SLID: 1}}
		}, layers.EncapIBLocal},
		{"IB global", layers.LayerTypeLRH, func() []gopacket.SerializableLayer {
			return []gopacket.SerializableLayer{&layers.LRH{VL: 2, LNH: layers.LNHIBAGlobal, DLID: 4, SLID: 1},
				&layers.GRH{IPVer: 6, NxtHdr: layers.NxtHdrBTH, HopLmt: 1, SGID: gid(1), DGID: gid(2)}}
		}, layers.EncapIBGlobal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bth(0x0A)
			b.RETH = layers.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: uint32(len(payload))}
			ls := append(tt.outer(), b.SerializableLayers(payload)...)
			if udp, ok := ls[2].(*gplayers.UDP); ok {
				require.NoError(t, udp.SetNetworkLayerForChecksum(ls[1].(gopacket.NetworkLayer)))
			}
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf, opts, ls...))
			frame := buf.Bytes()
			require.NoError(t, layers.FinishFrame(frame, tt.first, layers.ParserOptions{}))

			p := layers.NewParser(tt.first, layers.ParserOptions{})
			require.NoError(t, p.Decode(frame))
			assert.Equal(t, tt.enc, p.Encapsulation())
			st, _ := p.CheckICRC()
			assert.Equal(t, layers.CRCGood, st)
			if tt.enc.Native() {
				vst, _ := p.CheckVCRC()
				assert.Equal(t, layers.CRCGood, vst)
			}
			assert.Equal(t, payload, p.BTH.PacketPayload())
			assert.Equal(t, uint8(3), p.BTH.PadCount)
			assert.Equal(t, uint64(0x7f0000001000), p.BTH.RETH.VA)
			assert.Equal(t, layers.PSN(0xFFFFFF), p.BTH.PSN)
		})
	}
}

// TestParserDecodingAllocatesNothing: the DecodingLayerParser path, with the
// ICRC check, allocates nothing per frame.
func TestParserDecodingAllocatesNothing(t *testing.T) {
	frames := readPcap(t, filepath.Join(vectorsDir, "scapy-rocev2.pcap"))
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	for i, f := range frames {
		allocs := testing.AllocsPerRun(100, func() {
			if err := p.Decode(f.data); err != nil {
				t.Fatal(err)
			}
			p.CheckICRC()
		})
		assert.Zero(t, allocs, "frame %d (%v)", i+1, p.BTH.Opcode)
	}
}
