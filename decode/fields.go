package decode

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Constructors keep the tables below to one line per field.

func uintField(name, title string, t FieldType, base Base, get func(p *Packet) (uint64, bool)) *Field {
	return &Field{Name: name, Title: title, Type: t, Base: base, get: func(p *Packet, v *Value) bool {
		u, ok := get(p)
		v.U = u
		return ok
	}}
}

func boolField(name, title string, get func(p *Packet) (bool, bool)) *Field {
	return &Field{Name: name, Title: title, Type: FTBool, get: func(p *Packet, v *Value) bool {
		b, ok := get(p)
		v.U = 0
		if b {
			v.U = 1
		}
		return ok
	}}
}

func bytesField(name, title string, t FieldType, get func(p *Packet) ([]byte, bool)) *Field {
	return &Field{Name: name, Title: title, Type: t, get: func(p *Packet, v *Value) bool {
		b, ok := get(p)
		v.B = b
		return ok && b != nil
	}}
}

func protoField(name, title string, has func(p *Packet) bool) *Field {
	return &Field{Name: name, Title: title, Type: FTProtocol, get: func(p *Packet, v *Value) bool { return has(p) }}
}

// noneField is a header tshark registers as FT_NONE: -e prints 1 when the
// packet has it.
func noneField(name, title string, has func(p *Packet) bool) *Field {
	f := protoField(name, title, has)
	f.none = true
	return f
}

// withNames attaches value names to a field.
func withNames(f *Field, names func(uint64) (string, bool), byName func(string) (uint64, bool)) *Field {
	f.Names, f.ByName = names, byName
	return f
}

func frameFields() []*Field {
	return []*Field{
		protoField("frame", "Frame", func(p *Packet) bool { return true }),
		uintField("frame.number", "Frame Number", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(p.Number), true }),
		uintField("frame.len", "Frame length on the wire", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(p.Length), true }),
		uintField("frame.cap_len", "Frame length stored into the capture file", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(len(p.Data)), true }),
		uintField("frame.interface_id", "Interface id", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(p.Interface), true }),
		uintField("frame.link_type", "Link type", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(p.LinkType), true }),
		{Name: "frame.time_epoch", Title: "Epoch Time", Type: FTAbsTime, get: func(p *Packet, v *Value) bool {
			v.D = p.Time.Sub(epoch)
			return true
		}},
		{Name: "frame.time_relative", Title: "Time since reference or first frame", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			v.D = p.RelTime
			return true
		}},
		{Name: "frame.time_delta", Title: "Time delta from previous captured frame", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			v.D = p.DeltaTime
			return true
		}},
		{Name: "frame.protocols", Title: "Protocols in frame", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.Protocols()
			return true
		}},
	}
}

func linkFields() []*Field {
	eth := func(p *Packet) bool { return p.has&hasEthernet != 0 }
	ip4 := func(p *Packet) bool { return p.has&hasIPv4 != 0 }
	ip6 := func(p *Packet) bool { return p.has&hasIPv6 != 0 }
	udp := func(p *Packet) bool { return p.has&hasUDP != 0 }
	tcp := func(p *Packet) bool { return p.has&hasTCP != 0 }
	h := func(p *Packet) *layers.Parser { return p.Headers }
	return []*Field{
		byHeaders(protoField("eth", "Ethernet", eth)),
		spanned(SpanEthernet, "SrcMAC", bytesField("eth.src", "Source", FTEther, func(p *Packet) ([]byte, bool) { return h(p).Ethernet.SrcMAC, eth(p) })),
		spanned(SpanEthernet, "DstMAC", bytesField("eth.dst", "Destination", FTEther, func(p *Packet) ([]byte, bool) { return h(p).Ethernet.DstMAC, eth(p) })),
		spanned(SpanEthernet, "EthernetType", uintField("eth.type", "Type", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).Ethernet.EthernetType), eth(p) })),
		byHeaders(protoField("vlan", "802.1Q Virtual LAN", func(p *Packet) bool { return p.has&hasDot1Q != 0 })),
		uintField("vlan.id", "ID", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).Dot1Q.VLANIdentifier), p.has&hasDot1Q != 0 }),
		uintField("vlan.priority", "Priority", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).Dot1Q.Priority), p.has&hasDot1Q != 0 }),

		byHeaders(protoField("ip", "Internet Protocol Version 4", ip4)),
		spanned(SpanIPv4, "Version/IHL", uintField("ip.version", "Version", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.Version), ip4(p) })),
		spanned(SpanIPv4, "Version/IHL", uintField("ip.hdr_len", "Header Length", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.IHL) * 4, ip4(p) })),
		spanned(SpanIPv4, "TOS", uintField("ip.dsfield", "Differentiated Services Field", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.TOS), ip4(p) })),
		spanned(SpanIPv4, "TOS", uintField("ip.dsfield.dscp", "Differentiated Services Codepoint", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.TOS >> 2), ip4(p) })),
		spanned(SpanIPv4, "TOS", withNames(uintField("ip.dsfield.ecn", "Explicit Congestion Notification", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.TOS & 3), ip4(p) }), ecnName, ecnByName)),
		uintField("ip.len", "Total Length", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.Length), ip4(p) }),
		spanned(SpanIPv4, "Id", uintField("ip.id", "Identification", FTUint16, BaseHexDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.Id), ip4(p) })),
		spanned(SpanIPv4, "Flags/FragOffset", boolField("ip.flags.df", "Don't fragment", func(p *Packet) (bool, bool) { return h(p).IPv4.Flags&0x2 != 0, ip4(p) })),
		spanned(SpanIPv4, "TTL", uintField("ip.ttl", "Time to Live", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.TTL), ip4(p) })),
		spanned(SpanIPv4, "Protocol", uintField("ip.proto", "Protocol", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.Protocol), ip4(p) })),
		spanned(SpanIPv4, "Checksum", uintField("ip.checksum", "Header Checksum", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv4.Checksum), ip4(p) })),
		spanned(SpanIPv4, "SrcIP", bytesField("ip.src", "Source Address", FTIPv4, func(p *Packet) ([]byte, bool) { return ipv4Bytes(h(p).IPv4.SrcIP), ip4(p) })),
		spanned(SpanIPv4, "DstIP", bytesField("ip.dst", "Destination Address", FTIPv4, func(p *Packet) ([]byte, bool) { return ipv4Bytes(h(p).IPv4.DstIP), ip4(p) })),

		byHeaders(protoField("ipv6", "Internet Protocol Version 6", ip6)),
		uintField("ipv6.tclass", "Traffic Class", FTUint32, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.TrafficClass), ip6(p) }),
		uintField("ipv6.tclass.dscp", "Differentiated Services Codepoint", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.TrafficClass >> 2), ip6(p) }),
		withNames(uintField("ipv6.tclass.ecn", "Explicit Congestion Notification", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.TrafficClass & 3), ip6(p) }), ecnName, ecnByName),
		uintField("ipv6.flow", "Flow Label", FTUint24, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.FlowLabel), ip6(p) }),
		uintField("ipv6.plen", "Payload Length", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.Length), ip6(p) }),
		uintField("ipv6.nxt", "Next Header", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.NextHeader), ip6(p) }),
		uintField("ipv6.hlim", "Hop Limit", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).IPv6.HopLimit), ip6(p) }),
		bytesField("ipv6.src", "Source Address", FTIPv6, func(p *Packet) ([]byte, bool) { return h(p).IPv6.SrcIP, ip6(p) }),
		bytesField("ipv6.dst", "Destination Address", FTIPv6, func(p *Packet) ([]byte, bool) { return h(p).IPv6.DstIP, ip6(p) }),

		byHeaders(protoField("udp", "User Datagram Protocol", udp)),
		spanned(SpanUDP, "SrcPort", uintField("udp.srcport", "Source Port", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).UDP.SrcPort), udp(p) })),
		spanned(SpanUDP, "DstPort", uintField("udp.dstport", "Destination Port", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).UDP.DstPort), udp(p) })),
		spanned(SpanUDP, "Length", uintField("udp.length", "Length", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).UDP.Length), udp(p) })),
		spanned(SpanUDP, "Checksum", uintField("udp.checksum", "Checksum", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(h(p).UDP.Checksum), udp(p) })),

		byHeaders(protoField("tcp", "Transmission Control Protocol", tcp)),
		uintField("tcp.srcport", "Source Port", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).TCP.SrcPort), tcp(p) }),
		uintField("tcp.dstport", "Destination Port", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).TCP.DstPort), tcp(p) }),
		uintField("tcp.seq", "Sequence Number (raw)", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(h(p).TCP.Seq), tcp(p) }),
		uintField("tcp.len", "TCP Segment Len", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(len(h(p).TCP.Payload)), tcp(p) }),
		bytesField("tcp.payload", "TCP payload", FTBytes, func(p *Packet) ([]byte, bool) { return h(p).TCP.Payload, tcp(p) && len(h(p).TCP.Payload) > 0 }),
	}
}

func ipv4Bytes(ip []byte) []byte {
	if len(ip) == 16 {
		return ip[12:]
	}
	return ip
}

var ecnNames = [4]string{"Not-ECT", "ECT(1)", "ECT(0)", "CE"}

// ECNName names an ECN codepoint (RFC 3168), as tshark and tcpdump print it.
func ECNName(codepoint uint8) string { return ecnNames[codepoint&3] }

func ecnName(u uint64) (string, bool) {
	if u < 4 {
		return ecnNames[u], true
	}
	return "", false
}

func ecnByName(s string) (uint64, bool) {
	for i, n := range ecnNames {
		if strings.EqualFold(n, s) {
			return uint64(i), true
		}
	}
	return 0, false
}

var epoch = time.Unix(0, 0)

// Protocols lists the frame's protocols as frame.protocols does
// ("eth:ethertype:ip:udp:infiniband:data"): each header decoded, with
// Wireshark's names for the dispatch between them ("ethertype" after an
// Ethernet or cooked-capture header), and "data" for a payload no
// dissector takes. The string is built once for each combination of
// layers and kept.
func (p *Packet) Protocols() string {
	key := protocolsKey{has: p.has}
	switch {
	case p.has&hasBTH != 0:
		key.data = p.has&hasMAD == 0 && len(p.Headers.BTH.PacketPayload()) > 0
	case p.has&hasTCP != 0:
		key.data = len(p.Headers.TCP.Payload) > 0
	case p.has&hasUDP != 0:
		key.data = len(p.Headers.UDP.Payload) > 0
	case p.has&hasRWH != 0: // a raw packet of an EtherType ibdump does not decode
		key.data = p.has&hasPayload != 0 && len(p.Headers.Payload) > 0
	}
	slot := &recentProtocols[key.slot()]
	if e := slot.Load(); e != nil && e.key == key {
		return e.s // a capture's packets have few combinations of layers
	}
	var s string
	if v, ok := protocolStrings.Load(key); ok {
		s = v.(string)
	} else {
		s = key.String()
		protocolStrings.Store(key, s)
	}
	slot.Store(&protocolsEntry{key, s})
	return s
}

// protocolsKey is what frame.protocols depends on.
type protocolsKey struct {
	has  layerSet
	data bool // a payload no dissector takes
}

var protocolStrings sync.Map // protocolsKey -> string

// recentProtocols are combinations Protocols met and their strings,
// each in the slot its key names, looked at before protocolStrings (whose
// lookup hashes the key through an interface): an entry is never changed
// once stored, so the workers of one run may share them.
var recentProtocols [64]atomic.Pointer[protocolsEntry]

// slot is the key's slot: a multiplicative hash of all its bits, whose
// top six bits each depend on every bit of the key.
func (k protocolsKey) slot() uint64 {
	u := uint64(k.has) << 1
	if k.data {
		u |= 1
	}
	return (u * 0x9E3779B97F4A7C15) >> 58
}

type protocolsEntry struct {
	key protocolsKey
	s   string
}

func (k protocolsKey) String() string {
	var parts []string
	switch {
	case k.has&hasSLL != 0:
		parts = append(parts, "sll", "ethertype")
	case k.has&hasEthernet != 0:
		parts = append(parts, "eth", "ethertype")
	case k.has&hasERF != 0:
		parts = append(parts, "erf")
	case k.has&(hasIPv4|hasIPv6) != 0 && k.has&hasLRH == 0: // no link-layer header: raw IP
		parts = append(parts, "raw")
	}
	if k.has&hasDot1Q != 0 {
		parts = append(parts, "vlan", "ethertype")
	}
	switch {
	case k.has&hasLRH != 0:
		parts = append(parts, "infiniband") // LRH, GRH, BTH and a raw packet's RWH are one protocol
	case k.has&hasGRH != 0 && k.has&(hasEthernet|hasSLL) != 0:
		parts = append(parts, "infiniband") // RoCEv1
	}
	if k.has&hasARP != 0 {
		parts = append(parts, "arp")
	}
	if k.has&hasMACControl != 0 {
		parts = append(parts, "macc")
	}
	if k.has&hasIPv4 != 0 {
		parts = append(parts, "ip")
	}
	if k.has&hasIPv6 != 0 {
		parts = append(parts, "ipv6")
	}
	if k.has&hasUDP != 0 {
		parts = append(parts, "udp")
		if k.has&hasBTH != 0 {
			parts = append(parts, "infiniband")
		}
	}
	if k.has&hasTCP != 0 {
		parts = append(parts, "tcp")
	}
	if k.data {
		parts = append(parts, "data")
	}
	return strings.Join(parts, ":")
}
