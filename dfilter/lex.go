package dfilter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF      tokKind = iota
	tWord             // an unquoted run: a field name, number, address or value name
	tString           // a quoted string; val holds it unescaped
	tLParen           // (
	tRParen           // )
	tLBrace           // {
	tRBrace           // }
	tLBracket         // [ (slices, which we reject with a clear message)
	tRBracket         // ]
	tComma            // ,
	tDotDot           // ..
	tAnd              // && and
	tOr               // || or
	tNot              // ! not
	tBitAnd           // & bitwise_and
	tCmp              // == != === ~= < <= > >= and their word forms
	tContains         // contains
	tMatches          // matches ~
	tIn               // in
)

// token is one lexeme with its byte span in the source.
type token struct {
	kind     tokKind
	pos, end int
	text     string // the source text
	val      string // tString: the unescaped value
	op       cmpOp  // tCmp: which comparison
}

// keywords are the reserved words. Wireshark reserves them too, so a value
// name can never be spelled like one (quote it instead).
var keywords = map[string]struct {
	kind tokKind
	op   cmpOp
}{
	"and": {tAnd, 0}, "or": {tOr, 0}, "not": {tNot, 0}, "in": {tIn, 0},
	"contains": {tContains, 0}, "matches": {tMatches, 0}, "bitwise_and": {tBitAnd, 0},
	"eq": {tCmp, opEQ}, "any_eq": {tCmp, opEQ}, "all_eq": {tCmp, opAllEQ},
	"ne": {tCmp, opNE}, "all_ne": {tCmp, opNE}, "any_ne": {tCmp, opAnyNE},
	"lt": {tCmp, opLT}, "le": {tCmp, opLE}, "gt": {tCmp, opGT}, "ge": {tCmp, opGE},
}

// punctuation is tried longest first, so "===" wins over "==" and "&&" over "&".
var punctuation = []struct {
	text string
	kind tokKind
	op   cmpOp
}{
	{"===", tCmp, opAllEQ}, {"!==", tCmp, opNE},
	{"==", tCmp, opEQ}, {"!=", tCmp, opNE}, {"~=", tCmp, opAnyNE},
	{"<=", tCmp, opLE}, {">=", tCmp, opGE}, {"&&", tAnd, 0}, {"||", tOr, 0}, {"..", tDotDot, 0},
	{"<", tCmp, opLT}, {">", tCmp, opGT}, {"!", tNot, 0}, {"&", tBitAnd, 0}, {"~", tMatches, 0},
	{"(", tLParen, 0}, {")", tRParen, 0}, {"{", tLBrace, 0}, {"}", tRBrace, 0},
	{"[", tLBracket, 0}, {"]", tRBracket, 0}, {",", tComma, 0},
}

// isWordByte reports the bytes of an unquoted word. The set is wide enough
// for field names (bth.p_key), numbers (0x1f, -1.5, 1e+3), addresses
// (fe80::/64, 192.168.0.0/16) and byte strings (aa:bb-cc); bytes from 0x80
// up let UTF-8 reach the string-field comparison unharmed.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || c == '+' || c >= 0x80
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// lex splits src into tokens, ending with tEOF. On error it returns the
// tokens before the bad one, which Complete uses.
func lex(src string) ([]token, *SyntaxError) {
	var toks []token
	i := 0
	for {
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		if i == len(src) {
			return append(toks, token{kind: tEOF, pos: i, end: i}), nil
		}
		c := src[i]
		switch {
		case c == '"' || c == 'r' && i+1 < len(src) && src[i+1] == '"':
			t, err := lexString(src, i)
			if err != nil {
				return toks, err
			}
			toks = append(toks, t)
			i = t.end
			continue
		case isWordByte(c) && !strings.HasPrefix(src[i:], ".."):
			j := i
			// A word stops before "..", so that ranges need no spaces: {6..10}.
			for j < len(src) && isWordByte(src[j]) && !strings.HasPrefix(src[j:], "..") {
				j++
			}
			t := token{kind: tWord, pos: i, end: j, text: src[i:j]}
			if k, ok := keywords[t.text]; ok {
				t.kind, t.op = k.kind, k.op
			}
			toks = append(toks, t)
			i = j
			continue
		}
		matched := false
		for _, p := range punctuation {
			if strings.HasPrefix(src[i:], p.text) {
				toks = append(toks, token{kind: p.kind, op: p.op, pos: i, end: i + len(p.text), text: p.text})
				i += len(p.text)
				matched = true
				break
			}
		}
		if !matched {
			_, n := utf8.DecodeRuneInString(src[i:])
			return toks, errAt(i, n, "%q was unexpected in this context", src[i:i+n])
		}
	}
}

// lexString reads a quoted string at src[i] ("..." or the raw r"...").
func lexString(src string, i int) (token, *SyntaxError) {
	start := i
	raw := src[i] == 'r'
	if raw {
		i++
	}
	i++ // opening quote
	var b strings.Builder
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			return token{kind: tString, pos: start, end: i + 1, text: src[start : i+1], val: b.String()}, nil
		case c == '\\' && raw:
			// A raw string keeps its backslashes; one still protects a quote
			// from ending the string, as in Python.
			if i+1 < len(src) {
				b.WriteString(src[i : i+2])
				i += 2
				continue
			}
			b.WriteByte(c)
			i++
		case c == '\\':
			n, err := unescape(src, i, &b)
			if err != nil {
				return token{}, err
			}
			i += n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return token{}, &SyntaxError{Column: start + 1, Length: len(src) - start, Msg: "the final quote was missing from a quoted string", unterminated: true}
}

// unescape decodes the escape sequence at src[i] into b and returns its
// length. The set is the C one Wireshark accepts, plus \u and \U.
func unescape(src string, i int, b *strings.Builder) (int, *SyntaxError) {
	if i+1 >= len(src) {
		return 0, &SyntaxError{Column: i + 1, Length: 1, Msg: "the final quote was missing from a quoted string", unterminated: true}
	}
	c := src[i+1]
	if j := strings.IndexByte(`abfnrtv\"'`, c); j >= 0 {
		b.WriteByte("\a\b\f\n\r\t\v\\\"'"[j])
		return 2, nil
	}
	digits := func(n, base int) (uint64, bool) {
		if i+2+n > len(src) {
			return 0, false
		}
		u, err := strconv.ParseUint(src[i+2:i+2+n], base, 32)
		return u, err == nil
	}
	switch c {
	case 'x':
		if u, ok := digits(2, 16); ok {
			b.WriteByte(byte(u))
			return 4, nil
		}
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if u, ok := digits(n, 16); ok && utf8.ValidRune(rune(u)) {
			b.WriteRune(rune(u))
			return 2 + n, nil
		}
	case '0', '1', '2', '3':
		// Up to three octal digits: \0, \12, \377.
		n := 1
		for n < 3 && i+1+n < len(src) && src[i+1+n] >= '0' && src[i+1+n] <= '7' {
			n++
		}
		u, _ := strconv.ParseUint(src[i+1:i+1+n], 8, 8)
		b.WriteByte(byte(u))
		return 1 + n, nil
	}
	_, n := utf8.DecodeRuneInString(src[i+1:])
	return 0, errAt(i, 1+n, "\\%s is not a valid character escape sequence", src[i+1:i+1+n])
}

// quote renders s as a string literal that lex reads back to s: printable
// UTF-8 stays as it is, everything else becomes an escape.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xF])
		case r >= 0x80 && !strconv.IsPrint(r):
			b.WriteString(strconv.QuoteRuneToASCII(r)[1 : len(strconv.QuoteRuneToASCII(r))-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

const hexDigits = "0123456789abcdef"

// bareWord reports whether s can be printed without quotes as a value name:
// it must lex as one word, read as no number, and not be a keyword.
func bareWord(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '_') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	_, kw := keywords[s]
	return !kw
}
