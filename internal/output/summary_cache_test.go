package output

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// corpusFiles lists the captures of pcaps/ and pcaps/rxe.
func corpusFiles(t *testing.T) []string {
	files, err := filepath.Glob("../../pcaps/*.pcap")
	require.NoError(t, err)
	rxe, err := filepath.Glob("../../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	files = append(files, rxe...)
	require.NotEmpty(t, files)
	return files
}

// TestLinesKeptMatchFresh: the line renderers copy the parts of a line
// they wrote for an earlier packet with the same headers (lineCache); over
// every packet of the corpus, a renderer that has seen the packets before
// writes the same lines as a new one, which keeps nothing yet, in each
// time format and verbosity.
func TestLinesKeptMatchFresh(t *testing.T) {
	configs := []struct {
		name string
		line func() func(buf []byte, p *decode.Packet) []byte
	}{
		{"summary", func() func([]byte, *decode.Packet) []byte { s := &Summary{Location: time.UTC}; return s.Append }},
		{"summary -v -tt -#", func() func([]byte, *decode.Packet) []byte {
			s := &Summary{Time: TimeEpoch, Verbose: 1, Number: true}
			return s.Append
		}},
		{"text", func() func([]byte, *decode.Packet) []byte { t := &TextLine{}; return t.Append }},
		{"text --nano", func() func([]byte, *decode.Packet) []byte { t := &TextLine{Nanos: true}; return t.Append }},
	}
	kept := 0
	for _, path := range corpusFiles(t) {
		r, err := capture.Open(path)
		require.NoError(t, err, path)
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
		warm := make([]func([]byte, *decode.Packet) []byte, len(configs))
		for i, c := range configs {
			warm[i] = c.line()
		}
		for {
			cp, err := r.Next()
			if err != nil {
				break
			}
			p := dec.Decode(cp)
			a.Analyze(p)
			for i, c := range configs {
				want := string(c.line()(nil, p))
				got := string(warm[i](nil, p))
				if got != want {
					assert.Equal(t, want, got, "%s frame %d %s", filepath.Base(path), cp.Number, c.name)
				}
			}
			kept++
		}
		r.Close()
	}
	assert.Greater(t, kept, 10000)
}

// TestLineCache: a kept part comes back for its key only, differing in any
// one field is another key, a part too long for a slot is not kept, and a
// set keeps its last lineCacheWays keys.
func TestLineCache(t *testing.T) {
	c := new(lineCache)
	base := lineKey{src: [2]uint64{1, 2}, dst: [2]uint64{3, 4}, ports: 5, qp: 6, fam: 6, encap: 2, part: 1}
	c.keep(&base, []byte("head"))
	got, ok := c.appendKept([]byte(">"), &base)
	require.True(t, ok)
	assert.Equal(t, ">head", string(got))
	for name, change := range map[string]func(k *lineKey){
		"src": func(k *lineKey) { k.src[1]++ }, "dst": func(k *lineKey) { k.dst[0]++ },
		"ports": func(k *lineKey) { k.ports++ }, "qp": func(k *lineKey) { k.qp |= 1 << 24 },
		"fam": func(k *lineKey) { k.fam = 4 }, "encap": func(k *lineKey) { k.encap++ }, "part": func(k *lineKey) { k.part++ },
	} {
		k := base
		change(&k)
		_, ok := c.appendKept(nil, &k)
		assert.False(t, ok, name)
	}
	long := lineKey{qp: 7}
	c.keep(&long, make([]byte, lineSlotRoom+1))
	_, ok = c.appendKept(nil, &long)
	assert.False(t, ok, "a part longer than a slot")

	// Keys of one set: the last lineCacheWays kept are found.
	var same []lineKey
	want := set(base.hash())
	for q := uint32(0); len(same) < lineCacheWays+2; q++ {
		k := lineKey{qp: q, part: 9}
		if set(k.hash()) == want {
			same = append(same, k)
		}
	}
	for i := range same {
		c.keep(&same[i], []byte{byte('a' + i)})
	}
	for i := range same {
		got, ok := c.appendKept(nil, &same[i])
		if i < len(same)-lineCacheWays {
			assert.False(t, ok, "key %d of %d", i, len(same))
			continue
		}
		require.True(t, ok, "key %d of %d", i, len(same))
		assert.Equal(t, string(rune('a'+i)), string(got))
	}
}
