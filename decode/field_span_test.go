package decode_test

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// headerCorpus are the captures the tests of the registry's promises
// read: pcaps/, pcaps/rxe and the scapy vectors, whose packets have every
// header the registry knows.
func headerCorpus(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"../pcaps/*.pcap", "../pcaps/rxe/*.pcap", "../testdata/vectors/*.pcap"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	return files
}

// TestValueSpansHold checks each field's ValueSpan against its getter on
// the corpus: a present field's span lies in its header's bytes, and a
// frame changed at any one of its first bytes, which still decodes to the
// same HeaderSet with the same bytes at the span, answers the field as the
// frame did. Each byte is changed twice (inverted, and plus one), so a bit
// or a count the getter read from outside its span, in its header or
// another, would show.
func TestValueSpansHold(t *testing.T) {
	files := headerCorpus(t)
	var spanned []*decode.Field
	headers := map[decode.SpanHeader]bool{}
	for _, f := range decode.FieldsInWireOrder() {
		if sp, ok := f.Span(); ok {
			spanned = append(spanned, f)
			headers[sp.Header] = true
		}
	}
	require.Len(t, headers, decode.SpanHeaders-1, "every header has spanned fields")
	checked := map[decode.SpanHeader]int{}
	for _, file := range files {
		r, err := capture.Open(file)
		require.NoError(t, err)
		orig, changed := decode.NewDecoder(decode.Options{}), decode.NewDecoder(decode.Options{})
		var cp capture.Packet
		for n := 1; n <= 30 && r.NextInto(&cp) == nil; n++ {
			p := orig.Decode(cp)
			for _, f := range spanned {
				var v decode.Value
				if f.Get(p, &v) {
					sp, _ := f.Span()
					assert.LessOrEqual(t, int(sp.Off+sp.Len), len(p.SpanBytes(sp.Header)), "%s frame %d: %s's span past its header", filepath.Base(file), n, f.Name)
				}
			}
			for j := range min(len(cp.Data), 96) {
				for _, change := range []func(byte) byte{func(b byte) byte { return ^b }, func(b byte) byte { return b + 1 }} {
					c := cp
					c.Data = bytes.Clone(cp.Data)
					c.Data[j] = change(c.Data[j])
					q := changed.Decode(c)
					if q.HeaderSet() != p.HeaderSet() {
						continue
					}
					for _, f := range spanned {
						sp, _ := f.Span()
						end := int(sp.Off + sp.Len)
						ph, qh := p.SpanBytes(sp.Header), q.SpanBytes(sp.Header)
						if end > len(ph) || end > len(qh) || !bytes.Equal(ph[sp.Off:end], qh[sp.Off:end]) {
							continue
						}
						var pv, qv decode.Value
						pok, qok := f.Get(p, &pv), f.Get(q, &qv)
						same := pv.U == qv.U && bytes.Equal(pv.B, qv.B) && pv.S == qv.S && pv.F == qv.F && pv.D == qv.D
						if pok != qok || pok && !same {
							t.Errorf("%s frame %d byte %d: %s answers %v %v, changed %v %v", filepath.Base(file), n, j, f.Name, pok, pv, qok, qv)
							return
						}
						checked[sp.Header]++
					}
				}
			}
		}
		r.Close()
	}
	for h := range headers {
		assert.Positive(t, checked[h], "header %d's spans checked", h)
	}
	t.Logf("checked %v", checked)
}

// TestPresentByHeadersHolds checks the fields that are PresentByHeaders
// over the corpus, whole, changed at each of a frame's first bytes and cut
// at each length: every two packets with the same HeaderSet have the same
// of those fields, and none has a subtree without its header.
func TestPresentByHeadersHolds(t *testing.T) {
	files := headerCorpus(t)
	var marked []*decode.Field
	for _, f := range decode.FieldsInWireOrder() {
		if f.PresentByHeaders() {
			marked = append(marked, f)
		}
	}
	require.NotEmpty(t, marked)
	type seen struct {
		present []bool
		where   string
	}
	bySet := map[uint64]seen{}
	check := func(p *decode.Packet, where string) bool {
		present := make([]bool, len(marked))
		var v decode.Value
		for i, f := range marked {
			present[i] = f.Get(p, &v)
			if f.SubtreeWithout(p) {
				t.Errorf("%s: %s has a subtree without its header", where, f.Name)
				return false
			}
		}
		s, ok := bySet[p.HeaderSet()]
		if !ok {
			bySet[p.HeaderSet()] = seen{present, where}
			return true
		}
		for i, f := range marked {
			if s.present[i] != present[i] {
				t.Errorf("%s has %s: %v, %s of the same headers %v", where, f.Name, present[i], s.where, s.present[i])
				return false
			}
		}
		return true
	}
	dec := decode.NewDecoder(decode.Options{})
	packets := 0
	for _, file := range files {
		r, err := capture.Open(file)
		require.NoError(t, err)
		var cp capture.Packet
		for n := 1; n <= 30 && r.NextInto(&cp) == nil; n++ {
			name := filepath.Base(file) + " frame " + strconv.Itoa(n)
			if !check(dec.Decode(cp), name) {
				return
			}
			for j := range min(len(cp.Data), 96) {
				c := cp
				c.Data = bytes.Clone(cp.Data)
				c.Data[j] = ^c.Data[j]
				if !check(dec.Decode(c), name+" byte "+strconv.Itoa(j)+" inverted") {
					return
				}
			}
			for cut := 1; cut < len(cp.Data); cut++ {
				c := cp
				c.Data = cp.Data[:cut]
				if !check(dec.Decode(c), name+" cut to "+strconv.Itoa(cut)) {
					return
				}
			}
			packets++
		}
		r.Close()
	}
	t.Logf("%d packets, %d sets of headers", packets, len(bySet))
	assert.Greater(t, len(bySet), 20)
}
