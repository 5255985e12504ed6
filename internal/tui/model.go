package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
)

// Source is what a capture file reader and a live capture have in common.
type Source interface {
	NextInto(*capture.Packet) error
}

// statsSource is a live capture that counts the kernel's drops.
type statsSource interface {
	Stats() (capture.Stats, error)
}

// mark packs what the packet list needs to know about a packet without
// decoding it: its conversation, direction and worst finding's severity.
// Four bytes a packet is the whole per-packet cost of the index besides the
// checkpoints.
//
//	conv (24 bits) | malformation (3) | dir (2) | severity (3)
//
// A malformed packet costs what a good one does. Its malformation (a bad
// ICRC or VCRC, a cut or impossible header: findings about the packet
// alone, not the connection's state) rides in the mark beside its
// conversation. A packet of no conversation whose analysis is its findings
// alone (an empty or cut frame) keeps its findings where the conversation
// would be, under direction markFindings, which no packet has: its mark is
// then its whole analysis.
type mark uint32

// markFindings is the direction of a mark that holds findings, not a
// conversation.
const markFindings = 3

// markMaxFindings is the largest findings set a mark holds; markMaxConv
// the largest conversation (more than --max-packets' default allows).
const (
	markMaxFindings = 1<<27 - 1
	markMaxConv     = 1<<24 - 1
)

// markKinds are the malformations a mark holds beside a conversation, by
// their number in bits 5-7 (0: none).
var markKinds = [...]decode.FindingKind{decode.FindNone, decode.FindICRCBad, decode.FindVCRCBad, decode.FindTruncated,
	decode.FindMalformed}

// newMark returns a's mark, and whether the mark holds all that the index
// keeps of a: a packet whose findings the mark holds keeps, as a good
// packet does, only its mark; one with other findings its whole analysis.
func newMark(a *decode.PacketAnalysis) (mark, bool) {
	if a.Conv == 0 && a.Findings <= markMaxFindings && *a == (decode.PacketAnalysis{Findings: a.Findings, Severity: a.Severity}) {
		return mark(uint32(a.Findings)<<5 | markFindings<<3 | uint32(a.Severity&7)), true
	}
	kind := 0
	for k, f := range markKinds[1:] {
		if a.Findings == 1<<f {
			kind = k + 1
		}
	}
	conv := min(a.Conv, markMaxConv)
	return mark(conv<<8 | uint32(kind)<<5 | uint32(a.Dir&3)<<3 | uint32(a.Severity&7)), a.Findings == 0 || kind != 0
}

func (m mark) conv() uint32 {
	if m.dir() == markFindings {
		return 0
	}
	return uint32(m) >> 8
}
func (m mark) dir() uint8                { return uint8(m>>3) & 3 }
func (m mark) severity() decode.Severity { return decode.Severity(m & 7) }

// analysis is what the mark knows of the packet's analysis: all of it
// when it holds findings, else the conversation, direction, severity and
// malformation.
func (m mark) analysis() decode.PacketAnalysis {
	if m.dir() == markFindings {
		return decode.PacketAnalysis{Findings: uint64(uint32(m) >> 5), Severity: m.severity()}
	}
	a := decode.PacketAnalysis{Conv: m.conv(), Dir: m.dir(), Severity: m.severity()}
	if k := uint32(m>>5) & 7; k != 0 && int(k) < len(markKinds) {
		a.Findings = 1 << markKinds[k]
	}
	return a
}

// anomaly keeps the whole analysis of a packet that has findings its mark
// cannot hold, so that the detail view shows it without running the
// analysis again; other packets keep only their mark.
type anomaly struct {
	frame uint32
	a     decode.PacketAnalysis
}

// latencySnap is one row of -z latency, copied out of the loader's
// histograms: a summary and the distribution as quantiles (0, 0.5%, ... 100%).
type latencySnap struct {
	name      string
	summary   decode.LatencySummary
	quantiles [201]time.Duration
}

// Model is the capture as ibtui knows it: a spool of the frames on disk,
// an index of a few bytes a packet, and what the conversation analysis
// found, filled by a loader goroutine while the UI reads it. Every exported
// method is safe for concurrent use.
type Model struct {
	name    string
	options decode.Options
	file    *os.File // the spool, for ReadAt

	mu          sync.RWMutex
	count       int     // packets indexed and readable
	end         int64   // spool bytes flushed
	checkpoints []int64 // spool offset of packet k*checkpointEvery+1
	marks       chunked[mark]
	anomalies   chunked[anomaly] // in small chunks: a slice that doubles would hold twice their size
	first       time.Time
	last        time.Time
	convs       []decode.Conversation
	expert      []decode.ExpertRow
	latency     []latencySnap
	dcqcn       []decode.DCQCNRow
	done        bool
	err         error
	rate        float64 // packets a second, over the last publication interval
	received    uint64
	dropped     uint64
	filterExpr  string
	filter      *dfilter.Filter
	shown       *chunked[uint32] // frames -Y shows, nil without a filter
	filtering   bool             // a new filter is being applied to the loaded packets
	version     uint64           // bumped by every change
	live        bool             // the source is a live capture
	maxPackets  int              // Options.MaxPackets
	capped      bool             // loading stopped at maxPackets with more to read

	filterReq chan string
	notify    func()
}

// Options set up a Model.
type Options struct {
	Name   string         // the source's name, for the status bar
	Decode decode.Options // -d, --dc
	Filter string         // the display filter to start with
	Count  int            // stop after this many packets (0: all)
	// MaxPackets bounds the packets kept (0: no bound): loading stops
	// there, and the status says the capture had more. The index costs
	// about 9 bytes a packet, so the bound is one on memory.
	MaxPackets int
	TempDir    string // where the spool goes ("" is os.TempDir)
	// Streaming says the source may block between packets (stdin, live):
	// each frame is then handed over as it comes rather than in batches.
	Streaming bool
	// Publish is how often the loader publishes while packets flow
	// (default 100 ms).
	Publish time.Duration
}

// NewModel starts loading src in the background; cancelling ctx stops it.
// The filter, if any, must compile.
func NewModel(ctx context.Context, src Source, opts Options) (*Model, error) {
	var f *dfilter.Filter
	if opts.Filter != "" {
		var err error
		if f, err = dfilter.Compile(opts.Filter); err != nil {
			return nil, err
		}
	}
	sp, err := newSpool(opts.TempDir)
	if err != nil {
		return nil, err
	}
	m := &Model{name: opts.Name, options: opts.Decode, file: sp.f, filterExpr: opts.Filter, filter: f,
		filterReq: make(chan string, 1), notify: func() {}, maxPackets: opts.MaxPackets,
		anomalies: chunked[anomaly]{size: 1024}}
	if f != nil {
		m.shown = &chunked[uint32]{}
	}
	publish := opts.Publish
	if publish <= 0 {
		publish = 100 * time.Millisecond
	}
	go m.load(ctx, src, sp, opts.Count, opts.MaxPackets, publish, opts.Streaming)
	return m, nil
}

// setNotify sets the function called (from the loader goroutine, never
// under a lock) whenever the model changed; the UI batches a redraw on it.
// The UI is built after the model: what changed before is its to look at.
func (m *Model) setNotify(fn func()) {
	m.mu.Lock()
	m.notify = fn
	m.mu.Unlock()
}

// Close releases the spool. The loader must have stopped (its context
// cancelled) or finished.
func (m *Model) Close() error { return m.file.Close() }

// frameBatch is frames the reader goroutine hands to the loader, their
// bytes copied into one arena. Batches go back to the reader for reuse, so
// loading a file allocates nothing per packet.
type frameBatch struct {
	frames []decode.Input
	ends   []int // where each frame's bytes end in arena
	arena  []byte
	err    error
	capped bool // the last batch: the source had more than the bound
}

const batchFrames = 256

// load reads src on one goroutine and indexes on this one, so that a
// source that blocks (stdin, a quiet interface) does not stop publication.
func (m *Model) load(ctx context.Context, src Source, sp *spoolWriter, limit, bound int, every time.Duration, streaming bool) {
	frames := make(chan *frameBatch, 4)
	free := make(chan *frameBatch, 6)
	for range cap(free) {
		free <- &frameBatch{}
	}
	go func() {
		defer close(frames)
		var cp capture.Packet
		n := 0
		var batch *frameBatch
		send := func() bool {
			// The arena has stopped growing: point the frames into it.
			start := 0
			for i := range batch.frames {
				batch.frames[i].Data = batch.arena[start:batch.ends[i]:batch.ends[i]]
				start = batch.ends[i]
			}
			select {
			case frames <- batch:
				batch = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		for limit == 0 || n < limit {
			if batch == nil {
				select {
				case batch = <-free:
				case <-ctx.Done():
					return
				}
				batch.frames, batch.ends, batch.arena, batch.err, batch.capped = batch.frames[:0], batch.ends[:0], batch.arena[:0], nil, false
			}
			err := src.NextInto(&cp)
			if err == nil && bound > 0 && n == bound {
				// One packet past the bound: the user is told there was more.
				batch.capped = true
				break
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					batch.err = err
				}
				break
			}
			n++
			batch.arena = append(batch.arena, cp.Data...)
			batch.ends = append(batch.ends, len(batch.arena))
			in := cp
			in.Number, in.Data = n, nil // the bytes live in the arena
			batch.frames = append(batch.frames, in)
			// A full batch goes at once; a streaming source's frames go
			// as they come, so live packets show without waiting for
			// more.
			if len(batch.frames) == batchFrames || streaming {
				if !send() {
					return
				}
			}
		}
		if batch != nil && (len(batch.frames) > 0 || batch.err != nil || batch.capped) {
			send()
		}
	}()

	st := newLoadState(m, sp)
	if s, ok := src.(statsSource); ok {
		st.src, st.live = s, true
		m.mu.Lock()
		m.live = true
		m.mu.Unlock()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	lastPublish, lastCount := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case expr := <-m.filterReq:
			st.refilter(ctx, expr)
		case batch, ok := <-frames:
			if !ok {
				st.finish()
				// Keep serving filter changes until the viewer goes.
				frames = nil
				continue
			}
			for i := range batch.frames {
				st.add(&batch.frames[i])
			}
			if batch.err != nil {
				st.fail(batch.err)
			}
			if batch.capped {
				m.mu.Lock()
				m.capped = true
				m.mu.Unlock()
			}
			free <- batch
			if st.pendingCount() >= 1<<16 {
				st.publish(false, &lastPublish, &lastCount)
			}
		case <-tick.C:
			// A stream that pauses still gets the analysis of what came
			// before the pause: snapshots are otherwise taken only when
			// packets are published.
			stale := st.count != st.snapCount && time.Since(st.lastSnap) >= snapEvery
			if frames != nil && (st.pendingCount() > 0 || st.live || stale) {
				st.publish(false, &lastPublish, &lastCount)
			}
		}
	}
}

// loadState is the loader's own state: nothing here is shared.
type loadState struct {
	m        *Model
	sp       *spoolWriter
	dec      *decode.Decoder
	an       *decode.Analyzer
	lat      *decode.LatencyStat
	filter   *dfilter.Filter
	count    int
	cps      []int64
	marks    []mark
	anom     []anomaly
	shown    []uint32
	first    time.Time
	last     time.Time
	live     bool
	src      statsSource
	lastSnap time.Time
	lastLat  time.Time
	// snapCount is count at the last snapshot of the analysis.
	snapCount int
}

// snapEvery is how often the analysis snapshots (conversations, expert
// findings) are refreshed while packets come.
const snapEvery = 250 * time.Millisecond

func newLoadState(m *Model, sp *spoolWriter) *loadState {
	st := &loadState{m: m, sp: sp, dec: decode.NewDecoder(m.options), lat: decode.NewLatencyStat(), filter: m.filter}
	st.an = decode.NewAnalyzer(decode.AnalyzerOptions{OnLatency: st.lat.AddLatency})
	return st
}

func (st *loadState) pendingCount() int { return len(st.marks) }

// latRows returns the latency rows when their snapshot is due: at the end,
// and every two seconds while loading.
func (st *loadState) latRows(final bool, now time.Time) []decode.LatencyRow {
	if !final && now.Sub(st.lastLat) < 2*time.Second {
		return nil
	}
	st.lastLat = now
	return st.lat.Rows()
}

func (st *loadState) add(in *decode.Input) {
	off, err := st.sp.add(in)
	if err != nil {
		st.fail(err)
		return
	}
	if st.count%checkpointEvery == 0 {
		st.cps = append(st.cps, off)
	}
	st.count++
	if st.count == 1 {
		st.first = in.Time
	}
	st.last = in.Time
	p := st.dec.Decode(*in)
	st.an.Analyze(p)
	st.lat.Add(p)
	mk, whole := newMark(&p.Analysis)
	st.marks = append(st.marks, mk)
	if !whole {
		a := p.Analysis
		a.Detach() // the analyzer reuses its records for the next packet
		st.anom = append(st.anom, anomaly{frame: uint32(in.Number), a: a})
	}
	if st.filter != nil && st.filter.Match(p) {
		st.shown = append(st.shown, uint32(in.Number))
	}
}

func (st *loadState) fail(err error) {
	st.m.mu.Lock()
	if st.m.err == nil {
		st.m.err = err
	}
	st.m.mu.Unlock()
}

// publish makes what was loaded since the last call visible, and
// refreshes the analysis snapshots when they are due (always at the end).
func (st *loadState) publish(final bool, lastPublish *time.Time, lastCount *int) {
	if err := st.sp.flush(); err != nil {
		st.fail(err)
	}
	now := time.Now()
	snap := final || now.Sub(st.lastSnap) >= snapEvery
	var convs []decode.Conversation
	var expert []decode.ExpertRow
	var lat []latencySnap
	var cc []decode.DCQCNRow
	if snap {
		st.lastSnap, st.snapCount = now, st.count
		convs = st.an.Conversations()
		// The rows share their series with the Analyzer, which appends
		// to them while loading goes on: the snapshot copies them.
		cc = st.an.DCQCN()
		for i := range cc {
			r := &cc[i]
			r.Bins, r.Reactions = slices.Clone(r.Bins), slices.Clone(r.Reactions)
			r.CETimes, r.CNPTimes = slices.Clone(r.CETimes), slices.Clone(r.CNPTimes)
		}
		expert = st.an.Expert().Rows()
		for i := range expert {
			expert[i].Frames = append([]uint32(nil), expert[i].Frames...)
		}
		// Quantiles sort the exact samples: every few seconds is enough.
		for _, r := range st.latRows(final, now) {
			if r.Count() == 0 {
				continue
			}
			s := latencySnap{name: r.Name, summary: r.Summarize()}
			for i := range s.quantiles {
				s.quantiles[i] = r.Quantile(float64(i) / float64(len(s.quantiles)-1))
			}
			lat = append(lat, s)
		}
	}
	var stats capture.Stats
	if st.src != nil {
		stats, _ = st.src.Stats()
	}
	m := st.m
	m.mu.Lock()
	m.count = st.count
	m.end = st.sp.off
	m.checkpoints = append(m.checkpoints, st.cps...)
	m.marks.append(st.marks...)
	m.anomalies.append(st.anom...)
	if m.filter == st.filter && m.filter != nil && !m.filtering {
		m.shown.append(st.shown...)
	}
	m.first, m.last = st.first, st.last
	if snap {
		m.convs, m.expert, m.dcqcn = convs, expert, cc
		if lat != nil {
			m.latency = lat
		}
	}
	if dt := now.Sub(*lastPublish).Seconds(); dt > 0 {
		m.rate = float64(st.count-*lastCount) / dt
	}
	m.received, m.dropped = stats.Received, stats.Dropped
	if final {
		m.done = true
		m.rate = 0
	}
	m.version++
	notify := m.notify
	m.mu.Unlock()
	*lastPublish, *lastCount = now, st.count
	st.cps, st.marks, st.anom, st.shown = st.cps[:0], st.marks[:0], st.anom[:0], st.shown[:0]
	if cap(st.anom) > 4096 {
		st.anom = nil // a burst of findings: do not keep its buffer
	}
	notify()
}

func (st *loadState) finish() {
	st.an.Finish()
	var t time.Time
	n := 0
	st.publish(true, &t, &n)
}

// refilter applies a new display filter to every packet loaded so far (a
// second decoder and analyzer over the spool: ibwire.analysis fields need
// the analysis), then lets loading go on with it.
func (st *loadState) refilter(ctx context.Context, expr string) {
	var f *dfilter.Filter
	if expr != "" {
		var err error
		if f, err = dfilter.Compile(expr); err != nil {
			return // the filter bar only sends filters that compile
		}
	}
	// Publish first, so that the rescan covers exactly what is published
	// and the new packets are matched by st.filter from here on.
	var t time.Time
	n := st.count
	st.publish(false, &t, &n)
	st.filter = f
	var shown *chunked[uint32]
	if f != nil {
		shown = &chunked[uint32]{}
		err := st.m.Scan(ctx, st.count, func(p *decode.Packet) bool {
			if f.Match(p) {
				shown.append(uint32(p.Number))
			}
			select {
			case expr := <-st.m.filterReq:
				// A newer filter replaces this one: start over with it
				// (unless a newer still is already waiting).
				select {
				case st.m.filterReq <- expr:
				default:
				}
				return false
			default:
				return true
			}
		})
		if err != nil {
			return
		}
		select {
		case next := <-st.m.filterReq:
			select {
			case st.m.filterReq <- next:
			default:
			}
			return
		default:
		}
	}
	m := st.m
	m.mu.Lock()
	m.filter, m.filterExpr, m.shown, m.filtering = f, expr, shown, false
	m.version++
	notify := m.notify
	m.mu.Unlock()
	notify()
}

// SetFilter asks the loader to apply expr (which must compile; "" clears
// the filter). It returns at once; the packet list changes when the loaded
// packets have been filtered.
func (m *Model) SetFilter(expr string) error {
	if expr != "" {
		if _, err := dfilter.Compile(expr); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.filtering = true
	m.filterExpr = expr
	m.version++
	m.mu.Unlock()
	// Replace a request the loader has not taken yet.
	for {
		select {
		case m.filterReq <- expr:
			return nil
		default:
			select {
			case <-m.filterReq:
			default:
			}
		}
	}
}

// Status is what the status bar shows.
type Status struct {
	Name       string
	Packets    int
	Displayed  int
	Filter     string
	Filtering  bool
	Done       bool
	Err        error
	Rate       float64
	Received   uint64
	Dropped    uint64
	First      time.Time
	Last       time.Time
	Version    uint64
	HasFilter  bool
	Anomalies  int
	Convs      int
	ExpertRows int
	Live       bool // a live capture: it never ends by itself
	// Capped says loading stopped at MaxPackets with more to read.
	Capped     bool
	MaxPackets int
}

// Status returns a consistent snapshot of the counters.
func (m *Model) Status() Status {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := Status{Name: m.name, Packets: m.count, Displayed: m.count, Filter: m.filterExpr, Filtering: m.filtering,
		Done: m.done, Err: m.err, Rate: m.rate, Received: m.received, Dropped: m.dropped, First: m.first, Last: m.last,
		Version: m.version, HasFilter: m.filter != nil, Live: m.live, Anomalies: m.anomalies.len(), Convs: len(m.convs), ExpertRows: len(m.expert),
		Capped: m.capped, MaxPackets: m.maxPackets}
	if m.filter != nil {
		s.Displayed = m.shown.len()
	}
	return s
}

// Displayed returns how many packets the list shows.
func (m *Model) Displayed() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.filter != nil {
		return m.shown.len()
	}
	return m.count
}

// Frame returns the frame number of the i-th (0-based) displayed packet.
func (m *Model) Frame(i int) int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.filter != nil {
		if i < 0 || i >= m.shown.len() {
			return 0
		}
		return int(m.shown.at(i))
	}
	if i < 0 || i >= m.count {
		return 0
	}
	return i + 1
}

// Row returns the displayed row of frame (its index in the list), or the
// row of the nearest displayed frame after it, and whether it is shown.
func (m *Model) Row(frame int) (int, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.filter == nil {
		return min(max(frame-1, 0), max(m.count-1, 0)), frame >= 1 && frame <= m.count
	}
	n := m.shown.len()
	i := sort.Search(n, func(i int) bool { return int(m.shown.at(i)) >= frame })
	ok := i < n && int(m.shown.at(i)) == frame
	return min(i, max(n-1, 0)), ok
}

// Conversations returns the latest snapshot of the conversation table.
func (m *Model) Conversations() []decode.Conversation {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.convs
}

// Expert returns the latest snapshot of the expert findings.
func (m *Model) Expert() []decode.ExpertRow {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.expert
}

// dcqcnSnap returns the DCQCN rows of the last snapshot.
func (m *Model) dcqcnSnap() []decode.DCQCNRow {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.dcqcn
}

func (m *Model) latencySnaps() []latencySnap {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.latency
}

// markOf returns frame's mark and, if it had findings, its whole analysis.
func (m *Model) analysisOf(frame int) (decode.PacketAnalysis, mark) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if frame < 1 || frame > m.marks.len() {
		return decode.PacketAnalysis{}, 0
	}
	mk := m.marks.at(frame - 1)
	n := m.anomalies.len()
	i := sort.Search(n, func(i int) bool { return int(m.anomalies.at(i).frame) >= frame })
	if i < n && int(m.anomalies.at(i).frame) == frame {
		return m.anomalies.at(i).a, mk
	}
	return mk.analysis(), mk
}

// span returns the spool bytes that hold frames [from, to] (1-based,
// inclusive) rounded out to checkpoints, and the number of the first frame
// the span starts with.
func (m *Model) span(from, to int) (start, end int64, first int, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if from < 1 || to > m.count || from > to {
		return 0, 0, 0, false
	}
	k := (from - 1) / checkpointEvery
	start = m.checkpoints[k]
	first = k*checkpointEvery + 1
	end = m.end
	if e := (to-1)/checkpointEvery + 1; e < len(m.checkpoints) {
		end = m.checkpoints[e]
	}
	return start, end, first, true
}

func (m *Model) firstTime() time.Time {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.first
}

// Scan decodes and analyses frames 1..upto in order from the spool with a
// decoder and analyzer of its own, calling fn on each until it returns
// false. The views that need every packet of a connection (Follow, PSN
// graph, I/O graph) use it from their own goroutines.
func (m *Model) Scan(ctx context.Context, upto int, fn func(p *decode.Packet) bool) error {
	return m.scan(ctx, upto, nil, fn)
}

// ScanAnalyzed is Scan with an Analyzer whose options the caller sets
// (OnLatency, OnFinding).
func (m *Model) scan(ctx context.Context, upto int, opts *decode.AnalyzerOptions, fn func(p *decode.Packet) bool) error {
	dec := decode.NewDecoder(m.options)
	var ao decode.AnalyzerOptions
	if opts != nil {
		ao = *opts
	}
	an := decode.NewAnalyzer(ao)
	const chunk = 256 << 10
	var buf []byte
	for from := 1; from <= upto; {
		to := min(upto, from+chunk/128)
		start, end, first, ok := m.span(from, to)
		if !ok {
			return errBadSpool
		}
		var err error
		if buf, err = readSpan(m.file, start, end, buf); err != nil {
			return err
		}
		stop := false
		err = parseRecords(buf, first, func(in decode.Input) bool {
			if in.Number > upto {
				return false
			}
			p := dec.Decode(in)
			an.Analyze(p)
			if !fn(p) {
				stop = true
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
		if stop || ctx.Err() != nil {
			return ctx.Err()
		}
		from = to + 1
		// The span was rounded out to checkpoints: records past "to" were
		// already seen.
		if n := first + countRecords(buf) - 1; n >= from {
			from = n + 1
		}
	}
	return nil
}

func countRecords(buf []byte) int {
	n := 0
	_ = parseRecords(buf, 1, func(decode.Input) bool { n++; return true })
	return n
}
