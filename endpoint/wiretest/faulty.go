package wiretest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
)

// verdict is what the dice decided for one datagram.
type verdict struct {
	lost, dup, reorder bool
	corruptBit         int // the bit to flip, or -1
}

// roll decides the fate of one datagram of n bytes. Both a Pair's links
// and Faulty roll here, in the same order (loss, corruption, duplication,
// reordering), so one seed means the same thing to both; a knob at zero
// draws nothing, so turning one on does not change the others' decisions.
func roll(rng *rand.Rand, f Faults, n int) verdict {
	v := verdict{corruptBit: -1}
	if f.Loss > 0 && rng.Float64() < f.Loss {
		v.lost = true
		return v
	}
	if f.Corrupt > 0 && n > 0 && rng.Float64() < f.Corrupt {
		v.corruptBit = rng.IntN(n * 8)
	}
	v.dup = f.Duplicate > 0 && rng.Float64() < f.Duplicate
	v.reorder = f.Reorder > 0 && rng.Float64() < f.Reorder
	return v
}

// newRNG is the generator of one direction, seeded.
func newRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
}

func (f Faults) reorderWindow() time.Duration {
	if f.ReorderWindow <= 0 {
		return 20 * time.Microsecond
	}
	return f.ReorderWindow
}

// Any says whether any knob is on.
func (f Faults) Any() bool {
	return f.Loss > 0 || f.Duplicate > 0 || f.Corrupt > 0 || f.Reorder > 0 || f.Delay > 0
}

// FaultyWire wraps any endpoint.Wire (a kernel socket, a Pair's end) and
// damages what it sends with the faults of a Pair's link: each datagram is
// lost with probability Loss, otherwise held back with probability Reorder
// and sent right after the next datagram that goes out (one at most is held
// at a time; one still held when the wire closes is lost), and sent twice
// with probability Duplicate. Receiving is untouched. WriteBatch reports
// every datagram as sent, as a lossy network would. Corrupt and Delay are
// a Pair's alone: the wrapped wire fills ICRCs after the wrapper has
// chosen, so a flipped bit would go out under a good ICRC.
type FaultyWire struct {
	endpoint.Wire
	faults Faults
	seed   uint64

	mu      sync.Mutex
	rng     *rand.Rand
	stats   Stats
	out     []endpoint.Datagram
	held    endpoint.Datagram
	heldBuf []byte
	holding bool
}

// NewFaulty wraps w. The same seed gives the same decisions for the same
// sequence of datagrams.
func NewFaulty(w endpoint.Wire, f Faults, seed uint64) (*FaultyWire, error) {
	if f.Corrupt > 0 || f.Delay > 0 {
		return nil, errors.New("wiretest: Corrupt and Delay need a Pair: a wrapped wire fills its ICRCs after the faults")
	}
	return &FaultyWire{Wire: w, faults: f, seed: seed, rng: newRNG(seed), heldBuf: make([]byte, endpoint.MaxDatagram)}, nil
}

// WriteBatch sends what survives the faults.
func (w *FaultyWire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.out[:0]
	released := false // the hold buffer is in out: do not refill it in this batch
	for _, dg := range dgs {
		w.stats.Written++
		v := roll(w.rng, w.faults, len(dg.Payload))
		if v.lost {
			w.stats.Lost++
			continue
		}
		if v.reorder && !w.holding && !released {
			w.held = dg
			w.held.Payload = append(w.heldBuf[:0], dg.Payload...)
			w.holding = true
			w.stats.Reordered++
			continue
		}
		out = append(out, dg)
		if w.holding {
			out = append(out, w.held)
			w.holding, released = false, true
		}
		if v.dup {
			out = append(out, dg)
			w.stats.Duplicated++
		}
	}
	w.out = out
	w.stats.Delivered += uint64(len(out))
	if len(out) > 0 {
		if _, err := w.Wire.WriteBatch(out); err != nil {
			return 0, err
		}
	}
	return len(dgs), nil
}

// Stats returns the counters of what went through: Delivered counts what
// was handed to the wrapped wire.
func (w *FaultyWire) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// Holding says whether a reordered datagram waits for the next one.
func (w *FaultyWire) Holding() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.holding
}

// Summary says in one line what was done to the datagrams.
func (w *FaultyWire) Summary() string {
	s := w.Stats()
	return fmt.Sprintf("faults on %d datagrams sent (seed %d): %d dropped, %d reordered, %d duplicated",
		s.Written, w.seed, s.Lost, s.Reordered, s.Duplicated)
}
