package craft

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// DCQCN congestion control, as a capture shows it. A switch marks the
// packets of a flow ECN CE when its queue builds; the receiver's NIC (the
// notification point) answers a CE packet with a CNP to the sending QP, at
// most one per QP per CNP interval; the sender's NIC (the reaction point)
// cuts its rate when a CNP arrives and climbs back on timers and byte
// counters. The model is the one of Zhu et al., "Congestion Control for
// Large-Scale RDMA Deployments" (SIGCOMM 2015), with the parameter names
// of the NICs that run it (mlx5's rpg_time_reset, rpg_byte_reset,
// rpg_ai_rate, rpg_hai_rate, dce_tcp_g, dce_tcp_rtt, min_time_between_cnps):
//
//   - on a CNP: Rt = Rc; Rc = Rc·(1 − α/2); α = (1 − g)·α + g; the
//     increase timer, the byte counter and both stage counts restart;
//   - every AlphaTimer (K) with no CNP: α = (1 − g)·α;
//   - every IncreaseTimer (T) the timer stage count i goes up, every
//     ByteCounter (B) bytes sent the byte stage count j: each is a rate
//     increase event. While max(i, j) < F it is fast recovery,
//     Rc = (Rt + Rc)/2; when min(i, j) > F hyper increase, Rt += i·R_HAI,
//     else additive increase, Rt += R_AI; then Rc = (Rt + Rc)/2.
//
// A CNP takes effect ReactionDelay after it reaches the sender. A paced
// sender spaces its packets by their length at its current rate, so the
// first packet sent at or after the cut starts the first longer gap: an
// observer measures the reaction from packet spacing, within one packet
// spacing of ReactionDelay.

// DCQCN holds a reaction point's parameters. Zero fields take the paper's
// values (mlx5's where the paper gives none).
type DCQCN struct {
	LineRate      float64       // bits per second: the rate before any CNP and the ceiling; 0: 1 Gb/s
	MinRate       float64       // bits per second: no cut goes below it; 0: 1 Mb/s (rpg_min_rate)
	G             float64       // α's gain g; 0: 1/256
	InitialAlpha  float64       // α before the first CNP; 0: 1
	AlphaTimer    time.Duration // K; 0: 55 µs
	IncreaseTimer time.Duration // T; 0: 55 µs
	ByteCounter   uint64        // B in bytes; 0: 10 MiB
	FastRecovery  int           // F; 0: 5
	AI, HAI       float64       // R_AI and R_HAI in bits per second; 0: 5 Mb/s and 50 Mb/s
	ReactionDelay time.Duration // from a CNP's arrival at the sender to its cut
}

func (d DCQCN) withDefaults() DCQCN {
	def := func(v *float64, x float64) {
		if *v == 0 {
			*v = x
		}
	}
	def(&d.LineRate, 1e9)
	def(&d.MinRate, 1e6)
	def(&d.G, 1.0/256)
	def(&d.InitialAlpha, 1)
	def(&d.AI, 5e6)
	def(&d.HAI, 50e6)
	if d.AlphaTimer == 0 {
		d.AlphaTimer = 55 * time.Microsecond
	}
	if d.IncreaseTimer == 0 {
		d.IncreaseTimer = 55 * time.Microsecond
	}
	if d.ByteCounter == 0 {
		d.ByteCounter = 10 << 20
	}
	if d.FastRecovery == 0 {
		d.FastRecovery = 5
	}
	return d
}

// reactionPoint is the sender's rate state.
type reactionPoint struct {
	p                     DCQCN
	rc, rt, alpha         float64
	active                bool // a CNP came: the timers run
	nextIncrease          time.Duration
	nextAlpha             time.Duration
	cnpInPeriod           bool
	timerStage, byteStage int
	bytes                 uint64
	increases             [3]int // fast recovery, additive, hyper
}

func newReactionPoint(p DCQCN) *reactionPoint {
	return &reactionPoint{p: p, rc: p.LineRate, rt: p.LineRate, alpha: p.InitialAlpha}
}

// cut applies a CNP at now.
func (r *reactionPoint) cut(now time.Duration) {
	r.advance(now)
	r.rt = r.rc
	r.rc = math.Max(r.rc*(1-r.alpha/2), r.p.MinRate)
	r.alpha = (1-r.p.G)*r.alpha + r.p.G
	r.cnpInPeriod = true
	r.timerStage, r.byteStage, r.bytes = 0, 0, 0
	r.nextIncrease = now + r.p.IncreaseTimer
	if !r.active {
		r.active = true
		r.nextAlpha = now + r.p.AlphaTimer
	}
}

// advance runs the timers that expire up to now, in time order.
func (r *reactionPoint) advance(now time.Duration) {
	for r.active {
		next := min(r.nextIncrease, r.nextAlpha)
		if next > now {
			return
		}
		if r.nextAlpha <= r.nextIncrease {
			if !r.cnpInPeriod {
				r.alpha *= 1 - r.p.G
			}
			r.cnpInPeriod = false
			r.nextAlpha += r.p.AlphaTimer
			continue
		}
		r.timerStage++
		r.increase()
		r.nextIncrease += r.p.IncreaseTimer
	}
}

// rateAt runs the timers up to now and returns the rate and α then.
func (r *reactionPoint) rateAt(now time.Duration) (float64, float64) {
	r.advance(now)
	return r.rc, r.alpha
}

// sent counts n bytes sent towards the byte counter.
func (r *reactionPoint) sent(n int) {
	if !r.active {
		return
	}
	r.bytes += uint64(n)
	for r.bytes >= r.p.ByteCounter {
		r.bytes -= r.p.ByteCounter
		r.byteStage++
		r.increase()
	}
}

// increase is one rate increase event.
func (r *reactionPoint) increase() {
	f := r.p.FastRecovery
	switch {
	case max(r.timerStage, r.byteStage) < f:
		r.increases[0]++
	case min(r.timerStage, r.byteStage) > f:
		r.rt += float64(r.timerStage) * r.p.HAI
		r.increases[2]++
	default:
		r.rt += r.p.AI
		r.increases[1]++
	}
	r.rt = math.Min(r.rt, r.p.LineRate)
	r.rc = math.Min((r.rt+r.rc)/2, r.p.LineRate)
}

// Congestion is one RoCEv2 UC flow of RDMA WRITE ONLY packets sent as fast
// as DCQCN lets it, through a switch that marks it CE, to a receiver that
// answers with CNPs; optionally beside a victim flow. The capture point is
// the sender's port: data at its departure, CNPs at their arrival.
type Congestion struct {
	Config   Config        // the flow's QP (UC is used whatever Service says); Delay is the one-way delay
	Payload  int           // bytes per packet
	Duration time.Duration // how long the sender sends
	DCQCN    DCQCN
	// Marking is the switch: packets the sender sends in [MarkFrom,
	// MarkUntil) at a rate above MarkAbove (bits per second; 0: any) are
	// marked CE, as a queue builds while the sender outpaces the bottleneck.
	MarkFrom, MarkUntil time.Duration
	MarkAbove           float64
	// CNPInterval is the receiver's minimum time between two CNPs to the
	// QP (mlx5's min_time_between_cnps); 0: every CE packet is answered.
	CNPInterval time.Duration
	// Victim, when set, is a second flow from the same sender that is
	// never marked yet slows down: held back by its neighbour's congestion.
	Victim *Victim
}

// Victim is a flow sent at Rate that drops to SlowRate in [SlowFrom, SlowUntil).
type Victim struct {
	Config              Config
	Rate, SlowRate      float64 // bits per second
	SlowFrom, SlowUntil time.Duration
}

// CNPReaction is what the model did with one CNP.
type CNPReaction struct {
	Frame       int           // the CNP's frame (from 1)
	Marked      int           // the CE frame it answers
	At          time.Duration // its arrival at the sender, from the first frame
	Cut         time.Duration // when the cut took effect (At + ReactionDelay)
	FirstSlow   int           // the first frame sent at the new rate (0: none sent)
	RateBefore  float64       // bits per second
	RateAfter   float64
	AlphaBefore float64
}

// CongestionResult is a Congestion's capture and the model's numbers, the
// known answers an analyzer is checked against.
type CongestionResult struct {
	Trace                 Trace
	DataFrames, CEFrames  int // of the flow
	VictimFrames          int
	CNPs                  []CNPReaction
	MinCNPSpacing         time.Duration // 0 with fewer than two CNPs
	Increases             [3]int        // fast recovery, additive, hyper increase events
	FinalRate, FinalAlpha float64
}

// Build runs the model and makes the capture.
func (c Congestion) Build() (CongestionResult, error) {
	var res CongestionResult
	p := c.DCQCN.withDefaults()
	cfg := c.Config
	cfg.Service = layers.ServiceUC
	b, err := NewBuilder(cfg)
	if err != nil {
		return res, err
	}
	cfg = b.Config()
	if c.Payload <= 0 || c.Duration <= 0 {
		return res, fmt.Errorf("craft: congestion: payload %d and duration %v must be positive", c.Payload, c.Duration)
	}
	delay := max(cfg.Delay, 0)
	write, _ := layers.OpcodeFor(layers.ServiceUC, layers.OpRDMAWrite, layers.PosOnly, false, false)
	start := cfg.Start
	rp := newReactionPoint(p)

	type event struct {
		frame  Frame
		at     time.Duration
		cnp    int // index into res.CNPs + 1 for a CNP
		ce     bool
		data   bool
		victim bool // the victim's first packet at its slow rate
	}
	var evs []event
	var pending []int // CNPs not yet applied, by index, in arrival order
	var lastCNP time.Duration
	sentCNP := false
	psn := cfg.Requester.PSN
	var slowWatch []int // CNPs whose first slow frame is still to come
	for now := time.Duration(0); now < c.Duration; {
		// Apply the cuts due by now, in order.
		for len(pending) > 0 && res.CNPs[pending[0]].Cut <= now {
			i := pending[0]
			pending = pending[1:]
			res.CNPs[i].RateBefore, res.CNPs[i].AlphaBefore = rp.rateAt(res.CNPs[i].Cut)
			rp.cut(res.CNPs[i].Cut)
			res.CNPs[i].RateAfter = rp.rc
			slowWatch = append(slowWatch, i)
		}
		rp.advance(now)
		ecn := ECNDefault
		ce := now >= c.MarkFrom && now < c.MarkUntil && rp.rc > c.MarkAbove
		if ce {
			ecn = CE
		}
		f, err := b.Build(Packet{From: Requester, ECN: ecn, Payload: Pattern(c.Payload, byte(psn)), BTH: layers.BTH{
			Opcode: write, PKey: cfg.PKey, DestQP: cfg.Responder.QPN, PSN: psn,
			RETH: layers.RETH{VA: 0x7f0000200000, RKey: 0x44, DMALength: uint32(c.Payload)}}}, start.Add(now))
		if err != nil {
			return res, err
		}
		f.Info.Note = fmt.Sprintf("%.1f Mb/s", rp.rc/1e6)
		psn = psn.Add(1)
		evs = append(evs, event{frame: f, at: now, ce: ce, data: true})
		for _, i := range slowWatch {
			res.CNPs[i].FirstSlow = len(evs) // an event index for now; a frame number once sorted
		}
		slowWatch = slowWatch[:0]
		if ce {
			arrive := now + delay
			if !sentCNP || arrive-lastCNP >= c.CNPInterval {
				sentCNP, lastCNP = true, arrive
				cf, err := b.Build(Packet{From: Responder, BTH: layers.BTH{Opcode: opCNPRoCE, PKey: cfg.PKey,
					DestQP: cfg.Requester.QPN, BECN: true}}, start.Add(arrive+delay))
				if err != nil {
					return res, err
				}
				cf.Info.Note = "CNP"
				res.CNPs = append(res.CNPs, CNPReaction{Marked: len(evs), At: arrive + delay,
					Cut: arrive + delay + p.ReactionDelay})
				pending = append(pending, len(res.CNPs)-1)
				evs = append(evs, event{frame: cf, at: arrive + delay, cnp: len(res.CNPs)})
			}
		}
		bits := float64(len(f.Data) * 8)
		rp.sent(len(f.Data))
		now += time.Duration(math.Round(bits / rp.rc * 1e9))
	}
	res.Increases, res.FinalRate, res.FinalAlpha = rp.increases, rp.rc, rp.alpha

	if v := c.Victim; v != nil {
		vb, err := NewBuilder(v.Config)
		if err != nil {
			return res, err
		}
		vc := vb.Config()
		vpsn := vc.Requester.PSN
		slowed := false
		for now := time.Duration(0); now < c.Duration; {
			f, err := vb.Build(Packet{From: Requester, Payload: Pattern(c.Payload, byte(vpsn)), BTH: layers.BTH{
				Opcode: write, PKey: vc.PKey, DestQP: vc.Responder.QPN, PSN: vpsn,
				RETH: layers.RETH{VA: 0x7f0000300000, RKey: 0x55, DMALength: uint32(c.Payload)}}}, start.Add(now))
			if err != nil {
				return res, err
			}
			rate := v.Rate
			if now >= v.SlowFrom && now < v.SlowUntil {
				rate = v.SlowRate
			}
			f.Info.Note = fmt.Sprintf("victim, %.1f Mb/s", rate/1e6)
			vpsn = vpsn.Add(1)
			first := !slowed && now >= v.SlowFrom && now < v.SlowUntil
			slowed = slowed || first
			evs = append(evs, event{frame: f, at: now, victim: first})
			res.VictimFrames++
			now += time.Duration(math.Round(float64(len(f.Data)*8) / rate * 1e9))
		}
	}

	// Order the capture by time (stable: on equal times, the order the
	// events were made), then number the frames.
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return evs[order[a]].at < evs[order[b]].at })
	number := make([]int, len(evs))
	for k, i := range order {
		number[i] = k + 1
	}
	var tr Trace
	for _, i := range order {
		e := evs[i]
		tr.Frames = append(tr.Frames, e.frame)
		n := number[i]
		switch {
		case e.ce:
			res.CEFrames++
			tr.Findings = append(tr.Findings, Finding{Frame: n, Kind: FindingECNCE, Detail: "marked by the switch"})
		case e.cnp > 0:
			r := &res.CNPs[e.cnp-1]
			r.Frame, r.Marked = n, number[r.Marked-1]
			if r.FirstSlow > 0 {
				r.FirstSlow = number[r.FirstSlow-1]
			}
			tr.Findings = append(tr.Findings, Finding{Frame: n, Kind: FindingCNP, Ref: r.Marked,
				Detail: fmt.Sprintf("congestion notification for QP 0x%06x", cfg.Requester.QPN)})
		}
		if e.data {
			res.DataFrames++
		}
		if e.victim {
			tr.Findings = append(tr.Findings, Finding{Frame: n, Kind: FindingDCQCNVictim,
				Detail: fmt.Sprintf("QP 0x%06x slows to %.0f Mb/s, never marked", c.Victim.Config.Responder.QPN, c.Victim.SlowRate/1e6)})
		}
	}
	for i := 1; i < len(res.CNPs); i++ {
		if d := res.CNPs[i].At - res.CNPs[i-1].At; i == 1 || d < res.MinCNPSpacing {
			res.MinCNPSpacing = d
		}
	}
	sortFindings(tr.Findings)
	res.Trace = tr
	return res, nil
}
