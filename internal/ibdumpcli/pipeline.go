package ibdumpcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// A capture file's run uses the cores -j allows in one of two shapes,
// chosen by measurement (BENCHMARKS.md, "Both cores for one capture"); the
// output is byte for byte the direct loop's either way.
//
// When packets are printed in a format that depends on the packet alone
// (the default line, -T text, -T fields, -V), formatting is the larger
// part of the work: the calling goroutine reads, decodes and analyses in
// order, and output.Parallel formats batches on render goroutines, which
// decode a compact copy of each frame again (see parallelRendering).
//
// When the packets go to the Parquet export, building its columns is as
// large a part as decoding, and the pipeline splits the work in two: a
// reader goroutine
// reads, copies and decodes each frame (CRC checks included) into a
// decode.Frame of its batch, so a decoded Packet stays valid while the
// batch travels, and the calling goroutine takes the batches in order for
// what must be sequential: the --check counters, the analysis, -Y, the
// statistics and the sinks. Batches circulate free → reader → analysis →
// free, so nothing is allocated per packet and memory is bounded by the
// number of batches, whatever the capture's size.
//
// Every other run (-q with statistics, --check, --count, -w, the JSON
// outputs) keeps the direct loop: there the work after decoding is small,
// and handing each decoded packet to the other core (its headers written
// in one core's cache and read in the other's) costs what the overlap
// saves (BENCHMARKS.md, "The merged tree on a quiet machine", has the
// runs of each shape).
type pipeline struct {
	d     *dumper
	free  chan *batch // batches ready to be filled
	ready chan *batch // decoded, in capture order, to the analysis
	stop  chan struct{}
	read  sync.WaitGroup

	cp capture.Packet // the record being read
	n  int            // records read
}

// batchPackets is how many packets a batch carries at most: enough that a
// handover (a channel operation, now and then a wake-up of the other
// goroutine) costs little per packet, few enough that the batches in
// flight stay in the cores' caches. batchArena bounds the bytes of frames
// a batch holds, so large frames make smaller batches.
var batchPackets = 256

const batchArena = 1 << 20

type batch struct {
	arena  []byte           // the frames' bytes, back to back
	frames []decode.Frame   // where the packets are decoded
	pkts   []*decode.Packet // decoded, in capture order
	err    error            // what stopped the reader after pkts (nil: more follow)
}

// usePipeline reports whether a run may use more than one core: files
// and standard input read to the end (not live captures, whose packets
// are printed as they come, nor -l, nor the record lists of --frames and
// the correlation, whose sources set state per packet), with -j above 1.
func (d *dumper) usePipeline(src source, live *capture.LiveSource) bool {
	_, file := src.(*capture.Reader)
	return file && live == nil && !d.o.lineBuf && d.jobs() > 1
}

// pipelinePays reports whether the work after decoding is large enough
// for the pipeline to gain (see pipeline); pipelineAlways lets the tests
// run every mode through it, to hold its output to the direct loop's.
func (d *dumper) pipelinePays() bool { return d.parquet != nil || pipelineAlways }

var pipelineAlways = false

// jobs is the number of cores a run may use: -j, or all of them.
func (d *dumper) jobs() int {
	if d.o.jobs > 0 {
		return d.o.jobs
	}
	return runtime.GOMAXPROCS(0)
}

// parallelRendering reports whether the packets' output is formatted on
// render goroutines (output.Parallel): formats whose text depends on the
// packet alone, to stdout only (JSON's separators carry state from packet
// to packet; -w - shares stdout with the packets' bytes).
//
// Measured against formatting the decoded packets the pipeline's batches
// keep (one decode.Frame per packet in flight), decoding a compact copy
// again on the render goroutine cost less CPU: a Frame's headers are
// written on one core and read on another, line by line, where the copy
// is a frame's contiguous bytes and the second decode runs in a parser
// that stays in its core's cache.
func (d *dumper) parallelRendering() bool {
	switch d.o.outFormat {
	case "", "text", "fields":
	default:
		return false
	}
	return !d.o.quiet && !d.o.countOnly && d.writer == nil && d.parquet == nil
}

func newPipeline(d *dumper, src source) *pipeline {
	pl := &pipeline{d: d, stop: make(chan struct{})}
	const n = 4 // one being filled, one being analysed, two waiting
	pl.free = make(chan *batch, n)
	pl.ready = make(chan *batch, n)
	for range n {
		pl.free <- &batch{frames: make([]decode.Frame, batchPackets), pkts: make([]*decode.Packet, 0, batchPackets)}
	}
	pl.read.Add(1)
	go pl.readAhead(src)
	return pl
}

// readAhead is stage 1 on a goroutine of its own: read, copy and decode,
// batch by batch, until the source ends or fails, -c is reached, or the
// pipeline stops.
func (pl *pipeline) readAhead(src source) {
	defer pl.read.Done()
	defer close(pl.ready)
	for {
		b := take(pl.free, pl.stop)
		if b == nil {
			return
		}
		pl.fill(b, src)
		select {
		case pl.ready <- b:
		case <-pl.stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// fill reads and decodes packets into b until it is full, the source ends
// or fails (b.err), or -c is reached (b.err is io.EOF then).
func (pl *pipeline) fill(b *batch, src source) {
	dec, count := pl.d.dec, pl.d.o.count
	b.arena, b.pkts, b.err = b.arena[:0], b.pkts[:0], nil
	cp := &pl.cp
	for len(b.pkts) < len(b.frames) && len(b.arena) < batchArena {
		if count > 0 && pl.n == count {
			b.err = io.EOF
			return
		}
		select {
		case <-pl.stop:
			// The run has stopped (an error, a cancel): a slow source
			// such as a pipe is not waited on for the rest of a batch.
			b.err = io.EOF
			return
		default:
		}
		if err := src.NextInto(cp); err != nil {
			b.err = err
			return
		}
		pl.n++
		if len(b.arena)+len(cp.Data) > cap(b.arena) {
			// The packets before keep the old arena; the next round
			// starts with the larger one.
			b.arena = make([]byte, 0, max(2*cap(b.arena), len(cp.Data), 64<<10))
		}
		off := len(b.arena)
		b.arena = append(b.arena, cp.Data...)
		in := *cp
		in.Data = b.arena[off:len(b.arena):len(b.arena)]
		b.pkts = append(b.pkts, dec.DecodeInto(&b.frames[len(b.pkts)], in))
	}
}

// close stops the reader and waits for it, so the source can be closed.
func (pl *pipeline) close() {
	close(pl.stop)
	pl.read.Wait()
}

// loopPipelined is loop through the pipeline.
func (d *dumper) loopPipelined(ctx context.Context, src source) int {
	d.setEmits()
	pl := newPipeline(d, src)
	defer pl.close()
	for {
		b := take(pl.ready, nil)
		if b == nil {
			return exitOK
		}
		for _, p := range b.pkts {
			if ctx.Err() != nil {
				return exitOK
			}
			d.read++
			if d.analyse(p) && d.emits {
				if status, ok := d.emit(p); !ok {
					return status
				}
			}
			d.progress.update(d.read)
		}
		err := b.err
		pl.free <- b
		switch {
		case errors.Is(err, io.EOF):
			return exitOK
		case err != nil:
			d.drainParallel()
			d.out.Flush()
			d.progress.clear()
			fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
			return exitError
		}
	}
}

// spins is how often take looks for a batch, yielding in between, before
// it blocks.
const spins = 50

// take receives a batch from c, nil when c is closed or stop is. It polls
// before it blocks: a goroutine blocked on a channel is woken through the
// scheduler (and, when its thread went to sleep, the kernel), which costs
// more than the batch took to make; two stages that run at the same pace
// would otherwise put each other to sleep at every batch.
func take(c chan *batch, stop chan struct{}) *batch {
	for range spins {
		select {
		case b := <-c:
			return b
		case <-stop:
			return nil
		default:
		}
		runtime.Gosched()
	}
	select {
	case b := <-c:
		return b
	case <-stop:
		return nil
	}
}

// renderer is the state a goroutine formats packets with: the renderers
// keep scratch buffers, so each render goroutine has its own.
type renderer struct {
	summary *output.Summary
	text    *output.TextLine
	fields  *output.Fields
	tree    *output.Tree
}

// newRenderer returns renderers configured as the dumper's, with scratch
// state of their own.
func (d *dumper) newRenderer() renderer {
	s, t, tr := d.summary.Config(), d.text.Config(), d.tree.Config()
	r := renderer{summary: &s, text: &t, tree: &tr}
	if d.fields != nil {
		f, err := output.NewFields(d.o.fields, d.fieldsOpts)
		if err != nil {
			panic(err) // the same fields and options gave d.fields
		}
		r.fields = f
	}
	return r
}
