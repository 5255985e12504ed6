package correlate_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// conversation runs a few WRITEs, SENDs and READs with the given faults.
func conversation(t *testing.T, cfg craft.Config, f craft.Faults) craft.Trace {
	t.Helper()
	c, err := craft.New(cfg)
	require.NoError(t, err)
	var ops []craft.Op
	for i := 0; i < 40; i++ {
		switch i % 3 {
		case 0:
			ops = append(ops, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(3000, byte(i)), VA: 0x1000, RKey: 7})
		case 1:
			ops = append(ops, craft.Op{Kind: craft.OpSend, Data: craft.Pattern(700, byte(i))})
		case 2:
			ops = append(ops, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(2500, byte(i)), VA: 0x2000, RKey: 7})
		}
	}
	require.NoError(t, c.Run(ops, f))
	return c.Trace()
}

// writePoints writes each point's frames to a pcap and names the points.
func writePoints(t *testing.T, mt craft.MultiTrace, names []string) []correlate.Point {
	t.Helper()
	dir := t.TempDir()
	var points []correlate.Point
	for i, frames := range mt.Points {
		path := filepath.Join(dir, names[i]+".pcap")
		lt := layers.LinkTypeEthernet
		if len(frames) > 0 {
			lt = frames[0].LinkType
		}
		w, err := capture.Create(path, capture.FormatPcap, lt, true)
		require.NoError(t, err)
		for _, f := range frames {
			require.NoError(t, w.WritePacket(capture.Packet{Time: f.Time, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data}))
		}
		require.NoError(t, w.Close())
		points = append(points, correlate.Point{Name: names[i], Path: path})
	}
	return points
}

func TestCraftedAttribution(t *testing.T) {
	tests := []struct {
		name   string
		points []craft.CapturePoint
		jitter time.Duration
		loss   craft.Loss
	}{
		{
			name:   "two points, offset +1 s, drift 100 ppm",
			points: []craft.CapturePoint{{DropProb: 0.02}, {Offset: time.Second, DriftPPM: 100, DropProb: 0.02}},
			jitter: 300 * time.Nanosecond,
			loss:   craft.Loss{Every: 23},
		},
		{
			name:   "two points, offset -1 s, drift -100 ppm",
			points: []craft.CapturePoint{{Offset: 250 * time.Millisecond}, {Offset: -750 * time.Millisecond, DriftPPM: -100, DropProb: 0.05}},
			jitter: 500 * time.Nanosecond,
			loss:   craft.Loss{Every: 17},
		},
		{
			name: "three points",
			points: []craft.CapturePoint{{DropProb: 0.01}, {Offset: -400 * time.Millisecond, DriftPPM: 40, DropProb: 0.03},
				{Offset: 900 * time.Millisecond, DriftPPM: -70, DropProb: 0.02}},
			jitter: 200 * time.Nanosecond,
			loss:   craft.Loss{Every: 11},
		},
		{
			name:   "four points, no drops",
			points: []craft.CapturePoint{{}, {Offset: time.Millisecond}, {Offset: -time.Second, DriftPPM: 100}, {Offset: 3 * time.Microsecond}},
			jitter: 400 * time.Nanosecond,
			loss:   craft.Loss{Every: 13},
		},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hops := make([]time.Duration, len(tt.points)+1)
			var total time.Duration
			for i := range hops {
				hops[i] = time.Duration(2+i) * time.Microsecond
				total += hops[i]
			}
			tr := conversation(t, craft.Config{Delay: total, Step: time.Millisecond}, craft.Faults{Loss: tt.loss})
			require.NotEmpty(t, tr.Lost)
			mp := craft.MultiPoint{Points: tt.points, Hops: hops, Jitter: tt.jitter, Seed: uint64(ti + 1)}
			mt, err := mp.Capture(tr)
			require.NoError(t, err)
			names := make([]string, len(tt.points))
			for i := range names {
				names[i] = string(rune('A' + i))
			}
			rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, names)})
			require.NoError(t, err)

			requester := craft.DefaultRequester.IPv4.String()
			require.Len(t, rep.Flows, 2)
			for _, fl := range rep.Flows {
				side, path := craft.Requester, names
				if fl.Src != requester {
					side, path = craft.Responder, reversed(names)
				}
				assert.Equal(t, path, fl.Path, "%s → %s path", fl.Src, fl.Dst)
				var losses []int
				for _, s := range fl.Segments {
					losses = append(losses, s.Losses)
				}
				assert.Equal(t, mt.Losses[side], losses, "%s losses by segment %v", side, fl.Segments)
				drops := make([]int, len(names))
				for j, name := range fl.Path {
					drops[name[0]-'A'] = fl.CaptureDrops[j]
				}
				assert.Equal(t, mt.Drops[side], drops, "%s capture drops per point", side)
			}
			for i := 1; i < len(tt.points); i++ {
				c := rep.Points[i].Clock
				want := tt.points[i].Offset - tt.points[0].Offset
				assert.True(t, c.Bounded)
				assert.InDelta(t, float64(want), float64(c.Offset), float64(tt.jitter),
					"point %s offset %v, want %v ± %v", names[i], c.Offset, want, tt.jitter)
				assert.InDelta(t, tt.points[i].DriftPPM-tt.points[0].DriftPPM, c.DriftPPM, 2,
					"point %s drift", names[i])
			}
			t.Logf("clocks %+v; losses %v; drops %v", rep.Points, mt.Losses, mt.Drops)
		})
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// rewrite returns the frames as a switch or router between two points
// might forward them: a VLAN tag pushed, MACs rewritten, TTL decremented,
// DSCP changed and ECN marked CE, the IPv4 checksum fixed. Nothing the ICRC
// covers changes.
func rewrite(t *testing.T, frames []craft.Frame) []craft.Frame {
	t.Helper()
	out := make([]craft.Frame, len(frames))
	for i, f := range frames {
		d := f.Data
		require.Equal(t, []byte{0x08, 0x00}, d[12:14], "IPv4 over Ethernet")
		n := make([]byte, 0, len(d)+4)
		n = append(n, 0x02, 0xaa, 0, 0, 0, byte(i)) // new destination MAC
		n = append(n, 0x02, 0xbb, 0, 0, 0, byte(i)) // new source MAC
		n = append(n, 0x81, 0x00, 0x60, 0x64)       // 802.1Q, PCP 3, VID 100
		n = append(n, d[12:]...)
		ip := n[18:]
		ip[1] = 26<<2 | 3 // DSCP 26, ECN CE
		ip[8]--           // TTL
		ip[10], ip[11] = 0, 0
		var sum uint32
		for j := 0; j < int(ip[0]&0xf)*4; j += 2 {
			sum += uint32(ip[j])<<8 | uint32(ip[j+1])
		}
		for sum > 0xffff {
			sum = sum&0xffff + sum>>16
		}
		ip[10], ip[11] = byte(^sum>>8), byte(^sum)
		f.Data = n
		out[i] = f
	}
	return out
}

// TestRewrittenOuterHeaders: the same packets, forwarded with a VLAN tag
// added, new MACs, TTL, DSCP and ECN changed, still match one for one.
func TestRewrittenOuterHeaders(t *testing.T) {
	tr := conversation(t, craft.Config{Delay: 9 * time.Microsecond, Step: 10 * time.Microsecond}, craft.Faults{})
	mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: -300 * time.Millisecond}}, Hops: []time.Duration{2000, 3000, 4000}}
	mt, err := mp.Capture(tr)
	require.NoError(t, err)
	mt.Points[1] = rewrite(t, mt.Points[1])
	var seenBoth, seenOne int
	rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, []string{"host", "switch"}), Packet: func(s *correlate.Sighting) {
		if s.Frames[0] != 0 && s.Frames[1] != 0 {
			seenBoth++
		} else {
			seenOne++
		}
	}})
	require.NoError(t, err)
	assert.Equal(t, len(tr.Frames), seenBoth, "every packet matched at both points")
	assert.Zero(t, seenOne)
	for _, p := range rep.Points {
		assert.Zero(t, p.Errors, "%s: %s", p.Name, p.FirstError)
		assert.Zero(t, p.CaptureDrops)
	}
	assert.InDelta(t, float64(-300*time.Millisecond), float64(rep.Points[1].Clock.Offset), float64(time.Microsecond))
	for _, fl := range rep.Flows {
		require.Len(t, fl.Hops, 1)
		h := fl.Hops[0]
		if h.To == "switch" {
			assert.Equal(t, int(h.Delay.Count), h.Marked, "%s → %s: the switch's copies all carry CE", fl.Src, fl.Dst)
		} else {
			assert.Zero(t, h.Marked, "%s → %s: CE removed is no mark added", fl.Src, fl.Dst)
		}
	}
}

// TestMirrorPortCapture: a switch's mirror of the traffic, captured at the
// collector inside GRE and ERSPAN (type II or III), correlates with a
// capture at the host like a capture on the port itself.
func TestMirrorPortCapture(t *testing.T) {
	tr := conversation(t, craft.Config{Delay: 9 * time.Microsecond, Step: 10 * time.Microsecond}, craft.Faults{Loss: craft.Loss{Every: 19}})
	mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: 40 * time.Millisecond, DropProb: 0.03}}, Hops: []time.Duration{2000, 3000, 4000}, Seed: 5}
	for _, typ := range []int{2, 3} {
		mt, err := mp.Capture(tr)
		require.NoError(t, err)
		mt.Points[1], err = craft.Mirror{Type: typ, Session: 7}.Wrap(mt.Points[1])
		require.NoError(t, err)
		rep, err := correlate.Run(context.Background(), correlate.Config{Points: writePoints(t, mt, []string{"host", "mirror"})})
		require.NoError(t, err)
		for _, p := range rep.Points {
			assert.Equal(t, p.Frames, p.RoCE, "ERSPAN %d, %s: every frame a RoCE packet", typ, p.Name)
		}
		require.Len(t, rep.Flows, 2)
		for _, fl := range rep.Flows {
			side := craft.Requester
			if fl.Src != craft.DefaultRequester.IPv4.String() {
				side = craft.Responder
			}
			var losses []int
			for _, s := range fl.Segments {
				losses = append(losses, s.Losses)
			}
			assert.Equal(t, mt.Losses[side], losses, "ERSPAN %d, %v: losses by segment", typ, side)
			drops := map[string]int{}
			for j, name := range fl.Path {
				drops[name] = fl.CaptureDrops[j]
			}
			assert.Equal(t, map[string]int{"host": mt.Drops[side][0], "mirror": mt.Drops[side][1]}, drops, "ERSPAN %d, %v: drops", typ, side)
		}
		assert.InDelta(t, float64(40*time.Millisecond), float64(rep.Points[1].Clock.Offset), float64(time.Microsecond))
	}
}

// TestMalformedFramesCounted: a frame that does not decode is counted and
// described (file, packet, layer and field) and the correlation goes on
// with the rest.
func TestMalformedFramesCounted(t *testing.T) {
	const broken = "../pcaps/broken_truncated.pcap"
	rep, err := correlate.Run(context.Background(), correlate.Config{Points: []correlate.Point{{Name: "a", Path: broken}, {Name: "b", Path: broken}}})
	require.NoError(t, err)
	for _, p := range rep.Points {
		assert.Equal(t, 1, p.Errors, p.Name)
		assert.Regexp(t, `^\.\./pcaps/broken_truncated\.pcap: packet \d+: [A-Za-z]+\.[A-Za-z]+`, p.FirstError, p.Name)
		assert.Equal(t, p.Frames-1, p.RoCE, "%s: the other frames correlate", p.Name)
		assert.Zero(t, p.CaptureDrops)
	}
	// The damaged SEND reached neither point intact (both hold the same cut
	// bytes) and was sent again: for the correlation it never arrived, so
	// its resend names a loss before the first point, and nothing else.
	losses := map[string]int{}
	for _, fl := range rep.Flows {
		for _, s := range fl.Segments {
			if s.Losses > 0 {
				losses[fl.Src+" "+s.Name] += s.Losses
			}
		}
	}
	assert.Equal(t, map[string]int{"192.168.1.1 sender → a": 1}, losses)
}

// TestSnaplenCutFrames: a point that captured with a snapshot length keeps
// every packet's headers but not its payload or ICRC; its packets match the
// whole copies of the other point, and nothing is called lost or dropped.
func TestSnaplenCutFrames(t *testing.T) {
	tr := conversation(t, craft.Config{Delay: 9 * time.Microsecond, Step: 10 * time.Microsecond}, craft.Faults{Loss: craft.Loss{Every: 19}})
	mp := craft.MultiPoint{Points: []craft.CapturePoint{{}, {Offset: 25 * time.Millisecond}}, Hops: []time.Duration{2000, 3000, 4000}}
	tests := []struct {
		name    string
		snaplen int
		cutAt   int // the point whose frames are cut
	}{
		{"the downstream point cut to 96 bytes", 96, 1},
		{"the upstream point cut to 96 bytes", 96, 0},
		{"cut just before the ICRC", -4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt, err := mp.Capture(tr)
			require.NoError(t, err)
			whole := writePoints(t, mt, []string{"host", "switch"})
			want, err := correlate.Run(context.Background(), correlate.Config{Points: whole})
			require.NoError(t, err)

			dir := t.TempDir()
			points := append([]correlate.Point(nil), whole...)
			path := filepath.Join(dir, "cut.pcap")
			w, err := capture.Create(path, capture.FormatPcap, layers.LinkTypeEthernet, true)
			require.NoError(t, err)
			cut := 0
			for _, f := range mt.Points[tt.cutAt] {
				n := tt.snaplen
				if n < 0 {
					n += len(f.Data)
				}
				n = min(n, len(f.Data))
				if n < len(f.Data) {
					cut++
				}
				require.NoError(t, w.WritePacket(capture.Packet{Time: f.Time, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data[:n]}))
			}
			require.NoError(t, w.Close())
			require.NotZero(t, cut)
			points[tt.cutAt].Path = path

			got, err := correlate.Run(context.Background(), correlate.Config{Points: points})
			require.NoError(t, err)
			for i, p := range got.Points {
				assert.Zero(t, p.Errors, "%s: a cut frame is no decoding error: %s", p.Name, p.FirstError)
				assert.Equal(t, p.Frames, p.RoCE, "%s: every frame correlates", p.Name)
				assert.Equal(t, want.Points[i].CaptureDrops, p.CaptureDrops, p.Name)
			}
			assert.InDelta(t, float64(want.Points[1].Clock.Offset), float64(got.Points[1].Clock.Offset), float64(time.Microsecond))
			require.Len(t, got.Flows, len(want.Flows))
			for i, fl := range got.Flows {
				assert.Equal(t, want.Flows[i].Segments, fl.Segments, "%s → %s: losses by segment", fl.Src, fl.Dst)
				assert.Equal(t, want.Flows[i].CaptureDrops, fl.CaptureDrops, "%s → %s: drops", fl.Src, fl.Dst)
			}
		})
	}
}
