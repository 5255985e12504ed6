package correlate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// relane moves native IB frames to another virtual lane, as a switch
// between two points may, with the VCRC that covers the new LRH: the
// frames' last bytes differ between the points, their ICRCs do not.
func relane(t *testing.T, frames []craft.Frame, vl byte) []craft.Frame {
	t.Helper()
	out := make([]craft.Frame, len(frames))
	for i, f := range frames {
		d := append([]byte(nil), f.Data...)
		require.GreaterOrEqual(t, len(d), 8+12+6)
		d[0] = d[0]&0x0F | vl<<4
		v := layers.ComputeVCRC(d)
		d[len(d)-2], d[len(d)-1] = byte(v>>8), byte(v)
		f.Data = d
		out[i] = f
	}
	return out
}

// TestCaptureLongerThanHead: captures far longer than the head the clocks
// are first estimated from (native IB, the lane changed between the
// points) still give every loss its segment and every drop its point, the
// clocks from every packet both points saw, and a flow that starts after
// the head its path.
func TestCaptureLongerThanHead(t *testing.T) {
	if testing.Short() {
		t.Skip("crafts 2 × 80,000 frames")
	}
	var trace craft.Trace
	for k, qp := range []uint32{0x11, 0x99} {
		n := 36000
		if k == 1 {
			n = 4000
		} // the second connection starts late
		cfg := craft.Config{Encap: craft.IB, Delay: 9 * time.Microsecond, Step: 5 * time.Microsecond}
		cfg.Requester, cfg.Responder = craft.DefaultRequester, craft.DefaultResponder
		cfg.Requester.QPN, cfg.Responder.QPN = qp, qp+1
		if k == 1 { // between two other hosts, after the head
			cfg.Start = trace.Frames[len(trace.Frames)-1].Time.Add(time.Millisecond)
			cfg.Requester.LID, cfg.Responder.LID = 5, 6
		}
		c, err := craft.New(cfg)
		require.NoError(t, err)
		ops := make([]craft.Op, n)
		for i := range ops {
			ops[i] = craft.Op{Kind: craft.OpSend, Data: craft.Pattern(32, byte(i))}
		}
		require.NoError(t, c.Run(ops, craft.Faults{Loss: craft.Loss{Every: 997}}))
		tr := c.Trace()
		trace.Frames = append(trace.Frames, tr.Frames...)
		trace.Lost = append(trace.Lost, tr.Lost...)
	}
	mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: 700 * time.Millisecond, DriftPPM: 80, DropProb: 0.002}},
		Hops: []time.Duration{2000, 3000, 4000}, Jitter: 300, Seed: 9}
	mt, err := mp.Capture(trace)
	require.NoError(t, err)
	require.Greater(t, len(mt.Points[0]), 80000, "the captures outlast the head")
	mt.Points[1] = relane(t, mt.Points[1], 3)
	both := 0
	rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, []string{"A", "B"}),
		Packet: func(s *correlate.Sighting) {
			if s.Frames[0] != 0 && s.Frames[1] != 0 {
				both++
			}
		}})
	require.NoError(t, err)
	c := rep.Points[1].Clock
	assert.Equal(t, both, c.Samples, "every packet both points saw is a clock sample")
	assert.InDelta(t, float64(700*time.Millisecond), float64(c.Offset), 300)
	assert.InDelta(t, 80, c.DriftPPM, 2)
	require.Len(t, rep.Flows, 4)
	var losses, drops [2][]int
	for s := range losses {
		losses[s], drops[s] = make([]int, 3), make([]int, 2)
	}
	for _, fl := range rep.Flows {
		side, path := craft.Requester, []string{"A", "B"}
		if fl.DestQP == 0x11 || fl.DestQP == 0x99 {
			side, path = craft.Responder, []string{"B", "A"}
		}
		require.Equal(t, path, fl.Path, "%s → %s QP %#x", fl.Src, fl.Dst, fl.DestQP)
		for j, sg := range fl.Segments {
			losses[side][j] += sg.Losses
		}
		for j, name := range fl.Path {
			drops[side][name[0]-'A'] += fl.CaptureDrops[j]
		}
	}
	for side := range losses {
		assert.Equal(t, mt.Losses[side], losses[side], "side %d: losses by segment", side)
		assert.Equal(t, mt.Drops[side], drops[side], "side %d: capture drops by point", side)
	}
	t.Logf("%+v", rep.Points)
}
