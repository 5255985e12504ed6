package correlate_test

import (
	"context"
	"os"
	"testing"

	"github.com/ibwire/ibwire/correlate"
)

// BenchmarkRunTwoCopies correlates two copies of the capture
// IBWIRE_BENCH_PCAP names (bench/gencap's output; see BENCHMARKS.md).
func BenchmarkRunTwoCopies(b *testing.B) {
	path := os.Getenv("IBWIRE_BENCH_PCAP")
	if path == "" {
		b.Skip("IBWIRE_BENCH_PCAP not set: go run ./bench/gencap -n 1000000 -o /tmp/bench.pcap")
	}
	points := []correlate.Point{{Name: "a", Path: path}, {Name: "b", Path: path}}
	for i := 0; i < b.N; i++ {
		if _, err := correlate.Run(context.Background(), correlate.Config{Points: points}); err != nil {
			b.Fatal(err)
		}
	}
}
