package ibdumpcli

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestExpandClusters: the getopt habits of tcpdump and tshark users become
// flags the flag package parses, and nothing else is rewritten.
func TestExpandClusters(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, b := range []string{"n", "v", "vv", "X", "x", "xx", "t", "tttt", "q", "dc"} {
		fs.Bool(b, false, "")
	}
	for _, v := range []string{"c", "r", "T", "e", "Y", "color"} {
		fs.String(v, "", "")
	}
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"-nnvX"}, []string{"-n", "-n", "-v", "-X"}},
		{[]string{"-vv", "-tttt"}, []string{"-vv", "-tttt"}},
		{[]string{"-c1"}, []string{"-c", "1"}},
		{[]string{"-c", "1"}, []string{"-c", "1"}},
		{[]string{"-c=1"}, []string{"-c=1"}},
		{[]string{"-nc", "5", "f.pcap"}, []string{"-n", "-c", "5", "f.pcap"}},
		{[]string{"-nc5"}, []string{"-n", "-c", "5"}},
		{[]string{"-Tfields", "-eframe.number"}, []string{"-T", "fields", "-e", "frame.number"}},
		{[]string{"-r-"}, []string{"-r", "-"}},
		{[]string{"-Ybth.psn==1"}, []string{"-Y", "bth.psn==1"}},
		{[]string{"-Y", "-nnv"}, []string{"-Y", "-nnv"}}, // a value is never expanded
		{[]string{"-color=never", "-dc"}, []string{"-color=never", "-dc"}},
		{[]string{"-nz"}, []string{"-nz"}}, // z is no flag here: left for the flag package to refuse
		{[]string{"-n", "--", "-c1"}, []string{"-n", "--", "-c1"}},
		{[]string{"-vc"}, []string{"-v", "-c"}}, // nothing follows: the flag package says the value is missing
	} {
		assert.Equal(t, tc.want, expandClusters(fs, tc.in), "%q", tc.in)
	}
}

// TestFlagsFirst: flags after the files are read as tshark and GNU tools
// read them, and nothing after "--" is a flag.
func TestFlagsFirst(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Bool("q", false, "")
	fs.String("Y", "", "")
	fs.String("r", "", "")
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"f.pcap", "-Y", "nak"}, []string{"-Y", "nak", "--", "f.pcap"}},
		{[]string{"-q", "a.pcap", "b.pcap", "-Y", "-q"}, []string{"-q", "-Y", "-q", "--", "a.pcap", "b.pcap"}},
		{[]string{"-r", "-", "-q"}, []string{"-r", "-", "-q"}},
		{[]string{"-q", "-"}, []string{"-q", "--", "-"}},
		{[]string{"a.pcap", "--", "-odd.pcap"}, []string{"--", "a.pcap", "-odd.pcap"}},
		{[]string{"-Y=nak", "a.pcap"}, []string{"-Y=nak", "--", "a.pcap"}},
		{[]string{"-q"}, []string{"-q"}},
	} {
		assert.Equal(t, tc.want, flagsFirst(fs, tc.in), "%q", tc.in)
	}
}
