package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
)

// TestFramesByOffset reads chosen records by their offsets (as the
// packets table of -T parquet gives them) and checks each prints as the
// same frame does in a full read.
func TestFramesByOffset(t *testing.T) {
	fields := []string{"-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch", "-e", "bth.opcode", "-e", "bth.psn", "-e", "aeth.syndrome"}
	for _, tc := range []struct {
		path   string
		frames []int
	}{
		{"../../pcaps/rxe/write_bw_loss.pcap", []int{2243, 159, 1, 856}},
		{"../../capture/testdata/mixed.pcapng", []int{3, 1}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			full, errOut, code := ibdump(t, nil, append(fields, tc.path)...)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(full, "\n")
			offsets := recordOffsets(t, tc.path)
			var refs, offs []string
			var want []string
			for _, f := range tc.frames {
				refs = append(refs, fmt.Sprintf("%s:%d@%d", tc.path, f, offsets[f-1]))
				offs = append(offs, fmt.Sprint(offsets[f-1]))
				want = append(want, lines[f-1])
			}
			got, errOut, code := ibdump(t, nil, append(fields, "--frames", strings.Join(refs, ","))...)
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, strings.Join(want, "\n")+"\n", got)

			// -r FILE --offsets numbers the records by their place in the list.
			got, errOut, code = ibdump(t, nil, append(fields, "-r", tc.path, "--offsets", strings.Join(offs, ","))...)
			require.Equal(t, 0, code, errOut)
			for i, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				_, rest, _ := strings.Cut(want[i], "\t")
				assert.Equal(t, fmt.Sprintf("%d\t%s", i+1, rest), line)
			}
		})
	}
}

func recordOffsets(t *testing.T, path string) []int64 {
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var offsets []int64
	var p capture.Packet
	for r.NextInto(&p) == nil {
		offsets = append(offsets, p.Offset)
	}
	return offsets
}

func TestFramesRefused(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile("../../pcaps/rxe/rping.pcap")
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw)
	require.NoError(t, zw.Close())
	gzPath := filepath.Join(dir, "rping.pcap.gz")
	require.NoError(t, os.WriteFile(gzPath, gz.Bytes(), 0o644))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"gzip", []string{"--frames", gzPath + ":1@24"}, "rping.pcap.gz: at byte 0: gzip-compressed: records cannot be read by offset"},
		{"no offset", []string{"--frames", "f.pcap:3"}, "--frames f.pcap:3: want FILE:FRAME@OFFSET"},
		{"bad offset", []string{"--frames", "f.pcap:3@x"}, `the offset "x" is not a byte offset`},
		{"not a record", []string{"-r", "../../pcaps/rxe/rping.pcap", "--offsets", "24,25"}, "packet 2 at byte 25: no packet record at this offset: a sub-second fraction of 704646170"},
		{"past the end", []string{"-r", "../../pcaps/rxe/rping.pcap", "--offsets", "999999999"}, "no packet record at this offset: the file has"},
		{"both", []string{"--frames", "f.pcap:1@24", "-r", "f.pcap"}, "--frames names files itself"},
		{"offsets of stdin", []string{"-r", "-", "--offsets", "24"}, "--offsets reads one file by offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := ibdump(t, nil, tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, tc.want)
		})
	}
}
