package parquetout

import (
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// A text column whose value is held as bytes (an address) copies nothing
// per row once the text is cached: the cache lookup converts the bytes
// without allocating, and a row reuses the cached text.
func TestFieldColumnCachedTextAllocatesNothing(t *testing.T) {
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
		var v decode.Value
		var arena []byte
		first, ok := c.value(p, &v, &arena)
		require.True(t, ok, name)
		var got pq.Value
		allocs := testing.AllocsPerRun(100, func() { got, _ = c.value(p, &v, &arena) })
		assert.Zero(t, allocs, name)
		assert.Equal(t, first.ByteArray(), got.ByteArray(), name)
	}
}
