package endpoint

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrCQOverrun is reported by CQ.Err once a completion was lost because the
// queue was full (verbs' IBV_EVENT_CQ_ERR).
var ErrCQOverrun = errors.New("endpoint: completion queue overrun")

// CQ is a completion queue: a bounded ring that QPs push into and the
// application polls, or waits on through Notify.
type CQ struct {
	mu      sync.Mutex
	ring    []WC
	head, n int
	overrun bool
	notify  chan struct{}
}

// CreateCQ makes a completion queue holding up to capacity completions.
func (d *Device) CreateCQ(capacity int) *CQ {
	if capacity < 1 {
		capacity = 1
	}
	return &CQ{ring: make([]WC, capacity), notify: make(chan struct{}, 1)}
}

// push adds a completion; the ring is never grown, so a full queue loses it
// and the CQ records the overrun.
func (cq *CQ) push(wc WC) {
	cq.mu.Lock()
	if cq.n == len(cq.ring) {
		cq.overrun = true
		cq.mu.Unlock()
		return
	}
	cq.ring[(cq.head+cq.n)%len(cq.ring)] = wc
	cq.n++
	cq.mu.Unlock()
	select {
	case cq.notify <- struct{}{}:
	default:
	}
}

// Poll moves up to len(wcs) completions into wcs, oldest first, and
// returns how many. It never blocks.
func (cq *CQ) Poll(wcs []WC) int {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	k := 0
	for k < len(wcs) && cq.n > 0 {
		wcs[k] = cq.ring[cq.head]
		cq.ring[cq.head] = WC{}
		cq.head = (cq.head + 1) % len(cq.ring)
		cq.n--
		k++
	}
	return k
}

// Notify returns a channel that receives a value after completions were
// added (one value for any number of them): poll until empty, then wait on
// it again, as with ibv_req_notify_cq.
func (cq *CQ) Notify() <-chan struct{} { return cq.notify }

// Wait blocks until at least one completion is there or ctx is done, then
// polls into wcs.
func (cq *CQ) Wait(ctx context.Context, wcs []WC) (int, error) {
	for {
		if n := cq.Poll(wcs); n > 0 {
			return n, nil
		}
		select {
		case <-cq.notify:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// Len is the number of completions waiting.
func (cq *CQ) Len() int {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	return cq.n
}

// Err returns ErrCQOverrun once a completion was lost.
func (cq *CQ) Err() error {
	cq.mu.Lock()
	defer cq.mu.Unlock()
	if cq.overrun {
		return ErrCQOverrun
	}
	return nil
}

// recvWQE is a posted receive WR, its SGEs copied.
type recvWQE struct {
	id   uint64
	sges [MaxSGE]SGE
	n    int
}

// recvQueue holds posted receive WRs, for a QP's own receive queue or a
// shared one. The responder takes the oldest.
type recvQueue struct {
	mu      sync.Mutex
	ring    []recvWQE
	head, n int
	pd      *PD
	dev     *Device
	// limit, when not 0, is the armed SRQ limit: the take that leaves
	// fewer WRs than it sends on limitReached and disarms it.
	limit        int
	limitReached chan struct{}
}

func newRecvQueue(pd *PD, capacity int) *recvQueue {
	if capacity < 1 {
		capacity = 1
	}
	return &recvQueue{ring: make([]recvWQE, capacity), pd: pd, dev: pd.dev}
}

func (rq *recvQueue) post(wr RecvWR) error {
	if len(wr.SGL) > MaxSGE {
		return fmt.Errorf("post recv: %d SGEs, at most %d: %w", len(wr.SGL), MaxSGE, ErrInvalidWR)
	}
	if err := rq.dev.checkSGL(rq.pd, wr.SGL, true); err != nil {
		return fmt.Errorf("post recv: %w", err)
	}
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.n == len(rq.ring) {
		return ErrQueueFull
	}
	w := &rq.ring[(rq.head+rq.n)%len(rq.ring)]
	w.id, w.n = wr.ID, copy(w.sges[:], wr.SGL)
	rq.n++
	return nil
}

// peek returns the oldest receive WR without removing it.
func (rq *recvQueue) peek() (recvWQE, bool) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.n == 0 {
		return recvWQE{}, false
	}
	return rq.ring[rq.head], true
}

// take removes the oldest receive WR.
func (rq *recvQueue) take() (recvWQE, bool) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.n == 0 {
		return recvWQE{}, false
	}
	wr := rq.ring[rq.head]
	rq.ring[rq.head] = recvWQE{}
	rq.head = (rq.head + 1) % len(rq.ring)
	rq.n--
	if rq.limit > 0 && rq.n < rq.limit {
		rq.limit = 0
		select {
		case rq.limitReached <- struct{}{}:
		default:
		}
	}
	return wr, true
}

// drain removes every receive WR (flush on ERR).
func (rq *recvQueue) drain(f func(recvWQE)) {
	for {
		wr, ok := rq.take()
		if !ok {
			return
		}
		f(wr)
	}
}

// drainIf empties the queue without completions (RESET) when it belongs
// to the QP alone.
func (rq *recvQueue) drainIf(own bool) {
	if own {
		rq.drain(func(recvWQE) {})
	}
}

// SRQ is a shared receive queue: any QP created with it takes its receive
// WRs from it.
type SRQ struct {
	rq *recvQueue
}

// CreateSRQ makes a shared receive queue of up to maxWR receive WRs.
func (pd *PD) CreateSRQ(maxWR int) *SRQ {
	rq := newRecvQueue(pd, maxWR)
	rq.limitReached = make(chan struct{}, 1)
	return &SRQ{rq: rq}
}

// ArmLimit sets the SRQ limit (ibv_modify_srq with IBV_SRQ_LIMIT): once a
// receive taken from the queue leaves fewer than limit WRs waiting,
// LimitReached gets one event (IBV_EVENT_SRQ_LIMIT_REACHED) and the limit
// disarms, until armed again. As in rxe, only a receive taken fires it,
// not the arming of a limit the queue is already below. 0 disarms; a limit
// above the queue's size is an error.
func (s *SRQ) ArmLimit(limit int) error {
	s.rq.mu.Lock()
	defer s.rq.mu.Unlock()
	if limit < 0 || limit > len(s.rq.ring) {
		return fmt.Errorf("SRQ limit %d: want 0 to %d: %w", limit, len(s.rq.ring), ErrInvalidAttr)
	}
	s.rq.limit = limit
	return nil
}

// LimitReached receives one value each time the armed limit is reached.
func (s *SRQ) LimitReached() <-chan struct{} { return s.rq.limitReached }

// PostRecv adds a receive WR.
func (s *SRQ) PostRecv(wr RecvWR) error { return s.rq.post(wr) }

// Len is the number of receive WRs waiting.
func (s *SRQ) Len() int {
	s.rq.mu.Lock()
	defer s.rq.mu.Unlock()
	return s.rq.n
}
