package dfilter

import (
	"encoding/hex"
	"errors"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// literal is a value from the filter text, parsed for one field: the value
// as Get would produce it, and its canonical spelling for String.
type literal struct {
	v    decode.Value
	bits int // addresses: prefix length in bits
	text string
}

// tokValue is what a word or string stands for.
func tokValue(t token) string {
	if t.kind == tString {
		return t.val
	}
	return t.text
}

// valueType is the type a field compares as: "frame" is its bytes.
func valueType(f *decode.Field) decode.FieldType {
	if f.Name == "frame" {
		return decode.FTBytes
	}
	return f.Type
}

// typeTitles are tshark's descriptions of the types, used in its messages.
var typeTitles = map[decode.FieldType]string{
	decode.FTProtocol: "Protocol", decode.FTBool: "Boolean",
	decode.FTUint8: "Unsigned integer (1 byte)", decode.FTUint16: "Unsigned integer (2 bytes)",
	decode.FTUint24: "Unsigned integer (3 bytes)", decode.FTUint32: "Unsigned integer (4 bytes)",
	decode.FTUint64: "Unsigned integer (8 bytes)", decode.FTBytes: "Byte sequence",
	decode.FTIPv4: "IPv4 address", decode.FTIPv6: "IPv6 address", decode.FTEther: "Ethernet or other MAC address",
	decode.FTString: "Character string", decode.FTDouble: "Floating point (double-precision)",
	decode.FTRelTime: "Time offset", decode.FTAbsTime: "Date and time",
}

func typeTitle(t decode.FieldType) string {
	if s, ok := typeTitles[t]; ok {
		return s
	}
	return t.String()
}

// lowerFirst lower-cases a leading capital unless it starts an acronym
// ("Boolean" → "boolean", "IPv4 address" stays).
func lowerFirst(s string) string {
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'a' && s[1] <= 'z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

func errFromString(t token, typ decode.FieldType) *SyntaxError {
	return errTok(t, "%s cannot be converted from a string (%q)", lowerFirst(typeTitle(typ)), t.val)
}

func errNoSuchValue(t token, f *decode.Field) *SyntaxError {
	return errTok(t, "%q cannot be found among the possible values for %s", tokValue(t), f.Name)
}

// parseLiteral reads the value token t for field f of type typ. A field
// name where a value belongs would mean a field-to-field comparison in
// Wireshark; we do not have those, and say so rather than compare with the
// name's text.
func parseLiteral(f *decode.Field, typ decode.FieldType, t token) (literal, *SyntaxError) {
	lit, err := parseValue(f, typ, t)
	if t.kind == tWord && (err != nil || typ == decode.FTString) {
		if other, ok := decode.Lookup(t.text); ok {
			return literal{}, errTok(t, "%s is a field: comparing two fields is not supported (quote it to mean the text)", other.Name)
		}
	}
	return lit, err
}

func parseValue(f *decode.Field, typ decode.FieldType, t token) (literal, *SyntaxError) {
	if t.kind != tWord && t.kind != tString {
		return literal{}, unexpected(t)
	}
	s := tokValue(t)
	switch typ {
	case decode.FTBool:
		var lit literal
		switch u, st := parseNumber(s); {
		case st == numOK || st == numBig:
			lit.v.U = b2u(u != 0)
		case strings.EqualFold(s, "true"):
			lit.v.U = 1
		case strings.EqualFold(s, "false"):
		default:
			return literal{}, errNoSuchValue(t, f)
		}
		lit.text = strconv.FormatUint(lit.v.U, 10)
		return lit, nil
	case decode.FTUint8, decode.FTUint16, decode.FTUint24, decode.FTUint32, decode.FTUint64:
		return parseUintLit(f, typ, t, true)
	case decode.FTBytes, decode.FTEther:
		return parseBytesLit(f, typ, t)
	case decode.FTIPv4, decode.FTIPv6:
		return parseAddrLit(typ, t)
	case decode.FTString:
		return literal{v: decode.Value{S: s}, text: quote(s)}, nil
	case decode.FTDouble:
		if t.kind == tString {
			return literal{}, errFromString(t, typ)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return literal{}, errTok(t, "%q is not a valid number", s)
		}
		return literal{v: decode.Value{F: x}, text: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case decode.FTRelTime, decode.FTAbsTime:
		var d time.Duration
		var ok bool
		switch {
		case t.kind == tWord:
			d, ok = parseSeconds(s)
		case typ == decode.FTAbsTime:
			d, ok = parseDate(s)
		default:
			return literal{}, errFromString(t, typ)
		}
		if !ok {
			return literal{}, errTok(t, "%q is not a valid time", s)
		}
		return literal{v: decode.Value{D: d}, text: formatSeconds(d)}, nil
	}
	return literal{}, errTok(t, "%s cannot be compared with a value", f.Name)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// maxOf is the largest value of an integer type.
func maxOf(t decode.FieldType) uint64 {
	switch t {
	case decode.FTBool:
		return 1
	case decode.FTUint8:
		return 0xFF
	case decode.FTUint16:
		return 0xFFFF
	case decode.FTUint24:
		return 0xFFFFFF
	case decode.FTUint32:
		return 0xFFFFFFFF
	}
	return math.MaxUint64
}

// numStatus is how a word reads as an unsigned number.
type numStatus uint8

const (
	numOK numStatus = iota
	numBad
	numNeg // a valid number below zero
	numBig // above 2^64-1
)

// parseNumber reads an unsigned integer as C's strtoul does with base 0 (and
// as tshark does: 017 is octal), plus 0o and 0b.
func parseNumber(s string) (uint64, numStatus) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	base, digits := 10, s
	if len(s) > 1 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base, digits = 16, s[2:]
		case 'o', 'O':
			base, digits = 8, s[2:]
		case 'b', 'B':
			base, digits = 2, s[2:]
		default:
			base, digits = 8, s[1:]
		}
	}
	u, err := strconv.ParseUint(digits, base, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		if neg {
			return 0, numNeg
		}
		return 0, numBig
	case err != nil:
		return 0, numBad
	case neg && u != 0:
		return 0, numNeg
	}
	return u, numOK
}

// parseUintLit reads an integer literal for f: a number, or (when names is
// set and f has value names) one of its value names.
func parseUintLit(f *decode.Field, typ decode.FieldType, t token, names bool) (literal, *SyntaxError) {
	s := tokValue(t)
	hasNames := names && (f.Names != nil || f.ByName != nil)
	if t.kind == tWord {
		u, st := parseNumber(s)
		switch {
		case st == numOK && u <= maxOf(typ):
			text := strconv.FormatUint(u, 10)
			if f.Base == decode.BaseHex || f.Base == decode.BaseHexDec {
				text = "0x" + strconv.FormatUint(u, 16)
			}
			return literal{v: decode.Value{U: u}, text: text}, nil
		case (st == numOK || st == numBig) && hasNames:
			return literal{}, errNoSuchValue(t, f)
		case st == numOK || st == numBig:
			return literal{}, errTok(t, "%q too big for this field, maximum %d", s, maxOf(typ))
		case st == numNeg:
			return literal{}, errTok(t, "%q too small for this field, minimum 0", s)
		}
	}
	if hasNames {
		if u, ok := lookupName(f, s); ok && u <= maxOf(typ) {
			return literal{v: decode.Value{U: u}, text: renderName(s)}, nil
		}
		return literal{}, errNoSuchValue(t, f)
	}
	if t.kind == tString {
		return literal{}, errFromString(t, typ)
	}
	return literal{}, errTok(t, "%q is not a valid number", s)
}

// renderName spells a value name: bare when it reads back as the same name,
// quoted otherwise.
func renderName(s string) string {
	if bareWord(s) {
		return s
	}
	return quote(s)
}

// namedValue is one value name of a field.
type namedValue struct {
	name string
	u    uint64
}

var namesCache sync.Map // *decode.Field → []namedValue

// valueNames lists the names a field's values go by: what Field.Names
// gives, found by scanning the values (up to 16 bits, enough for every coded
// field), plus the spellings ByName accepts that Names does not return: the
// IBTA opcode names (RC_SEND_ONLY) and the NAK keys (psn_seq_err). Those two
// lists come from layers, the single source of both.
func valueNames(f *decode.Field) []namedValue {
	if c, ok := namesCache.Load(f); ok {
		return c.([]namedValue)
	}
	var out []namedValue
	seen := map[string]bool{}
	add := func(name string, u uint64) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, namedValue{name, u})
		}
	}
	switch f.Name {
	case "infiniband.bth.opcode":
		for _, op := range layers.KnownOpcodes() {
			add(op.String(), uint64(op))
		}
	case "infiniband.aeth.syndrome.error_code":
		for c := layers.NAKPSNSequenceError; c <= layers.NAKInvalidRDRequest; c++ {
			add(c.Key(), uint64(c))
		}
	}
	if f.Names != nil {
		for u := uint64(0); u <= min(maxOf(f.Type), 0xFFFF); u++ {
			if n, ok := f.Names(u); ok {
				add(n, u)
			}
		}
	}
	namesCache.Store(f, out)
	return out
}

// lookupName resolves a value name: ByName first, then the scanned names,
// exactly and then ignoring case.
func lookupName(f *decode.Field, s string) (uint64, bool) {
	if f.ByName != nil {
		if u, ok := f.ByName(s); ok {
			return u, true
		}
	}
	names := valueNames(f)
	for _, nv := range names {
		if nv.name == s {
			return nv.u, true
		}
	}
	for _, nv := range names {
		if strings.EqualFold(nv.name, s) {
			return nv.u, true
		}
	}
	return 0, false
}

// parseBytesLit reads a byte string (aa:bb:cc, aa-bb, aabbcc, 0200.5e10.0001)
// or, for FTBytes, a quoted string standing for its own bytes.
func parseBytesLit(f *decode.Field, typ decode.FieldType, t token) (literal, *SyntaxError) {
	var b []byte
	if t.kind == tString {
		if typ == decode.FTEther {
			return literal{}, errFromString(t, typ)
		}
		b = []byte(t.val)
	} else {
		var ok bool
		b, ok = parseHexBytes(t.text)
		switch {
		case typ == decode.FTEther && !ok:
			return literal{}, errTok(t, "%q is not a valid Ethernet address", t.text)
		case typ == decode.FTEther && len(b) < 6:
			return literal{}, errTok(t, "%q contains too few bytes to be a valid Ethernet address", t.text)
		case typ == decode.FTEther && len(b) > 6:
			return literal{}, errTok(t, "%q contains too many bytes to be a valid Ethernet address", t.text)
		case !ok:
			return literal{}, errTok(t, "%q is not a valid byte string", t.text)
		}
	}
	return literal{v: decode.Value{B: b}, text: bytesText(b)}, nil
}

// parseHexBytes reads hex bytes; groups split by ':', '-' or '.' hold one
// or two digits, or an even number of them.
func parseHexBytes(s string) ([]byte, bool) {
	var out []byte
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ':' && s[i] != '-' && s[i] != '.' {
			continue
		}
		g := s[start:i]
		start = i + 1
		if len(g) == 1 {
			g = "0" + g
		}
		b, err := hex.DecodeString(g)
		if err != nil || len(g) == 0 {
			return nil, false
		}
		out = append(out, b...)
	}
	return out, true
}

// bytesText spells bytes as aa:bb:cc; no bytes as "".
func bytesText(b []byte) string {
	if len(b) == 0 {
		return `""`
	}
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteByte(hexDigits[c>>4])
		sb.WriteByte(hexDigits[c&0xF])
	}
	return sb.String()
}

// parseAddrLit reads an IPv4 or IPv6 address with an optional /bits. An
// IPv4 address given for an IPv6 field (a GID) means its IPv4-mapped form,
// the GID RoCEv2 uses for IPv4 endpoints.
func parseAddrLit(typ decode.FieldType, t token) (literal, *SyntaxError) {
	family, full := "IPv4", 32
	if typ == decode.FTIPv6 {
		family, full = "IPv6", 128
	}
	if t.kind == tString {
		return literal{}, errFromString(t, typ)
	}
	addrPart, bitsPart, hasBits := strings.Cut(t.text, "/")
	a, err := netip.ParseAddr(addrPart)
	mapped := typ == decode.FTIPv6 && err == nil && a.Is4()
	if err != nil || a.Zone() != "" || (typ == decode.FTIPv4) != a.Is4() && !mapped {
		return literal{}, errTok(t, "%q is not a valid %s address", t.text, family)
	}
	if mapped {
		a = netip.AddrFrom16(a.As16())
	}
	bits := full
	if hasBits {
		limit := full
		if mapped {
			limit = 32
		}
		n, err := strconv.Atoi(bitsPart)
		if err != nil || n < 0 || strings.HasPrefix(bitsPart, "+") {
			return literal{}, errTok(t, "%q is not a valid %s address", t.text, family)
		}
		if n > limit {
			return literal{}, errTok(t, "netmask bits in a CIDR %s address should be <= %d, not %d", family, limit, n)
		}
		bits = n + full - limit
	}
	pfx := netip.PrefixFrom(a, bits).Masked()
	text := pfx.Addr().String()
	if bits < full {
		text = pfx.String()
	}
	return literal{v: decode.Value{B: pfx.Addr().AsSlice()}, bits: bits, text: text}, nil
}

// maxSeconds bounds times so that every accepted value fits a Duration and
// prints back to itself.
const maxSeconds = 9_000_000_000

// parseSeconds reads seconds as a decimal (1.5, -0.000001, 1e-3), exactly to
// the nanosecond when no exponent is used.
func parseSeconds(s string) (time.Duration, bool) {
	body, neg := strings.CutPrefix(s, "-")
	ip, fp, _ := strings.Cut(body, ".")
	if ip == "" && fp == "" || !allDigits(ip) || !allDigits(fp) {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.Abs(x) > maxSeconds {
			return 0, false
		}
		return time.Duration(math.Round(x * 1e9)), true
	}
	sec := uint64(0)
	if ip != "" {
		var err error
		if sec, err = strconv.ParseUint(ip, 10, 64); err != nil || sec > maxSeconds {
			return 0, false
		}
	}
	fp = (fp + "000000000")[:9] // digits beyond the nanosecond are dropped
	ns, _ := strconv.ParseUint(fp, 10, 64)
	d := time.Duration(sec)*time.Second + time.Duration(ns)
	if neg {
		d = -d
	}
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatSeconds is parseSeconds' inverse: 1.5, 2, -0.000001.
func formatSeconds(d time.Duration) string {
	var b []byte
	if d < 0 {
		b = append(b, '-')
		d = -d
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	if ns := int64(d % time.Second); ns != 0 {
		frac := strconv.FormatInt(ns+1e9, 10)[1:]
		b = append(b, '.')
		b = append(b, strings.TrimRight(frac, "0")...)
	}
	return string(b)
}

// dateLayouts are the absolute-time spellings accepted in quotes: tshark's
// ("Nov 14, 2023 22:13:20.5") and ISO 8601. Go accepts a fraction after the
// seconds without the layout naming it.
var dateLayouts = []string{"Jan 2, 2006 15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"}

// parseDate reads an absolute time as a duration since the Unix epoch. It
// is local time, as in tshark, unless it ends in " UTC" or carries a zone.
func parseDate(s string) (time.Duration, bool) {
	loc := time.Local
	if rest, ok := strings.CutSuffix(s, " UTC"); ok {
		s, loc = rest, time.UTC
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	for _, l := range dateLayouts {
		if err == nil {
			break
		}
		t, err = time.ParseInLocation(l, s, loc)
	}
	if err != nil || t.Unix() > maxSeconds || t.Unix() < -maxSeconds {
		return 0, false
	}
	return t.Sub(time.Unix(0, 0)), true
}
