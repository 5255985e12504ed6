package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDifferentialTsharkMACC compares every macc.* field (and
// frame.protocols) of the captures with PAUSE and PFC frames with tshark
// 4.0.17's decoding, checked in under testdata/tshark/macc (made by
// testdata/tshark/regen.sh testdata/tshark/macc/fields.txt
// testdata/tshark/macc CAPTURE): the infiniband fields.txt has no macc.
func TestDifferentialTsharkMACC(t *testing.T) {
	compared := compareEveryTsv(t, "testdata/tshark/macc/*.tsv")
	// pfc_pause.pcap: 15 MAC Control frames with 2 to 20 values each.
	assert.Greater(t, compared, 29*21-1)
	t.Logf("%d field values compared with tshark", compared)
}

// TestPFCAtThreeSpeeds checks -z pfc -T json on pcaps/pfc_pause.pcap at
// 10G, 25G and 100G against the numbers pcaps/MANIFEST.md gives (a quantum
// is 51.2, 20.48 and 5.12 ns).
func TestPFCAtThreeSpeeds(t *testing.T) {
	type interval struct {
		StartUs    float64 `json:"start_us"`
		EndUs      float64 `json:"end_us"`
		StartFrame uint32  `json:"start_frame"`
		EndFrame   uint32  `json:"end_frame"`
		Cut        bool    `json:"cut_by_capture_end"`
	}
	type violation struct {
		Frame    uint32 `json:"frame"`
		InFlight bool   `json:"in_flight"`
	}
	type row struct {
		Priority   string      `json:"priority"`
		PausedUs   float64     `json:"paused_us"`
		LongestUs  float64     `json:"longest_us"`
		Storms     int         `json:"storm_windows"`
		Intervals  []interval  `json:"intervals"`
		Violations []violation `json:"violations"`
	}
	for _, tc := range []struct {
		speed        string
		p3, all      row
		pausedAllUs  float64
		lastEndUs    float64
		lastCut      bool
		lastPausedUs float64
	}{
		{speed: "100G",
			p3: row{Priority: "3", PausedUs: 2735.539, LongestUs: 2335.539, Storms: 2, Intervals: []interval{
				{100, 500, 6, 10, false}, {1000, 3335.539, 18, 0, false}},
				Violations: []violation{{7, true}, {8, false}}},
			all: row{Priority: "all", PausedUs: 5.12, LongestUs: 5.12, Intervals: []interval{{700, 705.12, 16, 0, false}}, Violations: []violation{}}},
		{speed: "25G",
			p3: row{Priority: "3", PausedUs: 2800, LongestUs: 2400, Storms: 2, Intervals: []interval{
				{100, 500, 6, 10, false}, {1000, 3400, 18, 0, true}},
				Violations: []violation{{7, true}, {8, false}, {29, false}}},
			all: row{Priority: "all", PausedUs: 20.48, LongestUs: 20.48, Intervals: []interval{{700, 720.48, 16, 0, false}}, Violations: []violation{{17, false}}}},
		{speed: "10G",
			p3: row{Priority: "3", PausedUs: 2800, LongestUs: 2400, Storms: 2, Intervals: []interval{
				{100, 500, 6, 10, false}, {1000, 3400, 18, 0, true}},
				Violations: []violation{{7, true}, {8, false}, {29, false}}},
			all: row{Priority: "all", PausedUs: 51.2, LongestUs: 51.2, Intervals: []interval{{700, 751.2, 16, 0, false}}, Violations: []violation{{17, false}}}},
	} {
		t.Run(tc.speed, func(t *testing.T) {
			out, stderr, code := ibdump(t, nil, "-q", "-T", "json", "-z", "pfc,1ms,50", "--link-speed", tc.speed, "../../pcaps/pfc_pause.pcap")
			require.Zero(t, code, stderr)
			var got struct {
				PFC struct {
					Rows []row `json:"rows"`
				} `json:"pfc"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			require.Len(t, got.PFC.Rows, 3)
			assert.Equal(t, tc.p3, got.PFC.Rows[0])
			assert.Equal(t, tc.all, got.PFC.Rows[2])
		})
	}
}

// TestPFCFieldsAndDefaultLine: the analysis fields filter, the summary
// names the pause, and without a speed the table says durations are unknown.
func TestPFCFieldsAndDefaultLine(t *testing.T) {
	capture := "../../pcaps/pfc_pause.pcap"
	out, _, code := ibdump(t, nil, "-T", "fields", "-e", "frame.number", "-Y", "ibwire.analysis.pfc.sent_while_paused", "--link-speed", "100G", capture)
	require.Zero(t, code)
	assert.Equal(t, "8\n", out)
	out, _, _ = ibdump(t, nil, "-T", "fields", "-e", "frame.number", "-e", "ibwire.analysis.pfc.paused_for", "-Y", "ibwire.analysis.pfc.in_flight", "--link-speed", "100G", capture)
	assert.Equal(t, "7\t0.000000050\n", out)
	out, _, _ = ibdump(t, nil, "-T", "fields", "-e", "frame.number", "-Y", "ibwire.analysis.pfc.refresh && macc.opcode == PFC", "--link-speed", "100G", "-c", "12", capture)
	assert.Equal(t, "9\n", out)
	// The priority shows once pause frames have: frame 1 has none before it.
	out, _, _ = ibdump(t, nil, "-T", "fields", "-e", "ibwire.analysis.pfc.priority", "-e", "ibwire.analysis.pfc.priority_source", "-c", "7", capture)
	assert.Equal(t, "\t\n\t\n\t\n\t\n\t\n\t\n3\tdscp\n", out)
	out, _, _ = ibdump(t, nil, "-c", "6", capture)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.True(t, strings.HasSuffix(lines[5], "02:00:00:00:00:02 > 01:80:c2:00:00:01: PFC pause p3=65535 p4=0 quanta"), lines[5])
	out, _, _ = ibdump(t, nil, "-Y", "macc.opcode == PAUSE", capture)
	assert.True(t, strings.HasSuffix(strings.TrimSpace(out), ": PAUSE 1000 quanta"), out)
	out, _, _ = ibdump(t, nil, "-q", "-z", "pfc", capture)
	assert.Contains(t, out, "Durations unknown (quanta only)")
	_, stderr, code := ibdump(t, nil, "-q", "-z", "pfc", "--link-speed", "33G", capture)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "--link-speed")
}

// TestMACCTree checks -V's MAC Control lines against tshark 4.0.17 -V -O
// macc on testdata/macc-edge.pcap (the lines both print the same; tshark
// also nests the class bits under the vector, with bit masks, and the
// times under "CBFC Class Pause Times").
func TestMACCTree(t *testing.T) {
	out, stderr, code := ibdump(t, nil, "-V", "-O", "macc", "../../testdata/macc-edge.pcap")
	require.Zero(t, code, stderr)
	for _, line := range []string{
		"MAC Control\n    Opcode: Class Based Flow Control [CBFC] Pause (0x0101)\n",
		"MAC Control\n    Opcode: Pause (0x0001)\n    pause_time: 65535\n",
		"MAC Control\n    Opcode: Report (0x0003)\n    Timestamp: 0\n",
		"MAC Control\n    Opcode: Unknown (0x0007)\n",
	} {
		assert.Contains(t, out, line)
	}
}
