package dfilter

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// parser is a recursive-descent parser that type-checks as it goes: the
// field on the left of a comparison is known before its literal is read, so
// each literal is parsed straight into the field's value form.
type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// unexpected reports t where it does not belong, in tshark's words.
func unexpected(t token) *SyntaxError {
	if t.kind == tEOF {
		return errAt(t.pos, 0, "unexpected end of filter expression")
	}
	return errTok(t, "%q was unexpected in this context", t.text)
}

// parseOr: andExpr { "||" andExpr }. Nested lists flatten, so that
// "a || (b || c)" and "a || b || c" print the same.
func (p *parser) parseOr() (node, *SyntaxError) {
	var kids []node
	for {
		n, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		if o, ok := n.(*orNode); ok {
			kids = append(kids, o.kids...)
		} else {
			kids = append(kids, n)
		}
		if p.peek().kind != tOr {
			break
		}
		p.next()
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &orNode{kids}, nil
}

// parseAnd: unary { "&&" unary }. "and" binds tighter than "or", as in
// tshark 4.0.
func (p *parser) parseAnd() (node, *SyntaxError) {
	var kids []node
	for {
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		if a, ok := n.(*andNode); ok {
			kids = append(kids, a.kids...)
		} else {
			kids = append(kids, n)
		}
		if p.peek().kind != tAnd {
			break
		}
		p.next()
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &andNode{kids}, nil
}

func (p *parser) parseUnary() (node, *SyntaxError) {
	if p.peek().kind == tNot {
		p.next()
		n, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &notNode{n}, nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (node, *SyntaxError) {
	t := p.next()
	switch t.kind {
	case tLParen:
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, unexpected(c)
		}
		return n, nil
	case tWord:
		f, ok := decode.Lookup(t.text)
		if !ok {
			return nil, errTok(t, "%q is neither a field nor a protocol name", t.text)
		}
		return p.parseTest(f, t)
	case tString:
		if n := p.peek(); n.kind == tCmp || n.kind == tContains || n.kind == tMatches || n.kind == tIn {
			return nil, errTok(t, "left side of %q expression must be a field or function, not %s", n.text, t.text)
		}
	}
	return nil, unexpected(t)
}

// parseTest reads what follows a field: [ "&" mask ] [ relation ].
func (p *parser) parseTest(f *decode.Field, ft token) (node, *SyntaxError) {
	n := &testNode{f: f, frame: f.Name == "frame"}
	typ := valueType(f)
	var text strings.Builder
	text.WriteString(f.Name)
	mask := ^uint64(0)
	hasMask := false
	switch t := p.peek(); t.kind {
	case tLBracket:
		return nil, errTok(t, "slices are not supported (%s[...])", f.Name)
	case tBitAnd:
		p.next()
		if !typ.IsUnsigned() && typ != decode.FTBool {
			return nil, errTok(ft, "%s (type=%s) cannot participate in bitwise and", f.Name, typeTitle(typ))
		}
		mt := p.next()
		if mt.kind != tWord {
			return nil, unexpected(mt)
		}
		lit, err := parseUintLit(f, typ, mt, false)
		if err != nil {
			return nil, err
		}
		mask, hasMask = lit.v.U, true
		text.WriteString(" & 0x" + strconv.FormatUint(mask, 16))
	}
	op := p.peek()
	switch op.kind {
	case tCmp, tIn:
		p.next()
		if typ == decode.FTProtocol {
			return nil, errTok(ft, "%s (type=%s) cannot participate in %q comparison", f.Name, typeTitle(typ), op.text)
		}
		if op.kind == tIn {
			pr, s, err := p.parseSet(f, typ, mask)
			if err != nil {
				return nil, err
			}
			n.pred = pr
			text.WriteString(" in " + s)
			break
		}
		vt := p.next()
		lit, err := parseLiteral(f, typ, vt)
		if err != nil {
			return nil, err
		}
		n.pred = makePred(typ, op.op, lit, mask)
		n.all = op.op == opNE || op.op == opAllEQ
		text.WriteString(" " + opText[op.op] + " " + lit.text)
	case tContains, tMatches:
		p.next()
		name := "contains"
		if op.kind == tMatches {
			name = "matches"
		}
		if hasMask || !(typ == decode.FTBytes || typ == decode.FTEther || typ == decode.FTString) {
			return nil, errTok(ft, "%s (type=%s) cannot participate in %s comparison", f.Name, typeTitle(typ), name)
		}
		vt := p.next()
		switch {
		case vt.kind != tWord && vt.kind != tString:
			return nil, unexpected(vt)
		case vt.kind == tWord && op.kind == tMatches:
			return nil, errTok(vt, "matches requires a double quoted string on the right side")
		case vt.kind == tWord:
			if other, ok := decode.Lookup(vt.text); ok {
				return nil, errTok(vt, "%s is a field: comparing two fields is not supported (quote it to mean the text)", other.Name)
			}
		}
		if op.kind == tMatches {
			// Compile the pattern as written first, so that errors quote
			// it; then again case-insensitively, as tshark matches.
			if _, err := regexp.Compile(tokValue(vt)); err != nil {
				msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
				return nil, errTok(vt, "regex compilation error: %s", msg)
			}
			re := regexp.MustCompile("(?i)" + tokValue(vt))
			n.pred = &matchesPred{re: re, isBytes: typ != decode.FTString}
			text.WriteString(" matches " + quote(tokValue(vt)))
			break
		}
		if typ == decode.FTString {
			n.pred = &containsString{lit: tokValue(vt)}
			text.WriteString(" contains " + quote(tokValue(vt)))
			break
		}
		b, err := parseBytesLit(f, decode.FTBytes, vt)
		if err != nil {
			return nil, err
		}
		n.pred = &containsBytes{lit: b.v.B}
		text.WriteString(" contains " + b.text)
	default:
		if hasMask {
			n.pred = &nonZero{mask: mask}
		}
	}
	n.text = text.String()
	return n, nil
}

// parseSet reads "{" member { [","] member } "}" after "in". Members are
// separated by blanks (ibwire, Wireshark 3.x) or commas (Wireshark 4.x).
func (p *parser) parseSet(f *decode.Field, typ decode.FieldType, mask uint64) (predicate, string, *SyntaxError) {
	if t := p.next(); t.kind != tLBrace {
		return nil, "", unexpected(t)
	}
	set := &setPred{}
	var texts []string
	for {
		lo, err := parseLiteral(f, typ, p.next())
		if err != nil {
			return nil, "", err
		}
		if p.peek().kind == tDotDot {
			dd := p.next()
			if typ == decode.FTBool {
				return nil, "", errTok(dd, "ranges are not supported for %s", typeTitle(typ))
			}
			hi, err := parseLiteral(f, typ, p.next())
			if err != nil {
				return nil, "", err
			}
			set.members = append(set.members, &rangePred{makePred(typ, opGE, lo, mask), makePred(typ, opLE, hi, mask)})
			texts = append(texts, lo.text+".."+hi.text)
		} else {
			set.members = append(set.members, makePred(typ, opEQ, lo, mask))
			texts = append(texts, lo.text)
		}
		switch t := p.peek(); t.kind {
		case tRBrace:
			p.next()
			return set, "{" + strings.Join(texts, ", ") + "}", nil
		case tComma:
			p.next()
		}
	}
}

// makePred builds the predicate for "field op lit" on a field of type typ.
func makePred(typ decode.FieldType, op cmpOp, lit literal, mask uint64) predicate {
	switch typ {
	case decode.FTBool:
		return &uintPred{op: op, lit: lit.v.U, mask: mask, boolean: true}
	case decode.FTUint8, decode.FTUint16, decode.FTUint24, decode.FTUint32, decode.FTUint64:
		return &uintPred{op: op, lit: lit.v.U, mask: mask}
	case decode.FTIPv4, decode.FTIPv6:
		return &addrPred{op: op, lit: lit.v.B, bits: lit.bits}
	case decode.FTString:
		return &stringPred{op: op, lit: lit.v.S}
	case decode.FTDouble:
		return &floatPred{op: op, lit: lit.v.F}
	case decode.FTRelTime, decode.FTAbsTime:
		return &timePred{op: op, lit: int64(lit.v.D)}
	}
	return &bytesPred{op: op, lit: lit.v.B}
}
