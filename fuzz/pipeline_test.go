package fuzz

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/fuzzseed"
	"github.com/ibwire/ibwire/internal/output"
)

// fuzzPackets bounds one fuzz execution. With the reader's 256 KiB record
// cap and output written to a buffer that is reset per packet, the memory
// of a run is bounded by a constant, not by the input: what grows with the
// capture (the QP table) grows with distinct QPs, at most one per packet.
// Small runs and seeds of at most 4 KiB keep the fuzzer at thousands of
// executions a second; large seeds slowed it to one a second.
const fuzzPackets = 64

// pipeline is one ibdump run over capture bytes: every output mode, a
// filter, and the statistics. It returns the number of packets decoded.
type pipeline struct {
	dec     *decode.Decoder
	filter  *dfilter.Filter
	summary output.Summary
	text    output.TextLine
	tree    output.Tree
	fields  *output.Fields
	json    output.JSON
	jsonl   output.JSONL
	ek      output.EK
	an      *decode.Analyzer
	io      decode.IOFuncStat
	buf     []byte
}

func newPipeline(tb testing.TB) *pipeline {
	f, err := output.NewFields([]string{"frame.number", "bth.opcode", "bth.psn", "immdt", "vendor", "ibwire.icrc.status"}, output.FieldsOptions{Header: true})
	require.NoError(tb, err)
	return &pipeline{
		dec:    decode.NewDecoder(decode.Options{}),
		filter: dfilter.MustCompile("bth.opcode in {0..0x1d} || aeth.syndrome.opcode == 3 || frame contains 12:b7"),
		fields: f,
		an:     decode.NewAnalyzer(decode.AnalyzerOptions{MaxLive: 64}),
		io:     decode.IOFuncStat{Interval: 1e6, Columns: []decode.IOColumn{{Title: "Frames and bytes"}}},
	}
}

func (pl *pipeline) run(data []byte, maxPackets int) (int, error) {
	r, err := capture.NewReader(bytes.NewReader(data), "fuzz")
	if err != nil {
		return 0, err
	}
	var cp capture.Packet
	n := 0
	pl.buf = pl.json.Begin(pl.buf[:0])
	for n < maxPackets {
		if err := r.NextInto(&cp); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		n++
		p := pl.dec.Decode(cp)
		pl.filter.Match(p)
		pl.an.Analyze(p)
		pl.io.Add(p)
		b := pl.buf[:0]
		b = pl.summary.Append(b, p)
		b = pl.text.Append(b, p)
		b = pl.tree.Append(b, p)
		b = pl.fields.Append(b, p)
		b = pl.json.Append(b, p)
		b = pl.jsonl.Append(b, p)
		b = pl.ek.Append(b, p)
		b = output.AppendTcpdumpHex(b, p.Data, true)
		b = output.AppendTsharkHex(b, p.Data)
		pl.buf = b[:0]
	}
	return n, nil
}

// FuzzPipeline feeds arbitrary bytes as a capture file through the reader,
// the decoder, a display filter, the statistics and every output mode. It
// must never panic, and errors must come from the reader.
func FuzzPipeline(f *testing.F) {
	files, err := fuzzseed.Files(4 << 10)
	require.NoError(f, err)
	for _, b := range files {
		f.Add(b)
	}
	pl := newPipeline(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := pl.run(data, fuzzPackets); err != nil {
			var fe *capture.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("pipeline error that is not a capture.FileError: %v", err)
			}
		}
	})
}

// TestPipelineMemoryIsBounded runs the whole of the largest capture of the
// corpus through the pipeline five times and checks the live heap stays
// under a fixed budget: the reader reuses one buffer, renderers reuse
// theirs, and the only tables that grow are bounded by distinct QPs and
// busy intervals.
func TestPipelineMemoryIsBounded(t *testing.T) {
	files, err := fuzzseed.Files(1 << 20)
	require.NoError(t, err)
	var big []byte
	for _, b := range files {
		if len(b) > len(big) {
			big = b
		}
	}
	pl := newPipeline(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 5 {
		n, err := pl.run(big, 1<<20)
		require.NoError(t, err)
		require.Positive(t, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap grew by %d bytes over 5 runs of %d-byte capture", grew, len(big))
	require.Less(t, grew, int64(4<<20), "the pipeline must not keep what it reads")
}
