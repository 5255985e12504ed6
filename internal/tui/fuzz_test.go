package tui

import (
	"os"
	"testing"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
)

// FuzzFieldSpans feeds arbitrary frames to the detail tree: placing its
// lines' bytes must not panic, every span must lie inside the frame, and a
// protocol's span must hold those of its lines.
func FuzzFieldSpans(f *testing.F) {
	for _, path := range []string{writeLoss, rping, sendRNR} {
		r, err := capture.Open(path)
		if err != nil {
			f.Fatal(err)
		}
		for i := 0; i < 30; i++ {
			cp, err := r.Next()
			if err != nil {
				break
			}
			f.Add(append([]byte(nil), cp.Data...))
		}
		r.Close()
	}
	if b, err := os.ReadFile("../../testdata/vectors/scapy-rocev2.pcap"); err == nil {
		f.Add(b[40:min(len(b), 200)])
	}
	dec := decode.NewDecoder(decode.Options{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		in := decode.Input{Number: 1, Length: len(frame), LinkType: layers.LinkTypeEthernet, Data: frame}
		p := dec.Decode(in)
		nodes := output.TreeNodes(p)
		for i, n := range nodes {
			if !n.Span.Empty() && (n.Span.Lo < 0 || n.Span.Hi > len(frame)) {
				t.Fatalf("%s: span %v outside a %d-byte frame", n.Field.Name, n.Span, len(frame))
			}
			for j := i + 1; j < len(nodes) && nodes[j].Depth > n.Depth; j++ {
				if s := nodes[j].Span; !s.Empty() && n.Span.Union(s) != n.Span {
					t.Fatalf("%s %v does not hold %s %v", n.Field.Name, n.Span, nodes[j].Field.Name, s)
				}
			}
		}
	})
}
