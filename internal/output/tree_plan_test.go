package output

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// corpusCaptures are the repository's captures: pcaps/ and every
// package's testdata.
func corpusCaptures(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		name := d.Name()
		if !d.IsDir() && (strings.HasSuffix(name, ".pcap") || strings.HasSuffix(name, ".pcap.gz") || strings.HasSuffix(name, ".pcapng")) &&
			(strings.Contains(path, "/pcaps/") || strings.Contains(path, "/testdata/")) {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(files), 50)
	return files
}

// TestTreePlanMatchesWalk holds the tree drawn from plans (one Tree
// drawing a capture's packets in order, as ibdump -V does) to the full
// walk, packet by packet, over every capture of the repository, whole and
// cut by a snapshot length at several places (cut headers, a cut payload,
// a missing ICRC), with the analysis: every shape the corpus has, the
// malformed and cut ones, MADs, CM, the upper layers' bodies and the
// analysis's findings. It also checks that the plans drew most packets.
func TestTreePlanMatchesWalk(t *testing.T) {
	var packets, replayed int
	for _, file := range corpusCaptures(t) {
		// Whole, then cut in the IP header, the BTH, an extended header
		// and the payload (the cut captures' first 400 packets).
		for _, snap := range []int{0, 34, 50, 60, 74, 130} {
			t.Run(filepath.Base(file)+"/snap"+itoa(snap), func(t *testing.T) {
				r, err := capture.Open(file)
				require.NoError(t, err)
				defer r.Close()
				dec := decode.NewDecoder(decode.Options{})
				a := decode.NewAnalyzer(decode.AnalyzerOptions{})
				var planned, walked Tree
				n := 0
				for {
					cp, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil || snap > 0 && n == 400 {
						break // a torn file's packets so far; enough of a cut one's
					}
					if snap > 0 && len(cp.Data) > snap {
						cp.Data = cp.Data[:snap]
					}
					p := dec.Decode(cp)
					a.Analyze(p)
					want := string(walked.appendTree(nil, p, false))
					got := string(planned.appendTree(nil, p, true))
					if !assert.Equal(t, want, got, "frame %d", cp.Number) {
						return
					}
					n++
				}
				packets += n
				replayed += planned.replayed
			})
		}
	}
	t.Logf("%d of %d packets drawn from a plan", replayed, packets)
	assert.Greater(t, replayed, packets*3/4, "packets drawn from a plan")
}

func itoa(n int) string { return string(appendDec(nil, uint64(n))) }
