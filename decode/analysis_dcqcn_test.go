package decode_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
)

// TestDCQCNCorpus reads pcaps/dcqcn_*.pcap and checks what the rate
// analysis finds against craft's model, rebuilt from the same settings:
// ECN counts and CE per interval, CNP counts and the least spacing exact,
// each CNP's reaction found at the model's first frame at the new rate
// (so within one packet spacing of the model's reaction delay), and the
// victim flagged at the first packet of its slow interval.
func TestDCQCNCorpus(t *testing.T) {
	for _, c := range craft.CongestionCorpus() {
		t.Run(c.Name, func(t *testing.T) {
			model, err := c.Build()
			require.NoError(t, err)
			res := analyze(t, "../pcaps/"+c.Name+".pcap", decode.AnalyzerOptions{})
			require.Len(t, res.packets, len(model.Trace.Frames)+1, "the file is the model's")
			t0 := model.Trace.Frames[0].Time
			at := func(n int) time.Duration { return model.Trace.Frames[n-1].Time.Sub(t0) }

			var flow, victim *decode.DCQCNRow
			rows := res.a.DCQCN()
			for i := range rows {
				r := &rows[i]
				if r.Flow.Src.Addr != netip.MustParseAddr("192.168.1.1") {
					continue
				}
				switch r.Flow.DestQP {
				case 0x12:
					flow = r
				case 0x14:
					victim = r
				}
			}
			require.NotNil(t, flow, "the flow's row")
			assert.Equal(t, uint64(model.DataFrames), flow.Packets)
			assert.Equal(t, [4]uint64{decode.ECNECT0: uint64(model.DataFrames - model.CEFrames), decode.ECNCE: uint64(model.CEFrames)}, flow.ECN)
			assert.InDelta(t, float64(model.CEFrames)/float64(model.DataFrames), flow.CERatio(), 1e-12)
			assert.Equal(t, 26, flow.DSCP)
			assert.Equal(t, 3, flow.Priority, "DSCP 26 / 8")

			// CE per interval: the model's marks counted by interval.
			w := flow.Interval
			wantCE := map[time.Duration]uint32{}
			for _, f := range model.Trace.Findings {
				if f.Kind == craft.FindingECNCE {
					wantCE[at(f.Frame)/w*w]++
				}
			}
			gotCE := map[time.Duration]uint32{}
			for _, b := range flow.Bins {
				if b.CE > 0 {
					gotCE[b.Start] = b.CE
				}
			}
			assert.Equal(t, wantCE, gotCE)

			assert.Equal(t, uint64(len(model.CNPs)), flow.CNPs)
			assert.Equal(t, model.MinCNPSpacing, flow.MinCNPSpacing)
			assert.Equal(t, model.CNPs[0].At, flow.CNPFirst)
			assert.Equal(t, model.CNPs[len(model.CNPs)-1].At, flow.CNPLast)
			assert.Zero(t, flow.NoReaction)
			require.Len(t, flow.Reactions, len(model.CNPs))
			for i, x := range model.CNPs {
				got := flow.Reactions[i]
				assert.Equal(t, uint32(x.Frame), got.CNPFrame, "CNP %d", i)
				assert.Equal(t, uint32(x.FirstSlow), got.SlowFrame, "CNP %d: the first frame at the new rate", i)
				spacing := time.Duration(float64(138*8) / x.RateBefore * 1e9)
				assert.GreaterOrEqual(t, got.Reaction, c.DCQCN.ReactionDelay, "CNP %d", i)
				assert.Less(t, got.Reaction, c.DCQCN.ReactionDelay+spacing, "CNP %d: within one packet spacing (%v) of the model's delay", i, spacing)
				assert.InEpsilon(t, x.RateAfter, got.RateAfter, 0.01, "CNP %d: the new rate", i)
			}
			assert.False(t, flow.Victim)

			if c.Victim == nil {
				assert.Nil(t, victim)
				return
			}
			require.NotNil(t, victim)
			assert.Zero(t, victim.CNPs)
			assert.Zero(t, victim.ECN[decode.ECNCE])
			assert.True(t, victim.Victim)
			for _, f := range model.Trace.Findings {
				if f.Kind == craft.FindingDCQCNVictim {
					assert.Equal(t, uint32(f.Frame), victim.VictimFrame)
				}
			}
			assert.Equal(t, 1, res.count(decode.FindDCQCNVictim))
		})
	}
}

// TestDCQCNSeriesWidens: an interval that would need more than 4096 bins
// for the capture doubles until it fits, and the series keeps every byte,
// packet and CE mark.
func TestDCQCNSeriesWidens(t *testing.T) {
	total := func(r *decode.DCQCNRow) (bytes uint64, pkts, ce uint32) {
		for _, b := range r.Bins {
			bytes, pkts, ce = bytes+b.Bytes, pkts+b.Packets, ce+b.CE
		}
		return
	}
	wide := analyze(t, "../pcaps/dcqcn_paper.pcap", decode.AnalyzerOptions{}).a.DCQCN()
	fine := analyze(t, "../pcaps/dcqcn_paper.pcap", decode.AnalyzerOptions{DCQCN: decode.DCQCNOptions{Interval: 100 * time.Nanosecond}}).a.DCQCN()
	require.Len(t, fine, len(wide))
	for i := range fine {
		// 600 µs at 100 ns is 6000 intervals: one doubling.
		assert.Equal(t, 200*time.Nanosecond, fine[i].Interval)
		assert.LessOrEqual(t, len(fine[i].Bins), 4096)
		wb, wp, wc := total(&wide[i])
		fb, fp, fc := total(&fine[i])
		assert.Equal(t, wc, fc, "CE marks")
		assert.Equal(t, wb, fb, "bytes")
		assert.Equal(t, wp, fp, "packets")
		assert.Equal(t, uint64(wp), fine[i].Packets, "every packet in the series")
	}
}

// TestDCQCNSeriesBoundedByTimeJumps: a packet an hour after the rest, and a
// direction that sent for an hour before the first mark, keep the series
// within its bound (the interval doubles as often as it takes).
func TestDCQCNSeriesBoundedByTimeJumps(t *testing.T) {
	c := craft.CongestionCorpus()[0].Congestion
	c.Victim, c.Duration = nil, 100*time.Microsecond
	m, err := c.Build()
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		at   func(i int) time.Duration // the time of frame i (from 0) after the change
	}{
		{"a late packet", func(i int) time.Duration {
			if i == len(m.Trace.Frames)-1 {
				return time.Hour
			}
			return m.Trace.Frames[i].Time.Sub(m.Trace.Frames[0].Time)
		}},
		{"an hour before the first mark", func(i int) time.Duration {
			if i == 0 {
				return 0
			}
			return time.Hour + m.Trace.Frames[i].Time.Sub(m.Trace.Frames[0].Time)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Idle connections are kept, so the hour passes inside one.
			a := decode.NewAnalyzer(decode.AnalyzerOptions{IdleTimeout: 2 * time.Hour})
			dec := decode.NewDecoder(decode.Options{})
			t0 := m.Trace.Frames[0].Time
			for i, f := range m.Trace.Frames {
				p := dec.Decode(capture.Packet{Data: f.Data, Length: len(f.Data), Time: t0.Add(tt.at(i)), LinkType: f.LinkType, Number: i + 1})
				a.Analyze(p)
			}
			a.Finish()
			rows := a.DCQCN()
			require.NotEmpty(t, rows)
			var pkts uint64
			for _, b := range rows[0].Bins {
				pkts += uint64(b.Packets)
			}
			assert.LessOrEqual(t, len(rows[0].Bins), 4096)
			assert.Greater(t, rows[0].Interval, time.Hour/4096, "the interval doubled")
			assert.Equal(t, rows[0].Packets, pkts, "every packet in the series")
		})
	}
}

// TestDCQCNBoundedFlows: with room for one flow, the analysis follows the
// first direction marked and no other (a flow followed but not listed once
// went unrescaled and indexed its series out of range).
func TestDCQCNBoundedFlows(t *testing.T) {
	for _, path := range []string{"../pcaps/dcqcn_paper.pcap", "../pcaps/dcqcn_fast_timer.pcap", "../pcaps/dcqcn_byte_counter.pcap"} {
		res := analyze(t, path, decode.AnalyzerOptions{MaxDone: 1})
		require.NotPanics(t, func() { res.a.Finish() }, path)
		assert.LessOrEqual(t, len(res.a.DCQCN()), 1, path)
	}
}
