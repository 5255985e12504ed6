package parquetout

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// A text column whose value is held as bytes (an address) copies nothing
// per row once the text is in the row group's dictionary: the lookup
// converts the bytes without allocating, and a row adds only its index.
func TestFieldColumnKnownTextAllocatesNothing(t *testing.T) {
	r, err := capture.Open("../../pcaps/cm_reject.pcap")
	require.NoError(t, err)
	defer r.Close()
	var cp capture.Packet
	require.NoError(t, r.NextInto(&cp))
	p := decode.NewDecoder(decode.Options{}).Decode(cp)

	for _, name := range []string{"eth.src", "ip.src"} {
		c, err := newFieldColumn(name, []string{name})
		require.NoError(t, err)
		require.Equal(t, kindString, c.kind, name)
		col := newColumn(name, c.kind, false)
		var v decode.Value
		c.put(p, 0, &v, col)
		require.Len(t, col.words, 1, name)
		allocs := testing.AllocsPerRun(100, func() { col.idx = col.idx[:0]; col.defs = col.defs[:0]; c.put(p, 0, &v, col) })
		assert.Zero(t, allocs, name)
		assert.Equal(t, []int32{0}, col.idx, name)
		assert.Len(t, col.words, 1, name)
	}
}

// texts are a text column's values row by row ("" for null).
func texts(c *column) []string {
	if c.kind != kindString {
		return nil
	}
	var out []string
	j := 0
	for _, d := range c.defs {
		if d == 0 {
			out = append(out, "")
			continue
		}
		out = append(out, string(c.words[c.idx[j]]))
		j++
	}
	return out
}

// Every direct reader and every gate gives what its column's registry
// fields give, packet for packet, over every capture in the tree: the
// registry stays the one definition of each value.
func TestDirectEqualsRegistry(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../pcaps/*.pcap*", "../../pcaps/*/*.pcap*", "../../capture/testdata/*.pcap*"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		paths = append(paths, m...)
	}
	require.NotEmpty(t, paths)
	var cols []*fieldColumn
	for _, pc := range packetColumns {
		if directs[pc.name] == nil && pc.gate == 0 {
			continue
		}
		c, err := newFieldColumn(pc.name, pc.fields)
		require.NoError(t, err)
		c.direct, c.gate = directs[pc.name], pc.gate
		cols = append(cols, c)
	}
	require.NotEmpty(t, cols)
	checked := 0
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			continue // a capture the tests keep to be refused
		}
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
		via := make([]*column, len(cols))
		got := make([]*column, len(cols))
		for i, c := range cols {
			via[i], got[i] = newColumn(c.name, c.kind, false), newColumn(c.name, c.kind, false)
		}
		var cp capture.Packet
		var v decode.Value
		for r.NextInto(&cp) == nil {
			p := dec.Decode(cp)
			a.Analyze(p)
			g := gatesOf(p)
			for i, c := range cols {
				registry := *c
				registry.direct, registry.gate = nil, 0
				registry.put(p, g, &v, via[i])
				c.put(p, g, &v, got[i])
			}
			checked++
		}
		r.Close()
		for i, c := range cols {
			name := path + ": " + c.name
			require.Equal(t, via[i].defs, got[i].defs, name)
			assert.Equal(t, via[i].i32, got[i].i32, name)
			assert.Equal(t, via[i].bools, got[i].bools, name)
			assert.Equal(t, via[i].i64, got[i].i64, name)
			assert.Equal(t, via[i].raw, got[i].raw, name)
			assert.Equal(t, texts(via[i]), texts(got[i]), name)
		}
	}
	assert.Greater(t, checked, 10000, "packets compared")
}
