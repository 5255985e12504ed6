package layers_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// writeOnlyFrame builds a RoCEv2/IPv4 RC RDMA WRITE ONLY frame with size
// bytes of payload and a valid ICRC.
func writeOnlyFrame(tb testing.TB, size int) []byte {
	tb.Helper()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i)
	}
	b := &layers.BTH{Opcode: 0x0A, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 100,
		RETH: layers.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: uint32(size)}}
	b.Trailer.Pad = make([]byte, (4-size%4)%4)
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	ls := append([]gopacket.SerializableLayer{
		&gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4},
		ip, &gplayers.UDP{SrcPort: 49152, DstPort: 4791}}, b.SerializableLayers(payload)...)
	buf := gopacket.NewSerializeBuffer()
	// RoCEv2 leaves the UDP checksum 0, so only lengths are fixed here.
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		tb.Fatal(err)
	}
	frame := buf.Bytes()
	if err := layers.FinishFrame(frame, gplayers.LayerTypeEthernet, layers.ParserOptions{}); err != nil {
		tb.Fatal(err)
	}
	return frame
}

// BenchmarkDecodingLayerParser decodes Ethernet/IPv4/UDP/BTH/RETH + 64 bytes
// of payload with a plain gopacket.DecodingLayerParser over ibwire's layers.
func BenchmarkDecodingLayerParser(b *testing.B) {
	frame := writeOnlyFrame(b, 64)
	var (
		eth     gplayers.Ethernet
		ip4     gplayers.IPv4
		udp     gplayers.UDP
		bth     layers.BTH
		payload gopacket.Payload
	)
	dls := append([]gopacket.DecodingLayer{&eth, &ip4, &udp, &payload}, bth.DecodingLayers()...)
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet, dls...)
	decoded := make([]gopacket.LayerType, 0, 8)
	if err := parser.DecodeLayers(frame, &decoded); err != nil {
		b.Fatal(err)
	}
	if len(decoded) != 6 || decoded[4] != layers.LayerTypeRETH || decoded[5] != gopacket.LayerTypePayload {
		b.Fatalf("decoded %v", decoded)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParser is the same frame through layers.Parser, with the ICRC check.
func BenchmarkParser(b *testing.B) {
	frame := writeOnlyFrame(b, 64)
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Decode(frame); err != nil {
			b.Fatal(err)
		}
		if st, _ := p.CheckICRC(); st != layers.CRCGood {
			b.Fatal(st)
		}
	}
}

// BenchmarkICRC computes the ICRC of RoCEv2/IPv4 WRITE ONLY packets.
func BenchmarkICRC(b *testing.B) {
	for _, size := range []int{64, 1024, 4096} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			frame := writeOnlyFrame(b, size)
			pkt := frame[14:] // from the IPv4 header through the ICRC
			var c layers.ICRCComputer
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Compute(layers.EncapRoCEv2IPv4, pkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVCRC(b *testing.B) {
	pkt := make([]byte, 4096+28)
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		layers.ComputeVCRC(pkt)
	}
}
