package dfilter

import (
	"sort"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// TokenStart returns the byte offset in prefix where the token being typed
// starts: a filter bar replaces prefix[TokenStart(prefix):] with the
// suggestion the user picks from Complete. It is -1 when prefix has a
// lexical error before its end (Complete then has nothing to offer).
func TokenStart(prefix string) int {
	start, _, _, _ := completionContext(prefix)
	return start
}

// Complete suggests how to finish the last token of prefix, a filter being
// typed: field names where a field may start (the "infiniband." prefix may be
// left out, and the suggestions keep the form typed), operators after a
// field, and value names after a comparison or inside "in {…}" (quoted when
// they need it). Each suggestion replaces the token being typed, from
// TokenStart on, and extends its text, matched without regard to case; the
// list is sorted.
func Complete(prefix string) []string {
	start, partial, ctx, f := completionContext(prefix)
	if start < 0 {
		return nil
	}
	var out []string
	// add offers s if the text it stands for (name) extends the token.
	add := func(s, name, typed string) {
		if len(name) >= len(typed) && strings.EqualFold(name[:len(typed)], typed) && s != partial {
			out = append(out, s)
		}
	}
	switch ctx {
	case ctxField:
		for _, fd := range decode.Fields() {
			add(fd.Name, fd.Name, partial)
			// The short form is offered once the user starts typing one; an
			// empty token lists each field once, by its full name.
			if short, ok := strings.CutPrefix(fd.Name, "infiniband."); ok && partial != "" {
				add(short, short, partial)
			}
		}
	case ctxOperator:
		for _, op := range operatorsFor(valueType(f)) {
			add(op, op, partial)
		}
	case ctxValue:
		// Names are matched on their text, so "ECT" finds "ECT(0)", which
		// is offered quoted because it needs to be.
		typed, quoted := strings.CutPrefix(partial, `"`)
		for _, nv := range valueNames(f) {
			if quoted {
				add(quote(nv.name), nv.name, typed)
			} else {
				add(renderName(nv.name), nv.name, typed)
			}
		}
	}
	sort.Strings(out)
	return slicesCompact(out)
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// completion contexts: what the token being typed can be.
const (
	ctxNone = iota
	ctxField
	ctxOperator
	ctxValue
)

// completionContext finds the token being typed (start, partial) and what
// it can be; f is the field it relates to for operators and values. start
// is -1 when prefix cannot be completed (a lexical error before its end).
func completionContext(prefix string) (start int, partial string, ctx int, f *decode.Field) {
	toks, err := lex(prefix)
	start = len(prefix)
	if err != nil {
		if !err.unterminated {
			return -1, "", ctxNone, nil
		}
		// An open string at the end is a value being typed.
		start = err.Column - 1
		partial = prefix[start:]
	} else {
		toks = toks[:len(toks)-1] // tEOF
		// The last token is being typed if nothing follows it. Keywords
		// count too: "in" may be the start of "infiniband".
		if n := len(toks); n > 0 && toks[n-1].end == len(prefix) && isWordy(toks[n-1]) {
			start, partial = toks[n-1].pos, toks[n-1].text
			toks = toks[:n-1]
		}
	}
	n := len(toks)
	prev := tEOF
	if n > 0 {
		prev = toks[n-1].kind
	}
	switch prev {
	case tEOF, tLParen, tNot, tAnd, tOr:
		if !strings.HasPrefix(partial, `"`) {
			return start, partial, ctxField, nil
		}
	case tWord:
		// A word right before: a field awaiting its operator.
		if fd, ok := decode.Lookup(toks[n-1].text); ok && (n == 1 || toks[n-2].kind != tCmp && toks[n-2].kind != tBitAnd) {
			return start, partial, ctxOperator, fd
		}
	case tCmp, tLBrace, tComma, tDotDot:
		if fd := fieldBefore(toks); fd != nil {
			return start, partial, ctxValue, fd
		}
	}
	if n > 0 && toks[n-1].kind == tWord && n >= 2 && (toks[n-2].kind == tLBrace || toks[n-2].kind == tComma || toks[n-2].kind == tWord) {
		// A blank-separated set member: "in {4 RC_".
		if fd := fieldBefore(toks); fd != nil && inSet(toks) {
			return start, partial, ctxValue, fd
		}
	}
	return start, partial, ctxNone, nil
}

func isWordy(t token) bool {
	if t.kind == tWord {
		return true
	}
	_, kw := keywords[t.text]
	return kw
}

// fieldBefore finds the field a value relates to: the word before the
// comparison operator (skipping "& mask") or before "in {".
func fieldBefore(toks []token) *decode.Field {
	for i := len(toks) - 1; i > 0; i-- {
		switch toks[i].kind {
		case tCmp, tIn:
			j := i - 1
			if j >= 2 && toks[j-1].kind == tBitAnd {
				j -= 2
			}
			if toks[j].kind != tWord {
				return nil
			}
			fd, _ := decode.Lookup(toks[j].text)
			return fd
		case tLParen, tRParen, tAnd, tOr, tNot, tRBrace:
			return nil
		}
	}
	return nil
}

// inSet reports whether the end of toks is inside "in {".
func inSet(toks []token) bool {
	for i := len(toks) - 1; i >= 0; i-- {
		switch toks[i].kind {
		case tLBrace:
			return true
		case tRBrace, tCmp, tAnd, tOr, tLParen, tRParen:
			return false
		}
	}
	return false
}

// operatorsFor lists what may follow a field of type t.
func operatorsFor(t decode.FieldType) []string {
	switch t {
	case decode.FTProtocol:
		return nil
	case decode.FTBool, decode.FTUint8, decode.FTUint16, decode.FTUint24, decode.FTUint32, decode.FTUint64:
		return []string{"==", "!=", "<", "<=", ">", ">=", "&", "in"}
	case decode.FTBytes, decode.FTEther, decode.FTString:
		return []string{"==", "!=", "<", "<=", ">", ">=", "contains", "matches", "in"}
	}
	return []string{"==", "!=", "<", "<=", ">", ">=", "in"}
}
