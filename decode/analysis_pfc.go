package decode

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// The pause timeline. A PAUSE or PFC frame from port X asks X's link
// partner to stop sending (on the priorities the frame enables) for q
// quanta of 512 bit times each: the length of a quantum is the link
// speed's, so without a speed a timeline is quanta only. A pause frame that
// arrives while a pause is in effect restarts the timer from its own time
// (802.3 Annex 31B: a refresh extends, or shortens, the pause); a frame
// of zero quanta ends it. Each port (by source MAC) and priority keeps its
// pause intervals, with their totals, the paused time per second and per
// storm window, and the RoCE packets sent to that port on a paused
// priority.

// Link speeds --link-speed names.
var linkSpeeds = map[string]uint64{"10G": 10e9, "25G": 25e9, "40G": 40e9, "50G": 50e9, "100G": 100e9, "200G": 200e9, "400G": 400e9}

// ParseLinkSpeed reads a link speed as --link-speed takes it (10G, 25G,
// 40G, 50G, 100G, 200G, 400G) and returns bits per second.
func ParseLinkSpeed(s string) (uint64, error) {
	if v, ok := linkSpeeds[strings.ToUpper(s)]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("link speed %q: want 10G, 25G, 40G, 50G, 100G, 200G or 400G", s)
}

// PFCOptions tune the pause timeline.
type PFCOptions struct {
	// LinkSpeed is the speed of the links the pause frames travel on, in
	// bits per second; 0: unknown, and durations stay unknown (quanta only).
	LinkSpeed uint64
	// StormWindow is the window a storm is measured over (default 1 s),
	// StormPercent the share of it a priority must be paused to be a storm
	// (default 50).
	StormWindow  time.Duration
	StormPercent float64
}

func (o PFCOptions) withDefaults() PFCOptions {
	if o.StormWindow <= 0 {
		o.StormWindow = time.Second
	}
	if o.StormPercent <= 0 {
		o.StormPercent = 50
	}
	return o
}

// QuantumNanos is the length of one pause quantum at the link speed in
// nanoseconds (5.12 at 100G), 0 when the speed is unknown.
func (o PFCOptions) QuantumNanos() float64 {
	if o.LinkSpeed == 0 {
		return 0
	}
	return layers.PauseQuantumBits * 1e9 / float64(o.LinkSpeed)
}

// pauseDuration is q quanta at the link speed, exact to the nanosecond
// (a quantum is 5.12 ns at 100G: rounding it first would drift).
func (o PFCOptions) pauseDuration(q uint16) time.Duration {
	return time.Duration(uint64(q) * layers.PauseQuantumBits * 1e9 / o.LinkSpeed)
}

// inFlightWindow is how long after a pause a frame from the paused sender
// may still show at the capture point without breaking the pause: one
// maximum frame (9216 bytes and its 20 bytes of preamble and gap) already
// on the wire. A capture point closer to the pausing port than the sender
// also sees the pause before the sender does; that lead is the link's
// delay, which a capture cannot tell.
func (o PFCOptions) inFlightWindow() time.Duration {
	return time.Duration((9216 + 20) * 8 * 1e9 / float64(o.LinkSpeed))
}

// PFCAll is the priority of an 802.3x PAUSE: every priority.
const PFCAll = layers.PFCPriorities

// PFCInterval is one pause: from the frame that started it to the frame of
// zero quanta that ended it or to the expiry of the last refresh.
type PFCInterval struct {
	Start, End         time.Duration // from the first frame of the capture
	StartFrame         uint32
	EndFrame           uint32 // the resume frame, 0 when the pause expired
	Refreshes          int    // pause frames that extended it
	CutByCaptureEnding bool   // still in effect when the capture ended (End is the last frame's time)
}

// Duration is the interval's length.
func (iv PFCInterval) Duration() time.Duration { return iv.End - iv.Start }

// PFCStorm is a storm window: a priority paused more than StormPercent of it.
type PFCStorm struct {
	Start   time.Duration // the window's start, from the first frame
	Paused  time.Duration
	Percent float64
}

// PFCViolation is a RoCE packet sent to a port on a priority that port had paused.
type PFCViolation struct {
	Frame      uint32
	PauseFrame uint32        // the frame that started the pause
	After      time.Duration // since the pause began
	InFlight   bool          // within a frame time of the pause: may be a frame already on the wire
}

// PFCRow is the pause timeline of one port and priority (PFCAll: 802.3x PAUSE).
type PFCRow struct {
	Port     [6]byte
	Priority int
	// Frames counts the pause frames that named the priority; Resumes
	// those of zero quanta; Refreshes those that came while it was paused.
	Frames, Resumes, Refreshes uint64
	MaxQuanta                  uint16
	// Durations are known only with a link speed.
	DurationsKnown bool
	Intervals      []PFCInterval
	Total, Longest time.Duration
	// PerSecond is the paused time in each second of the capture (index 0:
	// the first second), up to the last second with a pause.
	PerSecond  []time.Duration
	Storms     []PFCStorm
	Violations []PFCViolation
}

// PausedFraction is the share of the capture's duration the priority was paused.
func (r *PFCRow) PausedFraction(captured time.Duration) float64 {
	if captured <= 0 {
		return 0
	}
	return float64(r.Total) / float64(captured)
}

// pfcTrack follows one port and priority.
type pfcTrack struct {
	row        PFCRow
	paused     bool
	start      time.Duration
	until      time.Duration
	startFrame uint32
	refreshes  int
	windows    map[int64]time.Duration
	stormFrame map[int64]uint32 // a pause frame in effect in each window, for the finding
}

// pfcTimeline is the Analyzer's part that follows pauses.
type pfcTimeline struct {
	opts   PFCOptions
	tracks map[pfcKey]*pfcTrack
	order  []pfcKey
}

type pfcKey struct {
	port [6]byte
	prio int
}

func (t *pfcTimeline) track(port []byte, prio int) *pfcTrack {
	k := pfcKey{prio: prio}
	copy(k.port[:], port)
	tr := t.tracks[k]
	if tr == nil {
		if t.tracks == nil {
			t.tracks = map[pfcKey]*pfcTrack{}
		}
		tr = &pfcTrack{row: PFCRow{Port: k.port, Priority: prio, DurationsKnown: t.opts.LinkSpeed != 0}}
		t.tracks[k] = tr
		t.order = append(t.order, k)
	}
	return tr
}

// pause takes a PAUSE or PFC frame.
func (a *Analyzer) pfcPause(p *Packet) {
	t := &a.pfc
	a.pfcActive = true
	m := &p.Headers.MACControl
	src := p.Headers.Ethernet.SrcMAC
	switch {
	case m.Opcode == layers.MACControlPause && m.HasPauseTime():
		a.pfcRequest(t.track(src, PFCAll), m.PauseTime, p)
	case m.Opcode == layers.MACControlPFC:
		for prio := range layers.PFCPriorities {
			if m.Enabled(prio) && m.HasPauseTimeOf(prio) {
				a.pfcRequest(t.track(src, prio), m.PauseTimes[prio], p)
			}
		}
	}
}

// pfcRequest applies one priority's pause time q from frame p.
func (a *Analyzer) pfcRequest(tr *pfcTrack, q uint16, p *Packet) {
	t := &a.pfc
	now := p.RelTime
	r := &tr.row
	r.Frames++
	r.MaxQuanta = max(r.MaxQuanta, q)
	if t.opts.LinkSpeed == 0 {
		if q == 0 {
			r.Resumes++
		}
		return
	}
	tr.expire(t, now)
	frame := uint32(p.Number)
	switch {
	case q == 0 && tr.paused:
		r.Resumes++
		p.Analysis.PFC |= PFCResume
		tr.close(t, now, frame, false)
	case q == 0:
		r.Resumes++ // nothing to resume
	case tr.paused:
		r.Refreshes++
		tr.refreshes++
		p.Analysis.PFC |= PFCRefresh
		tr.until = now + t.opts.pauseDuration(q)
	default:
		tr.paused, tr.start, tr.until, tr.startFrame, tr.refreshes = true, now, now+t.opts.pauseDuration(q), frame, 0
		p.Analysis.PFC |= PFCStart
	}
	if tr.paused {
		tr.markWindows(t, now, frame)
	}
}

// expire ends the pause if it ran out before now.
func (tr *pfcTrack) expire(t *pfcTimeline, now time.Duration) {
	if tr.paused && tr.until <= now {
		tr.close(t, tr.until, 0, false)
	}
}

// close ends the pause at end, by frame (0: it expired).
func (tr *pfcTrack) close(t *pfcTimeline, end time.Duration, frame uint32, cut bool) {
	r := &tr.row
	end = max(end, tr.start) // timestamps that went back in time
	iv := PFCInterval{Start: tr.start, End: end, StartFrame: tr.startFrame, EndFrame: frame, Refreshes: tr.refreshes, CutByCaptureEnding: cut}
	r.Intervals = append(r.Intervals, iv)
	d := iv.Duration()
	r.Total += d
	r.Longest = max(r.Longest, d)
	tr.paused = false
	// Spread the interval over the seconds and storm windows it covers.
	spread(iv.Start, iv.End, time.Second, func(i int64, d time.Duration) {
		for int64(len(r.PerSecond)) <= i {
			r.PerSecond = append(r.PerSecond, 0)
		}
		r.PerSecond[i] += d
	})
	spread(iv.Start, iv.End, t.opts.StormWindow, func(i int64, d time.Duration) {
		if tr.windows == nil {
			tr.windows = map[int64]time.Duration{}
		}
		tr.windows[i] += d
	})
}

// markWindows remembers a pause frame in effect in each window the pause
// may reach, so a storm's finding names one.
func (tr *pfcTrack) markWindows(t *pfcTimeline, now time.Duration, frame uint32) {
	if tr.stormFrame == nil {
		tr.stormFrame = map[int64]uint32{}
	}
	w := t.opts.StormWindow
	for i := int64(now / w); i <= int64(tr.until/w); i++ {
		if _, ok := tr.stormFrame[i]; !ok {
			tr.stormFrame[i] = frame
		}
	}
}

// spread calls add with the part of [start, end) in each window of size w.
func spread(start, end, w time.Duration, add func(i int64, d time.Duration)) {
	for s := start; s < end; {
		i := int64(s / w)
		e := min(end, time.Duration(i+1)*w)
		add(i, e-s)
		s = e
	}
}

// pfcCheck looks at a RoCE packet: was its priority paused at the port it
// was sent to (its Ethernet destination, the pausing link partner)?
func (a *Analyzer) pfcCheck(p *Packet) {
	t := &a.pfc
	prio, _, ok := p.Priority()
	if !ok {
		return
	}
	p.Analysis.PFC |= PFCPriority
	if t.opts.LinkSpeed == 0 {
		return
	}
	var k pfcKey
	copy(k.port[:], p.Headers.Ethernet.DstMAC)
	now := p.RelTime
	for _, pr := range [2]int{int(prio), PFCAll} {
		k.prio = pr
		tr := t.tracks[k]
		if tr == nil {
			continue
		}
		tr.expire(t, now)
		if !tr.paused || now < tr.start {
			continue
		}
		v := PFCViolation{Frame: uint32(p.Number), PauseFrame: tr.startFrame, After: now - tr.start}
		v.InFlight = v.After <= t.opts.inFlightWindow()
		tr.row.Violations = append(tr.row.Violations, v)
		p.Analysis.PFCPausedFor = v.After
		kind := FindPFCSentWhilePaused
		if v.InFlight {
			kind = FindPFCInFlight
		}
		a.finding(Finding{Kind: kind, Frame: uint32(p.Number), Ref: tr.startFrame})
		return
	}
}

// pfcFinish closes the pauses still in effect and finds the storms.
func (a *Analyzer) pfcFinish() {
	t := &a.pfc
	for _, k := range t.order {
		tr := t.tracks[k]
		if tr.paused {
			if tr.until <= a.now {
				tr.close(t, tr.until, 0, false)
			} else {
				tr.close(t, a.now, 0, true)
			}
		}
		idx := make([]int64, 0, len(tr.windows))
		for i := range tr.windows {
			idx = append(idx, i)
		}
		sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
		w := t.opts.StormWindow
		for _, i := range idx {
			d := tr.windows[i]
			pct := 100 * float64(d) / float64(w)
			if pct > t.opts.StormPercent {
				tr.row.Storms = append(tr.row.Storms, PFCStorm{Start: time.Duration(i) * w, Paused: d, Percent: pct})
				a.finding(Finding{Kind: FindPFCStorm, Frame: tr.stormFrame[i]})
			}
		}
	}
}

// PFC returns the pause timeline of every port and priority that sent or
// was named by a pause frame, in order of appearance, and how long the
// capture lasted (first to last frame).
func (a *Analyzer) PFC() ([]PFCRow, time.Duration) {
	out := make([]PFCRow, 0, len(a.pfc.order))
	for _, k := range a.pfc.order {
		out = append(out, a.pfc.tracks[k].row)
	}
	return out, a.now
}

// PFCOptions returns the options the timeline runs with (defaults filled in).
func (a *Analyzer) PFCOptions() PFCOptions { return a.pfc.opts }

// SetLinkSpeed sets the link speed before the first packet, for a speed
// learned from the capture file (pcapng if_speed).
func (a *Analyzer) SetLinkSpeed(bps uint64) { a.pfc.opts.LinkSpeed = bps }

// PFCFlags say what a pause frame did (ibwire.analysis.pfc.*).
type PFCFlags uint8

// Pause frame effects.
const (
	PFCStart   PFCFlags = 1 << iota // started a pause on some priority
	PFCRefresh                      // extended a pause in effect
	PFCResume                       // ended a pause in effect (zero quanta)
	// PFCPriority marks a RoCE packet of a capture with pause frames:
	// its priority is shown (ibwire.analysis.pfc.priority).
	PFCPriority
)

// PrioritySource says where a packet's priority came from.
type PrioritySource uint8

// Priority sources.
const (
	PriorityNone PrioritySource = iota
	PriorityVLAN                // the 802.1Q PCP
	PriorityDSCP                // the IP DSCP, by the default map DSCP/8 (what mlx5's trust dscp mode uses unless configured)
)

func (s PrioritySource) String() string {
	switch s {
	case PriorityVLAN:
		return "vlan"
	case PriorityDSCP:
		return "dscp"
	}
	return ""
}

// Priority is the PFC priority a RoCE packet travels on: its VLAN tag's
// PCP, else its DSCP by the usual map (DSCP/8: DSCP 26, RoCE's common
// choice, is priority 3). ok is false for packets that are not RoCE.
func (p *Packet) Priority() (prio uint8, src PrioritySource, ok bool) {
	switch {
	case p.has&hasBTH == 0 || p.has&hasEthernet == 0:
		return 0, PriorityNone, false
	case p.has&hasDot1Q != 0:
		return p.Headers.Dot1Q.Priority, PriorityVLAN, true
	case p.has&hasIPv4 != 0:
		return p.Headers.IPv4.TOS >> 5, PriorityDSCP, true
	case p.has&hasIPv6 != 0:
		return p.Headers.IPv6.TrafficClass >> 5, PriorityDSCP, true
	case p.has&hasGRH != 0:
		return p.Headers.GRH.TClass >> 5, PriorityDSCP, true
	}
	return 0, PriorityNone, false
}
