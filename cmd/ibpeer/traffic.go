package main

// The traffic loop shared by ibpeer write|read|send|atomic and ibpeer
// perftest: work requests posted up to a TX depth per QP, completions
// polled from one CQ, a timestamp per post and per completion (perftest's
// tposted and tcompleted), and the figures perftest derives from them.
// Also the fault-injecting wire of --loss/--reorder/--dup, the recording
// wire of --pcap and the verification patterns.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// trafficConfig is one run of the loop.
type trafficConfig struct {
	cq    *endpoint.CQ                   // the send CQ of every QP in qps
	qps   []*endpoint.QP                 // driven round-robin
	depth int                            // outstanding WRs per QP
	iters int                            // WRs per QP
	stall time.Duration                  // fail when no completion arrives for this long
	next  func(q, i int) endpoint.SendWR // the i-th WR of QP q; the loop sets ID
}

// trafficTimes holds a run's timestamps, measured from its start: posted
// and completed in the global order of posts and of completions (what
// perftest keeps), and each WR's own post-to-completion latency, indexed
// q·iters+i.
type trafficTimes struct {
	posted, completed []time.Duration
	latency           []time.Duration
}

// wcError is a completion with an error status.
type wcError struct {
	q, i int
	wc   endpoint.WC
}

func (e *wcError) Error() string {
	s := fmt.Sprintf("QP %d (QPN %#06x), work request %d: completed %v", e.q, e.wc.QPN, e.i, e.wc.Status)
	if e.wc.Vendor != "" {
		s += " (" + e.wc.Vendor + ")"
	}
	return s
}

// errStall says that completions stopped coming.
var errStall = errors.New("no completion")

// runTraffic posts cfg.iters WRs on each QP, at most cfg.depth outstanding
// per QP, and returns when all completed; the first completion with an
// error status, a failed post or a stall ends it with an error.
func runTraffic(ctx context.Context, cfg trafficConfig) (trafficTimes, error) {
	nq := len(cfg.qps)
	total := nq * cfg.iters
	t := trafficTimes{
		posted:    make([]time.Duration, 0, total),
		completed: make([]time.Duration, 0, total),
		latency:   make([]time.Duration, total),
	}
	posted, done := make([]int, nq), make([]int, nq)
	postAt := make([]time.Duration, total)
	wcs := make([]endpoint.WC, 64)
	stall := cfg.stall
	if stall <= 0 {
		stall = 10 * time.Second
	}
	timer := time.NewTimer(stall)
	defer timer.Stop()
	start := time.Now()
	for len(t.completed) < total {
		for q := range nq {
			for posted[q] < cfg.iters && posted[q]-done[q] < cfg.depth {
				i := posted[q]
				wr := cfg.next(q, i)
				wr.ID = uint64(q)<<32 | uint64(i)
				now := time.Since(start)
				postAt[q*cfg.iters+i] = now
				t.posted = append(t.posted, now)
				if err := cfg.qps[q].PostSend(&wr); err != nil {
					return t, fmt.Errorf("QP %d, work request %d: %w", q, i, err)
				}
				posted[q]++
			}
		}
		n := cfg.cq.Poll(wcs)
		if n == 0 {
			select {
			case <-cfg.cq.Notify():
			case <-ctx.Done():
				return t, ctx.Err()
			case <-timer.C:
				return t, fmt.Errorf("%w for %v (is the peer still there?): %d of %d work requests completed", errStall, stall, len(t.completed), total)
			}
			continue
		}
		now := time.Since(start)
		for _, wc := range wcs[:n] {
			q, i := int(wc.ID>>32), int(uint32(wc.ID))
			if wc.Status != endpoint.StatusSuccess {
				return t, &wcError{q: q, i: i, wc: wc}
			}
			if q >= nq || i >= cfg.iters {
				return t, fmt.Errorf("completion for unknown work request %#x", wc.ID)
			}
			done[q]++
			t.completed = append(t.completed, now)
			t.latency[q*cfg.iters+i] = now - postAt[q*cfg.iters+i]
		}
		timer.Reset(stall)
	}
	if err := cfg.cq.Err(); err != nil {
		return t, err
	}
	return t, nil
}

// add appends r as if it had started the moment t's last completion came:
// the time between runs (verification traffic) is not counted.
func (t *trafficTimes) add(r trafficTimes) {
	if len(r.posted) == 0 {
		return
	}
	var off time.Duration
	if n := len(t.completed); n > 0 {
		off = t.completed[n-1] - r.posted[0]
	} else {
		off = -r.posted[0]
	}
	for _, p := range r.posted {
		t.posted = append(t.posted, p+off)
	}
	for _, c := range r.completed {
		t.completed = append(t.completed, c+off)
	}
}

// perfPeakMax is the largest run whose peak perftest computes (its -N help:
// "default with peak up to iters=20000"); above it the peak is the average.
const perfPeakMax = 20000

// seconds returns the run's duration as perftest takes it (last completion
// minus first post) and the best time per message: the smallest
// (tcompleted[j] − tposted[i]) / (j − i + 1) over i ≤ j, perftest's
// opt_delta.
func (t *trafficTimes) seconds() (total, best float64) {
	n := min(len(t.posted), len(t.completed))
	if n == 0 {
		return 0, 0
	}
	total = (t.completed[n-1] - t.posted[0]).Seconds()
	if n > perfPeakMax {
		return total, total / float64(n)
	}
	bestD := t.completed[0] - t.posted[0]
	for i := range n {
		for j := i; j < n; j++ {
			if d := (t.completed[j] - t.posted[i]) / time.Duration(j-i+1); d < bestD {
				bestD = d
			}
		}
	}
	return total, bestD.Seconds()
}

// bwRow turns a run of messages of size bytes into perftest's table row,
// in Gb/s or (mbps) MB/s; iters is what the row prints (per QP, as
// perftest), msgs the messages that moved in all.
func (t *trafficTimes) bwRow(size uint64, iters, msgs int, mbps bool) perfBWRow {
	total, best := t.seconds()
	avg, rate := perfBWFigures(size, uint64(msgs), total, mbps)
	var peak float64
	if best > 0 {
		peak, _ = perfBWFigures(size, 1, best, mbps)
	}
	return perfBWRow{Bytes: size, Iterations: uint64(iters), PeakGbps: peak, AvgGbps: avg, MsgRate: rate}
}

// latencyMicros returns the per-WR latencies in microseconds.
func (t *trafficTimes) latencyMicros() []float64 {
	us := make([]float64, len(t.latency))
	for i, d := range t.latency {
		us[i] = float64(d) / float64(time.Microsecond)
	}
	return us
}

// fillPattern fills b with bytes that depend on seed (a PCG stream), so
// that every message of a verified run is different from the others.
func fillPattern(b []byte, seed uint64) {
	r := rand.NewPCG(seed, 0x1b1e)
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		copy(b[i:], w[:])
	}
}

// firstDiff returns the offset of the first byte where got and want differ,
// or -1.
func firstDiff(got, want []byte) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}

// activeMTU is the path MTU a port on addr's interface would have, found as
// rxe finds its active MTU (layers.RXEPortMTU: 1500 gives 1024, loopback
// 4096). An address on no interface gives 1024.
func activeMTU(addr netip.Addr) int {
	ifs, err := net.Interfaces()
	if err != nil {
		return 1024
	}
	addr = addr.Unmap()
	found := 0 // the MTU of an interface whose prefix holds addr (127.0.0.2 on lo)
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			p, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(p.IP)
			if !ok {
				continue
			}
			ones, _ := p.Mask.Size()
			switch {
			case ip.Unmap() == addr:
				return ibMTUBelow(ifi.MTU)
			case found == 0 && netip.PrefixFrom(ip.Unmap(), ones).Contains(addr):
				found = ifi.MTU
			}
		}
	}
	if found > 0 {
		return ibMTUBelow(found)
	}
	return 1024
}

// ibMTUBelow is the active MTU rxe gives a port on a netdev of this MTU, in
// bytes; 256 where the kernel would find none (ibpeer still needs one).
func ibMTUBelow(netdev int) int {
	if m, ok := layers.RXEPortMTU(netdev); ok {
		return m.Bytes()
	}
	return layers.MTU256.Bytes()
}

// pathMTU converts an MTU in bytes (256 … 4096, a power of two) to its
// code.
func pathMTU(mtu int) (layers.PathMTU, error) {
	if m, ok := layers.PathMTUOf(mtu); ok {
		return m, nil
	}
	return 0, fmt.Errorf("MTU %d: want 256, 512, 1024, 2048 or 4096", mtu)
}

// pcapWire records every datagram its Wire sends and receives into a pcap
// file of raw IP packets (link type 101), rebuilding the IP and UDP headers
// a UDP socket does not show: IPv4 with DF set and identification 0 — what
// the UDP wire sends, so the ICRCs of ibpeer's own packets verify — the
// datagram's traffic class, its hop limit or 64, and UDP checksum 0 (IPv6:
// computed). A received packet's identification and TTL are not visible to
// a socket; the file holds 0 and 64, which is right for ibpeer's peers and
// makes a Linux rxe peer's IPv4 ICRCs fail to verify (rxe numbers its IPv4
// packets).
type pcapWire struct {
	endpoint.Wire
	mu     sync.Mutex
	w      *capture.Writer
	frame  []byte
	err    error // the first write error
	closed bool
	n      int
}

func newPcapWire(inner endpoint.Wire, path string) (*pcapWire, error) {
	w, err := capture.Create(path, capture.FormatPcap, layers.LinkTypeRaw, true)
	if err != nil {
		return nil, err
	}
	return &pcapWire{Wire: inner, w: w}, nil
}

func (p *pcapWire) ReadBatch(dgs []endpoint.Datagram) (int, error) {
	n, err := p.Wire.ReadBatch(dgs)
	p.record(dgs[:n], false)
	return n, err
}

func (p *pcapWire) WriteBatch(dgs []endpoint.Datagram) (int, error) {
	n, err := p.Wire.WriteBatch(dgs) // fills the ICRCs first
	p.record(dgs[:max(n, 0)], true)
	return n, err
}

// record writes dgs; sent ones leave from the wire's own address and port
// (a UDP socket bound to 4791 sends from 4791, whatever Datagram.Src says).
func (p *pcapWire) record(dgs []endpoint.Datagram, sent bool) {
	if len(dgs) == 0 {
		return
	}
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, dg := range dgs {
		if p.closed || p.err != nil {
			return
		}
		if dg.Drop != 0 {
			continue // not read whole: no bytes to record
		}
		if local := p.Wire.LocalAddr(); sent {
			if local.Addr().IsUnspecified() {
				local = netip.AddrPortFrom(dg.Src.Addr(), local.Port())
			}
			dg.Src = local
		}
		p.frame = ipFrame(p.frame[:0], dg)
		p.err = p.w.WritePacket(capture.Packet{Data: p.frame, LinkType: layers.LinkTypeRaw,
			Time: now, Length: len(p.frame)})
		p.n++
	}
}

// Close closes the wire, then the file.
func (p *pcapWire) Close() error {
	err := p.Wire.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return err
	}
	p.closed = true
	return errors.Join(err, p.err, p.w.Close())
}

// ipFrame appends dg as an IPv4 or IPv6 packet with its UDP header.
func ipFrame(b []byte, dg endpoint.Datagram) []byte {
	src, dst := dg.Src.Addr().Unmap(), dg.Dst.Addr().Unmap()
	hop := dg.HopLimit
	if hop == 0 {
		hop = 64
	}
	udpLen := 8 + len(dg.Payload)
	start := len(b)
	if src.Is4() && dst.Is4() {
		b = append(b, 0x45, dg.TrafficClass)
		b = binary.BigEndian.AppendUint16(b, uint16(20+udpLen))
		b = append(b, 0, 0, 0x40, 0, hop, 17, 0, 0) // identification 0, DF, TTL, UDP, checksum
		s4, d4 := src.As4(), dst.As4()
		b = append(append(b, s4[:]...), d4[:]...)
		binary.BigEndian.PutUint16(b[start+10:], inetChecksum(0, b[start:start+20]))
	} else {
		tc := uint32(dg.TrafficClass)
		b = binary.BigEndian.AppendUint32(b, 6<<28|tc<<20)
		b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
		b = append(b, 17, hop)
		s16, d16 := src.As16(), dst.As16()
		b = append(append(b, s16[:]...), d16[:]...)
	}
	u := len(b)
	b = binary.BigEndian.AppendUint16(b, dg.Src.Port())
	b = binary.BigEndian.AppendUint16(b, dg.Dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = append(b, 0, 0)
	b = append(b, dg.Payload...)
	if !(src.Is4() && dst.Is4()) {
		// The IPv6 pseudo-header: addresses, length, next header.
		var sum uint32
		sum = inetSum(sum, b[start+8:start+40])
		sum += uint32(udpLen) + 17
		c := inetChecksum(sum, b[u:])
		if c == 0 {
			c = 0xFFFF
		}
		binary.BigEndian.PutUint16(b[u+6:], c)
	}
	return b
}

// inetSum adds b to a ones'-complement sum as 16-bit words.
func inetSum(sum uint32, b []byte) uint32 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	return sum
}

// inetChecksum finishes the Internet checksum of b on top of sum.
func inetChecksum(sum uint32, b []byte) uint16 {
	sum = inetSum(sum, b)
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}
