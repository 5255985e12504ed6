package device

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
)

// Drop diagnostics: when the endpoint drops a peer's packets, ibpeer says
// why on stderr, at most once per cause (reason and source address) per
// second, with the number of packets the line stands for:
//
//	ibpeer: dropped 3 packets from 192.168.77.11: unknown destination QPN 0x000123 (no such QP; was the set-up exchange answered?)
//
// Programs get it by opening their device with Open instead of
// endpoint.NewDevice.

// dropInterval is how often a cause may be reported.
const dropInterval = time.Second

// dropTick is how often held-back drops are looked at: the first drop of a
// cause is reported within this time.
const dropTick = 100 * time.Millisecond

// dropMaxCauses bounds the causes tracked apart; drops of further source
// addresses share one entry per reason, so spoofed sources cannot grow the
// table.
const dropMaxCauses = 64

type dropCause struct {
	reason endpoint.DropReason
	src    netip.Addr // invalid for the shared overflow entry
}

type dropEntry struct {
	count   uint64        // drops since the last report
	last    endpoint.Drop // the latest, whose details the report shows
	printed time.Time     // zero until first reported
}

// dropReporter collects drops from a device's drop handler and writes the
// rate-limited reports. Observe does no I/O; Tick, called from Run's
// ticker (or by tests with their own clock), writes.
type dropReporter struct {
	prog string // prefix, "ibpeer"

	mu     sync.Mutex
	w      io.Writer
	causes map[dropCause]*dropEntry
	order  []dropCause // first-seen order, for stable output
}

func newDropReporter(w io.Writer, prog string) *dropReporter {
	return &dropReporter{prog: prog, w: w, causes: make(map[dropCause]*dropEntry)}
}

// Observe records one drop; it is the device's DropHandler. It never
// blocks on I/O and allocates only for a new cause.
func (r *dropReporter) Observe(d endpoint.Drop) {
	k := dropCause{d.Reason, d.Src.Addr().Unmap()}
	r.mu.Lock()
	e := r.causes[k]
	if e == nil {
		if len(r.causes) >= dropMaxCauses {
			k.src = netip.Addr{}
			e = r.causes[k]
		}
		if e == nil {
			e = &dropEntry{}
			r.causes[k] = e
			r.order = append(r.order, k)
		}
	}
	e.count++
	e.last = d
	r.mu.Unlock()
}

// Tick reports every cause with drops held back whose last report is at
// least dropInterval before now (or that was never reported).
func (r *dropReporter) Tick(now time.Time) {
	r.report(now, false)
}

// Flush reports everything held back, whatever the time: at exit.
func (r *dropReporter) Flush(now time.Time) {
	r.report(now, true)
}

func (r *dropReporter) report(now time.Time, all bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.order {
		e := r.causes[k]
		if e.count == 0 || !all && !e.printed.IsZero() && now.Sub(e.printed) < dropInterval {
			continue
		}
		fmt.Fprintf(r.w, "%s: %s\n", r.prog, dropLine(e.count, k.src, e.last))
		e.count = 0
		e.printed = now
	}
}

// Run ticks until ctx is done, then flushes.
func (r *dropReporter) Run(ctx context.Context) {
	t := time.NewTicker(dropTick)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			r.Tick(now)
		case <-ctx.Done():
			r.Flush(time.Now())
			return
		}
	}
}

// dropLine is one report: how many packets, from where, and why.
func dropLine(n uint64, src netip.Addr, d endpoint.Drop) string {
	packets := "packets"
	if n == 1 {
		packets = "packet"
	}
	from := "several addresses"
	if src.IsValid() {
		from = src.String()
	}
	return fmt.Sprintf("dropped %d %s from %s: %s", n, packets, from, dropWhy(d))
}

// dropWhy explains one drop and hints at the usual mistake behind it.
func dropWhy(d endpoint.Drop) string {
	dst := d.Dst.Unmap()
	switch d.Reason {
	case endpoint.DropTooShort:
		return "short or undecodable packet (not RoCEv2, or truncated)"
	case endpoint.DropTooLong:
		return fmt.Sprintf("datagram longer than %d bytes, the most a RoCEv2 packet carries (not RoCEv2)", endpoint.MaxDatagram)
	case endpoint.DropDestAddr:
		return fmt.Sprintf("sent to %v, not to this device's address %v (does the peer use the right GID for us? check --addr here and the peer's GID index)", dst, d.Peer.Unmap())
	case endpoint.DropHeader:
		return fmt.Sprintf("%v with BTH version not 0 or destination QPN 0", d.Opcode)
	case endpoint.DropUnknownQPN:
		return fmt.Sprintf("unknown destination QPN %#06x (no such QP; was the set-up exchange answered?)", d.QPN)
	case endpoint.DropBadICRC:
		return fmt.Sprintf("bad ICRC on %v to QPN %#06x (corrupted on the way, or the sender computes the ICRC differently)", d.Opcode, d.QPN)
	case endpoint.DropInboxFull:
		return fmt.Sprintf("QPN %#06x's input queue is full (this side cannot keep up)", d.QPN)
	case endpoint.DropQPType:
		typ := endpoint.QPType(d.Want)
		article := "a"
		if typ == endpoint.RC {
			article = "an"
		}
		return fmt.Sprintf("%v to QPN %#06x, %s %v QP (do both sides run the same transport: --rc, --uc, --ud?)", d.Opcode, d.QPN, article, typ)
	case endpoint.DropQPState:
		return fmt.Sprintf("%v to QPN %#06x in state %v (not connected yet, or in error after a failure)", d.Opcode, d.QPN, endpoint.QPState(d.Want))
	case endpoint.DropSourceAddr:
		return fmt.Sprintf("QPN %#06x is connected to %v, not to this sender (does the peer send from the address of the GID it advertised? check its GID index)", d.QPN, d.Peer.Unmap())
	case endpoint.DropPKey:
		return fmt.Sprintf("P_Key %#04x to QPN %#06x, which has %#04x (not the same partition)", d.Got, d.QPN, d.Want)
	case endpoint.DropQKey:
		return fmt.Sprintf("Q_Key %#08x to QPN %#06x, which expects %#08x", d.Got, d.QPN, d.Want)
	case endpoint.DropResponder:
		return fmt.Sprintf("QPN %#06x discarded %v: %s", d.QPN, d.Opcode, d.Detail)
	case endpoint.DropCompleter:
		return fmt.Sprintf("QPN %#06x ignored %v: %s", d.QPN, d.Opcode, d.Detail)
	}
	return fmt.Sprintf("%v to QPN %#06x", d.Reason, d.QPN)
}
