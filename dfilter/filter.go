package dfilter

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ibwire/ibwire/decode"
)

// SyntaxError is a filter that does not parse or does not type-check. The
// messages follow tshark 4.0's wording where it has one.
type SyntaxError struct {
	Column int    // 1-based byte column where the offending token starts
	Length int    // the token's length in bytes; 0 at the end of the input
	Msg    string // what is wrong, lower-case

	// unterminated marks an open string at the end of the input, which
	// Complete treats as a value being typed rather than a mistake.
	unterminated bool
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("dfilter: column %d: %s", e.Column, e.Msg)
}

// Caret renders expr with a line under it that marks the error as tshark
// does: a ^ under the first byte of the offending token and ~ under the
// rest. Tabs are kept in the marker line so the two stay aligned.
func (e *SyntaxError) Caret(expr string) string {
	var b strings.Builder
	b.WriteString(expr)
	b.WriteByte('\n')
	col := min(max(e.Column-1, 0), len(expr))
	for _, r := range expr[:col] {
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	b.WriteByte('^')
	end := min(col+e.Length, len(expr))
	if n := utf8.RuneCountInString(expr[col:end]); n > 1 {
		b.WriteString(strings.Repeat("~", n-1))
	}
	return b.String()
}

func errAt(pos, length int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Column: pos + 1, Length: length, Msg: fmt.Sprintf(format, args...)}
}

func errTok(t token, format string, args ...any) *SyntaxError {
	return errAt(t.pos, t.end-t.pos, format, args...)
}

// Filter is a compiled display filter. Match is safe to call from one
// goroutine at a time: the filter owns the scratch value that field getters
// write into (taking a local's address would make it escape, one allocation
// per packet). Clone gives each further goroutine its own.
type Filter struct {
	root    node
	text    string
	fields  []*decode.Field
	scratch *decode.Value
}

// Compile parses expr, checks it against the field registry and returns the
// filter. An empty (or all-blank) expression matches every packet. Errors
// are *SyntaxError.
func Compile(expr string) (*Filter, error) {
	toks, lerr := lex(expr)
	if lerr != nil {
		return nil, lerr
	}
	f := &Filter{scratch: new(decode.Value)}
	if toks[0].kind == tEOF {
		return f, nil
	}
	p := &parser{toks: toks}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, unexpected(t)
	}
	f.root = root
	var b strings.Builder
	write(&b, root, precOr)
	f.text = b.String()
	seen := map[*decode.Field]bool{}
	root.walk(func(fd *decode.Field) {
		if !seen[fd] {
			seen[fd] = true
			f.fields = append(f.fields, fd)
		}
	})
	return f, nil
}

// MustCompile is Compile for filters known to be valid; it panics otherwise.
func MustCompile(expr string) *Filter {
	f, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return f
}

// Validate reports whether expr compiles, for the live check of a filter bar.
func Validate(expr string) error {
	_, err := Compile(expr)
	return err
}

// Match reports whether p passes the filter. A nil or empty filter matches
// everything. Match allocates nothing.
func (f *Filter) Match(p *decode.Packet) bool {
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(p, f.scratch)
}

// Clone returns a filter that shares f's compiled program but has its own
// scratch space, for use on another goroutine.
func (f *Filter) Clone() *Filter {
	c := *f
	c.scratch = new(decode.Value)
	return &c
}

// String returns the canonical form of the filter: full field names,
// symbolic operators, literals normalised to one spelling, and only the
// parentheses that precedence needs. It compiles back to the same string,
// and tshark 4.0 accepts it whenever the filter uses only what tshark has.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.text
}

// Fields lists the fields the filter reads, each once, in the order they
// first appear. Callers use it to skip analysis that no field needs.
func (f *Filter) Fields() []*decode.Field {
	if f == nil {
		return nil
	}
	return f.fields
}
