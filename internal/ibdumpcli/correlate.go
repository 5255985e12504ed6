package ibdumpcli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// runCorrelate is ibdump --correlate: each file (or --point NAME=FILE) is
// one capture point of the same traffic.
func runCorrelate(o *options, files []string, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: --correlate: "+format+"\n", append([]any{o.prog}, args...)...)
		return exitError
	}
	var points []correlate.Point
	for _, spec := range o.points {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return fail("--point %s: want NAME=FILE", spec)
		}
		points = append(points, correlate.Point{Name: name, Path: file})
	}
	for _, file := range files {
		if file == "-" {
			return fail("standard input cannot be correlated: it is read twice")
		}
		name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		name = strings.TrimSuffix(name, ".pcap")
		points = append(points, correlate.Point{Name: name, Path: file})
	}
	if len(points) < 2 {
		return fail("want at least two captures, got %d", len(points))
	}
	switch o.outFormat {
	case "", "text", "json":
	default:
		return fail("-T %s: the report is text or json", o.outFormat)
	}
	ports, _, err := parseDecodeAs(o.decodeAs)
	if err != nil {
		return fail("%v", err)
	}
	rep, err := correlate.Run(correlate.Config{
		Points:     points,
		Window:     o.window,
		NoClockFix: o.noClockFix,
		Decode:     decode.Options{DecodeDC: o.dc, RoCEv2Ports: ports},
	})
	if err != nil {
		return fail("%v", err)
	}
	if o.outFormat == "json" {
		err = output.WriteCorrelationJSON(stdout, rep)
	} else {
		err = output.WriteCorrelation(stdout, rep)
	}
	if err != nil {
		return fail("%v", err)
	}
	return exitOK
}
