package decode_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestGatedGroupsAbsent checks SkipAbsentGroup's promise on every packet of
// the corpus: when a packet lacks what a group needs (a MAD, NVMe-oF), no
// field of the group, tree-only items included, has any occurrence, so
// the renderers may skip the group unasked. Each capture is analysed as
// ibdump -2 --link-speed 100G analyses it, both passes checked: the second
// pass sets what later frames say of earlier ones (a request's response
// frames), the link speed the pause frames' start, refresh and resume.
func TestGatedGroupsAbsent(t *testing.T) {
	files := headerCorpus(t)
	all := decode.FieldsInWireOrder()
	gated, skipped := 0, 0
	for _, f := range files {
		links := decode.NewFrameLinks()
		for pass := 1; pass <= 2; pass++ {
			if pass == 2 {
				links.SecondPass()
			}
			gated, skipped = checkGates(t, f, all, links, gated, skipped)
		}
	}
	assert.Positive(t, gated)
	assert.Equal(t, gated, skipped)
}

// checkGates is TestGatedGroupsAbsent's pass over one capture: it adds
// to gated the fields whose gate failed, and to skipped those
// SkipAbsentGroup skipped.
func checkGates(t *testing.T, f string, all []*decode.Field, links *decode.FrameLinks, gated, skipped int) (int, int) {
	r, err := capture.Open(f)
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	a := decode.NewAnalyzer(decode.AnalyzerOptions{Links: links, PFC: decode.PFCOptions{LinkSpeed: 100e9}})
	var cp capture.Packet
	for n := 1; r.NextInto(&cp) == nil; n++ {
		p := dec.Decode(cp)
		a.Analyze(p)
		for i, fd := range all {
			if !decode.GateFails(p, fd) {
				continue
			}
			gated++
			var v decode.Value
			for occ := 0; occ < 4; occ++ {
				if fd.GetOccurrence(p, occ, &v) {
					t.Errorf("%s frame %d: %s (occurrence %d) is there though its group's gate fails", filepath.Base(f), n, fd.Name, occ)
				}
			}
			if j, skip := decode.SkipAbsentGroup(p, i); skip {
				assert.Greater(t, j, i)
				skipped++
			}
		}
	}
	return gated, skipped
}
