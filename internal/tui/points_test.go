package tui

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/internal/output"
)

// One conversation captured at three points (pcaps/gen/multipoint.go): b
// misses some packets (capture drops), some are lost on each segment.
var multipoint = []correlate.Point{
	{Name: "a", Path: "../../pcaps/multipoint_a.pcap"},
	{Name: "b", Path: "../../pcaps/multipoint_b.pcap"},
	{Name: "c", Path: "../../pcaps/multipoint_c.pcap"},
}

// correlated correlates points into a Points as ibtui does
// (cmd/ibtui's correlatePoints), and returns it done.
func correlated(t *testing.T, points []correlate.Point) *Points {
	t.Helper()
	names := make([]string, len(points))
	for i, pt := range points {
		names[i] = pt.Name
	}
	p := NewPoints(names)
	rep, err := correlate.Run(context.Background(), correlate.Config{Points: points, Packet: func(s *correlate.Sighting) {
		p.Add(&PointSighting{Flow: s.Flow, PSN: s.PSN, Opcode: s.Opcode, Copy: s.Copy, Frames: s.Frames,
			Times: s.Times, Dropped: s.Dropped, Path: s.Path, LostAfter: s.LostAfter, LostOn: s.LostOn})
	}})
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, output.WriteCorrelation(&text, rep))
	p.Finish(text.String(), nil)
	return p
}

// TestPointsRowsAgreeWithReport: the view's rows are the correlation's
// packets, and what they say of each point adds up to the report: the
// packets per flow, the capture drops per point, the losses per segment.
func TestPointsRowsAgreeWithReport(t *testing.T) {
	p := correlated(t, multipoint)
	rep, err := correlate.Run(context.Background(), correlate.Config{Points: multipoint})
	require.NoError(t, err)

	packets := 0
	losses := map[string]int{}
	for _, fl := range rep.Flows {
		packets += fl.Packets
		for _, s := range fl.Segments {
			losses[s.Name] += s.Losses
		}
	}
	require.Len(t, p.rows, packets)
	drops := make([]int, len(multipoint))
	lostOn := map[string]int{}
	for i, r := range p.rows {
		if i > 0 {
			assert.LessOrEqual(t, p.rows[i-1].first, r.first, "row %d: in the order of first sightings", i)
		}
		seen := 0
		for pt, st := range r.state {
			switch st {
			case pointDropped:
				drops[pt]++
			case pointSeen:
				seen++
				if r.delay[pt] == 0 {
					assert.Equal(t, r.first, r.first+r.delay[pt])
				}
			}
		}
		if r.lostOn != "" {
			lostOn[r.lostOn]++
		}
		assert.Equal(t, r.state[0] == pointSeen, r.frame0 != 0, "row %d: a frame at the first point when it saw the packet", i)
	}
	for i, pt := range rep.Points {
		assert.Equal(t, pt.CaptureDrops, drops[i], "capture drops at %s", pt.Name)
	}
	for name, n := range losses {
		if n > 0 && !strings.HasPrefix(name, "sender") {
			assert.Equal(t, n, lostOn[name], "losses on %s", name)
		}
	}
}

// TestPointsView: the packet list shows each packet's time at every
// point; W shows the packets with their time at each point and
// the per-hop table; enter goes to the packet in the packet list; tab
// moves the focus to the per-hop table. Without capture points there is
// no Points tab, and the view says how to get one.
func TestPointsView(t *testing.T) {
	p := correlated(t, multipoint)
	h := start(t, multipoint[0].Path, "", 150, 50)
	h.waitFor("Frame 1:")
	assert.NotContains(t, h.screen(), "Points", "no tab before there are capture points")
	h.onLoop(true, "set the points", func() { h.ui.setPoints(p) })
	// The packet list gains a column per point: the packet's time there
	// after its first sighting, or what happened to it there. Frame 13 (PSN
	// 265) was lost between a and b; frame 4, an ACK from c, was not
	// captured at b.
	h.keys("13G")
	h.waitMatch(regexp.MustCompile(`No\. +Time +Source +Destination +Protocol +Length +PSN +a +b +c +Info`))
	h.waitMatch(regexp.MustCompile(`(?m)^ +13 0\.008000 .* 265 +0 +lost +lost +RC RDMA Write Last`))
	h.waitMatch(regexp.MustCompile(`(?m)^ +4 0\.002024 .* 258 +\+7\.242µs +drop +0 +RC Acknowledge`))
	h.keys("W")
	screen := h.waitFor("[ Points ]", "97 packets at 3 capture points (a, b, c) | done",
		"Connection", "Lost on", "per hop", "a → b", "b → c", "capture drops:")
	golden(t, "points", screen)
	// Every row shows each point's time, drop or loss.
	rows := regexp.MustCompile(`(?m)^ *\d+\.\d{6} +192\.168\.1\.\d → 192\.168\.1\.\d QP 0x0000\d\d +\d+ +.+$`).FindAllString(screen, -1)
	require.NotEmpty(t, rows)
	assert.Regexp(t, `\+\d\.\d{3}µs +\+\d\.\d{3}µs`, rows[0], "the first packet: seen at a, then at b and c")

	// The first packet seen at a: enter shows its frame in the packet list.
	h.keys("<enter>")
	h.waitUntil(func(u *UI) bool { return u.view == viewPackets && u.selected == p.rows[0].frame0 }, "the packet list at the row's frame")
	h.keys("W", "<tab>")
	h.waitUntil(func(u *UI) bool { return focused(u, u.points.report) }, "the focus on the per-hop table")
	h.keys("<tab>")
	h.waitUntil(func(u *UI) bool { return focused(u, u.points.table) }, "the focus back on the packets")
}
