package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"golang.org/x/term"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/pcaps"
)

// source is what a capture file reader and a live capture have in common.
type source interface {
	NextInto(*capture.Packet) error
}

// dumper is one ibdump run: the decoder, the filter, the renderer and the
// counters for --check and -z.
type dumper struct {
	o       *options
	out     *bufio.Writer
	stderr  io.Writer
	dec     *decode.Decoder
	filter  *dfilter.Filter
	summary output.Summary
	text    output.TextLine
	tree    output.Tree
	fields  *output.Fields
	json    output.JSON
	ek      output.EK
	jsonl   output.JSONL
	writer  *capture.Writer
	flows   *decode.QPFlows
	iostats []ioStat
	color   bool
	buf     []byte

	read, shown                     int
	ib, icrcBad, vcrcBad, malformed int
	problems                        []string
	progress                        *progress
}

type ioStat struct {
	stat     *decode.IOStat
	filters  []string
	compiled []*dfilter.Filter
}

func newDumper(o *options, stdout, stderr io.Writer) (*dumper, error) {
	d := &dumper{o: o, out: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr}
	ports, err := parseDecodeAs(o.decodeAs)
	if err != nil {
		return nil, err
	}
	if o.filter != "" {
		f, err := dfilter.Compile(o.filter)
		if err != nil {
			var se *dfilter.SyntaxError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("-Y: %w\n%s", err, se.Caret(o.filter))
			}
			return nil, fmt.Errorf("-Y: %w", err)
		}
		d.filter = f
	}
	for _, z := range o.stats {
		if err := d.addStat(z); err != nil {
			return nil, err
		}
	}
	// Runs that print nothing per packet and do not check skip the CRCs,
	// unless a filter reads them.
	skipCRC := (o.quiet || o.countOnly || (o.write != "" && !o.print)) && !o.check && !d.filtersReadCRC()
	d.dec = decode.NewDecoder(decode.Options{DecodeDC: o.dc, RoCEv2Ports: ports, SkipCRC: skipCRC, LinkLayers: capture.DecodingLinkLayers()})
	if d.color, err = colorEnabled(o.color, stdout); err != nil {
		return nil, err
	}
	d.summary = output.Summary{Nanos: o.nano && !o.micro, Number: o.number, Verbose: int(o.verbose), Ether: o.ether}
	for i, on := range o.times {
		if on {
			d.summary.Time = [...]output.TimeFormat{output.TimeNone, output.TimeEpoch, output.TimeDelta, output.TimeDate, output.TimeSinceFirst}[i]
		}
	}
	d.tree.Only = o.only
	switch o.outFormat {
	case "", "text", "json", "jsonl", "ek":
	case "fields":
		var fo output.FieldsOptions
		for _, e := range o.fieldOpts {
			if err := fo.ParseFieldsOption(e); err != nil {
				return nil, err
			}
		}
		if d.fields, err = output.NewFields(o.fields, fo); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("-T %s: want text, fields, json, jsonl or ek", o.outFormat)
	}
	if len(o.fields) > 0 && o.outFormat != "fields" {
		return nil, errors.New("-e needs -T fields (ibdump's -e is tshark's; tcpdump's -e is --ether)")
	}
	return d, nil
}

// filtersReadCRC reports whether -Y or a -z filter reads a CRC status.
func (d *dumper) filtersReadCRC() bool {
	fs := []*dfilter.Filter{d.filter}
	for _, s := range d.iostats {
		fs = append(fs, s.compiled...)
	}
	for _, f := range fs {
		if f == nil {
			continue
		}
		for _, fd := range f.Fields() {
			if strings.Contains(fd.Name, "crc") {
				return true
			}
		}
	}
	return false
}

// addStat parses one -z argument.
func (d *dumper) addStat(z string) error {
	switch {
	case z == "conv,qp":
		d.flows = decode.NewQPFlows()
	case strings.HasPrefix(z, "io,stat,"):
		parts := strings.Split(strings.TrimPrefix(z, "io,stat,"), ",")
		secs, err := parseSeconds(parts[0])
		if err != nil {
			return fmt.Errorf("-z %s: bad interval %q", z, parts[0])
		}
		s := ioStat{stat: &decode.IOStat{Interval: secs}}
		for _, expr := range parts[1:] {
			f, err := dfilter.Compile(expr)
			if err != nil {
				return fmt.Errorf("-z %s: %w", z, err)
			}
			s.stat.Columns = append(s.stat.Columns, f.Match)
			s.filters = append(s.filters, expr)
			s.compiled = append(s.compiled, f)
		}
		d.iostats = append(d.iostats, s)
	default:
		return fmt.Errorf("-z %s: known statistics are conv,qp and io,stat,INTERVAL[,FILTER...]", z)
	}
	return nil
}

func parseSeconds(s string) (time.Duration, error) {
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err != nil || f < 0 {
		return 0, fmt.Errorf("bad interval")
	}
	return time.Duration(f * float64(time.Second)), nil
}

// run reads every packet of the sources and reports; it returns the exit status.
func (d *dumper) run(ctx context.Context, files []string, stdin io.Reader) int {
	var src source
	var live *capture.LiveSource
	name := ""
	switch {
	case d.o.iface != "":
		snap := d.o.snaplen
		if snap <= 0 {
			snap = 262144
		}
		l, err := capture.OpenLive(d.o.iface, snap, capture.RoCEFilter())
		if err != nil {
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
		defer l.Close()
		if !d.o.noPromisc {
			_ = l.SetPromiscuous(true)
		}
		fmt.Fprintf(d.stderr, "ibdump: listening on %s, link-type %v, snapshot length %d bytes\n", d.o.iface, l.LinkType(), snap)
		src, live, name = l, l, d.o.iface
	case len(files) == 0:
		fmt.Fprintf(d.stderr, "ibdump: no capture given: decoding the bundled sample %s (run ibdump -h for usage)\n", pcaps.SampleName)
		r, err := capture.NewReader(bytes.NewReader(pcaps.Sample), pcaps.SampleName)
		if err != nil {
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
		src, name = r, pcaps.SampleName
	case len(files) == 1 && files[0] == "-":
		r, err := capture.NewReader(stdin, "stdin")
		if err != nil {
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
		src, name = r, "stdin"
	default:
		r, err := capture.OpenMulti(files...)
		if err != nil {
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
		defer r.Close()
		src, name = r, strings.Join(files, ", ")
	}
	if f, ok := d.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && live == nil && !d.o.lineBuf {
		d.progress = &progress{w: d.stderr, name: name}
	}
	if d.o.write != "" {
		if err := d.openWriter(src); err != nil {
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
	}
	if d.o.outFormat == "json" {
		d.buf = d.json.Begin(d.buf[:0])
		d.out.Write(d.buf)
	}
	if d.fields != nil {
		d.out.Write(d.fields.AppendHeader(nil))
	}
	status := d.loop(ctx, src, live)
	d.finish(live)
	if d.writer != nil {
		if err := d.writer.Close(); err != nil && status == exitOK {
			fmt.Fprintf(d.stderr, "ibdump: -w %s: %v\n", d.o.write, err)
			status = exitError
		}
	}
	if err := d.out.Flush(); err != nil && status == exitOK {
		status = exitError
	}
	if status == exitOK && d.o.check && (d.icrcBad+d.vcrcBad+d.malformed) > 0 {
		status = exitFindings
	}
	return status
}

func (d *dumper) openWriter(src source) error {
	var lt capture.LinkType = capture.LinkType(decode.LinkTypeEthernet)
	if r, ok := src.(*capture.Reader); ok {
		lt = r.LinkType()
	} else if l, ok := src.(*capture.LiveSource); ok {
		lt = l.LinkType()
	}
	format := capture.FormatPcap
	switch d.o.format {
	case "pcap":
	case "pcapng":
		format = capture.FormatPcapNG
	default:
		return fmt.Errorf("-F %s: want pcap or pcapng", d.o.format)
	}
	var w io.Writer = d.out
	if d.o.write != "-" {
		f, err := os.Create(d.o.write)
		if err != nil {
			return err
		}
		w = f
	}
	cw, err := capture.NewWriter(w, format, lt, d.o.nano)
	if err != nil {
		return err
	}
	d.writer = cw
	return nil
}

// loop reads packets until the source ends, -c is reached or ctx is done.
func (d *dumper) loop(ctx context.Context, src source, live *capture.LiveSource) int {
	var cp capture.Packet
	for d.o.count == 0 || d.read < d.o.count {
		if live != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			_ = live.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		}
		err := src.NextInto(&cp)
		if errors.Is(err, io.EOF) {
			return exitOK
		}
		if err != nil {
			if live != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			d.out.Flush()
			d.progress.clear()
			fmt.Fprintf(d.stderr, "ibdump: %v\n", err)
			return exitError
		}
		if ctx.Err() != nil && live == nil {
			return exitOK
		}
		d.read++
		p := d.dec.Decode(decode.Input{Number: cp.Number, Time: cp.Info.Timestamp, Length: cp.Info.Length,
			LinkType: uint32(cp.LinkType), Interface: cp.Interface, Data: cp.Data})
		d.account(p)
		if d.filter != nil && !d.filter.Match(p) {
			continue
		}
		d.shown++
		if d.flows != nil {
			d.flows.Add(p)
		}
		for _, s := range d.iostats {
			s.stat.Add(p)
		}
		if d.writer != nil {
			if err := d.writer.WritePacket(cp); err != nil {
				fmt.Fprintf(d.stderr, "ibdump: -w %s: %v\n", d.o.write, err)
				return exitError
			}
			if !d.o.print {
				d.progress.update(d.read)
				continue
			}
		}
		d.render(p)
		if d.o.lineBuf {
			d.out.Flush()
		}
		d.progress.update(d.read)
	}
	return exitOK
}

// account keeps the --check counters.
func (d *dumper) account(p *decode.Packet) {
	if p.Err != nil {
		d.malformed++
		if d.o.check {
			d.problems = append(d.problems, fmt.Sprintf("frame %d: malformed: %v", p.Number, p.Err))
		}
		return
	}
	if !p.IsIB() {
		return
	}
	d.ib++
	b := p.BTH()
	if p.ICRC == layers.CRCBad {
		d.icrcBad++
		if d.o.check {
			d.problems = append(d.problems, fmt.Sprintf("frame %d: bad ICRC 0x%08x, computed 0x%08x (%v QP 0x%06x PSN %v)",
				p.Number, b.Trailer.ICRC, p.ICRCComputed, b.Opcode, b.DestQP, b.PSN))
		}
	}
	if p.VCRC == layers.CRCBad {
		d.vcrcBad++
		if d.o.check {
			d.problems = append(d.problems, fmt.Sprintf("frame %d: bad VCRC 0x%04x, computed 0x%04x", p.Number, p.Headers.LRH.VCRC, p.VCRCComputed))
		}
	}
}

// render prints one packet in the chosen format.
func (d *dumper) render(p *decode.Packet) {
	if d.o.quiet || d.o.countOnly {
		return
	}
	b := d.buf[:0]
	switch d.o.outFormat {
	case "fields":
		b = append(d.fields.Append(b, p), '\n')
	case "json":
		b = d.json.Append(b, p)
	case "jsonl":
		b = d.jsonl.Append(b, p)
	case "ek":
		b = d.ek.Append(b, p)
	case "text":
		if !d.o.verboseV {
			b = append(d.text.Append(b, p), '\n')
		}
	default:
		if !d.o.verboseV {
			start := len(b)
			b = d.summary.Append(b, p)
			if d.color {
				b = colorize(b, start, p)
			}
			b = append(b, '\n')
		}
	}
	if d.o.verboseV && d.o.outFormat != "json" && d.o.outFormat != "jsonl" && d.o.outFormat != "ek" && d.o.outFormat != "fields" {
		b = d.tree.Append(b, p)
	}
	if d.o.hex > 0 || d.o.hexASCII > 0 {
		data := p.Data
		if max(d.o.hex, d.o.hexASCII) < 2 {
			data = networkPart(p)
		}
		if d.o.verboseV {
			b = output.AppendTsharkHex(b, p.Data)
		} else {
			b = output.AppendTcpdumpHex(b, data, d.o.hexASCII > 0)
		}
	}
	if d.o.ascii {
		// -A: the payload the application sent (IB payload, or the TCP
		// payload of the pingpong and perftest set-up exchanges).
		var payload []byte
		switch {
		case p.IsIB():
			payload = p.BTH().PacketPayload()
		case p.HasTCP():
			payload = p.Headers.TCP.Payload
		}
		if len(payload) > 0 {
			b = append(b, '\t')
			for _, c := range payload {
				if c >= 0x20 && c < 0x7F || c == '\n' {
					b = append(b, c)
				} else {
					b = append(b, '.')
				}
			}
			b = append(b, '\n')
		}
	}
	if d.o.verboseV {
		b = append(b, '\n')
	}
	d.buf = b
	d.out.Write(b)
}

// networkPart is the frame without its link header, which -x leaves out.
func networkPart(p *decode.Packet) []byte {
	h := p.Headers
	if p.Has(gplayers.LayerTypeEthernet) {
		return p.Data[len(h.Ethernet.Contents):]
	}
	return p.Data
}

// finish prints the trailers: JSON's closing bracket, statistics, the check
// summary and, for a live capture, tcpdump's counts.
func (d *dumper) finish(live *capture.LiveSource) {
	d.progress.clear()
	if d.o.outFormat == "json" {
		d.out.Write(d.json.End(nil))
	}
	if d.o.countOnly {
		fmt.Fprintf(d.out, "%d packets\n", d.shown)
	}
	if d.flows != nil {
		output.WriteQPFlows(d.out, d.flows.Flows(), d.o.filter)
	}
	for _, s := range d.iostats {
		output.WriteIOStat(d.out, s.stat, s.filters)
	}
	if d.o.check {
		for _, p := range d.problems {
			fmt.Fprintln(d.out, p)
		}
		verdict := "ok"
		if d.icrcBad+d.vcrcBad+d.malformed > 0 {
			verdict = "FAILED"
		}
		fmt.Fprintf(d.out, "check %s: %d packets, %d RoCE/IB, %d bad ICRC, %d bad VCRC, %d malformed\n",
			verdict, d.read, d.ib, d.icrcBad, d.vcrcBad, d.malformed)
	}
	if live != nil {
		st, _ := live.Stats()
		d.out.Flush()
		fmt.Fprintf(d.stderr, "%d packets captured\n%d packets received by filter\n%d packets dropped by kernel\n", d.read, st.Received, st.Dropped)
	}
}

// progress is a status line on a terminal's stderr for long reads.
type progress struct {
	w     io.Writer
	name  string
	last  time.Time
	shown bool
}

func (pr *progress) update(n int) {
	if pr == nil || n%1024 != 0 {
		return
	}
	if now := time.Now(); now.Sub(pr.last) >= 100*time.Millisecond {
		pr.last = now
		pr.shown = true
		fmt.Fprintf(pr.w, "\r\x1b[Kibdump: %s: %d packets", pr.name, n)
	}
}

func (pr *progress) clear() {
	if pr != nil && pr.shown {
		fmt.Fprint(pr.w, "\r\x1b[K")
		pr.shown = false
	}
}
