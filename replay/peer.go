package replay

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// WirePeer is a Peer reached through an endpoint.Wire: requests go to one
// address, and the datagrams that come back from that address are the
// responses (anything else the wire receives is counted and dropped). One
// goroutine reads the wire until Close.
type WirePeer struct {
	wire endpoint.Wire
	dst  netip.AddrPort
	in   chan []byte
	done chan struct{}
	err  error // the reader's error, set before done closes

	mu       sync.Mutex
	strays   int
	closeOne sync.Once
	buf      []byte
	dg       [1]endpoint.Datagram
}

// NewWirePeer starts reading w; requests go to dst (port 0 means 4791).
func NewWirePeer(w endpoint.Wire, dst netip.AddrPort) *WirePeer {
	if dst.Port() == 0 {
		dst = netip.AddrPortFrom(dst.Addr(), layers.RoCEv2Port)
	}
	p := &WirePeer{wire: w, dst: dst, in: make(chan []byte, 4096), done: make(chan struct{}),
		buf: make([]byte, 0, endpoint.MaxDatagram)}
	go p.read()
	return p
}

func (p *WirePeer) read() {
	defer close(p.done)
	dgs := readBuffers(p.wire)
	for {
		k, err := readBatch(p.wire, dgs)
		for _, d := range dgs[:k] {
			if d.Drop != 0 {
				continue // the wire could not read it (too long)
			}
			if d.Src.Addr().Unmap() != p.dst.Addr().Unmap() {
				p.mu.Lock()
				p.strays++
				p.mu.Unlock()
				continue
			}
			p.in <- append([]byte(nil), d.Payload...)
		}
		if err != nil {
			if !errors.Is(err, endpoint.ErrWireClosed) {
				p.err = err
			}
			return
		}
	}
}

// Send sends one request; the wire fills its ICRC.
func (p *WirePeer) Send(req []byte) error {
	if len(req) > endpoint.MaxDatagram {
		return fmt.Errorf("request of %d bytes is larger than a datagram", len(req))
	}
	p.buf = append(p.buf[:0], req...)
	p.dg[0] = endpoint.Datagram{Src: p.wire.LocalAddr(), Dst: p.dst, Payload: p.buf}
	_, err := p.wire.WriteBatch(p.dg[:])
	return err
}

// Receive waits up to timeout for the next response.
func (p *WirePeer) Receive(buf []byte, timeout time.Duration) (int, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case dg := <-p.in:
		return copy(buf, dg), nil
	case <-p.done:
		select {
		case dg := <-p.in:
			return copy(buf, dg), nil
		default:
		}
		if p.err != nil {
			return 0, p.err
		}
		return 0, endpoint.ErrWireClosed
	case <-t.C:
		return 0, os.ErrDeadlineExceeded
	}
}

// Strays is the number of datagrams from other addresses.
func (p *WirePeer) Strays() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.strays
}

// Dropped counts the datagrams for the player that its wire dropped before
// the peer read them (a SplitWire view's full queue); 0 for a wire that
// does not drop.
func (p *WirePeer) Dropped() uint64 {
	if d, ok := p.wire.(dropper); ok {
		return d.Dropped()
	}
	return 0
}

// dropper is a wire or peer that counts the datagrams it dropped.
type dropper interface{ Dropped() uint64 }

// Close closes the wire and waits for the reader to stop.
func (p *WirePeer) Close() error {
	var err error
	p.closeOne.Do(func() {
		err = p.wire.Close()
		// Unblock a reader stuck handing over a datagram nobody takes.
		for {
			select {
			case <-p.in:
				continue
			case <-p.done:
			}
			break
		}
	})
	return err
}

// readBuffers returns a batch of datagrams sized for w, each able to hold
// the largest datagram.
func readBuffers(w endpoint.Wire) []endpoint.Datagram {
	dgs := make([]endpoint.Datagram, max(1, w.BatchSize()))
	for i := range dgs {
		dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
	}
	return dgs
}

// readBatch empties dgs' payloads (keeping their room) and reads into them.
func readBatch(w endpoint.Wire, dgs []endpoint.Datagram) (int, error) {
	for i := range dgs {
		dgs[i].Payload = dgs[i].Payload[:0]
	}
	return w.ReadBatch(dgs)
}
