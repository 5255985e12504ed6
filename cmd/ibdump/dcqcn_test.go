package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
)

// TestDCQCNThreeTimerSettings checks -z dcqcn -T json on the three DCQCN
// captures against craft's model of them (rebuilt, not read back): CE
// count, CNP count, least spacing, and each CNP's reaction frame.
func TestDCQCNThreeTimerSettings(t *testing.T) {
	type reaction struct {
		CNPFrame  int `json:"cnp_frame"`
		SlowFrame int `json:"slow_frame"`
	}
	type row struct {
		Flow      string     `json:"flow"`
		CE        int        `json:"ce"`
		ECT0      int        `json:"ect0"`
		CNPs      int        `json:"cnps"`
		MinGapUs  *float64   `json:"min_cnp_spacing_us"`
		Reactions []reaction `json:"reactions"`
		Victim    bool       `json:"victim"`
	}
	for _, c := range craft.CongestionCorpus() {
		t.Run(c.Name, func(t *testing.T) {
			m, err := c.Build()
			require.NoError(t, err)
			out, stderr, code := ibdump(t, nil, "-q", "-T", "json", "-z", "dcqcn", "../../pcaps/"+c.Name+".pcap")
			require.Zero(t, code, stderr)
			var got struct {
				DCQCN struct {
					Rows []row `json:"rows"`
				} `json:"dcqcn"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got), out)
			require.NotEmpty(t, got.DCQCN.Rows)
			r := got.DCQCN.Rows[0]
			assert.Equal(t, "192.168.1.1 > 192.168.1.2 QP 0x000012", r.Flow)
			assert.Equal(t, m.CEFrames, r.CE)
			assert.Equal(t, m.DataFrames-m.CEFrames, r.ECT0)
			assert.Equal(t, len(m.CNPs), r.CNPs)
			require.NotNil(t, r.MinGapUs)
			assert.InDelta(t, float64(m.MinCNPSpacing.Nanoseconds())/1e3, *r.MinGapUs, 1e-9)
			var want []reaction
			for _, x := range m.CNPs {
				want = append(want, reaction{x.Frame, x.FirstSlow})
			}
			assert.Equal(t, want, r.Reactions)
			assert.False(t, r.Victim)
			if c.Victim != nil {
				require.Len(t, got.DCQCN.Rows, 2)
				assert.True(t, got.DCQCN.Rows[1].Victim)
			}
		})
	}
}

// TestGraphRateSVG draws --graph rate of the DCQCN capture with its victim:
// a golden, a diamond per CNP, a tick per CE mark and a bar per rate cut,
// as many as -z dcqcn counts; a capture with no congestion says so.
func TestGraphRateSVG(t *testing.T) {
	draw := func(args ...string) string {
		t.Helper()
		file := filepath.Join(t.TempDir(), "rate.svg")
		_, stderr, code := ibdump(t, nil, append([]string{"-q", "--graph", "rate:" + file}, args...)...)
		require.Zero(t, code, stderr)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		return string(got)
	}
	got := draw("-z", "dcqcn,20us", "../../pcaps/dcqcn_paper.pcap")
	golden := filepath.Join("testdata", "golden", "graph-rate.svg")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.True(t, string(want) == got, "graph-rate.svg differs: run go test ./cmd/ibdump -run GraphRateSVG -update and review it")
	var c craft.NamedCongestion
	for _, x := range craft.CongestionCorpus() {
		if x.Name == "dcqcn_paper" {
			c = x
		}
	}
	m, err := c.Build()
	require.NoError(t, err)
	assert.Equal(t, len(m.CNPs), strings.Count(got, "l5 5l-5 5l-5 -5z"), "a diamond per CNP")
	assert.Equal(t, len(m.CNPs), strings.Count(got, "rate cut "), "a bar per measured cut")
	assert.Equal(t, m.CEFrames, strings.Count(got, "stroke=\"#238\"/>"), "a tick per CE mark, in the flow's colour")
	assert.Equal(t, 2, strings.Count(got, "<polyline"), "the flow and its victim")

	assert.Contains(t, draw("../../pcaps/rc_send.pcap"), "no ECN CE mark, FECN or CNP in the capture")
}
