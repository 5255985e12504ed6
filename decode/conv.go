package decode

import (
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// PairedBy says how the two directions of a conversation were matched.
type PairedBy uint8

// Pairing methods.
const (
	PairedNone PairedBy = iota // one direction only, or UD keyed by DETH
	PairedCM                   // CM REQ/REP on QP1 (or SIDR for UD)
	PairedOOB                  // the TCP exchange of ibv_*_pingpong or perftest
	PairedPSN                  // responses (or CNPs) that answer the other direction
)

var pairedNames = [...]string{"none", "cm", "oob", "psn"}

func (p PairedBy) String() string {
	if int(p) < len(pairedNames) {
		return pairedNames[p]
	}
	return "none"
}

// ConvState is where a conversation's connection stands.
type ConvState uint8

// Conversation states.
const (
	ConvOpen        ConvState = iota // traffic seen, no CM
	ConvConnecting                   // CM REQ/REP seen
	ConvEstablished                  // CM RTU seen
	ConvClosing                      // CM DREQ seen
	ConvClosed                       // CM DREP seen
	ConvRejected                     // CM REJ seen
	ConvError                        // a NAK moved the QP to the error state
)

var convStateNames = [...]string{"open", "connecting", "established", "closing", "closed", "rejected", "error"}

func (s ConvState) String() string {
	if int(s) < len(convStateNames) {
		return convStateNames[s]
	}
	return "?"
}

// conv is a live conversation.
type conv struct {
	// What every packet reads comes first.
	id         uint32
	svc        layers.ServiceType
	pairedBy   PairedBy
	state      ConvState
	ended      bool
	seen       bool // a packet of the conversation was seen (first holds its time)
	dirs       [2]*direction
	cm         *cmContract // what the CM negotiated; nil when no CM set it up
	last       time.Duration
	moved      time.Duration // when touch last moved it to the front
	mtu        int
	prev, next *conv
	first      time.Duration
	lat        Histogram
	aliases    []uint32 // ids of conversations merged into this one
	serviceID  uint64
	startPSN   [2]layers.PSN // from CM or OOB: the first PSN of each side's requests
	hasStart   [2]bool
	keys       [2]FlowKey // each side's flow, from its traffic or from set-up
	hasKey     [2]bool
}

// Conversation is the summary of one conversation: two directions paired,
// A→B being the first seen (or the CM active side, or the pingpong client).
type Conversation struct {
	ID        uint32
	Aliases   []uint32 // ids merged into this one
	A, B      Endpoint
	QPNAB     uint32 // destination QP of A→B: B's QPN
	QPNBA     uint32 // destination QP of B→A: A's QPN
	HasBA     bool   // QPNBA is known
	Service   layers.ServiceType
	PairedBy  PairedBy
	State     ConvState
	ServiceID uint64 // CM service ID
	MTU       int
	Dir       [2]DirStats // A→B, B→A
	Start     time.Duration
	Duration  time.Duration
	Latency   LatencySummary // request → response, every operation
}

// LatencySummary is a latency distribution reduced to a few numbers.
type LatencySummary struct {
	Count          uint64
	Min, Mean, Max time.Duration
	P50, P90, P99  time.Duration
}

// Summarize reduces h.
func (h *Histogram) Summarize() LatencySummary {
	return LatencySummary{Count: h.Count(), Min: h.Min(), Mean: h.Mean(), Max: h.Max(),
		P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99)}
}

// Messages is the number of messages both sides started.
func (c *Conversation) Messages() uint64 { return c.Dir[0].Messages + c.Dir[1].Messages }

// Sum adds up a counter over both directions.
func (c *Conversation) Sum(f func(*DirStats) uint64) uint64 { return f(&c.Dir[0]) + f(&c.Dir[1]) }

// HasID reports whether the conversation is id or absorbed id.
func (c *Conversation) HasID(id uint32) bool {
	if c.ID == id {
		return true
	}
	for _, x := range c.Aliases {
		if x == id {
			return true
		}
	}
	return false
}

// Goodput is the rate of first-time payload A→B (side 0) or B→A (side 1),
// in bits per second over the conversation's duration.
func (c *Conversation) Goodput(side int) float64 {
	if c.Duration <= 0 {
		return 0
	}
	return float64(c.Dir[side].Goodput) * 8 / c.Duration.Seconds()
}

func sortConversations(cs []Conversation) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
}

func (a *Analyzer) newConv() *conv {
	a.nextID++
	c := &conv{id: a.nextID, first: a.now, last: a.now}
	c.insertFront(&a.lru)
	a.live++
	return c
}

func (c *conv) insertFront(head *conv) {
	c.prev, c.next = head, head.next
	head.next.prev = c
	head.next = c
}

func (c *conv) unlink() {
	c.prev.next, c.next.prev = c.next, c.prev
	c.prev, c.next = nil, nil
}

// touch marks c active now.
//
// The list is kept in order to within lruSlack of capture time: moving a
// conversation to the front on every packet would write to its neighbours'
// memory each time.
func (c *conv) touch(a *Analyzer) {
	c.last = a.now
	if c.last-c.moved >= lruSlack && a.lru.next != c {
		c.moved = c.last
		c.unlink()
		c.insertFront(&a.lru)
	}
}

// lruSlack is how stale a conversation's place in the LRU list may be.
const lruSlack = 100 * time.Millisecond

// attach makes d side s of c.
func (c *conv) attach(d *direction, s uint8) {
	c.dirs[s] = d
	d.conv, d.side = c, s
	c.keys[s], c.hasKey[s] = d.flow, true
	if c.svc == layers.ServiceUnknown || c.svc == layers.ServiceCNP {
		c.svc = d.svc
	}
}

// pair puts directions d (A→B) and e (B→A) in one conversation, merging
// their conversations when they had one each.
func (a *Analyzer) pair(d, e *direction, by PairedBy) *conv {
	c := d.conv
	if x := c.dirs[1-d.side]; x != nil && x != e {
		a.split(x)
	}
	if o := e.conv; o != c {
		if x := o.dirs[1-e.side]; x != nil {
			o.dirs[e.side], o.hasKey[e.side] = nil, false
		} else {
			c.aliases = append(append(c.aliases, o.id), o.aliases...)
			if a.opts.Links != nil {
				a.opts.Links.merge(o.id, c.id)
			}
			if o.seen && (!c.seen || o.first < c.first) {
				c.first, c.seen = o.first, true
			}
			c.last = max(c.last, o.last)
			if o.pairedBy > c.pairedBy {
				c.pairedBy = o.pairedBy
			}
			c.state = max(c.state, o.state)
			o.dirs = [2]*direction{}
			a.drop(o)
		}
	}
	if d.side != 0 {
		c.keys[0], c.keys[1] = c.keys[1], c.keys[0]
		c.hasKey[0], c.hasKey[1] = c.hasKey[1], c.hasKey[0]
		c.startPSN[0], c.startPSN[1] = c.startPSN[1], c.startPSN[0]
		c.hasStart[0], c.hasStart[1] = c.hasStart[1], c.hasStart[0]
	}
	c.dirs = [2]*direction{}
	c.attach(d, 0)
	c.attach(e, 1)
	if by > c.pairedBy || c.pairedBy == PairedNone {
		c.pairedBy = by
	}
	a.unlist(d)
	a.unlist(e)
	return c
}

// split gives direction x a conversation of its own.
func (a *Analyzer) split(x *direction) {
	old := x.conv
	old.dirs[x.side], old.hasKey[x.side] = nil, false
	c := a.newConv()
	c.svc = x.svc
	c.attach(x, x.side)
}

// drop forgets an empty conversation absorbed by another.
func (a *Analyzer) drop(c *conv) {
	if c.next != nil {
		c.unlink()
		a.live--
	}
}

// unlist takes d off the list of directions waiting to be paired.
func (a *Analyzer) unlist(d *direction) {
	if !d.unpaired {
		return
	}
	d.unpaired = false
	hp := hostPair{d.key.src, d.key.dst}
	l := a.waiting[hp]
	for i, x := range l {
		if x == d {
			l[i] = l[len(l)-1]
			l = l[:len(l)-1]
			break
		}
	}
	if len(l) == 0 {
		delete(a.waiting, hp)
	} else {
		a.waiting[hp] = l
	}
}

// pairByResponse finds the request direction a response of r answers: an
// unpaired direction from r's receiver to r's sender whose requests cover
// psn (or end just before it); the most recently active one wins.
func (a *Analyzer) pairByResponse(r *direction, psn layers.PSN) *direction {
	if !r.unpaired {
		return nil
	}
	var best *direction
	for _, d := range a.waiting[hostPair{r.key.dst, r.key.src}] {
		if d == r || d.req == nil || d.peer() != nil {
			continue
		}
		hi, ok := d.req.win.Highest()
		if !ok || psn.Diff(hi) < -psnRingSize || psn.Diff(d.req.next) > 0 {
			continue
		}
		if best == nil || d.lastReq > best.lastReq {
			best = d
		}
	}
	if best == nil {
		return nil
	}
	a.pair(best, r, PairedPSN)
	return best
}

// pairByCNP finds the direction a CNP of r answers: an unpaired direction
// from r's receiver to r's sender with a congestion mark; the latest wins.
func (a *Analyzer) pairByCNP(r *direction) *direction {
	if !r.unpaired {
		return nil
	}
	var best *direction
	for _, d := range a.waiting[hostPair{r.key.dst, r.key.src}] {
		if d != r && d.lastCE != 0 && d.peer() == nil && (best == nil || d.lastCE > best.lastCE) {
			best = d
		}
	}
	if best != nil {
		a.pair(best, r, PairedPSN)
	}
	return best
}

// expectation is a direction announced by set-up traffic before its first packet.
type expectation struct {
	c    *conv
	side uint8
}

// announce records that a connection exists between ab (A sends to B's
// QP) and ba (B sends to A's QP), learned from CM or an out-of-band
// exchange; it returns the conversation and the side ab is on.
func (a *Analyzer) announce(ab, ba FlowKey, by PairedBy) (*conv, uint8) {
	ab.Src.Addr, ab.Dst.Addr = ab.Src.Addr.Unmap(), ab.Dst.Addr.Unmap()
	ba.Src.Addr, ba.Dst.Addr = ba.Src.Addr.Unmap(), ba.Dst.Addr.Unmap()
	d, e := a.findDir(ab, ba.DestQP), a.findDir(ba, ab.DestQP)
	// A set-up exchange begins a new connection: directions with the same
	// addresses and QPNs that already carried traffic belong to an older
	// one (the QPs were destroyed and their numbers reused).
	for _, x := range []*direction{d, e} {
		if x != nil && x.st.Packets > 0 && x.conv.next != nil {
			a.retire(x.conv)
		}
	}
	if d != nil && d.conv.next == nil {
		d = nil
	}
	if e != nil && e.conv.next == nil {
		e = nil
	}
	var c *conv
	var s uint8
	switch {
	case d != nil && e != nil:
		c = a.pair(d, e, by)
	case d != nil:
		c, s = d.conv, d.side
		if x := c.dirs[1-s]; x != nil {
			a.split(x)
		}
		a.expect[keyOf(ba)] = expectation{c, 1 - s}
		a.unlist(d)
	case e != nil:
		c, s = e.conv, 1-e.side
		if x := c.dirs[e.side^1]; x != nil {
			a.split(x)
		}
		a.expect[keyOf(ab)] = expectation{c, s}
		a.unlist(e)
	default:
		c = a.newConv()
		a.expect[keyOf(ab)] = expectation{c, 0}
		a.expect[keyOf(ba)] = expectation{c, 1}
	}
	c.keys[s], c.keys[1-s] = ab, ba
	c.hasKey[s], c.hasKey[1-s] = true, true
	if by > c.pairedBy || c.pairedBy == PairedPSN {
		c.pairedBy = by
	}
	c.touch(a)
	return c, s
}

// findDir finds a live direction by its flow key, as RC or as UD from srcQP.
func (a *Analyzer) findDir(f FlowKey, srcQP uint32) *direction {
	k := keyOf(f)
	if d, ok := a.dirs[k]; ok {
		return d
	}
	k.udSrc = udSrcFlag | srcQP
	if d, ok := a.dirs[k]; ok {
		return d
	}
	return nil
}

// retire ends conversation c: outstanding requests become findings, the
// summary is kept (up to MaxDone) and the state is recycled.
func (a *Analyzer) retire(c *conv) {
	if !a.finished {
		a.unanswered(c)
	}
	a.nvmeRetire(c.id)
	a.rpcRetire(c.id)
	a.smbdRetire(c.id)
	a.iserRetire(c.id)
	s := c.summary()
	if len(a.done) < a.opts.MaxDone {
		a.done = append(a.done, &s)
	} else {
		a.dropped++
	}
	for _, d := range c.dirs {
		if d == nil {
			continue
		}
		a.unlist(d)
		delete(a.dirs, d.key)
		if slot := &a.cache[d.key.cacheIndex()]; *slot == d {
			*slot = nil
		}
		if d.req != nil {
			a.free.req = append(a.free.req, d.req)
			d.req = nil
		}
		if d.resp != nil {
			a.free.resp = append(a.free.resp, d.resp)
			d.resp = nil
		}
	}
	for k, e := range a.expect {
		if e.c == c {
			delete(a.expect, k)
		}
	}
	c.unlink()
	a.live--
}

// summary snapshots c.
func (c *conv) summary() Conversation {
	s := Conversation{ID: c.id, Aliases: append([]uint32(nil), c.aliases...), Service: c.svc, PairedBy: c.pairedBy,
		State: c.state, ServiceID: c.serviceID, MTU: c.mtu, Start: c.first, Duration: c.last - c.first, Latency: c.lat.Summarize()}
	if s.Service == layers.ServiceUnknown {
		s.Service = layers.ServiceUD
	}
	switch {
	case c.hasKey[0]:
		s.A, s.B, s.QPNAB = c.keys[0].Src, c.keys[0].Dst, c.keys[0].DestQP
	case c.hasKey[1]:
		s.A, s.B = c.keys[1].Dst, c.keys[1].Src
	}
	if c.hasKey[1] {
		s.QPNBA, s.HasBA = c.keys[1].DestQP, true
	} else if d := c.dirs[0]; d != nil && d.key.udSrc != 0 {
		s.QPNBA, s.HasBA = d.key.udSrc&^udSrcFlag, true
	}
	for i, d := range c.dirs {
		if d != nil {
			s.Dir[i] = d.st
		}
	}
	return s
}
