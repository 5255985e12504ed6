// Command gencap writes the benchmark capture: N RoCEv2 packets with 64-byte
// payloads cycling through RDMA WRITE ONLY, ACK, READ request, READ response
// ONLY, SEND ONLY with immediate and ACK, over 64 QPs between two hosts,
// timestamps 1 µs apart. The output is deterministic.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

func main() {
	n := flag.Int("n", 1000000, "number of packets")
	out := flag.String("o", "bench.pcap", "output pcap `file`")
	qps := flag.Int("qps", 64, "number of queue pairs")
	flag.Parse()
	if err := write(*out, *n, *qps); err != nil {
		fmt.Fprintln(os.Stderr, "gencap:", err)
		os.Exit(1)
	}
}

type host struct {
	mac net.HardwareAddr
	ip  net.IP
}

func write(path string, n, qps int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := capture.NewWriter(bw, capture.FormatPcap, layers.LinkType(1), false)
	if err != nil {
		return err
	}
	a := host{net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.IP{10, 0, 0, 1}}
	b := host{net.HardwareAddr{2, 0, 0, 0, 0, 2}, net.IP{10, 0, 0, 2}}
	payload := make([]byte, 64)
	for i := range payload {
		payload[i] = byte(i)
	}
	psn := make([]layers.PSN, qps)
	parser := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
	buf := gopacket.NewSerializeBuffer()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		step := i % 6
		qp := (i / 6) % qps
		src, dst := a, b
		bth := &layers.BTH{PKey: 0xFFFF, DestQP: uint32(0x100 + qp), PSN: psn[qp]}
		var pl []byte
		switch step {
		case 0:
			bth.Opcode, bth.AckReq, pl = 0x0A, true, payload
			bth.RETH = layers.RETH{VA: 0x7f0000000000 + uint64(i)*64, RKey: 0x1234, DMALength: 64}
		case 1, 5:
			src, dst = b, a
			bth.Opcode, bth.DestQP = 0x11, uint32(0x200+qp)
			bth.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(0x1F), MSN: uint32(i / 6)}
		case 2:
			bth.Opcode, bth.AckReq = 0x0C, true
			bth.RETH = layers.RETH{VA: 0x7f1000000000, RKey: 0x5678, DMALength: 64}
		case 3:
			src, dst = b, a
			bth.Opcode, bth.DestQP, pl = 0x10, uint32(0x200+qp), payload
			bth.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(0x1F), MSN: uint32(i / 6)}
		case 4:
			bth.Opcode, bth.AckReq, bth.SE, pl = 0x05, true, true, payload
			bth.ImmDt = layers.ImmDt{Value: uint32(i)}
		}
		if step != 1 && step != 3 && step != 5 {
			psn[qp] = psn[qp].Add(1)
		}
		ip := &gplayers.IPv4{Version: 4, TTL: 64, Flags: gplayers.IPv4DontFragment, Protocol: gplayers.IPProtocolUDP, SrcIP: src.ip, DstIP: dst.ip, TOS: 2}
		ls := append([]gopacket.SerializableLayer{
			&gplayers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: gplayers.EthernetTypeIPv4},
			ip, &gplayers.UDP{SrcPort: gplayers.UDPPort(0xC000 + qp), DstPort: 4791},
		}, bth.SerializableLayers(pl)...)
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: false}, ls...); err != nil {
			return err
		}
		frame := buf.Bytes()
		ipv4Checksum(frame[14:34])
		if err := parser.Finish(frame); err != nil {
			return err
		}
		ts := start.Add(time.Duration(i) * time.Microsecond)
		if err := w.WritePacket(capture.Packet{Data: frame, LinkType: 1,
			Time: ts, Length: len(frame)}); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// ipv4Checksum fills in the header checksum; gopacket would also checksum
// UDP, which RoCEv2 senders leave 0.
func ipv4Checksum(h []byte) {
	h[10], h[11] = 0, 0
	var sum uint32
	for i := 0; i < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	c := ^uint16(sum)
	h[10], h[11] = byte(c>>8), byte(c)
}
