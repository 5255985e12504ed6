package output

import (
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// Protocol returns tshark's Protocol column: RRoCE for RoCEv2, RoCE for
// RoCEv1, InfiniBand for native IB, else the highest protocol decoded.
func Protocol(p *decode.Packet) string {
	switch {
	case p.IsIB() && p.Encapsulation == layers.EncapRoCEv1:
		return "RoCE"
	case p.IsIB() && p.HasUDP():
		return "RRoCE"
	case p.IsIB() || p.HasLRH() && !p.HasIPv4() && !p.HasIPv6() && !p.HasARP():
		// A raw packet (LRH, then IP or ARP) is named for what it carries.
		return "InfiniBand"
	case p.HasUDP():
		return "UDP"
	case p.HasTCP():
		return "TCP"
	case p.HasIPv4():
		return "IPv4"
	case p.HasIPv6():
		return "IPv6"
	case p.HasARP() || p.HasEthernet() && p.Headers.Ethernet.EthernetType == ethernetTypeARP:
		return "ARP"
	case p.HasMACControl():
		return "MAC CTRL"
	case p.HasEthernet():
		return "Ethernet"
	}
	return "Unknown"
}

// AppendAddresses appends the source and destination as tshark's columns
// show them; arrow separates them.
func AppendAddress(buf []byte, p *decode.Packet, src bool) []byte {
	h := p.Headers
	switch {
	case p.HasIPv4():
		if src {
			return appendIP(buf, h.IPv4.SrcIP)
		}
		return appendIP(buf, h.IPv4.DstIP)
	case p.HasIPv6():
		if src {
			return appendIP(buf, h.IPv6.SrcIP)
		}
		return appendIP(buf, h.IPv6.DstIP)
	case p.HasGRH():
		buf = append(buf, "GID: "...)
		if src {
			return appendIP(buf, h.GRH.SGID)
		}
		return appendIP(buf, h.GRH.DGID)
	case p.HasLRH():
		buf = append(buf, "LID: "...)
		if src {
			return appendDec(buf, uint64(h.LRH.SLID))
		}
		return appendDec(buf, uint64(h.LRH.DLID))
	case p.HasEthernet():
		if src {
			return appendMAC(buf, h.Ethernet.SrcMAC)
		}
		return appendMAC(buf, h.Ethernet.DstMAC)
	}
	return buf
}

func appendIP(buf []byte, ip []byte) []byte {
	switch len(ip) {
	case 4:
		return appendIPv4(buf, [4]byte(ip))
	case 16:
		return netip.AddrFrom16([16]byte(ip)).AppendTo(buf)
	}
	return buf
}

func appendMAC(buf []byte, mac []byte) []byte {
	for i, b := range mac {
		if i > 0 {
			buf = append(buf, ':')
		}
		buf = append(buf, hexDigits[b>>4], hexDigits[b&0xF])
	}
	return buf
}

// TextLine renders tshark's default one-line output (-T text):
// "%5d %10s %12s → %-12s %s %d %s", time relative to the first frame.
type TextLine struct {
	// Nanos prints nine decimals, as tshark does for nanosecond captures.
	Nanos bool
	tmp   []byte
	kept  *lineCache // the addresses' columns
	num   counter    // the frame number
}

// Config returns t's options without its scratch state.
func (t *TextLine) Config() TextLine { return TextLine{Nanos: t.Nanos} }

// textAddrs is the part of a -T text line that TextLine keeps in its
// lineCache: "%12s → %-12s " of two IP addresses.
const textAddrs = 1

// Append appends the line for p, without a newline.
func (t *TextLine) Append(buf []byte, p *decode.Packet) []byte {
	if t.kept == nil {
		t.kept = new(lineCache)
	}
	buf = t.num.appendLeft(buf, p.Number, 5)
	buf = append(buf, ' ')
	prec := 6
	if t.Nanos {
		prec = 9
	}
	buf = appendSecondsLeft(buf, p.RelTime, prec, 10, &t.tmp)
	buf = append(buf, ' ')
	// The addresses' columns, the same for every packet between two hosts.
	var k lineKey
	kept := false
	keep := k.setAddrs(p)
	if keep {
		k.part = textAddrs
		buf, kept = t.kept.appendKept(buf, &k)
	}
	if !kept {
		start := len(buf)
		t.tmp = AppendAddress(t.tmp[:0], p, true)
		buf = padLeft(buf, t.tmp, 12)
		buf = append(buf, " → "...)
		t.tmp = AppendAddress(t.tmp[:0], p, false)
		buf = padRight(buf, t.tmp, 12)
		buf = append(buf, ' ')
		if keep {
			t.kept.keep(&k, buf[start:])
		}
	}
	buf = append(buf, Protocol(p)...)
	buf = append(buf, ' ')
	buf = appendInt(buf, int64(p.Length))
	buf = append(buf, ' ')
	if p.IsIB() || p.HasMACControl() {
		buf = AppendInfo(buf, p)
	}
	if p.Err != nil {
		buf = append(buf, "[Malformed Packet: "...)
		buf = append(buf, p.Err.Error()...)
		buf = append(buf, ']')
	}
	return buf
}

func padLeft(buf, s []byte, w int) []byte {
	for i := len(s); i < w; i++ {
		buf = append(buf, ' ')
	}
	return append(buf, s...)
}

func padRight(buf, s []byte, w int) []byte {
	buf = append(buf, s...)
	for i := len(s); i < w; i++ {
		buf = append(buf, ' ')
	}
	return buf
}

// appendFixedSeconds prints d in seconds with prec decimals (truncated, as tshark does).
func appendFixedSeconds(buf []byte, d time.Duration, prec int) []byte {
	if d < 0 {
		buf = append(buf, '-')
		d = -d
	}
	buf = appendInt(buf, int64(d/time.Second))
	buf = append(buf, '.')
	if ns := d % time.Second; ns >= 0 {
		return appendFraction(buf, uint32(ns), prec)
	}
	frac := uint64(d % time.Second) // d is math.MinInt64
	for i := 9; i > prec; i-- {
		frac /= 10
	}
	return appendDigits(buf, frac, prec)
}

// appendIntLeft appends n right-aligned in w columns.
func appendIntLeft(buf []byte, n int64, w int) []byte {
	if n >= 0 && n < 1e9 {
		// The usual case, written in place: count the digits, pad, write.
		d := 1
		for p := int64(10); n >= p; p *= 10 {
			d++
		}
		for ; d < w; d++ {
			buf = append(buf, ' ')
		}
		return appendDec(buf, uint64(n))
	}
	var a [24]byte
	return padLeft(buf, appendInt(a[:0], n), w)
}

// counter writes a frame number, which is mostly one more than the last:
// its digits are the last number's, counted up in place.
type counter struct {
	n     int
	start int // text[start:] are the digits of n
	text  [20]byte
}

// appendLeft appends n right-aligned in w columns, as appendIntLeft does.
func (c *counter) appendLeft(buf []byte, n int, w int) []byte {
	switch {
	case n == c.n+1 && c.start > 0:
		i := len(c.text) - 1
		for ; i >= c.start && c.text[i] == '9'; i-- {
			c.text[i] = '0'
		}
		if i < c.start {
			c.start--
			i = c.start
			c.text[i] = '0'
		}
		c.text[i]++
	case n == c.n && c.start > 0:
	case n >= 0:
		var a [20]byte
		d := appendDec(a[:0], uint64(n))
		c.start = copy(c.text[len(c.text)-len(d):], d)
		c.start = len(c.text) - c.start
	default:
		return appendIntLeft(buf, int64(n), w)
	}
	c.n = n
	for d := len(c.text) - c.start; d < w; d++ {
		buf = append(buf, ' ')
	}
	return append(buf, c.text[c.start:]...)
}

// appendSecondsLeft appends appendFixedSeconds' text right-aligned in w
// columns; tmp is scratch room.
func appendSecondsLeft(buf []byte, d time.Duration, prec, w int, tmp *[]byte) []byte {
	if d >= 0 && d < 1e9*time.Second {
		// Written in place, as appendIntLeft writes.
		sec := int64(d / time.Second)
		n := prec + 2 // a digit, the point and the decimals
		for p := int64(10); sec >= p; p *= 10 {
			n++
		}
		for ; n < w; n++ {
			buf = append(buf, ' ')
		}
		return appendFixedSeconds(buf, d, prec)
	}
	*tmp = appendFixedSeconds((*tmp)[:0], d, prec)
	return padLeft(buf, *tmp, w)
}

// Header values the renderers test; gopacket stays behind decode and layers.
const (
	ethernetTypeARP  = 0x0806
	ipv4DontFragment = 0x2 // IPv4 flags: DF
)
