package output

import (
	"math"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// The renderers' number formatting against strconv's and netip's, which
// they replace on the hot paths.
func TestAppendNumbers(t *testing.T) {
	for _, u := range []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 4791, 49152, 65535, 1<<24 - 1,
		1<<32 - 1, 1704067200, 1e15, 1e19 - 1, 1e19, math.MaxUint64} {
		assert.Equal(t, strconv.FormatUint(u, 10), string(appendDec(nil, u)), "dec %d", u)
		assert.Equal(t, strconv.FormatUint(u, 16), string(appendHexTrim(nil, u)), "hex %d", u)
		assert.Equal(t, strconv.FormatInt(int64(u), 10), string(appendInt([]byte{}, int64(u))), "int %d", u)
		for _, n := range []int{1, 2, 3, 6, 9} {
			want := strconv.FormatUint(u%uint64(math.Pow10(n))+uint64(math.Pow10(n)), 10)[1:]
			assert.Equal(t, want, string(appendDigits([]byte("x"), u, n))[1:], "%d digits of %d", n, u)
		}
	}
	assert.Equal(t, "-42", string(appendInt(nil, -42)))
	assert.Equal(t, "0x0001f", string(appendHex(nil, 0x1f, 5)))
	assert.Equal(t, "0xffffffffffffffff", string(appendHex(nil, math.MaxUint64, 16)))
	assert.Equal(t, "  -42", string(appendIntLeft(nil, -42, 5)))
	assert.Equal(t, "123456", string(appendIntLeft(nil, 123456, 5)))
}

func TestAppendIPv4(t *testing.T) {
	for _, ip := range [][4]byte{{0, 0, 0, 0}, {10, 0, 0, 1}, {192, 168, 100, 255}, {1, 22, 99, 100}, {255, 255, 255, 255}} {
		assert.Equal(t, netip.AddrFrom4(ip).String(), string(appendIPv4(nil, ip)))
	}
	for i := range 256 {
		b := byte(i)
		ip := [4]byte{b, b ^ 0x55, 255 - b, b / 3}
		assert.Equal(t, netip.AddrFrom4(ip).String(), string(appendIPv4([]byte{}, ip)))
	}
}

// TestFieldsValueAsRegistry: -T fields writes the common types itself
// (appendValue) instead of through decode.Field.AppendValue; for every
// field of the registry, on every packet of the corpus, both write the
// same text.
func TestFieldsValueAsRegistry(t *testing.T) {
	files, err := filepath.Glob("../../pcaps/*.pcap")
	require.NoError(t, err)
	rxe, err := filepath.Glob("../../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	files = append(files, rxe...)
	require.NotEmpty(t, files)
	all := decode.Fields()
	kinds := make([]valueKind, len(all))
	for i, f := range all {
		kinds[i] = valueKindOf(f)
	}
	var v decode.Value
	checked := 0
	for _, path := range files {
		r, err := capture.Open(path)
		require.NoError(t, err, path)
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
		for n := 0; n < 300; n++ {
			cp, err := r.Next()
			if err != nil {
				break
			}
			p := dec.Decode(cp)
			a.Analyze(p)
			for i, f := range all {
				if kinds[i] == valueGeneric || !f.Get(p, &v) {
					continue
				}
				checked++
				want := string(f.AppendValue(nil, &v))
				if got := string(appendValue(nil, kinds[i], f, &v)); got != want {
					assert.Equal(t, want, got, "%s frame %d %s", filepath.Base(path), cp.Number, f.Name)
				}
			}
		}
		r.Close()
	}
	assert.Greater(t, checked, 10000)
}

// TestFieldsOptions: -T fields' columns with each -E separator, quote and
// occurrence agree with a line built from the registry's own
// decode.Field.AppendValue and GetOccurrence, over the corpus.
func TestFieldsOptions(t *testing.T) {
	names := []string{"frame.number", "ip.src", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
		"infiniband.reth.dmalen", "infiniband.aeth.syndrome", "frame.time_relative", "nfs.opcode", "infiniband.bth"}
	for _, opts := range []FieldsOptions{
		{},
		{Separator: ",", Quote: 'd', Occurrence: 'f'},
		{Separator: "::", Quote: 's', Occurrence: 'l'},
		{Separator: " ", Aggregator: ";", Occurrence: 'a'},
	} {
		f, err := NewFields(names, opts)
		require.NoError(t, err)
		o := f.opts // with the defaults
		q := map[byte]string{'d': `"`, 's': `'`}[o.Quote]
		var v decode.Value
		lines := 0
		for _, path := range corpusFiles(t) {
			r, err := capture.Open(path)
			require.NoError(t, err, path)
			dec := decode.NewDecoder(decode.Options{})
			a := decode.NewAnalyzer(decode.AnalyzerOptions{})
			for {
				cp, err := r.Next()
				if err != nil {
					break
				}
				p := dec.Decode(cp)
				a.Analyze(p)
				var want []byte
				for i, fd := range f.fields {
					if i > 0 {
						want = append(want, o.Separator...)
					}
					want = append(want, q...)
					var vals [][]byte
					for n := 0; fd.GetOccurrence(p, n, &v); n++ {
						vals = append(vals, fd.AppendValue(nil, &v))
						if o.Occurrence == 'f' || fd.TreeFlags()&decode.Repeats == 0 {
							break
						}
					}
					if o.Occurrence == 'l' && len(vals) > 0 {
						vals = vals[len(vals)-1:]
					}
					for j, val := range vals {
						if j > 0 {
							want = append(want, o.Aggregator...)
						}
						want = append(want, val...)
					}
					want = append(want, q...)
				}
				if got := f.Append(nil, p); string(got) != string(want) {
					assert.Equal(t, string(want), string(got), "%s frame %d %+v", filepath.Base(path), cp.Number, opts)
				}
				lines++
			}
			r.Close()
		}
		assert.Greater(t, lines, 10000)
	}
}

// TestAppendFraction: the timestamps' decimals, as appendDigits writes
// them from the truncated fraction.
func TestAppendFraction(t *testing.T) {
	for _, ns := range []uint32{0, 1, 999, 1000, 1001, 123456789, 999999999, 500000000, 4000} {
		for _, prec := range []int{1, 3, 6, 9} {
			want := appendDigits([]byte("x"), uint64(ns)/uint64(math.Pow10(9-prec)), prec)
			assert.Equal(t, string(want), string(appendFraction([]byte("x"), ns, prec)), "%d ns, %d decimals", ns, prec)
		}
	}
	assert.Equal(t, "1.000000", string(appendFixedSeconds(nil, time.Second, 6)))
}

// TestCounter: frame numbers counted up in place, jumping, repeating and
// negative, as appendIntLeft writes them.
func TestCounter(t *testing.T) {
	var c counter
	for _, n := range []int{1, 2, 3, 9, 10, 11, 99, 100, 101, 99999, 100000, 100001, 5, 5, 0, 1, -3, -2, 1<<40 - 1, 1 << 40, 7} {
		assert.Equal(t, string(appendIntLeft([]byte("x"), int64(n), 5)), string(c.appendLeft([]byte("x"), n, 5)), "%d", n)
	}
	for n := 0; n < 200000; n++ {
		if got, want := c.appendLeft(nil, n, 5), appendIntLeft(nil, int64(n), 5); string(got) != string(want) {
			require.Equal(t, string(want), string(got), "%d", n)
		}
	}
}
