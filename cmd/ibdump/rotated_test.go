package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
)

// splitCapture writes the packets of path into len(sizes) files named as
// tcpdump -C names a rotation (f, f1, f2 ...), sizes[i] packets in file i
// (the last takes the rest).
func splitCapture(t *testing.T, path, dir string, sizes []int) []string {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var names []string
	var w *capture.Writer
	var f *os.File
	closeFile := func() {
		if w != nil {
			require.NoError(t, w.Close())
			require.NoError(t, f.Close())
		}
	}
	file, inFile := -1, 0
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if file < 0 || (file < len(sizes)-1 && inFile == sizes[file]) {
			closeFile()
			file, inFile = file+1, 0
			name := filepath.Join(dir, "rot.pcap")
			if file > 0 {
				name += string(rune('0' + file))
			}
			f, err = os.Create(name)
			require.NoError(t, err)
			w, err = capture.NewWriter(f, capture.FormatPcap, r.LinkType(), r.Nanos())
			require.NoError(t, err)
			names = append(names, name)
		}
		require.NoError(t, w.WritePacket(p))
		inFile++
	}
	closeFile()
	return names
}

// TestRotatedFilesReadAsOne splits captures whose connections run across
// the cuts into three rotated files and reads them back, in the shell's
// order and scrambled: -z conv,qp is byte for byte the original's.
func TestRotatedFilesReadAsOne(t *testing.T) {
	for _, tc := range []struct {
		path  string
		sizes []int
	}{
		{"../../pcaps/rxe/write_bw_loss.pcap", []int{700, 800, 0}},
		{"../../pcaps/rxe/send_bw_rnr.pcap", []int{1000, 1, 0}},
		{"../../pcaps/rxe/rping.pcap", []int{10, 20, 0}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			want, errOut, code := ibdump(t, nil, "-q", "-z", "conv,qp", "-z", "expert", tc.path)
			require.Equal(t, 0, code, errOut)
			files := splitCapture(t, tc.path, t.TempDir(), tc.sizes)
			require.Len(t, files, 3)
			for _, order := range [][]string{files, {files[2], files[0], files[1]}, {files[1], files[2], files[0]}} {
				got, errOut, code := ibdump(t, nil, append([]string{"-q", "-z", "conv,qp", "-z", "expert"}, order...)...)
				require.Equal(t, 0, code, errOut)
				assert.Equal(t, want, got, "files in the order %v", order)
			}
		})
	}
}
