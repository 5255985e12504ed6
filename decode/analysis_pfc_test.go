package decode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

const us = time.Microsecond

// TestPFCTimelineCorpus checks the pause timeline of pcaps/pfc_pause.pcap
// at 100G against the numbers its generator put in (pcaps/MANIFEST.md):
// a quantum is 5.12 ns, 65535 quanta 335539.2 ns (kept to the ns).
func TestPFCTimelineCorpus(t *testing.T) {
	res := analyze(t, "../pcaps/pfc_pause.pcap", decode.AnalyzerOptions{PFC: decode.PFCOptions{
		LinkSpeed: 100e9, StormWindow: time.Millisecond, StormPercent: 50}})
	rows, captured := res.a.PFC()
	assert.Equal(t, 3400*us, captured)
	require.Len(t, rows, 3)
	port := [6]byte{2, 0, 0, 0, 0, 2}

	p3 := rows[0]
	assert.Equal(t, port, p3.Port)
	assert.Equal(t, 3, p3.Priority)
	assert.Equal(t, uint64(14), p3.Frames)
	assert.Equal(t, uint64(11), p3.Refreshes) // frame 9, and 10 of the storm's 11 frames
	assert.Equal(t, uint64(1), p3.Resumes)
	assert.Equal(t, []decode.PFCInterval{
		{Start: 100 * us, End: 500 * us, StartFrame: 6, EndFrame: 10, Refreshes: 1},
		{Start: 1000 * us, End: 3000*us + 335539, StartFrame: 18, Refreshes: 10},
	}, p3.Intervals)
	assert.Equal(t, 400*us+2335539*time.Nanosecond, p3.Total)
	assert.Equal(t, 2335539*time.Nanosecond, p3.Longest)
	assert.Equal(t, []time.Duration{2735539 * time.Nanosecond}, p3.PerSecond)
	assert.Equal(t, []decode.PFCStorm{{Start: 1000 * us, Paused: 1000 * us, Percent: 100}, {Start: 2000 * us, Paused: 1000 * us, Percent: 100}}, p3.Storms)
	assert.Equal(t, []decode.PFCViolation{{Frame: 7, PauseFrame: 6, After: 50, InFlight: true}, {Frame: 8, PauseFrame: 6, After: 150 * us}}, p3.Violations)

	p4 := rows[1]
	assert.Equal(t, 4, p4.Priority)
	assert.Equal(t, uint64(1), p4.Resumes, "a zero time with nothing to resume")
	assert.Empty(t, p4.Intervals)

	all := rows[2]
	assert.Equal(t, decode.PFCAll, all.Priority)
	assert.Equal(t, []decode.PFCInterval{{Start: 700 * us, End: 700*us + 5120, StartFrame: 16}}, all.Intervals)
	assert.Empty(t, all.Violations, "frame 17 comes after the PAUSE expired")

	assert.Equal(t, 1, res.count(decode.FindPFCInFlight))
	assert.Equal(t, 1, res.count(decode.FindPFCSentWhilePaused))
	assert.Equal(t, 2, res.count(decode.FindPFCStorm))
	for _, f := range res.findings {
		switch f.Kind {
		case decode.FindPFCInFlight:
			assert.Equal(t, uint32(7), f.Frame)
			assert.Equal(t, uint32(6), f.Ref)
			assert.Equal(t, decode.SevNote, f.Severity)
		case decode.FindPFCSentWhilePaused:
			assert.Equal(t, uint32(8), f.Frame)
			assert.Equal(t, decode.SevWarn, f.Severity)
		case decode.FindPFCStorm:
			// A pause frame in effect in each window: 18 (1000 µs) for
			// the first, 22 (1800 µs, until 2135.539 µs) for the second.
			assert.Contains(t, []uint32{18, 22}, f.Frame)
		}
	}
	assert.Equal(t, decode.PFCStart, res.packets[6].PFC)
	assert.Equal(t, decode.PFCRefresh, res.packets[9].PFC)
	assert.Equal(t, decode.PFCResume, res.packets[10].PFC)
	assert.Equal(t, 150*us, res.packets[8].PFCPausedFor)
}

// TestPFCTimelineUnknownSpeed: without a link speed nothing is timed.
func TestPFCTimelineUnknownSpeed(t *testing.T) {
	res := analyze(t, "../pcaps/pfc_pause.pcap", decode.AnalyzerOptions{})
	rows, _ := res.a.PFC()
	require.Len(t, rows, 3)
	for _, r := range rows {
		assert.False(t, r.DurationsKnown)
		assert.Empty(t, r.Intervals)
		assert.Empty(t, r.Violations)
		assert.Zero(t, r.Total)
	}
	assert.Equal(t, uint64(14), rows[0].Frames)
	assert.Equal(t, uint16(65535), rows[0].MaxQuanta)
	assert.Zero(t, res.count(decode.FindPFCStorm)+res.count(decode.FindPFCSentWhilePaused)+res.count(decode.FindPFCInFlight))
}

// TestPFCRefreshShortensAndExpires: a refresh restarts the timer from its
// own time, even to a shorter pause; an expired pause lets traffic through.
func TestPFCRefreshShortensAndExpires(t *testing.T) {
	src := craft.DefaultResponder.MAC
	start := craft.DefaultStart
	b, err := craft.NewBuilder(craft.Config{Encap: craft.RoCEv2, Service: layers.ServiceUC, DSCP: 26})
	require.NoError(t, err)
	write, _ := layers.OpcodeFor(layers.ServiceUC, layers.OpRDMAWrite, layers.PosOnly, false, false)
	roce := func(at time.Duration) craft.Frame {
		f, err := b.Build(craft.Packet{From: craft.Requester, Payload: make([]byte, 64), BTH: layers.BTH{Opcode: write, PKey: 0xFFFF,
			DestQP: 0x12, PSN: layers.PSN(at / us)}}, start.Add(at))
		require.NoError(t, err)
		return f
	}
	pfc := func(at time.Duration, q uint16) craft.Frame {
		f, err := craft.PFCFrame(src, map[int]uint16{3: q}, start.Add(at))
		require.NoError(t, err)
		return f
	}
	// At 10G a quantum is 51.2 ns: 1000 quanta are 51.2 µs, 100 are 5.12 µs.
	frames := []craft.Frame{
		pfc(0, 1000),     // 1: until 51.2 µs
		pfc(10*us, 100),  // 2: refreshed shorter: until 15.12 µs
		roce(20 * us),    // 3: after it expired
		pfc(40*us, 1000), // 4: a new pause, until 91.2 µs
		roce(60 * us),    // 5: sent while paused
		roce(100 * us),   // 6: after it expired
		pfc(120*us, 0),   // 7: nothing to resume
	}
	res := analyzeFrames(t, frames, decode.AnalyzerOptions{PFC: decode.PFCOptions{LinkSpeed: 10e9}})
	rows, _ := res.a.PFC()
	require.Len(t, rows, 1)
	assert.Equal(t, []decode.PFCInterval{
		{Start: 0, End: 15120, StartFrame: 1, Refreshes: 1},
		{Start: 40 * us, End: 91200, StartFrame: 4},
	}, rows[0].Intervals)
	assert.Equal(t, []decode.PFCViolation{{Frame: 5, PauseFrame: 4, After: 20 * us}}, rows[0].Violations)
	assert.Equal(t, 15120+51200*time.Nanosecond, rows[0].Total)
	assert.Equal(t, uint64(1), rows[0].Resumes)
	assert.Empty(t, rows[0].Storms, "66 µs of a second")
}

func TestPacketPriority(t *testing.T) {
	b, err := craft.NewBuilder(craft.Config{Encap: craft.RoCEv2, DSCP: 26})
	require.NoError(t, err)
	send, _ := layers.OpcodeFor(layers.ServiceRC, layers.OpSend, layers.PosOnly, false, false)
	f, err := b.Build(craft.Packet{BTH: layers.BTH{Opcode: send, PKey: 0xFFFF, DestQP: 0x12}, Payload: make([]byte, 8)}, craft.DefaultStart)
	require.NoError(t, err)
	// The same frame tagged 802.1Q PCP 5, VLAN 100.
	tagged := append(append(append([]byte{}, f.Data[:12]...), 0x81, 0x00, 0xa0, 0x64), f.Data[12:]...)
	d := decode.NewDecoder(decode.Options{})
	for _, tc := range []struct {
		name string
		data []byte
		prio uint8
		src  decode.PrioritySource
		ok   bool
	}{
		{"dscp 26", f.Data, 3, decode.PriorityDSCP, true},
		{"vlan pcp 5", tagged, 5, decode.PriorityVLAN, true},
		{"pfc frame", pfcFrame, 0, decode.PriorityNone, false},
	} {
		p := d.Decode(decode.Input{Number: 1, LinkType: layers.LinkTypeEthernet, Data: tc.data, Length: len(tc.data)})
		prio, src, ok := p.Priority()
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.prio, prio, tc.name)
		assert.Equal(t, tc.src, src, tc.name)
	}
}

func TestParseLinkSpeed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{{"10G", 10e9}, {"25g", 25e9}, {"40G", 40e9}, {"50G", 50e9}, {"100G", 100e9}, {"200G", 200e9}, {"400G", 400e9}} {
		got, err := decode.ParseLinkSpeed(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{"", "1G", "100", "fast"} {
		_, err := decode.ParseLinkSpeed(bad)
		assert.Error(t, err, bad)
	}
	assert.InDelta(t, 5.12, decode.PFCOptions{LinkSpeed: 100e9}.QuantumNanos(), 1e-12)
	assert.Zero(t, decode.PFCOptions{}.QuantumNanos())
}

// analyzeFrames runs crafted frames through a Decoder and an Analyzer.
func analyzeFrames(t *testing.T, frames []craft.Frame, opts decode.AnalyzerOptions) *analyzed {
	t.Helper()
	res := &analyzed{packets: []decode.PacketAnalysis{{}}}
	opts.OnFinding = func(f decode.Finding) { res.findings = append(res.findings, f) }
	res.a = decode.NewAnalyzer(opts)
	dec := decode.NewDecoder(decode.Options{})
	for i, f := range frames {
		p := dec.Decode(decode.Input{Number: i + 1, Time: f.Time, LinkType: f.LinkType, Data: f.Data, Length: len(f.Data)})
		res.a.Analyze(p)
		res.packets = append(res.packets, p.Analysis)
	}
	res.a.Finish()
	return res
}
