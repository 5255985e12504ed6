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
// the renderers may skip the group unasked.
func TestGatedGroupsAbsent(t *testing.T) {
	files := headerCorpus(t)
	all := decode.FieldsInWireOrder()
	gated, skipped := 0, 0
	for _, f := range files {
		r, err := capture.Open(f)
		require.NoError(t, err)
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
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
		r.Close()
	}
	assert.Positive(t, gated)
	assert.Equal(t, gated, skipped)
}
