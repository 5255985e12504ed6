package decode_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// analyzed is a capture run through an Analyzer: every finding in order,
// each packet's analysis by frame number, and the analyzer.
type analyzed struct {
	findings []decode.Finding
	packets  []decode.PacketAnalysis // index = frame number
	a        *decode.Analyzer
}

// analyze runs the packets of path through a Decoder and an Analyzer.
func analyze(t testing.TB, path string, opts decode.AnalyzerOptions) *analyzed {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	res := &analyzed{packets: []decode.PacketAnalysis{{}}}
	user := opts.OnFinding
	opts.OnFinding = func(f decode.Finding) {
		res.findings = append(res.findings, f)
		if user != nil {
			user(f)
		}
	}
	res.a = decode.NewAnalyzer(opts)
	dec := decode.NewDecoder(decode.Options{})
	var cp capture.Packet
	for {
		err := r.NextInto(&cp)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		p := dec.Decode(cp)
		res.a.Analyze(p)
		res.packets = append(res.packets, p.Analysis)
	}
	res.a.Finish()
	return res
}

// count returns the number of findings of kind k.
func (r *analyzed) count(k decode.FindingKind) int {
	n := 0
	for _, f := range r.findings {
		if f.Kind == k {
			n++
		}
	}
	return n
}

func (r *analyzed) dump() string {
	var b strings.Builder
	for _, f := range r.findings {
		fmt.Fprintf(&b, "%d %s ref=%d psn=%d sub=%d sev=%s conv=%d\n", f.Frame, f.Kind, f.Ref, f.PSN, f.Sub, f.Severity, f.Conv)
	}
	return b.String()
}
