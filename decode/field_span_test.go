package decode_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestValueSpansHold checks each field's ValueSpan against its getter on
// the corpus: a present field's span lies in its header's bytes, and a
// frame changed at any byte of the header outside the span, which still
// decodes to the same Layers, answers the field as the frame did. Each
// byte is changed twice (inverted, and plus one), so a bit or a count the
// getter read from outside the span would show.
func TestValueSpansHold(t *testing.T) {
	var files []string
	for _, pat := range []string{"../pcaps/*.pcap", "../pcaps/rxe/*.pcap", "../testdata/vectors/*.pcap"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	byHeader := map[decode.SpanHeader][]*decode.Field{}
	for _, f := range decode.FieldsInWireOrder() {
		if sp, ok := f.Span(); ok {
			byHeader[sp.Header] = append(byHeader[sp.Header], f)
		}
	}
	require.Len(t, byHeader, decode.SpanHeaders-1, "every header has spanned fields")
	checked := map[decode.SpanHeader]int{}
	for _, file := range files {
		r, err := capture.Open(file)
		require.NoError(t, err)
		orig, changed := decode.NewDecoder(decode.Options{}), decode.NewDecoder(decode.Options{})
		var cp capture.Packet
		for n := 1; n <= 100 && r.NextInto(&cp) == nil; n++ {
			p := orig.Decode(cp)
			for h := decode.SpanHeader(1); int(h) < decode.SpanHeaders; h++ {
				hdr := p.SpanBytes(h)
				for _, f := range byHeader[h] {
					var v decode.Value
					if f.Get(p, &v) {
						sp, _ := f.Span()
						assert.LessOrEqual(t, int(sp.Off+sp.Len), len(hdr), "%s frame %d: %s's span past its header", filepath.Base(file), n, f.Name)
					}
				}
				if len(hdr) == 0 || cap(hdr) > cap(cp.Data) {
					continue
				}
				at := cap(cp.Data) - cap(hdr) // the header's offset in the frame
				for j := range hdr {
					for _, change := range []func(byte) byte{func(b byte) byte { return ^b }, func(b byte) byte { return b + 1 }} {
						frame := bytes.Clone(cp.Data)
						frame[at+j] = change(frame[at+j])
						c := cp
						c.Data = frame
						q := changed.Decode(c)
						if q.Layers() != p.Layers() {
							continue
						}
						qh := q.SpanBytes(h)
						for _, f := range byHeader[h] {
							sp, _ := f.Span()
							end := int(sp.Off + sp.Len)
							if j >= int(sp.Off) && j < end || end > len(hdr) || end > len(qh) ||
								!bytes.Equal(hdr[sp.Off:end], qh[sp.Off:end]) {
								continue
							}
							var pv, qv decode.Value
							pok, qok := f.Get(p, &pv), f.Get(q, &qv)
							if !assert.Equal(t, pok, qok, "%s frame %d byte %d: %s's presence", filepath.Base(file), n, j, f.Name) ||
								pok && !assert.Equal(t, fmt.Sprint(pv), fmt.Sprint(qv), "%s frame %d byte %d: %s", filepath.Base(file), n, j, f.Name) {
								return
							}
							checked[h]++
						}
					}
				}
			}
		}
		r.Close()
	}
	for h := decode.SpanHeader(1); int(h) < decode.SpanHeaders; h++ {
		assert.Positive(t, checked[h], "header %d's spans checked", h)
	}
	t.Logf("checked %v", checked)
}
