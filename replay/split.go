package replay

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// SplitWire shares one endpoint.Wire between compare mode's player and an
// endpoint.Device: the datagrams whose BTH destination QP is the one given
// to Divert go to Diverted (a WirePeer reads them), every other datagram
// to Rest (the device's CM, its set-up QP and its drop accounting). Both
// views write to the wire itself. RDMA CM set-up needs this: the peer
// answers the CM, the set-up SENDs and the played requests from one UDP
// port, to one UDP port, and only the destination QP tells them apart.
//
// One goroutine reads the wire, into buffers it hands to the views and
// gets back once read. Each view queues at most splitQueue datagrams: one
// whose queue is full, or that is closed, drops what arrives for it and
// counts it (Dropped), so a view nobody reads does not stall the other.
// Closing a view makes its ReadBatch return endpoint.ErrWireClosed;
// closing both closes the wire and waits for the reader.
type SplitWire struct {
	wire  endpoint.Wire
	qpn   atomic.Uint32 // 0: divert nothing (QPN 0 is never an RC QP)
	views [2]*splitView
	done  chan struct{} // the reader has stopped
	err   error         // the reader's error, set before done closes

	free chan []byte // buffers the views have read, for the reader to reuse

	mu     sync.Mutex
	closed int
}

// splitQueue is how many datagrams a view holds before it drops.
const splitQueue = 4096

// splitView is one reader's side of a SplitWire.
type splitView struct {
	s       *SplitWire
	in      chan endpoint.Datagram
	closed  chan struct{}
	once    sync.Once
	dropped atomic.Uint64
}

// NewSplitWire starts reading w; nothing is diverted until Divert.
func NewSplitWire(w endpoint.Wire) *SplitWire {
	s := &SplitWire{wire: w, done: make(chan struct{}), free: make(chan []byte, 1024)}
	for i := range s.views {
		s.views[i] = &splitView{s: s, in: make(chan endpoint.Datagram, splitQueue), closed: make(chan struct{})}
	}
	go s.read()
	return s
}

// Dropped counts the datagrams each view dropped: those that arrived while
// its queue was full or after it was closed.
func (s *SplitWire) Dropped() (diverted, rest uint64) {
	return s.views[0].dropped.Load(), s.views[1].dropped.Load()
}

// Divert sends the datagrams for QP qpn to Diverted from now on.
func (s *SplitWire) Divert(qpn uint32) { s.qpn.Store(qpn & 0xFFFFFF) }

// Diverted is the view that receives the datagrams for the diverted QP.
func (s *SplitWire) Diverted() endpoint.Wire { return s.views[0] }

// Rest is the view that receives every other datagram.
func (s *SplitWire) Rest() endpoint.Wire { return s.views[1] }

func (s *SplitWire) read() {
	defer close(s.done)
	dgs := readBuffers(s.wire)
	for {
		n, err := readBatch(s.wire, dgs)
		for i := range dgs[:n] {
			v := s.views[1]
			if q := s.qpn.Load(); q != 0 {
				if dst, ok := layers.PeekDestQP(dgs[i].Payload); ok && dst == q {
					v = s.views[0]
				}
			}
			if v.deliver(dgs[i]) {
				// The view owns the buffer until it has been read.
				dgs[i].Payload = s.buffer()
			}
		}
		if err != nil {
			if !errors.Is(err, endpoint.ErrWireClosed) {
				s.err = err
			}
			return
		}
	}
}

// deliver queues d for the view, or counts it dropped when the view is
// closed or its queue full; it reports whether d was queued.
func (v *splitView) deliver(d endpoint.Datagram) bool {
	select {
	case <-v.closed:
		v.dropped.Add(1)
		return false
	default:
	}
	select {
	case v.in <- d:
		return true
	default:
		v.dropped.Add(1)
		return false
	}
}

// buffer returns an empty datagram buffer, reused when one is free.
func (s *SplitWire) buffer() []byte {
	select {
	case b := <-s.free:
		return b[:0]
	default:
		return make([]byte, 0, endpoint.MaxDatagram)
	}
}

// recycle gives a buffer a view has read back to the reader.
func (s *SplitWire) recycle(b []byte) {
	select {
	case s.free <- b:
	default:
	}
}

// Dropped counts the datagrams the view dropped (see SplitWire.Dropped).
func (v *splitView) Dropped() uint64 { return v.dropped.Load() }

// ReadBatch blocks for one datagram and adds those already waiting.
func (v *splitView) ReadBatch(dgs []endpoint.Datagram) (int, error) {
	if len(dgs) == 0 {
		return 0, nil
	}
	var d endpoint.Datagram
	select {
	case d = <-v.in:
	case <-v.closed:
		return 0, endpoint.ErrWireClosed
	case <-v.s.done:
		select {
		case d = <-v.in:
		default:
			if v.s.err != nil {
				return 0, v.s.err
			}
			return 0, endpoint.ErrWireClosed
		}
	}
	n := 0
	for {
		p := dgs[n].Payload
		dgs[n] = d
		dgs[n].Payload = append(p[:0], d.Payload...)
		v.s.recycle(d.Payload)
		n++
		if n == len(dgs) {
			return n, nil
		}
		select {
		case d = <-v.in:
		default:
			return n, nil
		}
	}
}

func (v *splitView) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	select {
	case <-v.closed:
		return 0, endpoint.ErrWireClosed
	default:
	}
	return v.s.wire.WriteBatch(dgs)
}

func (v *splitView) LocalAddr() netip.AddrPort { return v.s.wire.LocalAddr() }

func (v *splitView) BatchSize() int { return v.s.wire.BatchSize() }

// Close closes the view; the second view closed closes the wire.
func (v *splitView) Close() error {
	var err error
	v.once.Do(func() {
		close(v.closed)
		s := v.s
		s.mu.Lock()
		s.closed++
		last := s.closed == len(s.views)
		s.mu.Unlock()
		if last {
			err = s.wire.Close()
			<-s.done
		}
	})
	return err
}
