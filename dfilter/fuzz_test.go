package dfilter_test

import (
	"testing"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
)

// FuzzCompile checks that Compile never panics, that the canonical form
// compiles back to itself, that matching never panics, and that completion
// never panics on any prefix.
func FuzzCompile(f *testing.F) {
	for _, c := range vectorCases {
		f.Add(c.expr)
	}
	for _, c := range captureCases {
		f.Add(c.expr)
	}
	for _, r := range representative {
		f.Add(r.expr)
	}
	for _, s := range []string{`frame.protocols == "tab\there \u00e9\101\x00\xff"`, `frame.protocols matches r"\d+\"x"`,
		"grh.sgid == 192.168.77.11/24", "frame.time_epoch > 1e9", `ibwire.payload contains ""`, "bth.se in {0, 1}",
		"((((bth.se))))", "!!!bth.se", "bth.psn & 0xff in {1..2 3}", "bth.opcode == ", `"`, `r"\`} {
		f.Add(s)
	}
	frames := readPcap(f, vectors+"scapy-rocev2.pcap")
	f.Fuzz(func(t *testing.T, expr string) {
		dfilter.Complete(expr)
		dfilter.TokenStart(expr)
		flt, err := dfilter.Compile(expr)
		if err != nil {
			if se, ok := err.(*dfilter.SyntaxError); !ok || se.Column < 1 || se.Column > len(expr)+1 {
				t.Fatalf("%q: bad error %#v", expr, err)
			} else {
				se.Caret(expr)
			}
			return
		}
		s := flt.String()
		again, err := dfilter.Compile(s)
		if err != nil {
			t.Fatalf("%q prints as %q, which does not compile: %v", expr, s, err)
		}
		if again.String() != s {
			t.Fatalf("%q prints as %q, which prints as %q", expr, s, again.String())
		}
		d := decode.NewDecoder(decode.Options{})
		for _, in := range frames[:8] {
			p := d.Decode(in)
			if flt.Match(p) != again.Match(p) {
				t.Fatalf("%q and its canonical form %q disagree on frame %d", expr, s, in.Number)
			}
		}
	})
}
