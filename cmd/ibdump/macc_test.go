package main

import (
	"path/filepath"
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
	tsvs, err := filepath.Glob("testdata/tshark/macc/*.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, tsvs)
	compared := 0
	for _, tsv := range tsvs {
		name := strings.TrimSuffix(filepath.Base(tsv), ".tsv")
		t.Run(name, func(t *testing.T) {
			compared += compareWithTshark(t, captureFor(t, name), tsv)
		})
	}
	// pfc_pause.pcap: 15 MAC Control frames with 2 to 20 values each.
	assert.Greater(t, compared, 29*21-1)
	t.Logf("%d field values compared with tshark", compared)
}
