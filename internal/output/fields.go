package output

import (
	"fmt"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// FieldsOptions are tshark's -E options for -T fields.
type FieldsOptions struct {
	Header     bool   // header=y: a first line with the field names
	Separator  string // separator=: between fields (default tab)
	Occurrence byte   // occurrence=f|l|a: first, last or all occurrences (default a)
	Aggregator string // aggregator=: between occurrences (default ",")
	Quote      byte   // quote=d|s|n: double, single or no quotes (default n)
}

// ParseFieldsOption applies one -E option ("header=y", "separator=,", ...).
func (o *FieldsOptions) ParseFieldsOption(opt string) error {
	k, v, ok := strings.Cut(opt, "=")
	if !ok {
		return fmt.Errorf("invalid -E option %q: want name=value", opt)
	}
	switch k {
	case "header":
		if v != "y" && v != "n" {
			return fmt.Errorf("invalid -E header=%s: want y or n", v)
		}
		o.Header = v == "y"
	case "separator":
		o.Separator = unescapeSep(v)
	case "aggregator":
		o.Aggregator = unescapeSep(v)
	case "occurrence":
		if v != "f" && v != "l" && v != "a" {
			return fmt.Errorf("invalid -E occurrence=%s: want f, l or a", v)
		}
		o.Occurrence = v[0]
	case "quote":
		if v != "d" && v != "s" && v != "n" {
			return fmt.Errorf("invalid -E quote=%s: want d, s or n", v)
		}
		o.Quote = v[0]
	default:
		return fmt.Errorf("invalid -E option %q: known are header, separator, occurrence, aggregator, quote", k)
	}
	return nil
}

// unescapeSep reads tshark's "/t" and "/s" spellings of tab and space.
func unescapeSep(v string) string {
	switch v {
	case "/t":
		return "\t"
	case "/s":
		return " "
	}
	return v
}

// Fields renders -T fields lines for a fixed list of fields.
type Fields struct {
	opts   FieldsOptions
	fields []*decode.Field
	cols   []fieldColumn // what each field's column needs, found once
	quote  byte          // the -E quote character, 0 for none
	sep    byte          // the separator when it is one byte, else 0
	v      decode.Value
}

// fieldColumn is one -e field and how its column is written.
type fieldColumn struct {
	fd       *decode.Field
	kind     valueKind // how its value is written
	hexWidth int       // the hex digits of a valueHex
	repeats  bool      // further occurrences are asked for: a field that repeats, without -E occurrence=f
}

// valueKind says how -T fields writes a field's value: as
// decode.Field.AppendValue does, with the common types written here
// without its switch and its strconv and netip calls.
type valueKind uint8

const (
	valueGeneric valueKind = iota // AppendValue
	valueDec
	valueHex // 0x and as many digits as the type's width
	valueIPv4
	valueTime // seconds with nine decimals
)

func valueKindOf(f *decode.Field) valueKind {
	switch {
	case f.Type.IsUnsigned() && (f.Base == decode.BaseHex || f.Base == decode.BaseHexDec):
		return valueHex
	case f.Type.IsUnsigned():
		return valueDec
	case f.Type == decode.FTIPv4:
		return valueIPv4
	case f.Type == decode.FTRelTime || f.Type == decode.FTAbsTime:
		return valueTime
	}
	return valueGeneric
}

// appendValue writes v as f.AppendValue does.
func appendValue(buf []byte, k valueKind, f *decode.Field, v *decode.Value) []byte {
	switch k {
	case valueDec:
		return appendDec(buf, v.U)
	case valueHex:
		return appendHex(buf, v.U, f.Type.BitWidth()/4)
	case valueIPv4:
		if len(v.B) == 4 {
			return appendIPv4(buf, [4]byte(v.B))
		}
		return buf
	case valueTime:
		return appendFixedSeconds(buf, v.D, 9)
	}
	return f.AppendValue(buf, v)
}

// NewFields checks the field names and returns the renderer.
func NewFields(names []string, opts FieldsOptions) (*Fields, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("-T fields needs at least one -e field")
	}
	if opts.Separator == "" {
		opts.Separator = "\t"
	}
	if opts.Aggregator == "" {
		opts.Aggregator = ","
	}
	if opts.Occurrence == 0 {
		opts.Occurrence = 'a'
	}
	f := &Fields{opts: opts}
	for _, n := range names {
		fd, ok := decode.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("field %q isn't a valid field (ibdump -G fields lists them)", n)
		}
		f.fields = append(f.fields, fd)
		f.cols = append(f.cols, fieldColumn{fd: fd, kind: valueKindOf(fd), hexWidth: fd.Type.BitWidth() / 4,
			repeats: fd.TreeFlags()&decode.Repeats != 0 && opts.Occurrence != 'f'})
	}
	if len(opts.Separator) == 1 {
		f.sep = opts.Separator[0]
	}
	switch opts.Quote {
	case 'd':
		f.quote = '"'
	case 's':
		f.quote = '\''
	}
	return f, nil
}

// AppendHeader appends the header line (with its newline) when header=y.
func (f *Fields) AppendHeader(buf []byte) []byte {
	if !f.opts.Header {
		return buf
	}
	for i, fd := range f.fields {
		if i > 0 {
			buf = append(buf, f.opts.Separator...)
		}
		buf = append(buf, fd.Name...)
	}
	return append(buf, '\n')
}

// Append appends one packet's line, without a newline.
func (f *Fields) Append(buf []byte, p *decode.Packet) []byte {
	for i := range f.cols {
		c := &f.cols[i]
		if i > 0 {
			if f.sep != 0 {
				buf = append(buf, f.sep)
			} else {
				buf = append(buf, f.opts.Separator...)
			}
		}
		if f.quote != 0 {
			buf = append(buf, f.quote)
		}
		if c.fd.Get(p, &f.v) {
			last := len(buf)
			// appendValue, without a call for the common kinds.
			switch v := &f.v; c.kind {
			case valueDec:
				buf = appendDec(buf, v.U)
			case valueHex:
				buf = appendHex(buf, v.U, c.hexWidth)
			case valueIPv4:
				if len(v.B) == 4 {
					buf = appendIPv4(buf, [4]byte(v.B))
				}
			default:
				buf = appendValue(buf, c.kind, c.fd, v)
			}
			if c.repeats {
				buf = f.appendMore(buf, p, c, last)
			}
		}
		if f.quote != 0 {
			buf = append(buf, f.quote)
		}
	}
	return buf
}

// appendMore appends the further occurrences of c's field after its first,
// which starts at last: every one, as tshark prints them (-E
// occurrence=a), or only the last.
func (f *Fields) appendMore(buf []byte, p *decode.Packet, c *fieldColumn, last int) []byte {
	for n := 1; c.fd.GetOccurrence(p, n, &f.v); n++ {
		if f.opts.Occurrence == 'l' {
			buf = buf[:last]
		} else {
			buf = append(buf, f.opts.Aggregator...)
		}
		last = len(buf)
		buf = appendValue(buf, c.kind, c.fd, &f.v)
	}
	return buf
}
