package parquetout

import (
	"github.com/ibwire/ibwire/decode"
)

// direct reads a packets column straight from the decoded packet instead
// of through its registry getter, for the columns every packet has and
// whose getters were the export's largest cost after the typed pages
// (two indirect calls and a decode.Value per cell). The registry still
// names and types the column; TestDirectEqualsRegistry holds each direct
// reader to its registry field on every capture in pcaps/.
type direct func(p *decode.Packet, fc *fieldColumn, c *column)

// directs are the direct readers by column name; the other columns go
// through the registry.
var directs = map[string]direct{
	"frame_len": func(p *decode.Packet, _ *fieldColumn, c *column) { c.putInt32(int32(p.Length)) },
	"cap_len":   func(p *decode.Packet, _ *fieldColumn, c *column) { c.putInt32(int32(len(p.Data))) },
	"eth_src": func(p *decode.Packet, fc *fieldColumn, c *column) {
		if !p.HasEthernet() {
			c.null()
			return
		}
		c.putAddr(fc.fields[0], p.Headers.Ethernet.SrcMAC)
	},
	"eth_dst": func(p *decode.Packet, fc *fieldColumn, c *column) {
		if !p.HasEthernet() {
			c.null()
			return
		}
		c.putAddr(fc.fields[0], p.Headers.Ethernet.DstMAC)
	},
	"src": func(p *decode.Packet, fc *fieldColumn, c *column) {
		switch {
		case p.HasIPv4():
			c.putAddr(fc.fields[0], ipv4Bytes(p.Headers.IPv4.SrcIP))
		case p.HasIPv6():
			c.putAddr(fc.fields[1], p.Headers.IPv6.SrcIP)
		default:
			c.null()
		}
	},
	"dst": func(p *decode.Packet, fc *fieldColumn, c *column) {
		switch {
		case p.HasIPv4():
			c.putAddr(fc.fields[0], ipv4Bytes(p.Headers.IPv4.DstIP))
		case p.HasIPv6():
			c.putAddr(fc.fields[1], p.Headers.IPv6.DstIP)
		default:
			c.null()
		}
	},
	"dscp": func(p *decode.Packet, _ *fieldColumn, c *column) {
		switch {
		case p.HasIPv4():
			c.putInt32(int32(p.Headers.IPv4.TOS >> 2))
		case p.HasIPv6():
			c.putInt32(int32(p.Headers.IPv6.TrafficClass >> 2))
		default:
			c.null()
		}
	},
	"ecn": func(p *decode.Packet, _ *fieldColumn, c *column) {
		switch {
		case p.HasIPv4():
			c.putInt32(int32(p.Headers.IPv4.TOS & 3))
		case p.HasIPv6():
			c.putInt32(int32(p.Headers.IPv6.TrafficClass & 3))
		default:
			c.null()
		}
	},
	"sport": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.HasUDP() {
			c.null()
			return
		}
		c.putInt32(int32(p.Headers.UDP.SrcPort))
	},
	"dport": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.HasUDP() {
			c.null()
			return
		}
		c.putInt32(int32(p.Headers.UDP.DstPort))
	},
	"opcode":    bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.Opcode) }),
	"pad_count": bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.PadCount) }),
	"tver":      bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.TVer) }),
	"p_key":     bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.PKey) }),
	"dest_qp":   bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.DestQP) }),
	"psn":       bthInt(func(p *decode.Packet) int32 { return int32(p.Headers.BTH.PSN) }),
	"se":        bthBool(func(p *decode.Packet) bool { return p.Headers.BTH.SE }),
	"migreq":    bthBool(func(p *decode.Packet) bool { return p.Headers.BTH.MigReq }),
	"ack_req":   bthBool(func(p *decode.Packet) bool { return p.Headers.BTH.AckReq }),
	"fecn":      bthBool(func(p *decode.Packet) bool { return p.Headers.BTH.FECN }),
	"becn":      bthBool(func(p *decode.Packet) bool { return p.Headers.BTH.BECN }),
	"opcode_name": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() {
			c.null()
			return
		}
		op := p.Headers.BTH.Opcode
		c.putEnum(int(op), op.String)
	},
	"service": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() {
			c.null()
			return
		}
		s := p.Headers.BTH.Info().Service
		c.putEnum(int(s), s.String)
	},
	"encap": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() {
			c.null()
			return
		}
		c.putEnum(int(p.Encapsulation), p.Encapsulation.String)
	},
	"icrc": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() || p.Err != nil {
			c.null()
			return
		}
		c.putEnum(int(p.ICRC), p.ICRC.String)
	},
	"conv_id": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if p.Analysis.Conv == 0 {
			c.null()
			return
		}
		c.putInt32(int32(p.Analysis.Conv))
	},
	"direction": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if p.Analysis.Dir == 0 {
			c.null()
			return
		}
		c.putInt32(int32(p.Analysis.Dir))
	},
	"severity": func(p *decode.Packet, _ *fieldColumn, c *column) {
		if s := p.Analysis.Severity; s != decode.SevNone {
			c.putEnum(int(s), s.String)
			return
		}
		c.null()
	},
}

func bthInt(get func(p *decode.Packet) int32) direct {
	return func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() {
			c.null()
			return
		}
		c.putInt32(get(p))
	}
}

func bthBool(get func(p *decode.Packet) bool) direct {
	return func(p *decode.Packet, _ *fieldColumn, c *column) {
		if !p.IsIB() {
			c.null()
			return
		}
		c.putBool(get(p))
	}
}

// ipv4Bytes is an IPv4 address's four bytes, as decode's ip.src gives them.
func ipv4Bytes(ip []byte) []byte {
	if len(ip) == 16 {
		return ip[12:]
	}
	return ip
}

// putAddr adds an address, keyed by its bytes, written as f writes it.
// The last two addresses are checked before the dictionary: a connection's
// packets alternate between its two ends.
func (c *column) putAddr(f *decode.Field, b []byte) {
	if b == nil {
		c.null() // as bytesField: no bytes, no value
		return
	}
	r := &c.recent
	switch {
	case r.n > 0 && string(r.key[0]) == string(b):
		c.putWord(r.idx[0])
		return
	case r.n > 1 && string(r.key[1]) == string(b):
		r.key[0], r.key[1], r.idx[0], r.idx[1] = r.key[1], r.key[0], r.idx[1], r.idx[0]
		c.putWord(r.idx[0])
		return
	}
	i, ok := c.dict[string(b)] // converts without allocating
	if !ok {
		i = c.word(string(b), func() []byte { return f.AppendValue(nil, &decode.Value{B: b}) })
	}
	// The key is kept as a copy: b is the decoder's, overwritten by the
	// next packet.
	r.key[1], r.idx[1] = append(r.key[1][:0], b...), i
	r.key[0], r.key[1], r.idx[0], r.idx[1] = r.key[1], r.key[0], r.idx[1], r.idx[0]
	r.n = min(r.n+1, 2)
	c.putWord(i)
}

// putEnum adds the text of a small number (an opcode, a status), keyed by
// the number: an array index instead of a map lookup.
func (c *column) putEnum(n int, text func() string) {
	if n < 0 || n >= len(c.enum) {
		c.putWord(c.word(text(), func() []byte { return []byte(text()) }))
		return
	}
	if i := c.enum[n]; i > 0 {
		c.putWord(i - 1)
		return
	}
	s := text()
	i := c.word(s, func() []byte { return []byte(s) })
	c.enum[n] = i + 1
	c.putWord(i)
}
