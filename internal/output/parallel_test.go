package output_test

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// render decodes and analyses every packet of path in order and hands each
// to emit, as ibdump's loop does.
func render(t *testing.T, path string, opts decode.Options, emit func(p *decode.Packet)) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(opts)
	an := decode.NewAnalyzer(decode.AnalyzerOptions{})
	var cp capture.Packet
	for {
		err := r.NextInto(&cp)
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(t, err)
		p := dec.Decode(cp)
		an.Analyze(p)
		emit(p)
	}
}

// The parallel renderer writes exactly what rendering in order writes, for
// every capture of the corpus, with the tree, the summary line and the
// analysis notes (which read the copied analysis and times).
func TestParallelMatchesSequential(t *testing.T) {
	paths, err := filepath.Glob("../../pcaps/*.pcap*")
	require.NoError(t, err)
	rxe, err := filepath.Glob("../../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	paths = append(paths, rxe...)
	require.Greater(t, len(paths), 20)
	opts := decode.Options{}
	newAppend := func() output.AppendFunc {
		var tree output.Tree
		summary := output.Summary{Number: true, Time: output.TimeSinceFirst, Verbose: 1}
		return func(buf []byte, p *decode.Packet) []byte {
			buf = summary.Append(buf, p)
			buf = output.AppendAnalysisNotes(buf, p)
			buf = append(buf, '\n')
			return tree.Append(buf, p)
		}
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var want bytes.Buffer
			seq := newAppend()
			render(t, path, opts, func(p *decode.Packet) { want.Write(seq(nil, p)) })

			var got bytes.Buffer
			pl := output.NewParallel(2, opts, newAppend, &got)
			render(t, path, opts, pl.Add)
			require.NoError(t, pl.Close())
			assert.Equal(t, want.String(), got.String())
		})
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	w.n++
	return 0, errors.New("broken pipe")
}

// A write error is kept and reported, and does not stop Close from
// returning.
func TestParallelReportsWriteError(t *testing.T) {
	opts := decode.Options{}
	w := &failingWriter{}
	pl := output.NewParallel(2, opts, func() output.AppendFunc {
		return func(buf []byte, p *decode.Packet) []byte { return append(buf, "x\n"...) }
	}, w)
	render(t, "../../pcaps/rxe/write_bw.pcap", opts, pl.Add)
	assert.EqualError(t, pl.Close(), "broken pipe")
	assert.Positive(t, w.n)
}
