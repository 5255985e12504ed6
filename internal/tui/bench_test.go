package tui

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// The model benchmarks run on the 1M-packet benchmark capture:
//
//	go run ./bench/gencap -n 1000000 -o /tmp/bench.pcap
//	IBWIRE_BENCH_PCAP=/tmp/bench.pcap go test -run '^$' -bench . -benchtime 5x ./internal/tui/
func benchCapture(b *testing.B) string {
	path := os.Getenv("IBWIRE_BENCH_PCAP")
	if path == "" {
		b.Skip("set IBWIRE_BENCH_PCAP to a capture made by go run ./bench/gencap -n 1000000 (see bench_test.go)")
	}
	return path
}

// BenchmarkFirstScreen is the time from opening the capture to the first
// screen drawn with rows and a detail tree, while loading goes on.
func BenchmarkFirstScreen(b *testing.B) {
	path := benchCapture(b)
	for b.Loop() {
		r, err := capture.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		m, err := NewModel(ctx, r, Options{Name: path})
		if err != nil {
			b.Fatal(err)
		}
		waitFor(b, changes(m), func() bool { return m.Status().Packets > 0 })
		sim := tcell.NewSimulationScreen("UTF-8")
		app := tview.NewApplication()
		app.SetScreen(sim)
		sim.SetSize(120, 40)
		u := newUI(app, Config{Model: m, Mono: true})
		u.root.SetRect(0, 0, 120, 40)
		u.root.Draw(sim)
		if u.selected != 1 || u.detail == nil {
			b.Fatal("no first packet on the first screen")
		}
		cancel()
		u.Close()
		m.Close()
		r.Close()
	}
}

// BenchmarkJumpToLast is G on a loaded million-packet capture: the last
// rows decoded from the spool, the last packet's tree and field bytes, and
// the screen drawn.
func BenchmarkJumpToLast(b *testing.B) {
	path := benchCapture(b)
	u, sim := benchUI(b, path)
	last := u.m.Status().Packets
	for b.Loop() {
		u.selectRow(0)
		u.listData.invalidate()
		u.root.Draw(sim)
		u.gotoEnd()
		u.root.Draw(sim)
		if u.selected != last {
			b.Fatalf("selected %d, want %d", u.selected, last)
		}
	}
}

// BenchmarkLoad loads the whole capture and reports the heap the loaded
// model keeps (after a collection) per packet.
func BenchmarkLoad(b *testing.B) {
	path := benchCapture(b)
	for b.Loop() {
		start := time.Now()
		r, err := capture.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		m, err := NewModel(ctx, r, Options{Name: path})
		if err != nil {
			b.Fatal(err)
		}
		waitFor(b, changes(m), func() bool { return m.Status().Done })
		b.ReportMetric(time.Since(start).Seconds(), "s/load")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/float64(m.Status().Packets), "heap-B/pkt")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		cancel()
		m.Close()
		r.Close()
	}
}

// BenchmarkLoadEmptyFrames is BenchmarkLoad on a capture of 1M zero-length
// frames (each a malformed packet), written to IBWIRE_BENCH_EMPTY_PCAP
// (kept there, for measuring ibtui itself) or to a temporary directory:
//
//	IBWIRE_BENCH_EMPTY_PCAP=/tmp/empty.pcap go test -run '^$' -bench LoadEmptyFrames -benchtime 1x ./internal/tui/
//
// A malformed packet must cost the index what a good one costs.
func BenchmarkLoadEmptyFrames(b *testing.B) {
	path := os.Getenv("IBWIRE_BENCH_EMPTY_PCAP")
	if path == "" {
		path = filepath.Join(b.TempDir(), "empty.pcap")
	}
	writeEmptyFrames(b, path, 1000000)
	b.Setenv("IBWIRE_BENCH_PCAP", path)
	BenchmarkLoad(b)
}

// writeEmptyFrames writes a pcap of n zero-length Ethernet frames, 1 µs apart.
func writeEmptyFrames(b *testing.B, path string, n int) { writeSource(b, path, &framesSource{n: n}) }

// writeSource writes what src gives to a pcap at path.
func writeSource(b *testing.B, path string, src Source) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := capture.NewWriter(bw, capture.FormatPcap, layers.LinkTypeEthernet, false)
	if err != nil {
		b.Fatal(err)
	}
	var p capture.Packet
	for src.NextInto(&p) == nil {
		if err := w.WritePacket(p); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLoadBadICRC is BenchmarkLoad on the benchmark capture with every
// frame's last byte inverted (each RoCE packet's ICRC fails), written to
// IBWIRE_BENCH_ICRC_PCAP (kept) or to a temporary directory:
//
//	IBWIRE_BENCH_PCAP=/tmp/bench.pcap IBWIRE_BENCH_ICRC_PCAP=/tmp/icrc.pcap go test -run '^$' -bench LoadBadICRC -benchtime 1x ./internal/tui/
func BenchmarkLoadBadICRC(b *testing.B) {
	src := benchCapture(b)
	path := os.Getenv("IBWIRE_BENCH_ICRC_PCAP")
	if path == "" {
		path = filepath.Join(b.TempDir(), "icrc.pcap")
	}
	r, err := capture.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	writeSource(b, path, bustICRC{r})
	r.Close()
	b.Setenv("IBWIRE_BENCH_PCAP", path)
	BenchmarkLoad(b)
}

// The detail benchmarks run on a capture in the tree (frame 100 of
// write_bw_loss.pcap, a 1082-byte RDMA WRITE):
//
//	go test -run '^$' -bench 'ShowPacket|SelectTreeLine' -benchmem ./internal/tui/
//
// BenchmarkShowPacket is a cursor move in the packet list: the packet
// decoded again, its tree built with each line's bytes, the hex pane filled.
func BenchmarkShowPacket(b *testing.B) {
	u, _ := benchUI(b, writeLoss)
	for b.Loop() {
		u.showPacket(100)
	}
}

// BenchmarkSelectTreeLine is a cursor move in the tree: the next line
// selected and its bytes highlighted.
func BenchmarkSelectTreeLine(b *testing.B) {
	u, _ := benchUI(b, writeLoss)
	u.showPacket(100)
	d := 1
	for b.Loop() {
		u.moveTree(d)
		d = -d
	}
}

// benchUI is ibtui at 120×40 on the capture at path, loaded and drawn.
func benchUI(b *testing.B, path string) (*UI, tcell.SimulationScreen) {
	m := loadModel(b, path, "")
	sim := tcell.NewSimulationScreen("UTF-8")
	app := tview.NewApplication()
	app.SetScreen(sim)
	sim.SetSize(120, 40)
	u := newUI(app, Config{Model: m, Mono: true})
	b.Cleanup(u.Close)
	u.root.SetRect(0, 0, 120, 40)
	u.root.Draw(sim)
	return u, sim
}
