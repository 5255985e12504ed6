package ibdumpcli

import (
	"context"
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
// Cancelling ctx (Ctrl-C) stops the reading.
func runCorrelate(ctx context.Context, o *options, files []string, stdout, stderr io.Writer) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: --correlate: "+format+"\n", append([]any{o.prog}, args...)...)
		return exitError
	}
	points, err := CorrelatePoints(o.points, files)
	if err != nil {
		return fail("%v", err)
	}
	for _, z := range o.stats {
		if z != "path" {
			return fail("-z %s: with --correlate, -z path (the report) only", z)
		}
	}
	// -Y, -T fields|text|jsonl|ek and -V list the packets with their
	// ibwire.correlate.* fields; otherwise (or with -z path) the report.
	perPacket := o.filter != "" || o.verboseV || o.countOnly || o.outFormat != "" && o.outFormat != "json"
	report := !perPacket || len(o.stats) > 0
	if perPacket && report && o.outFormat != "" {
		return fail("-z path with -T %s: the report and the packets would mix", o.outFormat)
	}
	// Correlation matches transport packets: a QP's ULP decoding is
	// checked for its syntax and does not change what is matched.
	var ulp ulpChoice
	ports, err := parseDecodeAs(o.decodeAs, &ulp)
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
		cfg.Merge = func(_ int, p capture.Packet) error {
			if err := merged.WritePacket(p); err != nil {
				return fmt.Errorf("-w %s: %w", o.write, err)
			}
			return nil
		}
	}
	var rep *correlate.Report
	if perPacket {
		var status int
		if rep, status, err = correlatePackets(ctx, o, cfg, stdout, stderr); err != nil {
			return fail("%v", err)
		}
		if !report || status != exitOK {
			return status
		}
	} else if rep, err = correlate.Run(ctx, cfg); err != nil {
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

// CorrelatePoints names the capture points of --point NAME=FILE specs and
// of files (each named after its file), at least two: ibdump's and
// ibtui's --correlate.
func CorrelatePoints(specs, files []string) ([]correlate.Point, error) {
	var points []correlate.Point
	for _, spec := range specs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, fmt.Errorf("--point %s: want NAME=FILE", spec)
		}
		points = append(points, correlate.Point{Name: name, Path: file})
	}
	for _, file := range files {
		if file == "-" {
			return nil, fmt.Errorf("standard input cannot be correlated: each capture point is a file")
		}
		name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		name = strings.TrimSuffix(name, ".pcap")
		points = append(points, correlate.Point{Name: name, Path: file})
	}
	if len(points) < 2 {
		return nil, fmt.Errorf("want at least two captures, got %d", len(points))
	}
	return points, nil
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

// correlatedFrame is one packet of the per-packet mode: its first point's
// frame and what the correlation says of it.
type correlatedFrame struct {
	frame capture.Packet
	corr  decode.Correlation
}

// correlatedSource yields the packets of a correlation run to the dumper,
// in the order their fate becomes known (not capture order: a packet
// waits for its copies, its retransmission, or its PSN to fall out of
// reach).
type correlatedSource struct {
	d     *dumper
	items <-chan *correlatedFrame
	errc  <-chan error
	ended bool  // the run's error was read
	err   error // and this is it
}

func (s *correlatedSource) NextInto(p *capture.Packet) error {
	it, ok := <-s.items
	if !ok {
		if !s.ended {
			s.err, s.ended = <-s.errc, true
		}
		if s.err != nil {
			return s.err
		}
		return io.EOF
	}
	*p = it.frame
	s.d.correlation = &it.corr
	return nil
}

// correlatePackets runs the correlation with ibdump's per-packet output
// over the packets it settles.
func correlatePackets(ctx context.Context, o *options, cfg correlate.Config, stdout, stderr io.Writer) (*correlate.Report, int, error) {
	po := *o
	po.write, po.stats = "", nil
	d, err := newDumper(&po, stdout, stderr)
	if err != nil {
		return nil, 0, err
	}
	// The packets come in the order their fate is known, not in capture
	// order: a conversation analysis over them would be wrong.
	d.analyzer = nil
	items := make(chan *correlatedFrame, 256)
	errc := make(chan error, 1)
	done := make(chan struct{})
	names := make([]string, len(cfg.Points))
	for i, p := range cfg.Points {
		names[i] = p.Name
	}
	cfg.Frames = true
	cfg.Packet = func(s *correlate.Sighting) {
		if s.Frame.Data == nil {
			return
		}
		it := &correlatedFrame{frame: s.Frame, corr: correlationOf(s, names)}
		it.frame.Data = append([]byte(nil), s.Frame.Data...)
		select {
		case items <- it:
		case <-done:
		}
	}
	var rep *correlate.Report
	go func() {
		var err error
		rep, err = correlate.Run(ctx, cfg)
		close(items)
		errc <- err
	}()
	if d.fields != nil {
		d.out.Write(d.fields.AppendHeader(nil))
	}
	src := &correlatedSource{d: d, items: items, errc: errc}
	status := d.loop(ctx, src, nil)
	close(done)
	for range items { // let the run finish
	}
	if status == exitOK {
		d.finish(nil)
	}
	if err := d.out.Flush(); err != nil && status == exitOK {
		status = exitError
	}
	if !src.ended { // the loop stopped early (-c): the run's own end
		src.err = <-errc
	}
	if src.err != nil && status == exitOK {
		return nil, exitError, src.err
	}
	return rep, status, nil
}

// correlationOf turns a sighting into the fields' view of it.
func correlationOf(s *correlate.Sighting, names []string) decode.Correlation {
	c := decode.Correlation{Point: names[s.Point], LostOn: s.LostOn, Copy: s.Copy}
	var seen, dropped []string
	first, last := -1, -1
	for _, p := range s.Path {
		if s.Frames[p] != 0 {
			seen = append(seen, names[p])
			if first < 0 {
				first = p
			}
			last = p
		}
		if s.Dropped[p] {
			dropped = append(dropped, names[p])
		}
	}
	c.Seen, c.Dropped = strings.Join(seen, ","), strings.Join(dropped, ",")
	if first >= 0 && last != first {
		c.Delay, c.HasDelay = s.Times[last].Sub(s.Times[first]), true
	}
	return c
}
