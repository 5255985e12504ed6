package output_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// The renderers' benchmarks: one op is one packet's line (or tree), drawn
// from packets decoded and analysed in capture order as ibdump decodes and
// analyses them, so that -benchmem's allocs/op is per packet:
//
//	go test -run '^$' -bench Render -benchmem ./internal/output/
//
// IBWIRE_BENCH_PCAP names another capture than pcaps/rxe/write_bw_loss.pcap,
// such as bench/gencap's benchmark capture (its first renderBenchMax
// packets are used).
const renderBenchMax = 6000

// renderPackets decodes and analyses the capture's first packets in order,
// each kept by its own decoder with its analysis, as ibdump's workers keep
// a batch's packets until they print them.
func renderPackets(b *testing.B) []*decode.Packet {
	path := os.Getenv("IBWIRE_BENCH_PCAP")
	if path == "" {
		path = "../../pcaps/rxe/write_bw_loss.pcap"
	}
	r, err := capture.Open(path)
	require.NoError(b, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	var ps []*decode.Packet
	for len(ps) < renderBenchMax {
		cp, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(b, err)
		cp.Data = append([]byte(nil), cp.Data...)
		p := dec.Decode(cp)
		a.Analyze(p)
		own := decode.NewDecoder(decode.Options{}).Decode(p.Input)
		own.RelTime, own.DeltaTime, own.Analysis = p.RelTime, p.DeltaTime, p.Analysis
		if n := p.Analysis.NVMe; n != nil {
			own.Analysis.NVMe = n.Clone()
		}
		if r := p.Analysis.RPCRDMA; r != nil {
			own.Analysis.RPCRDMA = r.Clone()
		}
		if s := p.Analysis.SMBDirect; s != nil {
			own.Analysis.SMBDirect = s.Clone()
		}
		if i := p.Analysis.ISER; i != nil {
			own.Analysis.ISER = i.Clone()
		}
		if d := p.Analysis.DCQCN; d != nil {
			c := *d
			own.Analysis.DCQCN = &c
		}
		ps = append(ps, own)
	}
	require.NotEmpty(b, ps)
	return ps
}

// benchRender runs render over the packets, one packet per op.
func benchRender(b *testing.B, render func(buf []byte, p *decode.Packet) []byte) {
	ps := renderPackets(b)
	buf := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf = render(buf[:0], ps[i%len(ps)])
	}
}

// BenchmarkRenderSummary is ibdump's default line with its analysis notes.
func BenchmarkRenderSummary(b *testing.B) {
	var s output.Summary
	benchRender(b, func(buf []byte, p *decode.Packet) []byte {
		buf = s.Append(buf, p)
		return append(output.AppendAnalysisNotes(buf, p), '\n')
	})
}

// BenchmarkRenderText is -T text.
func BenchmarkRenderText(b *testing.B) {
	var t output.TextLine
	benchRender(b, func(buf []byte, p *decode.Packet) []byte {
		return append(t.Append(buf, p), '\n')
	})
}

// BenchmarkRenderFields is -T fields with five fields.
func BenchmarkRenderFields(b *testing.B) {
	f, err := output.NewFields([]string{"frame.time_relative", "ip.src", "ip.dst",
		"infiniband.bth.destqp", "infiniband.bth.psn"}, output.FieldsOptions{})
	require.NoError(b, err)
	benchRender(b, func(buf []byte, p *decode.Packet) []byte {
		return append(f.Append(buf, p), '\n')
	})
}

// BenchmarkRenderTree is -V.
func BenchmarkRenderTree(b *testing.B) {
	var t output.Tree
	benchRender(b, t.Append)
}
