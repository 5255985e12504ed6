package tui

import (
	"os"
	"testing"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
)

// FuzzFieldSpans feeds arbitrary frames to the byte locator of the detail
// view: it must not panic, and every span must lie inside the frame.
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
		spans := fieldSpans(p.Input, decode.Options{}, nodes)
		if len(spans) != len(nodes) {
			t.Fatalf("%d spans for %d lines", len(spans), len(nodes))
		}
		for i, s := range spans {
			if !s.empty() && (s.lo < 0 || s.hi > len(frame)) {
				t.Fatalf("%s: span %v outside a %d-byte frame", nodes[i].Field.Name, s, len(frame))
			}
		}
	})
}
