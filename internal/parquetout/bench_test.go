package parquetout_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/parquetout"
)

// BenchmarkExport measures the export of a capture's packets after
// decoding and analysis, as ibdump -T parquet runs them; IBWIRE_BENCH_PCAP
// names a bigger capture than the default (bench/gencap writes one).
func BenchmarkExport(b *testing.B) {
	path := os.Getenv("IBWIRE_BENCH_PCAP")
	if path == "" {
		path = "../../pcaps/rxe/send_bw_rnr.pcap"
	}
	packets := 0
	for b.Loop() {
		e, err := parquetout.New(parquetout.Options{Dir: b.TempDir(), Name: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: e.Finding})
		dec := decode.NewDecoder(decode.Options{})
		r, err := capture.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		var cp capture.Packet
		for {
			if err := r.NextInto(&cp); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			p := dec.Decode(cp)
			a.Analyze(p)
			if err := e.Packet(p); err != nil {
				b.Fatal(err)
			}
			packets++
		}
		a.Finish()
		if err := e.Close(a.Conversations()); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(packets)/b.Elapsed().Seconds(), "packets/s")
}
