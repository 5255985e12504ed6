package output

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// AppendInfo appends Wireshark's Info column for an IB packet: the opcode's
// OpCodeMap name and "QP=0x%06x ", with the NAK's error in brackets; MADs
// add their method and attribute; CM messages replace it with "CM: <name>".
func AppendInfo(buf []byte, p *decode.Packet) []byte {
	b := p.BTH()
	if b == nil {
		if p.HasMACControl() {
			return appendMACControlInfo(buf, &p.Headers.MACControl)
		}
		return buf
	}
	if p.HasMAD() && p.Headers.MAD.MgmtClass == layers.MgmtClassCM {
		return append(buf, p.Headers.MAD.Info()...) // CM replaces the column
	}
	e := b.Info()
	if e.Info == "Unknown OpCode" || !e.Known {
		buf = append(buf, "Unknown OpCode"...)
	} else {
		buf = append(append(buf, e.Info...), ' ')
	}
	buf = append(buf, "QP="...)
	buf = appendHex(buf, uint64(b.DestQP), 6)
	buf = append(buf, ' ')
	if b.HasETH(layers.HdrAETH) && b.AETH.Syndrome.IsNak() && e.WiresharkDissects() {
		buf = append(append(append(buf, '['), b.AETH.Syndrome.NAKCode().String()...), "] "...)
	}
	if p.HasMAD() {
		buf = append(buf, p.Headers.MAD.Info()...)
	}
	return buf
}

const hexDigits = "0123456789abcdef"

// appendHex appends "0x" and the low width hex digits of u, zero-padded.
// The renderers' hot paths write a handful of these a line: the digits go
// into room made once, not appended one by one.
func appendHex(buf []byte, u uint64, width int) []byte {
	n := len(buf)
	buf = slices.Grow(buf, width+2)[:n+width+2]
	b := buf[n:]
	b[0], b[1] = '0', 'x'
	i := len(b)
	for ; i >= 4; i -= 2 {
		binary.LittleEndian.PutUint16(b[i-2:], hexPair[u&0xFF])
		u >>= 8
	}
	if i == 3 {
		b[2] = hexDigits[u&0xF]
	}
	return buf
}

// hexPair is each byte's two hex digits as a 16-bit word, to store both at
// once.
var hexPair = func() (t [256]uint16) {
	for i := range t {
		t[i] = uint16(hexDigits[i>>4]) | uint16(hexDigits[i&0xF])<<8
	}
	return t
}()

// decPairs is "00" to "99": two decimal digits per lookup.
const decPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendDec appends u in decimal, as strconv.AppendUint(buf, u, 10) does,
// without its calls: the lines' numbers are mostly short, and are written
// in place.
func appendDec(buf []byte, u uint64) []byte {
	if u < 10 {
		return append(buf, byte('0'+u))
	}
	if u < 100 {
		return append(buf, decPairs[2*u], decPairs[2*u+1])
	}
	n := 3
	for p := uint64(1000); n < 20 && u >= p; p *= 10 {
		n++
	}
	return appendDigits(buf, u, n)
}

// appendDigits appends the low n decimal digits of u, zero-padded (the
// fraction of a timestamp).
func appendDigits(buf []byte, u uint64, n int) []byte {
	l := len(buf)
	buf = slices.Grow(buf, n)[:l+n]
	b := buf[l:]
	i := n
	for ; i > 9; i -= 2 {
		r := u % 100
		u /= 100
		b[i-2], b[i-1] = decPairs[2*r], decPairs[2*r+1]
	}
	// Nine digits or fewer left: 32-bit arithmetic.
	v := uint32(u % 1e9)
	for ; i >= 2; i -= 2 {
		r := v % 100
		v /= 100
		b[i-2], b[i-1] = decPairs[2*r], decPairs[2*r+1]
	}
	if i == 1 {
		b[0] = byte('0' + v%10)
	}
	return buf
}

// appendFraction appends the prec decimals of a time's fraction of a
// second, ns nanoseconds, truncated: appendDigits(buf, ns/10^(9-prec),
// prec), with the six and nine decimals of the timestamps written without
// its loop.
func appendFraction(buf []byte, ns uint32, prec int) []byte {
	switch prec {
	case 6:
		v := ns / 1000 % 1000000
		a, r := v/10000, v%10000
		b, c := r/100, r%100
		return append(buf, decPairs[2*a], decPairs[2*a+1], decPairs[2*b], decPairs[2*b+1], decPairs[2*c], decPairs[2*c+1])
	case 9:
		v := ns % 1000000000
		a, r := v/100000000, v%100000000
		b, r := r/1000000, r%1000000
		c, r := r/10000, r%10000
		d, e := r/100, r%100
		return append(buf, byte('0'+a), decPairs[2*b], decPairs[2*b+1], decPairs[2*c], decPairs[2*c+1],
			decPairs[2*d], decPairs[2*d+1], decPairs[2*e], decPairs[2*e+1])
	}
	for i := 9; i > prec; i-- {
		ns /= 10
	}
	return appendDigits(buf, uint64(ns), prec)
}

// appendIPv4 appends a.b.c.d, as netip.Addr.AppendTo does for an IPv4
// address: each octet is one 4-byte store of its digits and a dot, from a
// table made once.
func appendIPv4(buf []byte, ip [4]byte) []byte {
	n := len(buf)
	buf = slices.Grow(buf, 20)
	b := buf[n : n+20]
	e0, e1, e2, e3 := octetText[ip[0]], octetText[ip[1]], octetText[ip[2]], octetText[ip[3]]
	binary.LittleEndian.PutUint32(b, uint32(e0))
	i := int(e0 >> 32)
	binary.LittleEndian.PutUint32(b[i&15:], uint32(e1))
	i += int(e1 >> 32)
	binary.LittleEndian.PutUint32(b[i&15:], uint32(e2))
	i += int(e2 >> 32)
	binary.LittleEndian.PutUint32(b[i&15:], uint32(e3))
	i += int(e3 >> 32)
	return buf[:n+i-1] // less the last octet's dot
}

// octetText is each octet's decimal digits and a dot, little-endian in the
// low 32 bits, and their length above.
var octetText = func() (t [256]uint64) {
	for o := range 256 {
		s := strconv.Itoa(o) + "."
		var w [4]byte
		copy(w[:], s)
		t[o] = uint64(binary.LittleEndian.Uint32(w[:])) | uint64(len(s))<<32
	}
	return t
}()

// appendInt appends n in decimal, as strconv.AppendInt(buf, n, 10) does.
func appendInt(buf []byte, n int64) []byte {
	if n < 0 {
		return appendDec(append(buf, '-'), uint64(-n))
	}
	return appendDec(buf, uint64(n))
}

// appendHexTrim appends u in hex without leading zeros ("0" for 0), as
// strconv.AppendUint(buf, u, 16) does.
func appendHexTrim(buf []byte, u uint64) []byte {
	w := max((bits.Len64(u)+3)/4, 1)
	n := len(buf)
	buf = slices.Grow(buf, w)[:n+w]
	b := buf[n:]
	i := len(b)
	for ; i >= 2; i -= 2 {
		binary.LittleEndian.PutUint16(b[i-2:], hexPair[u&0xFF])
		u >>= 8
	}
	if i == 1 {
		b[0] = hexDigits[u&0xF]
	}
	return buf
}
