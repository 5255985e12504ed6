package parquetout

import (
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
		c.put(p, &v, col)
		require.Len(t, col.words, 1, name)
		allocs := testing.AllocsPerRun(100, func() { col.idx = col.idx[:0]; col.defs = col.defs[:0]; c.put(p, &v, col) })
		assert.Zero(t, allocs, name)
		assert.Equal(t, []int32{0}, col.idx, name)
		assert.Len(t, col.words, 1, name)
	}
}
