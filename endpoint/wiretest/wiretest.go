// Package wiretest is an in-memory pair of endpoint.Wires joined back to back,
// with fault knobs: loss, reordering, duplication, delay and corruption.
//
// Each direction of a Pair is a link. WriteBatch copies every datagram into
// a pooled buffer, fills its ICRC exactly as endpoint's UDP wire does for an
// IPv4 packet with Identification 0 (the synthetic IPv4/UDP header goes
// through layers.ICRCComputer, so the masking rules live in layers alone),
// then rolls the dice: a lost datagram vanishes, a corrupted one has one bit
// flipped after its ICRC was filled (the receiver sees ICRCBad), a
// duplicated one is delivered twice, and a delayed or reordered one waits on
// a timer. ReadBatch recomputes the ICRC and sets Datagram.ICRC.
//
// Random choices come from a seeded PCG generator, so a run is repeatable;
// the delays use the time package, so a Pair made inside a testing/synctest
// bubble runs on the bubble's virtual clock. Faults can be changed while
// traffic flows (SetFaults), e.g. to cut a link with 100% loss, and
// Config.Drop loses exactly the datagrams a test picks. Steady-state traffic
// allocates nothing: buffers are recycled.
//
// The same dice serve any other Wire: NewFaulty wraps one (a kernel socket
// in a command, say) and applies a Faults' loss, duplication and
// reordering to what it sends, rolling in the same order as a Pair's link.
package wiretest

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// Faults are the per-link knobs. Probabilities are in [0, 1].
type Faults struct {
	Loss      float64 // a datagram is dropped
	Duplicate float64 // a datagram is delivered twice
	Corrupt   float64 // one bit of a datagram is flipped after its ICRC was filled
	Reorder   float64 // a datagram is held back by a random extra delay up to ReorderWindow
	// Delay is the one-way delay of every datagram.
	Delay time.Duration
	// ReorderWindow bounds the extra delay of a reordered datagram
	// (default 20 µs).
	ReorderWindow time.Duration
}

// Config describes a Pair.
type Config struct {
	// A and B are the two wires' addresses (default 127.0.0.1:4791 and
	// 127.0.0.2:4791).
	A, B netip.AddrPort
	// AtoB and BtoA are the faults of each direction.
	AtoB, BtoA Faults
	// Seed seeds the random generator of each direction (B to A uses Seed+1).
	Seed uint64
	// QueueLen is the number of datagrams a receiver can hold unread before
	// further ones are dropped, as a full socket buffer does (default 4096).
	QueueLen int
	// Observe, when set, is called for every datagram written, before any
	// fault, with the ICRC filled: tests use it to see what an endpoint
	// sends and when. It must not keep payload.
	Observe func(from, to netip.AddrPort, payload []byte)
	// Drop, when set, is asked about every datagram written, after
	// Observe: true loses it (counted as Lost). The dice are rolled for
	// it all the same, so the random faults of the other datagrams stay
	// what the seed gives. Tests use it to lose exactly the packet a
	// failure needs, say the first response to one READ. It must not
	// keep payload nor use the pair.
	Drop func(from, to netip.AddrPort, payload []byte) bool
}

// Stats counts what a link did.
type Stats struct {
	Written, Delivered, Lost, Duplicated, Corrupted, Reordered, Overflowed uint64
}

// Wire is one end of a Pair. It implements endpoint.Wire.
type Wire struct {
	local     netip.AddrPort
	out       *link // what this wire writes
	in        *link // what this wire reads
	closed    chan struct{}
	closeOnce *sync.Once // shared by both wires of a pair
}

var _ endpoint.Wire = (*Wire)(nil)

// packet is one datagram in flight.
type packet struct {
	buf      [endpoint.MaxDatagram]byte
	n        int
	src, dst netip.AddrPort
	tc, hop  uint8
	tooLong  bool // longer than MaxDatagram: read as a slot marked DropTooLong
	due      time.Time
	seq      uint64
}

// link is one direction.
type link struct {
	mu      sync.Mutex
	faults  Faults
	rng     *rand.Rand
	stats   Stats
	held    []*packet // min-heap by (due, seq)
	seq     uint64
	ready   chan *packet
	free    chan *packet
	wake    chan struct{}
	done    chan struct{} // closed when either wire closes
	stopped chan struct{} // closed when the delivery goroutine returned
	observe func(from, to netip.AddrPort, payload []byte)
	drop    func(from, to netip.AddrPort, payload []byte) bool
	icrc    icrcFiller
	due     []*packet // scratch of deliver
}

// NewPair returns two connected wires: what A writes, B reads, and back.
// Close both (or either: closing one stops the pair) to stop the pair's
// goroutines.
func NewPair(cfg Config) (a, b *Wire) {
	if !cfg.A.IsValid() {
		cfg.A = netip.MustParseAddrPort("127.0.0.1:4791")
	}
	if !cfg.B.IsValid() {
		cfg.B = netip.MustParseAddrPort("127.0.0.2:4791")
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 4096
	}
	done := make(chan struct{})
	ab := newLink(cfg.AtoB, cfg.Seed, cfg.QueueLen, done, cfg.Observe)
	ba := newLink(cfg.BtoA, cfg.Seed+1, cfg.QueueLen, done, cfg.Observe)
	ab.drop, ba.drop = cfg.Drop, cfg.Drop
	a = &Wire{local: cfg.A, out: ab, in: ba, closed: done}
	b = &Wire{local: cfg.B, out: ba, in: ab, closed: done}
	// Both wires share done; Close of either closes it once.
	shared := &sync.Once{}
	a.closeOnce, b.closeOnce = shared, shared
	return a, b
}

func newLink(f Faults, seed uint64, qlen int, done chan struct{}, observe func(from, to netip.AddrPort, payload []byte)) *link {
	l := &link{
		faults:  f,
		rng:     newRNG(seed),
		ready:   make(chan *packet, qlen),
		free:    make(chan *packet, qlen+256),
		wake:    make(chan struct{}, 1),
		done:    done,
		stopped: make(chan struct{}),
		observe: observe,
	}
	go l.deliver()
	return l
}

// SetFaults changes the faults of what this wire writes, effective for the
// next datagram.
func (w *Wire) SetFaults(f Faults) {
	w.out.mu.Lock()
	w.out.faults = f
	w.out.mu.Unlock()
}

// Stats returns the counters of what this wire wrote.
func (w *Wire) Stats() Stats {
	w.out.mu.Lock()
	defer w.out.mu.Unlock()
	return w.out.stats
}

// LocalAddr returns the wire's address.
func (w *Wire) LocalAddr() netip.AddrPort { return w.local }

// BatchSize is the largest batch the wire moves per call.
func (w *Wire) BatchSize() int { return 64 }

// Close stops both wires of the pair and waits for their delivery
// goroutines. It is idempotent.
func (w *Wire) Close() error {
	w.closeOnce.Do(func() { close(w.closed) })
	<-w.out.stopped
	<-w.in.stopped
	return nil
}

// ReadBatch blocks until a datagram arrives, then returns every datagram
// that is ready, up to len(dgs).
func (w *Wire) ReadBatch(dgs []endpoint.Datagram) (int, error) {
	if len(dgs) == 0 {
		return 0, nil
	}
	var p *packet
	select {
	case <-w.closed:
		return 0, endpoint.ErrWireClosed
	case p = <-w.in.ready:
	}
	n := 0
	for {
		w.in.fill(&dgs[n], p)
		n++
		if n == len(dgs) {
			return n, nil
		}
		select {
		case p = <-w.in.ready:
			continue
		default:
		}
		return n, nil
	}
}

// WriteBatch sends every datagram (after filling its ICRC) through the
// link's faults. It never blocks: a receiver whose queue is full loses the
// datagram, as a full socket buffer would.
func (w *Wire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	select {
	case <-w.closed:
		return 0, endpoint.ErrWireClosed
	default:
	}
	for i := range dgs {
		w.out.send(w.local, &dgs[i])
	}
	return len(dgs), nil
}

// Inject delivers payload to this wire as if a peer at src had sent it,
// with its ICRC filled and no faults. Tests use it for hand-made packets.
func (w *Wire) Inject(src netip.AddrPort, payload []byte) {
	w.inject(src, payload, true)
}

// InjectRaw is Inject without filling the ICRC: the bytes arrive exactly as
// given (a bad ICRC stays bad, a truncated packet stays truncated). A
// payload longer than endpoint.MaxDatagram arrives as the kernel wires
// deliver one, here or through WriteBatch: its slot empty and marked
// endpoint.DropTooLong.
func (w *Wire) InjectRaw(src netip.AddrPort, payload []byte) {
	w.inject(src, payload, false)
}

func (w *Wire) inject(src netip.AddrPort, payload []byte, fillICRC bool) {
	p := w.in.get()
	p.n = copy(p.buf[:], payload)
	p.src, p.dst, p.tc, p.hop = src, w.local, 0, 0
	p.tooLong = len(payload) > endpoint.MaxDatagram
	if fillICRC && !p.tooLong {
		w.in.mu.Lock()
		w.in.icrc.fill(p.src, p.dst, p.buf[:p.n])
		w.in.mu.Unlock()
	}
	w.in.enqueue(p)
}

func (l *link) get() *packet {
	select {
	case p := <-l.free:
		return p
	default:
		return new(packet)
	}
}

func (l *link) put(p *packet) {
	select {
	case l.free <- p:
	default:
	}
}

func (l *link) send(local netip.AddrPort, dg *endpoint.Datagram) {
	src := dg.Src
	if !src.IsValid() || src.Addr() != local.Addr() {
		src = netip.AddrPortFrom(local.Addr(), src.Port())
	}
	if src.Port() == 0 {
		src = netip.AddrPortFrom(src.Addr(), local.Port())
	}
	p := l.get()
	p.n = copy(p.buf[:], dg.Payload)
	p.src, p.dst, p.tc, p.hop = src, dg.Dst, dg.TrafficClass, dg.HopLimit
	if p.tooLong = len(dg.Payload) > endpoint.MaxDatagram; p.tooLong {
		// What a socket does: it goes, and the reader cannot take it
		// whole. No ICRC to fill, no faults to roll.
		l.mu.Lock()
		l.stats.Written++
		l.mu.Unlock()
		l.enqueue(p)
		return
	}

	l.mu.Lock()
	l.icrc.fill(p.src, p.dst, p.buf[:p.n])
	copy(dg.Payload[len(dg.Payload)-min(len(dg.Payload), layers.ICRCLength):], p.buf[max(p.n-layers.ICRCLength, 0):p.n])
	if l.observe != nil {
		l.observe(p.src, p.dst, p.buf[:p.n])
	}
	l.stats.Written++
	f := l.faults
	v := roll(l.rng, f, p.n)
	if l.drop != nil && l.drop(p.src, p.dst, p.buf[:p.n]) {
		v.lost = true
	}
	if v.lost {
		l.stats.Lost++
		l.mu.Unlock()
		l.put(p)
		return
	}
	if v.corruptBit >= 0 {
		p.buf[v.corruptBit/8] ^= 1 << (v.corruptBit % 8)
		l.stats.Corrupted++
	}
	var dup *packet
	if v.dup {
		dup = l.get()
		dup.n = copy(dup.buf[:], p.buf[:p.n])
		dup.src, dup.dst, dup.tc, dup.hop, dup.tooLong = p.src, p.dst, p.tc, p.hop, false
		l.stats.Duplicated++
	}
	delay := f.Delay
	if v.reorder {
		delay += time.Duration(1 + l.rng.Int64N(int64(f.reorderWindow())))
		l.stats.Reordered++
	}
	var dupDelay time.Duration
	if dup != nil {
		dupDelay = f.Delay
		if f.Reorder > 0 {
			dupDelay += time.Duration(l.rng.Int64N(int64(f.reorderWindow())))
		}
	}
	l.mu.Unlock()

	l.schedule(p, delay)
	if dup != nil {
		l.schedule(dup, dupDelay)
	}
}

// schedule delivers p now or holds it until its delay has passed.
func (l *link) schedule(p *packet, delay time.Duration) {
	if delay <= 0 {
		l.mu.Lock()
		empty := len(l.held) == 0
		l.mu.Unlock()
		if empty {
			l.enqueue(p)
			return
		}
	}
	l.mu.Lock()
	p.due = time.Now().Add(delay)
	p.seq = l.seq
	l.seq++
	l.push(p)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// enqueue hands p to the reader, or drops it when the reader's queue is
// full.
func (l *link) enqueue(p *packet) {
	select {
	case l.ready <- p:
		l.mu.Lock()
		l.stats.Delivered++
		l.mu.Unlock()
	default:
		l.mu.Lock()
		l.stats.Overflowed++
		l.mu.Unlock()
		l.put(p)
	}
}

// deliver moves held datagrams to the reader when they are due.
func (l *link) deliver() {
	defer close(l.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		l.mu.Lock()
		now := time.Now()
		due := l.due[:0]
		for len(l.held) > 0 && !l.held[0].due.After(now) {
			due = append(due, l.pop())
		}
		l.due = due
		var wait time.Duration = -1
		if len(l.held) > 0 {
			wait = l.held[0].due.Sub(now)
		}
		l.mu.Unlock()
		for i, p := range due {
			l.enqueue(p)
			due[i] = nil
		}
		if wait >= 0 {
			timer.Reset(wait)
		}
		select {
		case <-l.done:
			timer.Stop()
			return
		case <-l.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// fill copies p into dg and returns p to the pool. A datagram longer than
// MaxDatagram fills its slot empty and marked DropTooLong, as the kernel
// wires do.
func (l *link) fill(dg *endpoint.Datagram, p *packet) {
	dg.Src, dg.Dst, dg.TrafficClass, dg.HopLimit, dg.Drop = p.src, p.dst, p.tc, p.hop, 0
	if p.tooLong {
		dg.Payload, dg.ICRC, dg.Drop = dg.Payload[:0], endpoint.ICRCBad, endpoint.DropTooLong
		l.put(p)
		return
	}
	dg.Payload = dg.Payload[:p.n]
	copy(dg.Payload, p.buf[:p.n])
	l.mu.Lock()
	dg.ICRC = l.icrc.check(p.src, p.dst, dg.Payload)
	l.mu.Unlock()
	l.put(p)
}

// The held heap, ordered by due time then by write order, so datagrams
// with equal delays keep their order.
func (l *link) less(i, j int) bool {
	a, b := l.held[i], l.held[j]
	if a.due.Equal(b.due) {
		return a.seq < b.seq
	}
	return a.due.Before(b.due)
}

func (l *link) push(p *packet) {
	l.held = append(l.held, p)
	i := len(l.held) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !l.less(i, parent) {
			break
		}
		l.held[i], l.held[parent] = l.held[parent], l.held[i]
		i = parent
	}
}

func (l *link) pop() *packet {
	top := l.held[0]
	last := len(l.held) - 1
	l.held[0] = l.held[last]
	l.held[last] = nil
	l.held = l.held[:last]
	i := 0
	for {
		left, right, small := 2*i+1, 2*i+2, i
		if left < len(l.held) && l.less(left, small) {
			small = left
		}
		if right < len(l.held) && l.less(right, small) {
			small = right
		}
		if small == i {
			return top
		}
		l.held[i], l.held[small] = l.held[small], l.held[i]
		i = small
	}
}

// icrcFiller computes the ICRC a RoCEv2 packet would carry in an IPv4 (ID
// 0, DF) or IPv6 packet between src and dst, by building the IP and UDP
// headers in front of the BTH in a scratch buffer and letting
// layers.ICRCComputer mask and hash them; the rest of the payload continues
// the same CRC-32.
type icrcFiller struct {
	crc     layers.ICRCComputer
	scratch [40 + 8 + layers.BTHLength + layers.ICRCLength]byte
}

var errShort = errors.New("wiretest: datagram shorter than BTH and ICRC")

func (f *icrcFiller) compute(src, dst netip.AddrPort, payload []byte) (uint32, error) {
	if len(payload) < layers.BTHLength+layers.ICRCLength {
		return 0, errShort
	}
	b := f.scratch[:]
	n := 0
	encap := layers.EncapRoCEv2IPv4
	if src.Addr().Is4() && dst.Addr().Is4() {
		clear(b[:20])
		b[0] = 0x45
		binary.BigEndian.PutUint16(b[2:], uint16(28+len(payload)))
		binary.BigEndian.PutUint16(b[6:], 0x4000) // DF, ID 0
		b[8], b[9] = 64, 17
		s, d := src.Addr().As4(), dst.Addr().As4()
		copy(b[12:16], s[:])
		copy(b[16:20], d[:])
		n = 20
	} else {
		encap = layers.EncapRoCEv2IPv6
		clear(b[:40])
		binary.BigEndian.PutUint32(b[0:], 6<<28)
		binary.BigEndian.PutUint16(b[4:], uint16(8+len(payload)))
		b[6], b[7] = 17, 64
		s, d := src.Addr().As16(), dst.Addr().As16()
		copy(b[8:24], s[:])
		copy(b[24:40], d[:])
		n = 40
	}
	binary.BigEndian.PutUint16(b[n:], src.Port())
	binary.BigEndian.PutUint16(b[n+2:], dst.Port())
	binary.BigEndian.PutUint16(b[n+4:], uint16(8+len(payload)))
	b[n+6], b[n+7] = 0, 0
	n += 8
	n += copy(b[n:], payload[:layers.BTHLength])
	clear(b[n : n+layers.ICRCLength])
	n += layers.ICRCLength
	crc, err := f.crc.Compute(encap, b[:n])
	if err != nil {
		return 0, err
	}
	return crc32.Update(crc, crc32.IEEETable, payload[layers.BTHLength:len(payload)-layers.ICRCLength]), nil
}

// fill writes the ICRC into the last four bytes; a datagram too short to
// carry one is left as it is (the receiver drops it).
func (f *icrcFiller) fill(src, dst netip.AddrPort, payload []byte) {
	crc, err := f.compute(src, dst, payload)
	if err != nil {
		return
	}
	binary.LittleEndian.PutUint32(payload[len(payload)-layers.ICRCLength:], crc)
}

func (f *icrcFiller) check(src, dst netip.AddrPort, payload []byte) endpoint.ICRCStatus {
	crc, err := f.compute(src, dst, payload)
	if err != nil || crc != binary.LittleEndian.Uint32(payload[len(payload)-layers.ICRCLength:]) {
		return endpoint.ICRCBad
	}
	return endpoint.ICRCGood
}
