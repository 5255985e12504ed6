package ibdumpcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// The pipeline runs one capture file on every core the run has (-j) while
// keeping the output byte for byte what the direct loop writes:
//
//  1. a reader goroutine reads the records, copies each frame into its
//     batch's arena and decodes it (CRC checks included) into a Frame of
//     the batch's own, so a decoded Packet stays valid while the batch
//     travels;
//  2. the calling goroutine takes the batches in order and does what
//     must be sequential: the --check counters, the conversation analysis,
//     -Y, the statistics, -w and -T parquet;
//  3. when packets are printed in a format that depends on nothing but the
//     packet (the default line, -T text, -T fields, -V), render goroutines
//     format whole batches into the batch's buffer and a writer goroutine
//     writes the buffers in capture order.
//
// Batches circulate: free → reader → analysis → (render → writer) → free,
// so nothing is allocated per packet and memory is bounded by the number
// of batches, whatever the capture's size.
type pipeline struct {
	d     *dumper
	free  chan *batch // batches ready to be filled
	ready chan *batch // decoded, in capture order, to the analysis
	stop  chan struct{}
	read  sync.WaitGroup

	// Rendering on worker goroutines; nil channels when the analysis
	// goroutine renders (or nothing is printed).
	work    chan *batch // to the renderers
	ordered chan *batch // to the writer, in capture order
	workers sync.WaitGroup
	written chan struct{}
	cur     *batch // the batch the analysis goroutine is going through
}

// batchPackets is how many packets a batch carries at most: enough that a
// handover (a channel operation, now and then a wake-up of the other
// goroutine) costs little per packet, few enough that the batches in
// flight stay in the cores' caches. batchArena bounds the bytes of frames
// a batch holds, so large frames make smaller batches.
var batchPackets = envInt("IBDUMP_BATCH", 256)

const batchArena = 1 << 20

// envInt is a tuning knob for measurements (IBDUMP_BATCH); not documented.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

type batch struct {
	arena  []byte           // the frames' bytes, back to back
	frames []decode.Frame   // where the packets are decoded
	pkts   []*decode.Packet // decoded, in capture order
	err    error            // what stopped the reader after pkts (nil: more follow)
	shown  []*decode.Packet // the packets to render
	out    []byte           // their rendering
	done   chan struct{}    // closed when out is complete
}

// usePipeline reports whether the run goes through the pipeline: files
// and standard input read to the end (not live captures, whose packets
// are printed as they come, nor -l, nor the record lists of --frames and
// the correlation, whose sources set state per packet), with -j above 1.
func (d *dumper) usePipeline(src source, live *capture.LiveSource) bool {
	_, file := src.(*capture.Reader)
	return file && live == nil && !d.o.lineBuf && d.jobs() > 1
}

// jobs is the number of cores a run may use: -j, or all of them.
func (d *dumper) jobs() int {
	if d.o.jobs > 0 {
		return d.o.jobs
	}
	return runtime.GOMAXPROCS(0)
}

// renderAside reports whether the packets' output can be formatted on
// render goroutines: formats whose text depends on the packet alone and
// on stdout only (JSON's separators carry state from packet to packet;
// -w - shares stdout with the packets' bytes).
func (d *dumper) renderAside() bool {
	switch d.o.outFormat {
	case "", "text", "fields":
	default:
		return false
	}
	return !d.o.quiet && !d.o.countOnly && d.writer == nil && d.parquet == nil
}

func newPipeline(d *dumper, src source) *pipeline {
	pl := &pipeline{d: d, stop: make(chan struct{})}
	n := 3 // one being read, one waiting, one being analysed
	workers := 0
	if d.renderAside() {
		workers = d.jobs()
		n += 3 * workers
		pl.work = make(chan *batch, n)
		pl.ordered = make(chan *batch, n)
		pl.written = make(chan struct{})
	}
	pl.free = make(chan *batch, n)
	pl.ready = make(chan *batch, n)
	for range n {
		pl.free <- &batch{frames: make([]decode.Frame, batchPackets), pkts: make([]*decode.Packet, 0, batchPackets)}
	}
	for range workers {
		pl.workers.Add(1)
		go pl.render(d.newRenderer())
	}
	if workers > 0 {
		go pl.write()
	}
	pl.read.Add(1)
	go pl.readAhead(src)
	return pl
}

// readAhead is stage 1: read, copy and decode, batch by batch, until the
// source ends or fails, -c is reached, or the pipeline stops.
func (pl *pipeline) readAhead(src source) {
	defer pl.read.Done()
	defer close(pl.ready)
	dec, count := pl.d.dec, pl.d.o.count
	var cp capture.Packet
	n := 0
	for {
		var b *batch
		select {
		case b = <-pl.free:
		case <-pl.stop:
			return
		}
		b.arena, b.pkts, b.err = b.arena[:0], b.pkts[:0], nil
		for len(b.pkts) < len(b.frames) && len(b.arena) < batchArena {
			if count > 0 && n == count {
				b.err = io.EOF
				break
			}
			if err := src.NextInto(&cp); err != nil {
				b.err = err
				break
			}
			n++
			if len(b.arena)+len(cp.Data) > cap(b.arena) {
				// The packets before keep the old arena; the next
				// round starts with the larger one.
				b.arena = make([]byte, 0, max(2*cap(b.arena), len(cp.Data), 64<<10))
			}
			off := len(b.arena)
			b.arena = append(b.arena, cp.Data...)
			in := cp
			in.Data = b.arena[off:len(b.arena):len(b.arena)]
			b.pkts = append(b.pkts, dec.DecodeInto(&b.frames[len(b.pkts)], in))
		}
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

// queue keeps p, a packet of the current batch, for the render goroutines.
// The analysis reuses its upper-layer and DCQCN records for the next
// packet, so p gets copies of its own.
func (pl *pipeline) queue(p *decode.Packet) {
	detachAnalysis(&p.Analysis)
	pl.cur.shown = append(pl.cur.shown, p)
}

// detachAnalysis replaces the records of a that point into the Analyzer
// (valid until its next packet) with copies.
func detachAnalysis(a *decode.PacketAnalysis) {
	if a.NVMe != nil {
		a.NVMe = a.NVMe.Clone()
	}
	if a.RPCRDMA != nil {
		a.RPCRDMA = a.RPCRDMA.Clone()
	}
	if a.SMBDirect != nil {
		a.SMBDirect = a.SMBDirect.Clone()
	}
	if a.ISER != nil {
		a.ISER = a.ISER.Clone()
	}
	if a.DCQCN != nil {
		c := *a.DCQCN
		a.DCQCN = &c
	}
}

// release hands the analysed batch to the renderers, or back to the reader.
func (pl *pipeline) release(b *batch) {
	if pl.work == nil || len(b.shown) == 0 {
		b.shown = b.shown[:0]
		pl.free <- b
		return
	}
	b.out = b.out[:0]
	b.done = make(chan struct{})
	pl.ordered <- b // first, so the writer waits for batches in order
	pl.work <- b
}

func (pl *pipeline) render(r renderer) {
	defer pl.workers.Done()
	for b := range pl.work {
		for _, p := range b.shown {
			b.out = pl.d.appendRendered(b.out, p, r)
		}
		close(b.done)
	}
}

func (pl *pipeline) write() {
	defer close(pl.written)
	for b := range pl.ordered {
		<-b.done
		pl.d.out.Write(b.out) // a write error shows again at the final Flush
		b.shown = b.shown[:0]
		pl.free <- b
	}
}

// drain waits until the renderers have written everything queued, before
// anything else writes to stdout.
func (pl *pipeline) drain() {
	if pl.work != nil {
		close(pl.work)
		close(pl.ordered)
		pl.workers.Wait()
		<-pl.written
		pl.work = nil
	}
}

// close stops the reader and waits for it, so the source can be closed.
func (pl *pipeline) close() {
	close(pl.stop)
	pl.read.Wait()
}

// loopPipelined is loop through the pipeline.
func (d *dumper) loopPipelined(ctx context.Context, src source) int {
	pl := newPipeline(d, src)
	d.pipe = pl
	defer pl.close()
	for b := range pl.ready {
		pl.cur = b
		for _, p := range b.pkts {
			if ctx.Err() != nil {
				pl.release(b)
				return exitOK
			}
			d.read++
			if d.analyse(p) {
				if status, ok := d.emit(p); !ok {
					pl.release(b)
					return status
				}
			}
			d.progress.update(d.read)
		}
		err := b.err
		pl.release(b)
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
	return exitOK
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
	s, t, tr := d.summary, d.text, d.tree
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
