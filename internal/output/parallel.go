package output

import (
	"io"
	"sync"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// AppendFunc appends the rendering of one packet to buf.
type AppendFunc func(buf []byte, p *decode.Packet) []byte

// Parallel renders packets on worker goroutines and writes the results in
// capture order. The -V tree costs about twenty times what decoding and
// analysing a packet cost, so ibdump decodes and analyses in order on one
// goroutine (the analysis is sequential by nature) and hands the rendering
// to the other cores.
//
// A worker cannot share the caller's packet, which the decoder reuses, so
// Add copies the frame's bytes and the sequential results (times since the
// first and previous frames, the analysis) and the worker decodes the copy
// again with its own decoder: decoding is cheap next to rendering, and
// this keeps decode.Packet free of any cloning rules.
//
// The worker that renders the batch next in capture order writes it, and
// every rendered batch after it, instead of a writer goroutine that each
// batch would wake.
//
// Memory is bounded: at most 2×workers+1 batches of parallelBatch packets
// exist at a time.
type Parallel struct {
	opts    decode.Options
	out     io.Writer
	cur     *parBatch
	seq     uint64         // the number of the caller's next batch
	work    chan *parBatch // to the workers
	free    chan *parBatch
	workers sync.WaitGroup

	mu      sync.Mutex
	ready   []*parBatch // rendered batches waiting for their turn, by seq modulo len
	next    uint64      // the number of the next batch to write
	writing bool        // a worker is writing
	err     error       // the first write error
}

// parallelBatch is the number of packets handed over at once: large enough
// that channel operations cost nothing per packet, small enough that output
// starts at once.
const parallelBatch = 256

type parBatch struct {
	seq   uint64 // its place in capture order
	arena []byte // the frames' bytes, back to back
	items []parItem
	out   []byte
}

type parItem struct {
	in         decode.Input // Data is nil here; the frame is arena[off:off+n]
	off, n     int
	rel, delta time.Duration
	analysis   decode.PacketAnalysis
}

// NewParallel starts workers goroutines, each rendering with its own
// AppendFunc from newAppend (renderers keep scratch state, so they are not
// shared) and decoding with its own decoder built from opts, which must be
// the options the caller's decoder uses.
func NewParallel(workers int, opts decode.Options, newAppend func() AppendFunc, out io.Writer) *Parallel {
	workers = max(workers, 1)
	batches := 2*workers + 1
	pl := &Parallel{
		opts:  opts,
		out:   out,
		work:  make(chan *parBatch, workers),
		free:  make(chan *parBatch, batches),
		ready: make([]*parBatch, batches),
	}
	for range batches {
		pl.free <- &parBatch{items: make([]parItem, 0, parallelBatch)}
	}
	for range workers {
		pl.workers.Add(1)
		go pl.render(newAppend())
	}
	return pl
}

// Add queues p for rendering. p may be reused by its decoder as soon as Add
// returns.
func (pl *Parallel) Add(p *decode.Packet) {
	if pl.cur == nil {
		pl.cur = <-pl.free
		pl.cur.arena, pl.cur.items, pl.cur.out = pl.cur.arena[:0], pl.cur.items[:0], pl.cur.out[:0]
		pl.cur.seq = pl.seq
		pl.seq++
	}
	b := pl.cur
	// The item is filled in place: a parItem is ~300 bytes, and building
	// one to append copies it twice.
	b.items = b.items[:len(b.items)+1]
	it := &b.items[len(b.items)-1]
	it.in = p.Input
	it.in.Data = nil
	it.off, it.n = len(b.arena), len(p.Data)
	it.rel, it.delta = p.RelTime, p.DeltaTime
	it.analysis = p.Analysis
	a := &it.analysis
	if a.NVMe != nil {
		// The analyzer reuses its NVMe-oF record for the next packet.
		a.NVMe = a.NVMe.Clone()
	}
	if a.RPCRDMA != nil {
		// And its RPC-over-RDMA one.
		a.RPCRDMA = a.RPCRDMA.Clone()
	}
	if a.SMBDirect != nil {
		// And its SMB Direct one.
		a.SMBDirect = a.SMBDirect.Clone()
	}
	if a.ISER != nil {
		// And its iSER one.
		a.ISER = a.ISER.Clone()
	}
	if d := a.DCQCN; d != nil {
		// And its DCQCN record (there is one only in captures with congestion).
		c := *d
		a.DCQCN = &c
	}
	b.arena = append(b.arena, p.Data...)
	if len(b.items) == parallelBatch {
		pl.flushBatch()
	}
}

// flushBatch hands the current batch to a worker.
func (pl *Parallel) flushBatch() {
	if pl.cur == nil {
		return
	}
	pl.work <- pl.cur
	pl.cur = nil
}

// Close renders what is queued, waits until everything is written and
// returns the first write error.
func (pl *Parallel) Close() error {
	pl.flushBatch()
	close(pl.work)
	pl.workers.Wait() // the last batch rendered was written by its worker
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.err
}

func (pl *Parallel) render(appendPacket AppendFunc) {
	defer pl.workers.Done()
	dec := decode.NewDecoder(pl.opts)
	for b := range pl.work {
		for i := range b.items {
			it := &b.items[i]
			in := it.in
			in.Data = b.arena[it.off : it.off+it.n : it.off+it.n]
			p := dec.Decode(in)
			p.RelTime, p.DeltaTime, p.Analysis = it.rel, it.delta, it.analysis
			b.out = appendPacket(b.out, p)
		}
		pl.written(b)
	}
}

// written takes a rendered batch and, unless another worker is writing
// (which then writes it in turn), writes every batch that is next in
// capture order. Batches go back to the caller once written.
func (pl *Parallel) written(b *parBatch) {
	pl.mu.Lock()
	pl.ready[b.seq%uint64(len(pl.ready))] = b
	if pl.writing {
		pl.mu.Unlock()
		return
	}
	pl.writing = true
	for {
		i := pl.next % uint64(len(pl.ready))
		w := pl.ready[i]
		if w == nil || w.seq != pl.next {
			break
		}
		pl.ready[i] = nil
		pl.next++
		pl.mu.Unlock()
		_, err := pl.out.Write(w.out)
		pl.free <- w // never blocks: free holds every batch
		pl.mu.Lock()
		if err != nil && pl.err == nil {
			pl.err = err
		}
	}
	pl.writing = false
	pl.mu.Unlock()
}
