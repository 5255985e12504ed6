package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Align is where a cell sits in its column.
type Align uint8

// Alignments.
const (
	AlignLeft Align = iota
	AlignRight
)

// Column is one column of a Table of rows of type R: what it is called,
// how wide and how aligned the text table prints it, and how to read it
// from a row. A column without a Header is JSON's only; one without a Key
// is the text's (and a view's) only.
type Column[R any] struct {
	// Header heads the column in the text table; Name names it where it
	// stands alone, out of the text table's groups (a view's header); ""
	// is Header.
	Header, Name string
	// Key is the column's JSON key.
	Key   string
	Width int
	Align Align
	// Sep is what the text table prints before the column; "" is one
	// space (nothing before the first column).
	Sep string
	// Value is the cell's value: JSON's, and a view's sort key when it is
	// a number. A nil pointer is JSON's null.
	Value func(*R) any
	// Text is the cell as the text table prints it, before padding; Cell
	// is the cell where it stands alone (a view), when it differs. Text nil
	// prints Value in decimal.
	Text, Cell func(*R) string
}

// Label is the column's name where it stands alone.
func (c *Column[R]) Label() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Header
}

// TextOf is the column's cell as the text table prints it, unpadded.
func (c *Column[R]) TextOf(r *R) string {
	if c.Text != nil {
		return c.Text(r)
	}
	return plain(c.Value(r))
}

// CellOf is the column's cell as a view shows it.
func (c *Column[R]) CellOf(r *R) string {
	if c.Cell != nil {
		return c.Cell(r)
	}
	return c.TextOf(r)
}

// Number is the column's value as a number, for sorting; false when it is
// not one.
func (c *Column[R]) Number(r *R) (float64, bool) {
	if c.Value == nil {
		return 0, false
	}
	switch v := c.Value(r).(type) {
	case uint64:
		return float64(v), true
	case uint32:
		return float64(v), true
	case *uint32:
		if v == nil {
			return 0, true
		}
		return float64(*v), true
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// plain prints a value in decimal.
func plain(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case uint64:
		return strconv.FormatUint(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// Table is a statistics table (-z): a title and columns, printed as
// tshark prints its statistics or as JSON, and read by ibtui's views.
type Table[R any] struct {
	Title   string
	Columns []Column[R]
	// End is printed after the last text column of every line.
	End string
	// Keys orders the JSON object's keys when it differs from the
	// columns' order (a promise to scripts); nil is the columns' order.
	Keys []string
}

// WriteText writes the table framed as tshark frames its statistics: a
// ruler, the title, the filter, the header, one line per row, a ruler.
func (t *Table[R]) WriteText(w io.Writer, rows []R, filter string) error {
	return t.writeText(w, rows, filter, "")
}

// writeText writes the table with footer (whole lines) under the rows.
func (t *Table[R]) writeText(w io.Writer, rows []R, filter, footer string) error {
	if filter == "" {
		filter = "<No Filter>"
	}
	var b strings.Builder
	b.WriteString(ruler80 + "\n" + t.Title + "\nFilter:" + filter + "\n")
	t.line(&b, func(c *Column[R]) string { return c.Header })
	for i := range rows {
		r := &rows[i]
		t.line(&b, func(c *Column[R]) string { return c.TextOf(r) })
	}
	b.WriteString(footer + ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table[R]) line(b *strings.Builder, cell func(*Column[R]) string) {
	first := true
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Header == "" {
			continue
		}
		switch {
		case c.Sep != "":
			b.WriteString(c.Sep)
		case !first:
			b.WriteByte(' ')
		}
		first = false
		s := cell(c)
		pad := c.Width - utf8.RuneCountInString(s) // as fmt pads: by rune
		if c.Align == AlignRight {
			writePad(b, pad)
		}
		b.WriteString(s)
		if c.Align == AlignLeft {
			writePad(b, pad)
		}
	}
	b.WriteString(t.End + "\n")
}

const spaces = "                                                                "

func writePad(b *strings.Builder, n int) {
	for ; n > len(spaces); n -= len(spaces) {
		b.WriteString(spaces)
	}
	if n > 0 {
		b.WriteString(spaces[:n])
	}
}

// AppendJSON appends the table as a JSON array, one object per row, its
// keys in Keys' order, indented by two spaces, and a newline.
func (t *Table[R]) AppendJSON(buf []byte, rows []R) []byte {
	if len(rows) == 0 {
		return append(buf, "[]\n"...)
	}
	cols := t.JSONColumns()
	buf = append(buf, '[')
	var nested bytes.Buffer
	for i := range rows {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n  {"...)
		for j, c := range cols {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONValue(append(buf, "\n    "...), c.Key)
			buf = append(buf, ": "...)
			mark := len(buf)
			buf = appendJSONValue(buf, c.Value(&rows[i]))
			if v := buf[mark:]; len(v) > 2 && (v[0] == '{' || v[0] == '[') {
				// An object or array within: indented as json.MarshalIndent does.
				nested.Reset()
				_ = json.Indent(&nested, v, "    ", "  ")
				buf = append(buf[:mark], nested.Bytes()...)
			}
		}
		if len(cols) > 0 {
			buf = append(buf, "\n  "...)
		}
		buf = append(buf, '}')
	}
	return append(buf, "\n]\n"...)
}

// JSONColumns are the columns with a key, in Keys' order: what the JSON
// output prints, and what other exports (Parquet) take from the same rows.
func (t *Table[R]) JSONColumns() []*Column[R] {
	var cols []*Column[R]
	if t.Keys == nil {
		for i := range t.Columns {
			if t.Columns[i].Key != "" {
				cols = append(cols, &t.Columns[i])
			}
		}
		return cols
	}
	for _, k := range t.Keys {
		for i := range t.Columns {
			if t.Columns[i].Key == k {
				cols = append(cols, &t.Columns[i])
			}
		}
	}
	return cols
}

// appendJSONValue appends v as encoding/json writes it: numbers and plain
// strings directly (a table has many), the rest through json.Marshal.
func appendJSONValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case float64:
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			return appendJSONFloat(b, v)
		}
	case string:
		if plainJSON(v) {
			return append(append(append(b, '"'), v...), '"')
		}
	}
	m, _ := json.Marshal(v)
	return append(b, m...)
}

// appendJSONFloat formats f as encoding/json does (ES6): 'f' between 1e-6
// and 1e21, else 'e' with a short exponent.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// plainJSON says whether s needs no escaping in JSON (encoding/json also
// escapes <, > and &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
