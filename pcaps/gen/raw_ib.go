package main

import (
	"encoding/binary"
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// rawIB makes native IB traffic that is not IBA transport, or whose payload
// tshark takes for another protocol: raw packets (an RWH with IPv4, ARP and
// an EtherType no dissector takes; raw IPv6), IPoIB-framed payloads of a UD
// and an RC SEND (tshark's "Ethernet over IB" heuristic), Mellanox EoIB on
// UD (a whole Ethernet frame, then a segment of one), and an SA RMPP ABORT
// and STOP whose extended error data are byte sequences.
func rawIB() (craft.Encap, craft.Trace, []string, error) {
	ud, err := craft.NewBuilder(craft.Config{Encap: craft.IB, Service: layers.ServiceUD})
	if err != nil {
		return craft.IB, craft.Trace{}, nil, err
	}
	rc, err := craft.NewBuilder(craft.Config{Encap: craft.IB})
	if err != nil {
		return craft.IB, craft.Trace{}, nil, err
	}
	var tr craft.Trace
	t := craft.DefaultStart
	// add(note)(builder.Build(...)) records a frame and its note.
	add := func(note string) func(craft.Frame, error) {
		return func(f craft.Frame, ferr error) {
			if err == nil {
				err = ferr
			}
			f.Info.Note = note
			tr.Frames = append(tr.Frames, f)
			t = t.Add(100 * time.Microsecond)
		}
	}
	ip4a, ip4b := []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2}
	ip6a := []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 0x01}
	ip6b := []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x02, 0xc9, 0xff, 0xfe, 0, 0, 0x02}
	echo := seqBytes(24, 0x30)
	const (
		etherIPv4, etherARP, etherIPv6 = 0x0800, 0x0806, 0x86DD
		etherUnknown                   = 0x88B5 // IEEE local experimental: no dissector
	)
	add("raw: RWH IPv4, ICMP echo request")(rc.BuildRaw(craft.RawPacket{From: craft.Requester, EtherType: etherIPv4, Payload: icmpv4Echo(ip4a, ip4b, 8, 1, echo)}, t))
	add("raw: RWH IPv4, ICMP echo reply")(rc.BuildRaw(craft.RawPacket{From: craft.Responder, EtherType: etherIPv4, Payload: icmpv4Echo(ip4b, ip4a, 0, 1, echo)}, t))
	add("raw: RWH ARP request")(rc.BuildRaw(craft.RawPacket{From: craft.Requester, EtherType: etherARP, Payload: arpRequest(ip4a, ip4b)}, t))
	add("raw IPv6 (LNH 1): ICMPv6 echo request")(rc.BuildRaw(craft.RawPacket{From: craft.Requester, Payload: icmpv6Echo(ip6a, ip6b, echo)}, t))
	add("raw: RWH EtherType 0x88b5, no dissector: data")(rc.BuildRaw(craft.RawPacket{From: craft.Requester, EtherType: etherUnknown, Payload: seqBytes(16, 0xa0)}, t))

	udSend, _ := layers.OpcodeFor(layers.ServiceUD, layers.OpSend, layers.PosOnly, false, false)
	rcSend, _ := layers.OpcodeFor(layers.ServiceRC, layers.OpSend, layers.PosOnly, false, false)
	udPSN := layers.PSN(0x10)
	udPacket := func(payload []byte) craft.Packet {
		udPSN = udPSN.Add(1)
		return craft.Packet{From: craft.Requester, Payload: payload, BTH: layers.BTH{Opcode: udSend, PKey: 0xFFFF,
			DestQP: 0x000405, PSN: udPSN, DETH: layers.DETH{QKey: 0x00000b1b, SrcQP: 0x000404}}}
	}
	ipoib := func(etherType uint16, pkt []byte) []byte {
		return append([]byte{byte(etherType >> 8), byte(etherType), 0, 0}, pkt...)
	}
	add("UD SEND, IPoIB-framed payload (EtherType IPv4, reserved 0): ICMP echo request")(ud.Build(udPacket(ipoib(etherIPv4, icmpv4Echo(ip4a, ip4b, 8, 2, echo))), t))
	add("RC SEND, IPoIB-framed payload (EtherType IPv6), pad 3: ICMPv6 echo request")(rc.Build(craft.Packet{From: craft.Requester, Payload: ipoib(etherIPv6, icmpv6Echo(ip6a, ip6b, echo[:21])),
		BTH: layers.BTH{Opcode: rcSend, PKey: 0xFFFF, DestQP: 0x000012, PSN: 0x100, AckReq: true}}, t))
	ether := append([]byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00}, icmpv4Echo(ip4a, ip4b, 8, 3, echo)...)
	add("UD SEND, EoIB header (whole frame), Ethernet, IPv4, ICMP echo request")(ud.Build(udPacket(append(eoibHeader(0, 0, false, 0, 0), ether...)), t))
	add("UD SEND, EoIB header (TCP checksum 2, IP checksum 1, FCS, more segments, offset 3, segment ID 4660): a segment, data")(ud.Build(udPacket(append(eoibHeader(2, 1, true, 3, 0x1234), ether...)), t))

	gsi := layers.PSN(0x20)
	rmpp := func(typ layers.RMPPType, status layers.RMPPStatus, tid uint64, first byte) {
		m := layers.NewMAD(layers.MgmtClassSubnAdm, layers.MethodGetTableResp, uint16(layers.SAAttrPathRecord), tid)
		m.SA.RMPP = layers.RMPPHeader{Version: 1, Type: typ, RRespTime: 0x15, Flags: layers.RMPPFlagActive, Status: status}
		// The extended error data fill the 220 bytes after the RMPP header:
		// those of the SA header fields, then the data.
		ext := seqBytes(layers.RMPPExtendedErrorLength, first)
		m.SA.SMKey = binary.BigEndian.Uint64(ext[0:8])
		m.SA.AttributeOffset = binary.BigEndian.Uint16(ext[8:10])
		m.SA.Reserved = binary.BigEndian.Uint16(ext[10:12])
		m.SA.ComponentMask = binary.BigEndian.Uint64(ext[12:20])
		m.SA.Data = make([]byte, layers.SADataLength)
		copy(m.SA.Data, ext[20:])
		payload, merr := m.Bytes()
		if err == nil {
			err = merr
		}
		gsi = gsi.Add(1)
		add("SA SubnAdmGetTableResp(PathRecord), RMPP " + typ.String() + " status " + itoa(int(status)) + " with extended error data")(ud.Build(craft.Packet{From: craft.Responder, Payload: payload, BTH: layers.BTH{Opcode: udSend, PKey: 0xFFFF,
			DestQP: 1, PSN: gsi, DETH: layers.DETH{QKey: layers.GSIQKey, SrcQP: 1}}}, t))
	}
	rmpp(layers.RMPPTypeAbort, 118, 0x5000, 0x01) // total time too long
	rmpp(layers.RMPPTypeStop, 1, 0x5001, 0x41)    // resources exhausted
	return craft.IB, tr, nil, err
}

func seqBytes(n int, first byte) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = first + byte(i)
	}
	return d
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// eoibHeader is a Mellanox EoIB header: signature 0b11 and version 0 (the
// first nibble 0xC is what tshark's heuristic looks for), the checksum
// states and the segmentation fields.
func eoibHeader(tcpChk, ipChk uint8, fcsMS bool, segOffset uint8, segID uint16) []byte {
	w := uint16(0xC000) | uint16(tcpChk&3)<<10 | uint16(ipChk&3)<<8 | uint16(segOffset&0x1F)
	if fcsMS {
		w |= layers.EoIBMaskFCS | layers.EoIBMaskMS
	}
	return []byte{byte(w >> 8), byte(w), byte(segID >> 8), byte(segID)}
}

// checksum is the Internet checksum (RFC 1071) of b, folded onto sum.
func checksum(sum uint32, b []byte) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}

// icmpv4Echo is an IPv4 packet carrying an ICMP echo (type 8) or echo
// reply (type 0), checksums filled in.
func icmpv4Echo(src, dst []byte, typ uint8, seq uint16, data []byte) []byte {
	icmp := append([]byte{typ, 0, 0, 0, 0x17, 0x02, byte(seq >> 8), byte(seq)}, data...)
	binary.BigEndian.PutUint16(icmp[2:4], checksum(0, icmp))
	ip := []byte{0x45, 0, 0, 0, 0, byte(seq), 0x40, 0, 64, 1, 0, 0}
	binary.BigEndian.PutUint16(ip[2:4], uint16(20+len(icmp)))
	ip = append(append(ip, src...), dst...)
	binary.BigEndian.PutUint16(ip[10:12], checksum(0, ip))
	return append(ip, icmp...)
}

// icmpv6Echo is an IPv6 packet carrying an ICMPv6 echo request, its
// checksum over the pseudo-header filled in.
func icmpv6Echo(src, dst []byte, data []byte) []byte {
	icmp := append([]byte{128, 0, 0, 0, 0x2b, 0x02, 0, 1}, data...)
	var sum uint32
	for _, a := range [][]byte{src, dst} {
		for i := 0; i < 16; i += 2 {
			sum += uint32(a[i])<<8 | uint32(a[i+1])
		}
	}
	sum += uint32(len(icmp)) + 58
	binary.BigEndian.PutUint16(icmp[2:4], checksum(sum, icmp))
	ip := []byte{0x60, 0, 0, 0, byte(len(icmp) >> 8), byte(len(icmp)), 58, 64}
	ip = append(append(ip, src...), dst...)
	return append(ip, icmp...)
}

// arpRequest asks who has tpa, for spa, over IPoIB: ARP hardware type 32
// (InfiniBand), 20-byte hardware addresses (QPN and GID), as RFC 4391 has.
func arpRequest(spa, tpa []byte) []byte {
	sha := append([]byte{0x80, 0x00, 0x04, 0x04}, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x02, 0x00, 0x20, 0xb4, 0xdd)
	a := []byte{0x00, 0x20, 0x08, 0x00, 20, 4, 0x00, 0x01}
	a = append(append(a, sha...), spa...)
	a = append(append(a, make([]byte, 20)...), tpa...)
	return a
}
