package output

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
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

// TestTreePlanMatchesWalkChanged holds the plans to the full walk over
// streams made from the corpus's packets, each drawn again with a byte or
// two of its first 80 changed (to one of three values for each place, so
// that spans repeat and plans are kept) and a quarter of them cut short:
// packets of one key whose headers or span bytes differ from the plan's
// packet, which a plan must not draw as that packet.
func TestTreePlanMatchesWalkChanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 6))
	var packets, replayed int
	for _, file := range corpusCaptures(t) {
		r, err := capture.Open(file)
		require.NoError(t, err)
		var frames []capture.Packet
		for len(frames) < 40 {
			cp, err := r.Next()
			if err != nil {
				break
			}
			cp.Data = bytes.Clone(cp.Data)
			frames = append(frames, cp)
		}
		r.Close()
		if len(frames) == 0 {
			continue
		}
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
		var planned, walked Tree
		values := map[int][3]byte{}
		for k := range 300 {
			c := frames[k%len(frames)]
			c.Data, c.Number = bytes.Clone(c.Data), k+1
			for range rng.IntN(3) {
				at := rng.IntN(min(len(c.Data), 80) + 1)
				if at == len(c.Data) {
					continue
				}
				vs, ok := values[at]
				if !ok {
					vs = [3]byte{c.Data[at], byte(rng.IntN(256)), c.Data[at] ^ 1<<rng.IntN(8)}
					values[at] = vs
				}
				c.Data[at] = vs[rng.IntN(3)]
			}
			if len(c.Data) > 14 && rng.IntN(4) == 0 {
				c.Data = c.Data[:14+rng.IntN(len(c.Data)-14)]
			}
			p := dec.Decode(c)
			a.Analyze(p)
			want := string(walked.appendTree(nil, p, false))
			got := string(planned.appendTree(nil, p, true))
			if !assert.Equal(t, want, got, "%s: drawn packet %d (frame %d, %d bytes)", filepath.Base(file), k+1, frames[k%len(frames)].Number, len(c.Data)) {
				return
			}
			packets++
		}
		replayed += planned.replayed
	}
	t.Logf("%d of %d packets drawn from a plan", replayed, packets)
	assert.Greater(t, replayed, packets/4, "packets drawn from a plan")
}

// TestValueSpansFitPlans checks that a plan can use every field's span:
// addLine drops, without a word, one longer than a word or ending past
// spanRoom, which would only cost time.
func TestValueSpansFitPlans(t *testing.T) {
	n := 0
	for _, f := range decode.FieldsInWireOrder() {
		if sp, ok := f.Span(); ok {
			n++
			assert.LessOrEqual(t, sp.Len, uint8(8), f.Name)
			assert.LessOrEqual(t, int(sp.Off)+8, spanRoom, f.Name)
		}
	}
	assert.Positive(t, n)
}
