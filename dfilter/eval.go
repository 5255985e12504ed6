package dfilter

import (
	"bytes"
	"cmp"
	"regexp"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// The compiled filter is a tree of nodes; each comparison holds a predicate
// built for its field's type, with the literal already in decode.Value form,
// so evaluating reads fields and compares numbers or slices and nothing else.

// node is a compiled sub-expression.
type node interface {
	// eval reports whether p matches; v is scratch space for field values.
	eval(p *decode.Packet, v *decode.Value) bool
	// walk calls fn for every field the node reads.
	walk(fn func(*decode.Field))
}

// Precedences, loosest first, for printing with the fewest parentheses.
const (
	precOr = iota + 1
	precAnd
	precNot
	precTest
)

type orNode struct{ kids []node }
type andNode struct{ kids []node }
type notNode struct{ kid node }

func (n *orNode) eval(p *decode.Packet, v *decode.Value) bool {
	for _, k := range n.kids {
		if k.eval(p, v) {
			return true
		}
	}
	return false
}

func (n *andNode) eval(p *decode.Packet, v *decode.Value) bool {
	for _, k := range n.kids {
		if !k.eval(p, v) {
			return false
		}
	}
	return true
}

func (n *notNode) eval(p *decode.Packet, v *decode.Value) bool { return !n.kid.eval(p, v) }

func (n *orNode) walk(fn func(*decode.Field)) {
	for _, k := range n.kids {
		k.walk(fn)
	}
}

func (n *andNode) walk(fn func(*decode.Field)) {
	for _, k := range n.kids {
		k.walk(fn)
	}
}

func (n *notNode) walk(fn func(*decode.Field)) { n.kid.walk(fn) }

// testNode is one field test: existence when pred is nil, else a
// comparison against each occurrence of the field (Get, then GetSecond).
type testNode struct {
	f     *decode.Field
	frame bool // the field is "frame": its value is the frame's bytes
	// all asks every occurrence to satisfy pred (===, and != as tshark 4.0
	// defines it: "a != b" is "!(a == b)" over a present field); otherwise
	// one occurrence is enough.
	all  bool
	pred predicate
	text string // canonical text
}

func (n *testNode) eval(p *decode.Packet, v *decode.Value) bool {
	found := false
	for occ := 0; occ < 2; occ++ {
		var ok bool
		switch {
		case n.frame:
			v.B, ok = p.Data, occ == 0
		case occ == 0:
			ok = n.f.Get(p, v)
		default:
			ok = n.f.GetSecond(p, v)
		}
		if !ok {
			continue
		}
		if n.pred == nil {
			return true
		}
		found = true
		if r := n.pred.test(v); r != n.all {
			return r // any: the first hit decides; all: the first miss does
		}
	}
	return n.all && found
}

func (n *testNode) walk(fn func(*decode.Field)) { fn(n.f) }

// write prints n in canonical form, parenthesised if it binds looser than
// the context prec.
func write(b *strings.Builder, n node, prec int) {
	switch n := n.(type) {
	case *orNode:
		writeList(b, n.kids, " || ", precOr, prec, precAnd)
	case *andNode:
		writeList(b, n.kids, " && ", precAnd, prec, precNot)
	case *notNode:
		b.WriteByte('!')
		write(b, n.kid, precNot)
	case *testNode:
		b.WriteString(n.text)
	}
}

func writeList(b *strings.Builder, kids []node, sep string, own, ctx, kidPrec int) {
	if own < ctx {
		b.WriteByte('(')
	}
	for i, k := range kids {
		if i > 0 {
			b.WriteString(sep)
		}
		write(b, k, kidPrec)
	}
	if own < ctx {
		b.WriteByte(')')
	}
}

// cmpOp is a comparison operator.
type cmpOp uint8

const (
	opEQ    cmpOp = iota + 1 // == eq any_eq
	opNE                     // != ne all_ne !==: all occurrences differ
	opAnyNE                  // ~= any_ne: some occurrence differs
	opAllEQ                  // === all_eq: all occurrences equal
	opLT
	opLE
	opGT
	opGE
)

var opText = [...]string{opEQ: "==", opNE: "!=", opAnyNE: "~=", opAllEQ: "===", opLT: "<", opLE: "<=", opGT: ">", opGE: ">="}

// holds applies the operator to a three-way comparison result.
func (o cmpOp) holds(c int) bool {
	switch o {
	case opEQ, opAllEQ:
		return c == 0
	case opNE, opAnyNE:
		return c != 0
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	case opGE:
		return c >= 0
	}
	return false
}

// predicate tests one occurrence of a field's value.
type predicate interface {
	test(v *decode.Value) bool
}

// uintPred compares an integer or boolean field, after the mask.
type uintPred struct {
	op        cmpOp
	lit, mask uint64
	boolean   bool // compare truth values: bth.se == 2 holds when SE is set, as in tshark
}

func (c *uintPred) test(v *decode.Value) bool {
	x := v.U & c.mask
	if c.boolean && x != 0 {
		x = 1
	}
	return c.op.holds(cmp.Compare(x, c.lit))
}

// nonZero is the bare "field & mask" test.
type nonZero struct{ mask uint64 }

func (c *nonZero) test(v *decode.Value) bool { return v.U&c.mask != 0 }

type floatPred struct {
	op  cmpOp
	lit float64
}

func (c *floatPred) test(v *decode.Value) bool { return c.op.holds(cmp.Compare(v.F, c.lit)) }

type timePred struct {
	op  cmpOp
	lit int64
}

func (c *timePred) test(v *decode.Value) bool { return c.op.holds(cmp.Compare(int64(v.D), c.lit)) }

type bytesPred struct {
	op  cmpOp
	lit []byte
}

func (c *bytesPred) test(v *decode.Value) bool { return c.op.holds(bytes.Compare(v.B, c.lit)) }

type stringPred struct {
	op  cmpOp
	lit string
}

func (c *stringPred) test(v *decode.Value) bool { return c.op.holds(strings.Compare(v.S, c.lit)) }

// addrPred compares an address with a literal, both masked to the literal's
// prefix length, so "ip.src == 10.0.0.0/8" tests membership.
type addrPred struct {
	op   cmpOp
	lit  []byte
	bits int
}

func (c *addrPred) test(v *decode.Value) bool {
	if len(v.B) != len(c.lit) {
		return false
	}
	return c.op.holds(comparePrefix(v.B, c.lit, c.bits))
}

// comparePrefix compares the first bits bits of a and b (of equal length).
func comparePrefix(a, b []byte, bits int) int {
	n := bits / 8
	if r := bytes.Compare(a[:n], b[:n]); r != 0 || n == len(a) {
		return r
	}
	m := byte(0xFF) << (8 - bits%8)
	return cmp.Compare(a[n]&m, b[n]&m)
}

type containsBytes struct{ lit []byte }

func (c *containsBytes) test(v *decode.Value) bool { return bytes.Contains(v.B, c.lit) }

type containsString struct{ lit string }

func (c *containsString) test(v *decode.Value) bool { return strings.Contains(v.S, c.lit) }

// matchesPred runs a regexp compiled at Compile time over a string or bytes.
type matchesPred struct {
	re      *regexp.Regexp
	isBytes bool
}

func (c *matchesPred) test(v *decode.Value) bool {
	if c.isBytes {
		return c.re.Match(v.B)
	}
	return c.re.MatchString(v.S)
}

// rangePred is a set member lo..hi.
type rangePred struct{ lo, hi predicate }

func (c *rangePred) test(v *decode.Value) bool { return c.lo.test(v) && c.hi.test(v) }

// setPred is "in {...}": any member holds.
type setPred struct{ members []predicate }

func (c *setPred) test(v *decode.Value) bool {
	for _, m := range c.members {
		if m.test(v) {
			return true
		}
	}
	return false
}
