package ibdumpcli

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// A capture file's run uses the cores -j allows through the pipeline: -j
// workers take batches of records in turn, and the output is byte for byte
// the direct loop's (-j 1). A worker reads its batch in capture order, one
// worker at a time (the read turn), straight into its arena; decodes it on
// its own core while the others read, analyse or print theirs; then waits
// for the analysis turn and feeds its packets, in capture order, to what
// must be sequential: the --check counters, the analysis, -Y, the
// statistics and the sinks (-w, -T parquet, JSON). When the packets are
// printed in a format that depends on the packet alone (the default line,
// -T text, -T fields, -V), the worker formats the packets it was given
// after the analysis turn, overlapping the next batch's analysis, and
// writes them in the print turn.
//
// A batch is decoded, analysed and printed on one core, so its decoded
// headers never cross to another core's cache; only the analysis state (a
// few connections' worth) moves, once a batch (BENCHMARKS.md, "Both cores
// for one capture", measures the shapes that moved the decoded headers
// instead). Each worker has its own batch, Decoder and renderers, so
// nothing is allocated per packet and memory is bounded by -j, whatever
// the capture's size.
type pipeline struct {
	d         *dumper
	src       source
	workers   []*worker
	read      turnstile   // whose batch is read next
	analyse   turnstile   // whose batch is analysed next
	output    turnstile   // whose batch is printed next
	stopped   atomic.Bool // the run has ended: no batch is read or analysed any more
	cancelled atomic.Bool // ctx is done (watchCancel)
	done      sync.WaitGroup

	// Under the read turn.
	cp    capture.Packet // the record being read
	n     int            // records read
	clock decode.Clock   // where the next record's times count from
	ended bool           // the source ended or failed, or -c was reached

	// Under the analysis turn.
	status int // the run's exit status, set by the batch that ends it
}

// batchPackets is how many packets a batch carries at most: enough that a
// turn's handover costs little per packet, few enough that a batch's
// decoded frames stay in its core's cache until they are analysed.
// batchArena bounds the bytes of frames a batch holds, so large frames make
// smaller batches.
var batchPackets = 256

const batchArena = 1 << 20

// maxWorkers bounds -j: a worker holds a batch of decoded frames, their
// parsers and an arena for the records (about 1.8 MB in all, measured),
// and workers beyond the cores gain nothing.
const maxWorkers = 64

// A worker is one goroutine's share: its Decoder and the batch it reads,
// decodes and analyses.
type worker struct {
	id     int
	dec    *decode.Decoder
	clock  decode.Clock     // the batch's first record's clock
	arena  []byte           // the frames' bytes, back to back
	ins    []decode.Input   // the records read, Data in arena
	frames []decode.Frame   // where the packets are decoded
	pkts   []*decode.Packet // decoded, in capture order
	err    error            // what ended the source after ins (nil: more follow)
	shown  []int            // the packets to print (nil: emit prints, or nothing is printed)
	r      renderer         // the worker's own renderers, when it prints
	out    []byte           // the batch's printed text
}

// usePipeline reports whether a run may use more than one core: files
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

// parallelRendering reports whether the workers print the packets
// themselves after the analysis turn: formats whose text depends on the
// packet alone, to stdout only (JSON's separators carry state from packet
// to packet; -w - shares stdout with the packets' bytes).
func (d *dumper) parallelRendering() bool {
	switch d.o.outFormat {
	case "", "text", "fields":
	default:
		return false
	}
	return !d.o.quiet && !d.o.countOnly && d.writer == nil && d.parquet == nil
}

// loopPipelined is loop through the pipeline: it starts -j workers and
// returns the exit status once they have all stopped.
func (d *dumper) loopPipelined(ctx context.Context, src source) int {
	d.setEmits()
	// Workers beyond the cores only wait for their turns: the spinning
	// before a wait takes the core from the worker whose turn it is
	// (-j 16 on 2 cores ran 2-5 times slower than -j 2).
	n := min(d.jobs(), runtime.GOMAXPROCS(0), maxWorkers)
	pl := &pipeline{d: d, src: src, status: exitOK}
	pl.read.init(n)
	pl.analyse.init(n)
	pl.output.init(n)
	printing := d.parallelRendering()
	for i := range n {
		w := &worker{
			id:     i,
			dec:    d.dec.Fork(),
			ins:    make([]decode.Input, 0, batchPackets),
			frames: make([]decode.Frame, batchPackets),
			pkts:   make([]*decode.Packet, 0, batchPackets),
		}
		if printing {
			w.shown, w.r = make([]int, 0, batchPackets), d.newRenderer()
		}
		pl.workers = append(pl.workers, w)
	}
	pl.done.Add(n)
	// A cancel (SIGINT) ends the reading at the next record: what was
	// read before it is analysed and printed, as by the direct loop.
	defer watchCancel(ctx, &pl.cancelled)()
	for _, w := range pl.workers {
		go pl.run(w)
	}
	pl.done.Wait()
	return pl.status
}

// run is one worker: batches id, id+n, id+2n ... until the run stops.
func (pl *pipeline) run(w *worker) {
	defer pl.done.Done()
	n := len(pl.workers)
	for k := w.id; ; k += n {
		if !pl.read.wait(k, w.id, &pl.stopped) {
			return
		}
		more := pl.fill(w)
		pl.read.pass(k)
		if !more {
			return
		}
		w.dec.SetClock(w.clock)
		w.pkts = w.pkts[:0]
		for i := range w.ins {
			w.pkts = append(w.pkts, w.dec.DecodeInto(&w.frames[i], w.ins[i]))
		}
		if !pl.analyse.wait(k, w.id, &pl.stopped) {
			return
		}
		end, err := pl.feed(w)
		if end {
			// Before the turn passes: the next batch must not be
			// analysed or emitted once this one ended the run.
			pl.stopped.Store(true)
		}
		pl.analyse.pass(k)
		if w.shown != nil {
			pl.print(k, w)
		}
		if end {
			if err != nil {
				pl.status = pl.d.readFailed(err)
			}
			pl.stop()
			return
		}
	}
}

// fill reads records into w's batch until it is full, the source ends or
// fails (w.err), or -c is reached (w.err is io.EOF then), and moves the
// clock past them. It reports whether the batch exists: false when an
// earlier batch ended the source.
func (pl *pipeline) fill(w *worker) bool {
	w.arena, w.ins, w.err = w.arena[:0], w.ins[:0], nil
	if pl.ended || pl.stopped.Load() {
		return false
	}
	w.clock = pl.clock
	count := pl.d.o.count
	cp := &pl.cp
	for len(w.ins) < len(w.frames) && len(w.arena) < batchArena {
		if count > 0 && pl.n == count {
			w.err = io.EOF
			break
		}
		// The reader copies the record straight into the arena's free
		// room when it fits (NextInto reuses p.Data's memory).
		if pl.stopped.Load() {
			break // a sink failed: reading on (a stalled pipe) would only hold the run up
		}
		off := len(w.arena)
		cp.Data = w.arena[off:off]
		if err := pl.src.NextInto(cp); err != nil {
			w.err = err
			break
		}
		if pl.cancelled.Load() {
			w.err = errCancelled
			break
		}
		pl.n++
		n := len(cp.Data)
		if n > 0 && off+n <= cap(w.arena) && &cp.Data[0] == &w.arena[off : off+1][0] {
			w.arena = w.arena[:off+n]
		} else {
			if off+n > cap(w.arena) {
				// The records before keep the old arena; the next
				// round starts with the larger one.
				w.arena = make([]byte, 0, max(2*cap(w.arena), n, 64<<10))
				off = 0
			}
			w.arena = append(w.arena, cp.Data...)
		}
		in := *cp
		in.Data = w.arena[off : off+n : off+n]
		w.ins = append(w.ins, in)
		pl.clock.Tick(in.Time)
	}
	pl.ended = w.err != nil
	return true
}

// feed hands w's decoded batch to the sequential part, in capture order,
// under the analysis turn. Packets to print are noted in w.shown, their
// analysis detached from the Analyzer's records, and printed after the
// turn (print). It reports whether the run ends with the batch, and the
// read error to report once the batch is printed.
func (pl *pipeline) feed(w *worker) (end bool, err error) {
	d := pl.d
	if w.shown != nil {
		w.shown = w.shown[:0]
	}
	for i, p := range w.pkts {
		d.read++
		switch {
		case !d.analyse(p) || !d.emits:
		case w.shown != nil:
			p.Analysis.Detach()
			w.shown = append(w.shown, i)
		default:
			if status, ok := d.emit(p); !ok {
				pl.status = status
				return true, nil
			}
		}
		d.progress.update(d.read)
	}
	switch err := w.err; {
	case err == nil:
		return false, nil
	case err == errCancelled || errors.Is(err, io.EOF):
		return true, nil
	default:
		return true, err
	}
}

// errCancelled ends a batch read when ctx is done: the run ends with it,
// as with the end of the file, without a message.
var errCancelled = errors.New("cancelled")

// print formats w's packets to print on w's own renderers, then writes
// them in their turn. Printing needs nothing of the Analyzer's but what
// the packets carry, so it overlaps the next batch's analysis.
func (pl *pipeline) print(k int, w *worker) {
	w.out = w.out[:0]
	for _, i := range w.shown {
		w.out = pl.d.appendRendered(w.out, w.pkts[i], &w.r)
	}
	pl.output.wait(k, w.id, nil)
	pl.d.out.Write(w.out) // a write error shows again at the final Flush
	pl.output.pass(k)
}

// stop wakes every worker waiting for the read or the analysis turn, to
// see that the run has ended (stopped) and give up; the print turn is
// always waited for, so that what was analysed is printed.
func (pl *pipeline) stop() {
	pl.stopped.Store(true)
	pl.read.wakeAll()
	pl.analyse.wakeAll()
}

// A turnstile lets batches through in order: batch k's worker waits until
// batch k-1's has passed. A worker polls before it blocks: a goroutine
// blocked on a channel is woken through the scheduler (and, when its thread
// went to sleep, the kernel), which costs more than a batch's turn often
// lasts, and two workers at the same pace would otherwise put each other to
// sleep at every batch.
type turnstile struct {
	next atomic.Int64
	wake []chan struct{} // a worker's: a pass (or the stop) for it
}

func (t *turnstile) init(workers int) {
	t.wake = make([]chan struct{}, workers)
	for i := range t.wake {
		t.wake[i] = make(chan struct{}, 1)
	}
}

// spins is how often wait looks for its turn, yielding every 64th time,
// before it blocks: about as long as a batch's turn lasts.
const spins = 1 << 14

// wait returns once batch k may pass (true), or once the run has stopped
// (false).
func (t *turnstile) wait(k, worker int, stopped *atomic.Bool) bool {
	for i := 0; ; i++ {
		if t.next.Load() == int64(k) {
			// The batch that ended the run sets stopped before it
			// passes its turn, so the next one sees both.
			return stopped == nil || !stopped.Load()
		}
		if stopped != nil && stopped.Load() {
			return false
		}
		switch {
		case i < spins:
			if i&63 == 63 {
				runtime.Gosched()
			}
		default:
			<-t.wake[worker]
		}
	}
}

// pass lets batch k+1 through, waking its worker if it sleeps.
func (t *turnstile) pass(k int) {
	t.next.Store(int64(k) + 1)
	select {
	case t.wake[(k+1)%len(t.wake)] <- struct{}{}:
	default:
	}
}

// wakeAll wakes every sleeping worker, to see the run has stopped.
func (t *turnstile) wakeAll() {
	for _, c := range t.wake {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// renderer is the state a goroutine formats packets with: the renderers
// keep scratch buffers, so each worker has its own.
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
