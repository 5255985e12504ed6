package ibdumpcli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/ibwire/ibwire/capture"
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
	cfg := correlate.Config{
		Points:     points,
		Window:     o.window,
		NoClockFix: o.noClockFix,
		Decode:     decode.Options{DecodeDC: o.dc, RoCEv2Ports: ports},
	}
	var merged *capture.Writer
	if o.write != "" {
		if o.write == "-" {
			return fail("-w -: the merged capture goes to a file (standard output carries the report)")
		}
		if merged, err = createMerged(o.write, points); err != nil {
			return fail("-w %s: %v", o.write, err)
		}
		defer merged.Close()
		cfg.Merge = func(_ int, p capture.Packet) error { return merged.WritePacket(p) }
	}
	rep, err := correlate.Run(cfg)
	if err != nil {
		return fail("%v", err)
	}
	if merged != nil {
		if err := merged.Close(); err != nil {
			return fail("-w %s: %v", o.write, err)
		}
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

// createMerged starts the merged capture: pcapng, one interface per point,
// named after it, with the link type of the point's capture.
func createMerged(path string, points []correlate.Point) (*capture.Writer, error) {
	ifaces := make([]capture.NamedInterface, len(points))
	for i, p := range points {
		r, err := capture.Open(p.Path)
		if err != nil {
			return nil, err
		}
		ifaces[i] = capture.NamedInterface{Name: p.Name, LinkType: r.LinkType()}
		r.Close()
	}
	return capture.CreateInterfaces(path, ifaces, true)
}
