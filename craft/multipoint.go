package craft

import (
	"errors"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// MultiPoint places capture points along the path of a trace's traffic and
// says what each of them captures: the frames that reached it, on its own
// clock. The trace's lost frames are lost on a segment of the path chosen by
// Seed, so the points upstream of the loss see them; the points' captures
// drop frames too. The answers, every loss's segment and every capture
// drop's point, come with the captures.
type MultiPoint struct {
	// Points are the capture points from the requester's side to the
	// responder's; at least two.
	Points []CapturePoint
	// Hops are the one-way delays of the len(Points)+1 segments: requester
	// to the first point, between consecutive points, last point to the
	// responder. Missing entries are 2 µs.
	Hops []time.Duration
	// Jitter adds up to this much (uniformly, seeded) to each frame's delay
	// on each segment.
	Jitter time.Duration
	// Seed drives the jitter, the segments losses happen on and the
	// capture drops.
	Seed uint64
}

// CapturePoint is one place the traffic is captured, with a clock of its
// own and a capture that may miss frames.
type CapturePoint struct {
	// Offset is the point's clock minus true time at the trace's first
	// frame; DriftPPM its rate error in millionths.
	Offset   time.Duration
	DriftPPM float64
	// DropProb is the probability that the capture misses a frame passing
	// it. Only frames sent once and not lost are dropped (the drop of a
	// frame that is sent again, or of one lost right after the point, looks
	// the same on the wire as a loss), and no frame at more than one point.
	DropProb float64
}

// MultiTrace is what the points of a MultiPoint captured, with the answers.
type MultiTrace struct {
	// Points holds each point's frames in its capture order and clock.
	Points [][]Frame
	// Losses counts, for each sending side, the frames lost on each
	// segment of that side's path: segment 0 starts at the sender, segment
	// len(Points) ends at the receiver. A request sent while an earlier one
	// is lost and not yet repaired would be discarded by the receiver, so
	// its loss is never placed after the last point (where nothing could
	// tell); an acknowledgement is not sent again, so its loss is placed
	// between two points, the only place it shows.
	Losses [2][]int
	// Lost lists the lost frames in send order with their segments.
	Lost []LostFrame
	// Drops counts, for each sending side, the frames each point's capture
	// missed (indexed like MultiPoint.Points).
	Drops [2][]int
}

// LostFrame is one frame lost on the path: Segment counts from its
// sender as MultiTrace.Losses does.
type LostFrame struct {
	Info    FrameInfo
	Time    time.Time
	Segment int
}

type placed struct {
	f    Frame
	lost bool
}

// Capture places t's frames, captured and lost, at the points.
func (mp MultiPoint) Capture(t Trace) (MultiTrace, error) {
	n := len(mp.Points)
	if n < 2 {
		return MultiTrace{}, errors.New("craft: a multi-point capture needs at least two points")
	}
	hops := make([]time.Duration, n+1)
	for i := range hops {
		hops[i] = 2 * time.Microsecond
		if i < len(mp.Hops) {
			hops[i] = mp.Hops[i]
		}
	}
	all := make([]placed, 0, len(t.Frames)+len(t.Lost))
	for _, f := range t.Frames {
		all = append(all, placed{f: f})
	}
	for _, f := range t.Lost {
		all = append(all, placed{f: f, lost: true})
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].f.Time.Before(all[b].f.Time) })
	if len(all) == 0 {
		return MultiTrace{Points: make([][]Frame, n)}, nil
	}
	start := all[0].f.Time
	// A frame is sent again when a later frame of the same side repeats its
	// opcode, QP and PSN.
	type ident struct {
		from   Side
		qp     uint32
		psn    layers.PSN
		opcode layers.Opcode
	}
	lastAt := map[ident]int{}
	for i, p := range all {
		lastAt[ident{p.f.Info.From, p.f.Info.DestQP, p.f.Info.PSN, p.f.Info.Opcode}] = i
	}
	rng := rand.New(rand.NewPCG(mp.Seed, 0x6d70))
	pending := map[ident]bool{} // lost requests not yet delivered again
	out := MultiTrace{Points: make([][]Frame, n)}
	for s := range out.Losses {
		out.Losses[s] = make([]int, n+1)
		out.Drops[s] = make([]int, n)
	}
	for i, p := range all {
		info := p.f.Info
		side := info.From
		// order lists the points along this frame's way; hop k leads to order[k].
		order := make([]int, n)
		seg := make([]time.Duration, n+1)
		for k := range order {
			order[k] = k
			if side == Responder {
				order[k] = n - 1 - k
			}
		}
		for k := range seg {
			seg[k] = hops[k]
			if side == Responder {
				seg[k] = hops[n-k]
			}
		}
		reach := n // points reached along the way
		key := ident{side, info.DestQP, info.PSN, info.Opcode}
		if p.lost {
			op := info.Opcode.Info()
			if op.IsRequest() || op.Operation == layers.OpRDMAReadResponse {
				// A frame sent while an earlier loss is unrepaired is
				// discarded by the receiver anyway: its loss after the last
				// point changes nothing and shows nowhere.
				noticed := true
				for k := range pending {
					if k.from == side && k.qp == info.DestQP && k.psn.Diff(info.PSN) < 0 {
						noticed = false
					}
				}
				if noticed {
					reach = rng.IntN(n + 1)
				} else {
					reach = rng.IntN(n)
				}
				pending[key] = true
			} else {
				// An acknowledgement is not sent again: only a loss between
				// two points shows.
				reach = 1 + rng.IntN(n-1)
			}
			out.Losses[side][reach]++
			out.Lost = append(out.Lost, LostFrame{Info: info, Time: p.f.Time, Segment: reach})
		}
		if !p.lost {
			delete(pending, key)
		}
		repeated := lastAt[key] != i
		dropped := false
		at := p.f.Time
		for k := 0; k < reach; k++ {
			at = at.Add(seg[k])
			if mp.Jitter > 0 {
				at = at.Add(time.Duration(rng.Int64N(int64(mp.Jitter))))
			}
			pt := mp.Points[order[k]]
			if !p.lost && !repeated && !dropped && pt.DropProb > 0 && rng.Float64() < pt.DropProb {
				dropped = true
				out.Drops[side][order[k]]++
				continue
			}
			f := p.f
			elapsed := at.Sub(start)
			f.Time = at.Add(pt.Offset + time.Duration(float64(elapsed)*pt.DriftPPM/1e6))
			out.Points[order[k]] = append(out.Points[order[k]], f)
		}
	}
	for _, frames := range out.Points {
		sort.SliceStable(frames, func(a, b int) bool { return frames[a].Time.Before(frames[b].Time) })
	}
	return out, nil
}
