package layers_test

import (
	"fmt"
	"net"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// Build a RoCEv2 RDMA WRITE, fill in its ICRC, and decode it again.
func Example() {
	payload := []byte("hello")
	bth := &layers.BTH{Opcode: 0x0A, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 100,
		RETH: layers.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: uint32(len(payload))}}
	bth.Trailer.Pad = make([]byte, 3) // five bytes of payload round up to eight
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP,
		SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
	// RoCEv2 senders leave the UDP checksum 0: the ICRC covers the packet.
	frameLayers := append([]gopacket.SerializableLayer{
		&gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			EthernetType: gplayers.EthernetTypeIPv4},
		ip, &gplayers.UDP{SrcPort: 49152, DstPort: 4791},
	}, bth.SerializableLayers(payload)...)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, frameLayers...); err != nil {
		fmt.Println(err)
		return
	}
	frame := buf.Bytes()
	if err := layers.FinishFrame(frame, gplayers.LayerTypeEthernet, layers.ParserOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	if err := p.Decode(frame); err != nil {
		fmt.Println(err)
		return
	}
	icrc, _ := p.CheckICRC()
	fmt.Println(p.Decoded)
	fmt.Printf("%v %v QP 0x%06x PSN %v va 0x%x rkey 0x%x len %d payload %q ICRC %v\n",
		p.Encapsulation(), p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN, p.BTH.RETH.VA, p.BTH.RETH.RKey,
		p.BTH.RETH.DMALength, p.BTH.PacketPayload(), icrc)
	// Output:
	// [Ethernet IPv4 UDP BTH RETH Payload]
	// RoCEv2 RC_RDMA_WRITE_ONLY QP 0x000011 PSN 100 va 0x7f0000001000 rkey 0x1234 len 5 payload "hello" ICRC good
}

// A frame cut short names the header and field where it ends.
func ExampleParser_Decode_truncated() {
	p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	frame := []byte{
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, // Ethernet
		0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, // IPv4, 60 bytes
		0xc0, 0, 0x12, 0xb7, 0, 40, 0, 0, // UDP to 4791
		0x0a, 0x40, 0xff, 0xff, 0, 0, 0, 0x11, // BTH cut inside DestQP... and PSN missing
	}
	fmt.Println(p.Decode(frame))
	// Output:
	// BTH.AckReq/Resv7: truncated at byte 8 of the BTH (frame byte 50): data ends at byte 50, UDP.Length says 74
}
