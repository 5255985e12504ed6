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
