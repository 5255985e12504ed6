package decode_test

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// corpusFrames returns the frames of the captures matching pattern.
func corpusFrames(t testing.TB, pattern string, max int) []capture.Packet {
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.Packet
	for _, f := range files {
		r, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < max; n++ {
			p, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
		r.Close()
	}
	return out
}

// FuzzAnalyze feeds a conversation's opening frames, then the fuzzed frame
// three times (as if resent), then the rest: the analyzer must not panic,
// must keep its bounds, and must say which frames its findings are about.
func FuzzAnalyze(f *testing.F) {
	context := corpusFrames(f, "../pcaps/rxe/rping.pcap", 40)
	for _, p := range corpusFrames(f, "../pcaps/*.pcap", 12) {
		f.Add(p.Data, uint32(p.LinkType))
	}
	f.Fuzz(func(t *testing.T, frame []byte, linkType uint32) {
		a := decode.NewAnalyzer(decode.AnalyzerOptions{MaxLive: 4, PFC: decode.PFCOptions{LinkSpeed: 10e9, StormWindow: 10 * time.Microsecond}, OnFinding: func(fd decode.Finding) {
			if fd.Frame == 0 || fd.Frame > 200 {
				t.Fatalf("finding about frame %d", fd.Frame)
			}
		}})
		dec := decode.NewDecoder(decode.Options{})
		n := 0
		feed := func(data []byte, lt uint32) {
			n++
			p := dec.Decode(decode.Input{Number: n, Time: time.Unix(0, int64(n)*1000), Length: len(data), LinkType: layers.LinkType(lt), Data: data})
			a.Analyze(p)
			if a.Live() > 5 {
				t.Fatalf("%d live conversations", a.Live())
			}
		}
		for i, p := range context {
			if i == 20 {
				for range 3 {
					feed(frame, linkType)
				}
			}
			feed(p.Data, uint32(p.LinkType))
		}
		a.Finish()
		_ = a.Conversations()
		_ = a.Expert().Rows()
	})
}
