package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// DCQCN's loop, read from a capture. A switch marks a flow's packets ECN
// CE; the receiver answers with CNPs to the sending QP (the CNP's
// destination QP), which a NIC paces to about one per QP per interval; the
// sender cuts its rate and climbs back. Per direction of each connection
// the Analyzer counts the ECN codepoints of every packet (DirStats.ECN).
// From the first congestion mark or CNP of the capture on, it also follows
// each direction's sending rate: per interval (bytes over the interval's
// length) and per packet (the previous packet's length over the gap since
// it, which is a paced sender's rate), the CNPs the direction was sent and
// their spacing, and for each CNP the first packet after it that opens a
// gap at least reactionDrop slower than the last one before it: the
// sender's reaction, measured from packet spacing. A direction that slows
// to under half its earlier rate in some interval, with neither a mark nor
// a CNP on its connection, is a victim: held back by a neighbour's
// congestion (PFC pausing its priority, a shared queue).
//
// Until the first mark or CNP nothing of this runs, so traffic with no
// congestion pays only the ECN counts; a direction's traffic before then
// is spread evenly over the intervals it spans.

// reactionDrop is the rate drop that counts as the sender's reaction: a
// DCQCN cut is α/2 (α starts at 1, and stays above 0.2 while CNPs keep
// coming), well beyond the jitter of a paced sender's gaps.
const reactionDrop = 0.9

// victimDrop is how far an interval's rate must fall below the direction's
// best earlier interval to make it a victim, and victimMinPackets how many
// packets that best interval must hold to be a rate at all.
const (
	victimDrop       = 0.5
	victimMinPackets = 4
)

// maxDCQCNBins bounds each direction's rate series: past it the interval
// doubles, for every direction at once, so memory stays flat in the
// capture's length.
const maxDCQCNBins = 4096

// maxDCQCNMarks bounds the CE and CNP times each direction keeps for
// drawing; past it they are only counted.
const maxDCQCNMarks = 1 << 16

// DCQCNOptions tune the rate analysis.
type DCQCNOptions struct {
	// Interval is the width of the rate and CE-ratio series (default
	// 100 µs, a few of DCQCN's timer periods). It doubles when a series
	// would pass maxDCQCNBins intervals.
	Interval time.Duration
}

func (o DCQCNOptions) withDefaults() DCQCNOptions {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Microsecond
	}
	return o
}

// ECN codepoints, as the two low bits of the IP traffic class (RFC 3168);
// DirStats.ECN is indexed by them.
const (
	ECNNotECT = 0
	ECNECT1   = 1
	ECNECT0   = 2
	ECNCE     = 3
)

// ECN returns the packet's ECN codepoint (ECNNotECT ... ECNCE), from the IP
// header of the RoCEv2 packet itself (inside a mirror's tunnel, not the
// tunnel's); ok is false when it has no IP header.
func (p *Packet) ECN() (codepoint uint8, ok bool) { return ecnOf(p) }

// ecnOf returns a packet's ECN codepoint, ok false when it has no IP header.
func ecnOf(p *Packet) (uint8, bool) {
	switch {
	case p.has&hasIPv4 != 0:
		return p.Headers.IPv4.TOS & 3, true
	case p.has&hasIPv6 != 0:
		return p.Headers.IPv6.TrafficClass & 3, true
	}
	return 0, false
}

// DCQCNBin is one interval of a direction's series.
type DCQCNBin struct {
	Start      time.Duration // from the first frame of the capture
	Packets    uint32
	CE         uint32
	Bytes      uint64
	FirstFrame uint32 // 0 for the share of traffic from before the analysis began
}

// Rate is the bin's sending rate in bits per second over width.
func (b DCQCNBin) Rate(width time.Duration) float64 {
	return float64(b.Bytes) * 8 / width.Seconds()
}

// CERatio is the share of the bin's packets marked CE.
func (b DCQCNBin) CERatio() float64 {
	if b.Packets == 0 {
		return 0
	}
	return float64(b.CE) / float64(b.Packets)
}

// DCQCNReaction is the sender's answer to one CNP.
type DCQCNReaction struct {
	CNPFrame uint32
	CNPAt    time.Duration // from the first frame
	// SlowFrame is the first packet after the CNP that opens a slower gap;
	// Reaction is its time since the CNP; RateBefore the rate of the last
	// gap before the CNP, RateAfter that of the slower gap (bits per second).
	SlowFrame             uint32
	Reaction              time.Duration
	RateBefore, RateAfter float64
}

// DCQCNRow is the congestion picture of one direction.
type DCQCNRow struct {
	Flow     FlowKey
	Conv     uint32
	Dir      uint8 // 1: A→B, 2: B→A
	Priority int   // the PFC priority its packets travel on (VLAN PCP, else DSCP/8); -1: none
	DSCP     int   // -1: no IP header
	// Since is when the rate analysis began (the capture's first mark or CNP).
	Since time.Duration
	// Packets, Bytes and ECN count every packet of the direction, ECN by
	// codepoint (ECNNotECT ... ECNCE).
	Packets, Bytes uint64
	ECN            [4]uint64
	// CNPs counts those the receiver sent to the direction's QP; CNPFirst
	// and CNPLast are the first and last; MinCNPSpacing the least time
	// between two in a row (0 with fewer than two), MinSpacingFrame the
	// later CNP of that pair.
	CNPs              uint64
	CNPFirst, CNPLast time.Duration
	MinCNPSpacing     time.Duration
	MinSpacingFrame   uint32
	Reactions         []DCQCNReaction
	// NoReaction counts CNPs after which the sender sent on without
	// slowing down (before the next CNP or the end of the capture).
	NoReaction uint64
	// Interval is the width of Bins; Bins the series from the direction's
	// first interval.
	Interval time.Duration
	Bins     []DCQCNBin
	// Victim: slowed to under half its earlier rate with no mark or CNP on
	// its connection; VictimFrame is the first packet of the slow interval.
	Victim      bool
	VictimFrame uint32
	// CETimes and CNPTimes are when its packets were marked (CE or FECN)
	// and when CNPs came for it, the first maxDCQCNMarks of each;
	// MarksDropped counts those left out.
	CETimes, CNPTimes []time.Duration
	MarksDropped      uint64
}

// mark appends t to ts within the bound.
func (r *DCQCNRow) mark(ts *[]time.Duration, t time.Duration) {
	if len(*ts) >= maxDCQCNMarks {
		r.MarksDropped++
		return
	}
	*ts = append(*ts, t)
}

// CERatio is the share of the direction's ECN-capable packets marked CE.
func (r *DCQCNRow) CERatio() float64 {
	capable := r.ECN[ECNECT0] + r.ECN[ECNECT1] + r.ECN[ECNCE]
	if capable == 0 {
		return 0
	}
	return float64(r.ECN[ECNCE]) / float64(capable)
}

// CNPRate is the CNPs per second from the first to the last.
func (r *DCQCNRow) CNPRate() float64 {
	if r.CNPs < 2 || r.CNPLast <= r.CNPFirst {
		return 0
	}
	return float64(r.CNPs-1) / (r.CNPLast - r.CNPFirst).Seconds()
}

// ccFlow follows one direction once the analysis runs.
type ccFlow struct {
	row       DCQCNRow
	dir       *direction
	first     int64 // the bin index of row.Bins[0]
	lastAt    time.Duration
	lastLen   int
	lastFrame uint32
	lastRate  float64 // bits per second of the last gap, 0 until there is one
	sentSince int     // packets since the pending CNP
	pending   bool
	pend      DCQCNReaction
	marked    bool // a CE mark or CNP on the direction's connection
}

// ccState is the Analyzer's part that follows DCQCN.
type ccState struct {
	opts  DCQCNOptions
	width time.Duration
	since time.Duration
	flows []*ccFlow
	scr   DCQCNPacket
}

// DCQCNPacket is what the rate analysis says of one packet (valid until
// the next packet).
type DCQCNPacket struct {
	Rate       float64       // bits per second of the gap since the direction's previous packet; 0: unknown
	CNPSpacing time.Duration // on a CNP: since the previous CNP to the same QP (0: the first)
	Reaction   time.Duration // on the first slower packet after a CNP: the time since it
	CNPFrame   uint32        // ... and that CNP
}

// ccActivate starts the rate analysis at the current packet.
func (a *Analyzer) ccActivate() {
	if a.ccActive {
		return
	}
	a.ccActive = true
	a.cc.opts = a.opts.DCQCN.withDefaults()
	a.cc.width = a.cc.opts.Interval
	a.cc.since = a.now
}

// ccFlowOf returns d's flow state, creating it with d's traffic so far
// spread over the intervals it spans.
// cur, when not nil, is a packet of d already counted in d.st, which the
// series counts itself.
func (a *Analyzer) ccFlowOf(d *direction, cur *Packet) *ccFlow {
	if d.cc != nil {
		return d.cc
	}
	if len(a.cc.flows) >= a.opts.MaxDone {
		// Beyond the bound the analysis follows no new direction: every
		// followed one is in flows, which ccWiden rescales and ccFinish
		// reports.
		return nil
	}
	f := &ccFlow{dir: d}
	f.row = DCQCNRow{Flow: d.flow, Conv: d.conv.id, Dir: d.side + 1, Priority: -1, DSCP: -1, Since: a.cc.since, Interval: a.cc.width}
	d.cc = f
	a.cc.flows = append(a.cc.flows, f)
	st := &d.st
	start, end := st.First, max(st.Last, st.First+1)
	bytes, pkts := st.Bytes, st.Packets
	if cur != nil {
		bytes, pkts, end = bytes-uint64(cur.Length), pkts-1, max(a.now, st.First+1)
	}
	if pkts > 0 {
		// A direction that sent long before the first mark would need more
		// intervals than a series keeps: widen them first.
		for int64((end-start)/a.cc.width) >= maxDCQCNBins {
			a.ccWiden()
		}
		w := a.cc.width
		// Each interval gets its share, rounded so the shares add up to
		// the whole: the running total is rounded, not each part.
		var done time.Duration
		var gotBytes, gotPkts uint64
		spread(start, end, w, func(i int64, part time.Duration) {
			done += part
			share := float64(done) / float64(end-start)
			wantBytes, wantPkts := uint64(float64(bytes)*share+0.5), uint64(float64(pkts)*share+0.5)
			b := f.bin(i, w)
			b.Bytes += wantBytes - gotBytes
			b.Packets += uint32(wantPkts - gotPkts)
			gotBytes, gotPkts = wantBytes, wantPkts
		})
		if d.st.ECNCE > 0 || d.st.CNPs > 0 {
			f.marked = true
		}
		// The rate so far stands for the last gap's: the average over the
		// gaps the packets before cur (or all but the last packet) open.
		switch {
		case cur != nil && end > start:
			f.lastRate = float64(bytes*8) / (end - start).Seconds()
		case cur == nil && pkts > 1 && st.Last > st.First:
			f.lastRate = float64(bytes*8) * float64(pkts-1) / float64(pkts) / (st.Last - st.First).Seconds()
		}
	}
	return f
}

// bin returns the bin of index i, extending the series.
func (f *ccFlow) bin(i int64, w time.Duration) *DCQCNBin {
	if len(f.row.Bins) == 0 {
		f.first = i
	}
	for int64(len(f.row.Bins)) <= i-f.first {
		f.row.Bins = append(f.row.Bins, DCQCNBin{Start: time.Duration(f.first+int64(len(f.row.Bins))) * w})
	}
	return &f.row.Bins[i-f.first]
}

// ccWiden doubles the interval of every series.
func (a *Analyzer) ccWiden() {
	a.cc.width *= 2
	w := a.cc.width
	for _, f := range a.cc.flows {
		old := f.row.Bins
		f.row.Bins, f.row.Interval = nil, w
		first := f.first
		for k, b := range old {
			i := (first + int64(k)) / 2
			nb := f.bin(i, w)
			nb.Packets += b.Packets
			nb.CE += b.CE
			nb.Bytes += b.Bytes
			if nb.FirstFrame == 0 {
				nb.FirstFrame = b.FirstFrame
			}
		}
	}
}

// ccPacket follows a packet of d (not a CNP) while the analysis runs.
func (a *Analyzer) ccPacket(d *direction, p *Packet) {
	f := a.ccFlowOf(d, p)
	if f == nil {
		return
	}
	now, frame := a.now, a.frame
	r := &f.row
	r.Conv, r.Dir = d.conv.id, d.side+1
	if r.Priority < 0 {
		if prio, _, ok := p.Priority(); ok {
			r.Priority = int(prio)
		}
		switch {
		case p.has&hasIPv4 != 0:
			r.DSCP = int(p.Headers.IPv4.TOS >> 2)
		case p.has&hasIPv6 != 0:
			r.DSCP = int(p.Headers.IPv6.TrafficClass >> 2)
		}
	}
	sc := &a.cc.scr
	*sc = DCQCNPacket{}
	p.Analysis.DCQCN = sc
	if f.lastFrame != 0 && now > f.lastAt {
		rate := float64(f.lastLen*8) / (now - f.lastAt).Seconds()
		sc.Rate = rate
		if f.pending && f.lastAt >= f.pend.CNPAt && rate < f.pend.RateBefore*reactionDrop {
			rx := f.pend
			rx.SlowFrame, rx.Reaction, rx.RateAfter = f.lastFrame, f.lastAt-rx.CNPAt, rate
			r.Reactions = append(r.Reactions, rx)
			f.pending = false
			a.ccMarkReaction(rx)
		}
		f.lastRate = rate
	}
	if f.pending {
		f.sentSince++
	}
	i := int64(now / a.cc.width)
	if f.first > i && len(r.Bins) > 0 { // time went back: count it in the first bin
		i = f.first
	}
	for len(r.Bins) > 0 && i-f.first >= maxDCQCNBins { // a jump far ahead may need several doublings
		a.ccWiden()
		i = int64(now / a.cc.width)
	}
	b := f.bin(i, a.cc.width)
	b.Packets++
	b.Bytes += uint64(p.Length)
	if b.FirstFrame == 0 {
		b.FirstFrame = frame
	}
	if ecn, ok := ecnOf(p); ok && ecn == ECNCE || p.Headers.BTH.FECN {
		b.CE++
		f.marked = true
		r.mark(&r.CETimes, now)
	}
	f.lastAt, f.lastLen, f.lastFrame = now, p.Length, frame
}

// ccMarkReaction shows a reaction on the packet that ends the first slower
// gap (the gap opens at the previous packet of the direction, the one the
// table names).
func (a *Analyzer) ccMarkReaction(rx DCQCNReaction) {
	if p := a.pkt; p != nil && p.Analysis.DCQCN != nil {
		p.Analysis.DCQCN.Reaction, p.Analysis.DCQCN.CNPFrame = rx.Reaction, rx.CNPFrame
	}
}

// ccCNP counts a CNP sent to data direction d (the CNP's peer).
func (a *Analyzer) ccCNP(d *direction) {
	a.ccActivate()
	f := a.ccFlowOf(d, nil)
	if f == nil {
		return
	}
	f.marked = true
	r := &f.row
	now := a.now
	sc := &a.cc.scr
	*sc = DCQCNPacket{}
	if a.pkt != nil {
		a.pkt.Analysis.DCQCN = sc
	}
	if r.CNPs > 0 {
		gap := now - r.CNPLast
		sc.CNPSpacing = gap
		if r.CNPs == 1 || gap < r.MinCNPSpacing {
			r.MinCNPSpacing, r.MinSpacingFrame = gap, a.frame
		}
	} else {
		r.CNPFirst = now
	}
	r.CNPs++
	r.CNPLast = now
	r.mark(&r.CNPTimes, now)
	if f.pending {
		a.ccNoReaction(f)
	}
	if f.lastRate > 0 {
		f.pending, f.sentSince = true, 0
		f.pend = DCQCNReaction{CNPFrame: a.frame, CNPAt: now, RateBefore: f.lastRate}
	}
}

// ccNoReaction closes a pending CNP the sender did not slow down for: if
// it sent on after it, that is a finding.
func (a *Analyzer) ccNoReaction(f *ccFlow) {
	f.pending = false
	if f.sentSince >= 2 {
		f.row.NoReaction++
		a.finding(Finding{Kind: FindDCQCNNoReaction, Frame: f.pend.CNPFrame, Conv: f.row.Conv})
	}
}

// ccFinish settles pending CNPs, takes the ECN counts and finds the victims.
func (a *Analyzer) ccFinish() {
	for _, f := range a.cc.flows {
		if f.pending {
			a.ccNoReaction(f)
		}
		d := f.dir
		r := &f.row
		r.Packets, r.Bytes, r.ECN = d.st.Packets, d.st.Bytes, d.st.ECN
		if peer := d.peer(); peer != nil && peer.cc != nil && peer.cc.marked || d.st.ECNCE > 0 || d.st.FECN > 0 {
			f.marked = true
		}
		if f.marked || d.svc == layers.ServiceCNP || len(r.Bins) < 3 {
			continue
		}
		// Intervals strictly inside the direction's life are whole ones.
		var best float64
		for _, b := range r.Bins[1 : len(r.Bins)-1] {
			rate := b.Rate(r.Interval)
			if best > 0 && rate < best*victimDrop && b.FirstFrame != 0 {
				r.Victim, r.VictimFrame = true, b.FirstFrame
				a.finding(Finding{Kind: FindDCQCNVictim, Frame: b.FirstFrame, Conv: r.Conv})
				break
			}
			if b.Packets >= victimMinPackets {
				best = max(best, rate)
			}
		}
	}
}

// DCQCN returns the congestion picture of every direction the rate
// analysis followed, in order of first sight, and the interval of their
// series; nil when the capture had no congestion mark or CNP.
func (a *Analyzer) DCQCN() []DCQCNRow {
	out := make([]DCQCNRow, 0, len(a.cc.flows))
	for _, f := range a.cc.flows {
		r := f.row
		if !a.finished {
			r.Packets, r.Bytes, r.ECN = f.dir.st.Packets, f.dir.st.Bytes, f.dir.st.ECN
		}
		out = append(out, r)
	}
	return out
}
