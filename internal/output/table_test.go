package output_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/internal/output"
)

type fruit struct {
	name  string
	count uint64
	price *uint32
}

var fruitTable = &output.Table[fruit]{
	Title: "Fruit",
	End:   " |",
	Columns: []output.Column[fruit]{
		{Header: "Name", Key: "name", Width: 8, Value: func(f *fruit) any { return f.name }},
		{Header: "Count", Name: "How many", Key: "count", Width: 6, Align: output.AlignRight, Sep: " | ",
			Value: func(f *fruit) any { return f.count }},
		{Header: "Price", Key: "price", Width: 6, Align: output.AlignRight, Value: func(f *fruit) any { return f.price },
			Text: func(f *fruit) string {
				if f.price == nil {
					return "-"
				}
				return "$" + string(rune('0'+*f.price))
			}},
		{Key: "secret", Value: func(f *fruit) any { return len(f.name) }},
	},
	Keys: []string{"count", "name", "secret", "price"},
}

func TestTableText(t *testing.T) {
	seven := uint32(7)
	tests := []struct {
		name string
		rows []fruit
		want []string
	}{
		{"empty", nil, []string{"Name     |  Count  Price |"}},
		{"rows", []fruit{{"apple", 3, &seven}, {"kiwifruits", 12, nil}, {"prunéau", 1, nil}}, []string{
			"Name     |  Count  Price |",
			"apple    |      3     $7 |",
			"kiwifruits |     12      - |",
			"prunéau  |      1      - |"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, fruitTable.WriteText(&b, tc.rows, ""))
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			require.Len(t, lines, 3+len(tc.want)+1)
			assert.Equal(t, []string{strings.Repeat("=", 80), "Fruit", "Filter:<No Filter>"}, lines[:3])
			assert.Equal(t, tc.want, lines[3:len(lines)-1])
			assert.Equal(t, strings.Repeat("=", 80), lines[len(lines)-1])
		})
	}
}

func TestTableJSON(t *testing.T) {
	seven := uint32(7)
	tests := []struct {
		name string
		rows []fruit
		want string
	}{
		{"empty", nil, "[]\n"},
		{"rows", []fruit{{"apple", 3, &seven}, {"<kiwi>", 12, nil}}, `[
  {
    "count": 3,
    "name": "apple",
    "secret": 5,
    "price": 7
  },
  {
    "count": 12,
    "name": "\u003ckiwi\u003e",
    "secret": 6,
    "price": null
  }
]
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, "x"+tc.want, string(fruitTable.AppendJSON([]byte("x"), tc.rows)))
		})
	}
}

func TestColumnCells(t *testing.T) {
	seven := uint32(7)
	f := &fruit{"apple", 3, &seven}
	c := fruitTable.Columns
	assert.Equal(t, "Name", c[0].Label())
	assert.Equal(t, "How many", c[1].Label())
	assert.Equal(t, "3", c[1].CellOf(f))
	assert.Equal(t, "$7", c[2].CellOf(f))
	n, ok := c[2].Number(f)
	assert.True(t, ok)
	assert.Equal(t, 7.0, n)
	_, ok = c[0].Number(f)
	assert.False(t, ok)
}
