package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
		pad := c.Width - len(s)
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

func writePad(b *strings.Builder, n int) {
	for ; n > 0; n-- {
		b.WriteByte(' ')
	}
}

// AppendJSON appends the table as a JSON array, one object per row, its
// keys in Keys' order, indented by two spaces, and a newline.
func (t *Table[R]) AppendJSON(buf []byte, rows []R) []byte {
	cols := t.jsonColumns()
	compact := []byte{'['}
	for i := range rows {
		if i > 0 {
			compact = append(compact, ',')
		}
		compact = append(compact, '{')
		for j, c := range cols {
			if j > 0 {
				compact = append(compact, ',')
			}
			k, _ := json.Marshal(c.Key)
			v, _ := json.Marshal(c.Value(&rows[i]))
			compact = append(append(append(compact, k...), ':'), v...)
		}
		compact = append(compact, '}')
	}
	compact = append(compact, ']')
	var out bytes.Buffer
	_ = json.Indent(&out, compact, "", "  ")
	return append(append(buf, out.Bytes()...), '\n')
}

// jsonColumns are the columns with a key, in Keys' order.
func (t *Table[R]) jsonColumns() []*Column[R] {
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
