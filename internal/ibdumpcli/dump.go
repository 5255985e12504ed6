package ibdumpcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"golang.org/x/term"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/internal/parquetout"
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
	o *options
	// correlation, in ibdump --correlate's per-packet mode, is what the
	// correlation found about the packet its source yielded last.
	correlation *decode.Correlation

	out    *bufio.Writer
	stderr io.Writer
	dec    *decode.Decoder
	// decoderOptions are the decoder's, for the first pass of -2.
	decoderOptions decode.Options
	filter         *dfilter.Filter
	summary        output.Summary
	text           output.TextLine
	tree           output.Tree
	fields         *output.Fields
	fieldsOpts     output.FieldsOptions
	emits          bool     // a shown packet goes somewhere: -T parquet, -w or printed
	own            renderer // the renderers of the calling goroutine
	json           output.JSON
	ek             output.EK
	jsonl          output.JSONL
	writer         *capture.Writer
	parquet        *parquetout.Exporter // -T parquet
	iostats        []ioStat
	color          bool
	buf            []byte
	// plain: every packet is shown and nothing after the analysis looks
	// at it (no -Y, graph, doctor, follow or per-packet statistic), so
	// analyse stops after the analysis (set with emits).
	plain bool

	// The conversation analysis, and the statistics drawn from it.
	analyzer  *decode.Analyzer
	links     *decode.FrameLinks // -2
	lookahead *decode.Lookahead  // files, one pass: see lookAhead
	zs        []*zstat
	shownConv map[uint32]bool  // conversations of the packets -Y showed (nil: all)
	pending   []decode.Finding // findings of the current packet, kept until -Y decides
	expert    *decode.Expert   // findings at shown packets, when -Y filters
	graph     *output.PSNGraph
	rateGraph *output.RateGraph
	doctor    *decode.Doctor
	doctorBad bool // the doctor found something at warning level or above
	follows   []*output.Follow
	latency   []*decode.LatencyStat
	latPend   []decode.Latency // latencies of the current packet, kept until -Y decides
	pfc       decode.PFCOptions
	dcqcn     decode.DCQCNOptions

	// NVMe-oF and RPC over RDMA: -d qp==N,PROTO, --disable-protocol,
	// --disable-heuristic.
	ulp                             ulpChoice
	read, shown                     int
	ib, icrcBad, vcrcBad, malformed int
	gsoRuns                         int // datagrams holding a UDP GSO run: a capture before segmentation, not damage
	cut                             int // IB packets cut by the capture's snapshot length
	problems                        []string
	progress                        *progress
}

type ioStat struct {
	funcs    *decode.IOFuncStat
	filters  []string
	compiled []*dfilter.Filter
}

// zstat is one -z statistic: what it counts of each shown packet, and how
// it prints as a table and as JSON.
type zstat struct {
	add      func(p *decode.Packet)
	text     func(w io.Writer)
	json     func(buf []byte) []byte
	analysis bool // needs the conversation analysis
}

func newDumper(o *options, stdout, stderr io.Writer) (*dumper, error) {
	d := &dumper{o: o, out: bufio.NewWriterSize(stdout, 64<<10), stderr: stderr}
	ports, err := parseDecodeAs(o.decodeAs, &d.ulp)
	if err != nil {
		return nil, err
	}
	if err := ulpOptions(o.disabled, o.noHeur, &d.ulp); err != nil {
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
	if o.linkSpeed != "" {
		if d.pfc.LinkSpeed, err = decode.ParseLinkSpeed(o.linkSpeed); err != nil {
			return nil, fmt.Errorf("--link-speed: %w", err)
		}
	}
	if o.doctor {
		o.quiet = true
		o.stats = append(o.stats, "doctor")
	}
	for _, z := range o.stats {
		if err := d.addStat(z); err != nil {
			return nil, err
		}
	}
	if o.graph != "" {
		kind, file, ok := strings.Cut(o.graph, ":")
		switch {
		case !ok || file == "":
			return nil, fmt.Errorf("--graph %s: want psn:FILE.svg or rate:FILE.svg", o.graph)
		case kind == "psn":
			d.graph = output.NewPSNGraph()
		case kind == "rate":
			d.rateGraph = output.NewRateGraph()
		default:
			return nil, fmt.Errorf("--graph %s: want psn:FILE.svg or rate:FILE.svg", o.graph)
		}
	}
	// As in tcpdump, integrity checks belong to -v: the ICRC and VCRC are
	// verified with -v, --check, -V (whose tree says [correct]), the JSON
	// outputs and -T fields that print them (they carry ibwire.icrc.status),
	// or a filter that reads them; otherwise a run skips them (ICRC
	// findings and icrc_errors then need -v or --check).
	skipCRC := !o.check && !o.doctor && o.verbose == 0 && !o.verboseV && !d.readsField(func(name string) bool { return strings.Contains(name, "crc") }) &&
		o.outFormat != "json" && o.outFormat != "jsonl" && o.outFormat != "ek" && o.outFormat != "parquet"
	d.decoderOptions = decode.Options{DecodeDC: o.dc, RoCEv2Ports: ports, SkipCRC: skipCRC}
	d.dec = decode.NewDecoder(d.decoderOptions)
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
		for _, e := range o.fieldOpts {
			if err := d.fieldsOpts.ParseFieldsOption(e); err != nil {
				return nil, err
			}
		}
		if d.fields, err = output.NewFields(o.fields, d.fieldsOpts); err != nil {
			return nil, err
		}
	case "parquet":
		if d.parquet, err = newParquet(o); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("-T %s: want text, fields, json, jsonl, ek or parquet", o.outFormat)
	}
	if len(o.fields) > 0 && o.outFormat != "fields" && o.outFormat != "parquet" {
		return nil, errors.New("-e needs -T fields or -T parquet (ibdump's -e is tshark's; tcpdump's -e is --ether)")
	}
	if (len(o.labels) > 0 || o.shard != "") && o.outFormat != "parquet" {
		return nil, errors.New("--label and --shard need -T parquet")
	}
	if d.needsAnalysis() {
		if o.twoPass {
			d.links = decode.NewFrameLinks()
		} else if o.iface == "" {
			d.lookahead = decode.NewLookahead()
		}
		d.analyzer = decode.NewAnalyzer(d.analyzerOptions())
	}
	return d, nil
}

// needsAnalysis reports whether anything reads the conversation analysis:
// a statistic, the graph, two passes, a filter, an io,stat column or a -T
// fields column on a field the analysis fills (decode.Field.NeedsAnalysis:
// ibwire.analysis.*, and the upper layers' fields, which only the analysis
// decodes), or per-packet output (whose lines carry the analysis notes).
func (d *dumper) needsAnalysis() bool {
	if d.o.twoPass || d.graph != nil || d.rateGraph != nil || d.parquet != nil {
		return true
	}
	for _, z := range d.zs {
		if z.analysis {
			return true
		}
	}
	if d.readsField(func(name string) bool { f, ok := decode.Lookup(name); return ok && f.NeedsAnalysis() }) {
		return true
	}
	return !(d.o.quiet || d.o.countOnly || (d.o.write != "" && !d.o.print))
}

func (d *dumper) analyzerOptions() decode.AnalyzerOptions {
	opts := decode.AnalyzerOptions{Links: d.links, Lookahead: d.lookahead, NVMeQPs: d.ulp.nvmeQPs, NoULP: d.ulp.noNVMe, NoULPDetect: d.ulp.noNVMeDetect,
		RPCRDMAQPs: d.ulp.rpcQPs, NoRPCRDMA: d.ulp.noRPC, NoRPCRDMADetect: d.ulp.noRPCDetect,
		NoSMBDirect: d.ulp.noSMBD, NoSMBDirectDetect: d.ulp.noSMBDDetect,
		ISERQPs: d.ulp.iserQPs, NoISER: d.ulp.noISER, NoISERDetect: d.ulp.noISERDetect, PFC: d.pfc, DCQCN: d.dcqcn}
	if len(d.latency) > 0 {
		opts.OnLatency = func(l decode.Latency) { d.latPend = append(d.latPend, l) }
	}
	if d.parquet != nil {
		opts.OnFinding = func(f decode.Finding) { d.parquet.Finding(f) }
	}
	if d.filter != nil {
		// With -Y, the statistics count only the findings at shown packets
		// and the conversations of shown packets.
		d.expert = &decode.Expert{}
		opts.OnFinding = func(f decode.Finding) { d.pending = append(d.pending, f) }
		if d.shownConv == nil {
			d.shownConv = map[uint32]bool{}
		}
	}
	return opts
}

// conversations returns the conversations of the shown packets.
func (d *dumper) conversations() []decode.Conversation {
	var out []decode.Conversation
	for _, c := range d.analyzer.Conversations() {
		if c.Dir[0].Packets+c.Dir[1].Packets == 0 {
			continue
		}
		if d.shownConv != nil {
			shown := d.shownConv[c.ID]
			for _, id := range c.Aliases {
				shown = shown || d.shownConv[id]
			}
			if !shown {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// expertRows returns the findings -z expert reports.
func (d *dumper) expertRows() []decode.ExpertRow {
	if d.expert != nil {
		return d.expert.Rows()
	}
	return d.analyzer.Expert().Rows()
}

// readsField reports whether -Y, an io,stat filter or function, or a -T
// fields column reads a field whose name satisfies want.
func (d *dumper) readsField(want func(name string) bool) bool {
	fs := []*dfilter.Filter{d.filter}
	for _, s := range d.iostats {
		fs = append(fs, s.compiled...)
		for _, c := range s.funcs.Columns {
			if c.Field != nil && want(c.Field.Name) {
				return true
			}
		}
	}
	for _, f := range fs {
		if f == nil {
			continue
		}
		for _, fd := range f.Fields() {
			if want(fd.Name) {
				return true
			}
		}
	}
	for _, e := range d.o.fields {
		if fd, ok := decode.Lookup(e); ok && want(fd.Name) {
			return true
		}
	}
	return false
}

// addStat parses one -z argument.
func (d *dumper) addStat(z string) error {
	filter := d.o.filter
	switch {
	case z == "conv,qp":
		d.zs = append(d.zs, &zstat{analysis: true,
			text: func(w io.Writer) { output.WriteConversations(w, d.conversations(), filter) },
			json: func(b []byte) []byte { return output.AppendConversationsJSON(b, d.conversations()) }})
	case z == "expert" || strings.HasPrefix(z, "expert,"):
		min := decode.SevChat
		if level, ok := strings.CutPrefix(z, "expert,"); ok {
			var known bool
			if min, known = decode.ParseSeverity(level); !known {
				return fmt.Errorf("-z %s: the level is error, warn, note or chat", z)
			}
		}
		d.zs = append(d.zs, &zstat{analysis: true,
			text: func(w io.Writer) { output.WriteExpert(w, d.expertRows(), min) },
			json: func(b []byte) []byte { return output.AppendExpertJSON(b, d.expertRows(), min) }})
	case z == "latency":
		s := decode.NewLatencyStat()
		d.latency = append(d.latency, s)
		d.zs = append(d.zs, &zstat{analysis: true, add: s.Add,
			text: func(w io.Writer) { output.WriteLatency(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendLatencyJSON(b, s.Rows()) }})
	case z == "nvme,srt":
		// Fed with the packets -Y shows: a filter selects the completions counted.
		s := &decode.NVMeSRT{}
		d.zs = append(d.zs, &zstat{analysis: true, add: s.Add,
			text: func(w io.Writer) { output.WriteNVMeSRT(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendNVMeSRTJSON(b, s.Rows()) }})
	case z == "rpc,srt":
		// Fed with the packets -Y shows: a filter selects the replies counted.
		s := &decode.RPCSRT{}
		d.zs = append(d.zs, &zstat{analysis: true, add: s.Add,
			text: func(w io.Writer) { output.WriteRPCSRT(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendRPCSRTJSON(b, s.Rows()) }})
	case z == "iscsi,srt" || z == "iser,srt":
		// Fed with the packets -Y shows: a filter selects the responses counted.
		s := &decode.ISCSISRT{}
		d.zs = append(d.zs, &zstat{analysis: true, add: s.Add,
			text: func(w io.Writer) { output.WriteISCSISRT(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendISCSISRTJSON(b, s.Rows()) }})
	case z == "smb2,srt" || z == "smbd,srt":
		// Fed with the packets -Y shows: a filter selects the responses counted.
		s := &decode.SMB2SRT{}
		d.zs = append(d.zs, &zstat{analysis: true, add: s.Add,
			text: func(w io.Writer) { output.WriteSMB2SRT(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendSMB2SRTJSON(b, s.Rows()) }})
	case z == "opcodes":
		s := &decode.OpcodeStat{}
		d.zs = append(d.zs, &zstat{add: s.Add,
			text: func(w io.Writer) { rows, n := s.Rows(); output.WriteOpcodes(w, rows, n, filter) },
			json: func(b []byte) []byte { rows, _ := s.Rows(); return output.AppendOpcodesJSON(b, rows) }})
	case z == "endpoints,gid" || z == "endpoints":
		s := &decode.EndpointStat{}
		d.zs = append(d.zs, &zstat{add: s.Add,
			text: func(w io.Writer) { output.WriteEndpoints(w, s.Rows(), filter) },
			json: func(b []byte) []byte { return output.AppendEndpointsJSON(b, s.Rows()) }})
	case z == "pfc" || strings.HasPrefix(z, "pfc,"):
		parts := strings.Split(z, ",")
		if len(parts) > 3 {
			return fmt.Errorf("-z %s: want pfc[,WINDOW[,PERCENT]]", z)
		}
		if len(parts) > 1 {
			w, err := time.ParseDuration(parts[1])
			if err != nil || w < time.Microsecond {
				return fmt.Errorf("-z %s: bad window %q (a duration of 1us or more: 1s, 100ms, 500us)", z, parts[1])
			}
			d.pfc.StormWindow = w
		}
		if len(parts) > 2 {
			p, err := strconv.ParseFloat(strings.TrimSuffix(parts[2], "%"), 64)
			if err != nil || p <= 0 || p > 100 {
				return fmt.Errorf("-z %s: bad percentage %q", z, parts[2])
			}
			d.pfc.StormPercent = p
		}
		report := func() *output.PFCReport {
			rows, captured := d.analyzer.PFC()
			return &output.PFCReport{Rows: rows, Captured: captured, Opts: d.analyzer.PFCOptions()}
		}
		d.zs = append(d.zs, &zstat{analysis: true,
			text: func(w io.Writer) { output.WritePFC(w, report(), filter) },
			json: func(b []byte) []byte { return output.AppendPFCJSON(b, report()) }})
	case z == "doctor":
		if d.doctor != nil {
			return nil
		}
		d.doctor = decode.NewDoctor()
		report := func() []decode.DoctorFinding {
			fs := d.doctor.Report(d.analyzer)
			for _, f := range fs {
				if f.Severity >= decode.SevWarn {
					d.doctorBad = true
				}
			}
			return fs
		}
		d.zs = append(d.zs, &zstat{analysis: true,
			text: func(w io.Writer) { output.WriteDoctor(w, report()) },
			json: func(b []byte) []byte { return output.AppendDoctorJSON(b, report()) }})
	case z == "dcqcn" || strings.HasPrefix(z, "dcqcn,"):
		parts := strings.Split(z, ",")
		if len(parts) > 2 {
			return fmt.Errorf("-z %s: want dcqcn[,INTERVAL]", z)
		}
		if len(parts) > 1 {
			w, err := time.ParseDuration(parts[1])
			if err != nil || w < time.Microsecond {
				return fmt.Errorf("-z %s: bad interval %q (a duration of 1us or more: 100us, 1ms)", z, parts[1])
			}
			d.dcqcn.Interval = w
		}
		report := func() *output.DCQCNReport { return &output.DCQCNReport{Rows: d.analyzer.DCQCN()} }
		d.zs = append(d.zs, &zstat{analysis: true,
			text: func(w io.Writer) { output.WriteDCQCN(w, report(), filter) },
			json: func(b []byte) []byte { return output.AppendDCQCNJSON(b, report()) }})
	case strings.HasPrefix(z, "follow,"):
		parts := strings.SplitN(z, ",", 4)
		if len(parts) != 4 || parts[1] != "qp" || (parts[2] != "hex" && parts[2] != "ascii") {
			return fmt.Errorf("-z %s: want follow,qp,hex|ascii,FILTER", z)
		}
		f, err := dfilter.Compile(parts[3])
		if err != nil {
			return fmt.Errorf("-z %s: %w", z, err)
		}
		fl := output.NewFollow(f.Match, parts[3], parts[2] == "hex")
		d.zs = append(d.zs, &zstat{analysis: true, add: nil,
			text: func(w io.Writer) { fl.Write(w) },
			json: func(b []byte) []byte { return fl.AppendJSON(b) }})
		d.follows = append(d.follows, fl)
	case strings.HasPrefix(z, "io,stat,"):
		parts := splitIOStat(strings.TrimPrefix(z, "io,stat,"))
		secs, err := parseSeconds(parts[0])
		if err != nil {
			return fmt.Errorf("-z %s: bad interval %q", z, parts[0])
		}
		// One table type serves plain filter columns (frames and bytes) and
		// function columns alike.
		s := ioStat{funcs: &decode.IOFuncStat{Interval: secs}}
		if len(parts) == 1 {
			s.funcs.Columns = append(s.funcs.Columns, decode.IOColumn{Title: "Frames and bytes"})
		}
		for _, expr := range parts[1:] {
			col := decode.IOColumn{Title: expr}
			filterExpr := expr
			if fn, field, rest, ok := decode.ParseIOFunc(expr); ok {
				fd, found := decode.Lookup(field)
				if !found {
					return fmt.Errorf("-z %s: no field %q", z, field)
				}
				col.Func, col.Field, filterExpr = fn, fd, rest
			}
			if strings.TrimSpace(filterExpr) != "" {
				f, err := dfilter.Compile(filterExpr)
				if err != nil {
					return fmt.Errorf("-z %s: %w", z, err)
				}
				col.Match = f.Match
				s.compiled = append(s.compiled, f)
			}
			s.funcs.Columns = append(s.funcs.Columns, col)
			s.filters = append(s.filters, expr)
		}
		d.iostats = append(d.iostats, s)
		d.zs = append(d.zs, &zstat{
			add:  s.funcs.Add,
			text: func(w io.Writer) { output.WriteIOFuncStat(w, s.funcs) },
			json: func(b []byte) []byte { return output.AppendIOFuncStatJSON(b, s.funcs) }})
	default:
		return fmt.Errorf("-z %s: known statistics are conv,qp, expert[,LEVEL], latency, nvme,srt, rpc,srt, iscsi,srt, smb2,srt, opcodes, endpoints,gid, "+
			"io,stat,INTERVAL[,FILTER|FUNC(FIELD)FILTER...], follow,qp,hex|ascii,FILTER, pfc[,WINDOW[,PERCENT]], dcqcn[,INTERVAL] and doctor", z)
	}
	return nil
}

// splitIOStat splits io,stat columns at commas outside parentheses, so
// FUNC(field) columns and filters with commas in calls stay whole.
func splitIOStat(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
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
	if d.o.twoPass {
		if d.o.iface != "" || (len(files) == 1 && files[0] == "-") {
			fmt.Fprintf(d.stderr, "%s: -2 reads the capture twice: it needs files, not -i or standard input\n", d.o.prog)
			return exitError
		}
		if status := d.firstPass(ctx, files); status != exitOK {
			return status
		}
	} else if d.lookahead != nil && regularFiles(files) {
		if status := d.lookAhead(ctx, files); status != exitOK {
			return status
		}
	} else if d.lookahead != nil {
		// Standard input or a pipe is read once: nothing was looked
		// ahead at, and the run must not record what it sees either.
		d.lookahead.Done()
	}
	src, live, name, closer, err := d.open(files, stdin, true)
	if err != nil {
		fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
		return exitError
	}
	if closer != nil {
		defer closer()
	}
	if r, ok := src.(*capture.Reader); ok && d.analyzer != nil && d.pfc.LinkSpeed == 0 {
		// A pcapng interface description may say the link's speed.
		d.analyzer.SetLinkSpeed(r.InterfaceSpeed(0))
	}
	if f, ok := d.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && live == nil && !d.o.lineBuf {
		d.progress = &progress{w: d.stderr, prog: d.o.prog, name: name}
	}
	if d.o.write != "" && d.parquet == nil {
		if err := d.openWriter(src); err != nil {
			fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
			return exitError
		}
	}
	if d.o.outFormat == "json" && !d.statsOnlyJSON() {
		d.buf = d.json.Begin(d.buf[:0])
		d.out.Write(d.buf)
	}
	if d.fields != nil {
		d.out.Write(d.fields.AppendHeader(nil))
	}
	var status int
	switch {
	case !d.usePipeline(src, live):
		status = d.loop(ctx, src, live)
	default:
		status = d.loopPipelined(ctx, src)
	}
	d.finish(live)
	if d.parquet != nil {
		if err := d.parquet.Close(d.conversations()); err != nil && status == exitOK {
			fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
			status = exitError
		}
	}
	if d.writer != nil {
		if err := d.writer.Close(); err != nil && status == exitOK {
			fmt.Fprintf(d.stderr, "%s: -w %s: %v\n", d.o.prog, d.o.write, err)
			status = exitError
		}
	}
	if err := d.out.Flush(); err != nil && status == exitOK {
		status = exitError
	}
	if status == exitOK && (d.graph != nil || d.rateGraph != nil) {
		if err := d.writeGraph(); err != nil {
			fmt.Fprintf(d.stderr, "%s: --graph: %v\n", d.o.prog, err)
			status = exitError
		}
	}
	if status == exitOK && d.o.check && (d.icrcBad+d.vcrcBad+d.malformed) > 0 {
		status = exitFindings
	}
	if status == exitOK && d.doctorBad {
		status = exitFindings
	}
	return status
}

// newParquet makes -T parquet's exporter from the flags.
func newParquet(o *options) (*parquetout.Exporter, error) {
	po := parquetout.Options{Dir: o.write, Name: exportName(o), Extra: o.fields, Cores: o.jobs}
	if o.write == "" || o.write == "-" {
		return nil, errors.New("-T parquet needs -w DIR, the folder the tables go into")
	}
	for _, l := range o.labels {
		label, err := parquetout.ParseLabel(l)
		if err != nil {
			return nil, err
		}
		po.Labels = append(po.Labels, label)
	}
	if o.shard != "" {
		n, err := parquetout.ParseShard(o.shard)
		if err != nil {
			return nil, err
		}
		po.Shards = n
	}
	return parquetout.New(po)
}

// exportName names -T parquet's files after the (first) capture read.
func exportName(o *options) string {
	name := ""
	switch {
	case o.iface != "":
		name = o.iface
	case len(o.files) > 0:
		name = o.files[0]
	}
	if name == "" || name == "-" {
		return "stdin"
	}
	name = filepath.Base(name)
	for _, ext := range []string{".gz", ".pcapng", ".pcap", ".cap"} {
		name = strings.TrimSuffix(name, ext)
	}
	return name
}

// statsOnlyJSON reports a -q -T json run with statistics: stdout then holds
// only the statistics' JSON, not an empty packet array before them.
func (d *dumper) statsOnlyJSON() bool { return d.o.quiet && len(d.zs) > 0 }

// open opens the capture: a live interface, standard input, the files, or
// the bundled sample; announce says what a live capture or the sample is.
func (d *dumper) open(files []string, stdin io.Reader, announce bool) (source, *capture.LiveSource, string, func(), error) {
	switch {
	case d.o.iface != "":
		snap := d.o.snaplen
		if snap <= 0 {
			snap = 262144
		}
		l, err := capture.OpenLive(d.o.iface, snap, capture.RoCEFilter())
		if err != nil {
			return nil, nil, "", nil, err
		}
		if !d.o.noPromisc {
			_ = l.SetPromiscuous(true)
		}
		if d.o.bufferKiB > 0 {
			if err := l.SetBufferSize(d.o.bufferKiB << 10); err != nil {
				l.Close()
				return nil, nil, "", nil, err
			}
		}
		fmt.Fprintf(d.stderr, "%s: listening on %s, link-type %v, snapshot length %d bytes\n", d.o.prog, d.o.iface, l.LinkType(), snap)
		return l, l, d.o.iface, func() { l.Close() }, nil
	case d.o.frames != "" || d.o.offsets != "":
		refs, err := d.recordRefs(files)
		if err != nil {
			return nil, nil, "", nil, err
		}
		s := &recordSource{refs: refs, readers: map[string]*capture.RecordReader{}}
		return s, nil, "records", s.close, nil
	case len(files) == 0:
		if announce {
			fmt.Fprintf(d.stderr, "%s: no capture given: decoding the bundled sample %s (run %s -h for usage)\n", d.o.prog, pcaps.SampleName, d.o.prog)
		}
		r, err := capture.NewReader(bytes.NewReader(pcaps.Sample), pcaps.SampleName)
		return r, nil, pcaps.SampleName, nil, err
	case len(files) == 1 && files[0] == "-":
		r, err := capture.NewReader(stdin, "stdin")
		return r, nil, "stdin", nil, err
	}
	r, err := capture.OpenMulti(files...)
	if err != nil {
		return nil, nil, "", nil, err
	}
	return r, nil, strings.Join(files, ", "), func() { r.Close() }, nil
}

// recordRefs are the records --frames or -r FILE --offsets name.
func (d *dumper) recordRefs(files []string) ([]recordRef, error) {
	switch {
	case d.o.frames != "" && d.o.offsets != "":
		return nil, fmt.Errorf("--frames names files itself: give it or -r FILE --offsets, not both")
	case d.o.frames != "" && len(files) > 0:
		return nil, fmt.Errorf("--frames names files itself: no -r or file arguments with it")
	case d.o.frames != "":
		return parseFrames(d.o.frames)
	case len(files) != 1 || files[0] == "-":
		return nil, fmt.Errorf("--offsets reads one file by offset: give it with -r FILE (not standard input)")
	}
	return parseOffsets(files[0], d.o.offsets)
}

// firstPass runs the analysis over the whole capture once, recording what
// later frames say about earlier ones; the second pass (the normal run)
// reads it back.
func (d *dumper) firstPass(ctx context.Context, files []string) int {
	opts := d.ulpOptions()
	opts.Links = d.links
	if err := d.prePass(ctx, files, opts, d.o.count, true); err != nil {
		fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
		return exitError
	}
	d.links.SecondPass()
	return exitOK
}

// prePass analyses the files with opts before the run that prints: up to
// limit packets (0: all). A whole pass (-2's first) finishes the analysis
// and reports a damaged record; a look-ahead stops at one and leaves it to
// the run that prints, which reports it where it lies.
func (d *dumper) prePass(ctx context.Context, files []string, opts decode.AnalyzerOptions, limit int, whole bool) error {
	src, _, _, closer, err := d.open(files, nil, false)
	if err != nil {
		return err
	}
	if closer != nil {
		defer closer()
	}
	a := decode.NewAnalyzer(opts)
	dec := decode.NewDecoder(d.decoderOptions)
	var cp capture.Packet
	for n := 0; limit == 0 || n < limit; n++ {
		err := src.NextInto(&cp)
		if err != nil && errors.Is(err, io.EOF) || ctx.Err() != nil {
			break
		}
		if err != nil {
			if !whole {
				break
			}
			return err
		}
		a.Analyze(dec.Decode(cp))
	}
	if whole {
		a.Finish()
	}
	return nil
}

// regularFiles reports whether every file is a regular file, which can be
// read twice (not standard input, a pipe or a FIFO).
func regularFiles(files []string) bool {
	for _, f := range files {
		st, err := os.Stat(f)
		if f == "-" || err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return len(files) > 0
}

// lookaheadPackets bounds the look-ahead over the start of a file.
const lookaheadPackets = 4096

// lookAhead runs the analysis over the start of the files (not standard
// input: it is read once) to find the connections whose content shows an
// upper-layer protocol only after their first packets (a capture that
// starts mid-stream), so that the run that prints decodes them from their
// first packet; see decode.Lookahead.
func (d *dumper) lookAhead(ctx context.Context, files []string) int {
	opts := d.ulpOptions()
	opts.Lookahead = d.lookahead
	if err := d.prePass(ctx, files, opts, lookaheadPackets, false); err != nil {
		fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
		return exitError
	}
	d.lookahead.Done()
	return exitOK
}

// ulpOptions are the upper layers' options as the run that prints has
// them, for a pass before it (a look-ahead, -2's first pass): a connection
// carries one, the first to claim it keeps it, and a protocol whose
// detection is off is not found by content there either.
func (d *dumper) ulpOptions() decode.AnalyzerOptions {
	u := &d.ulp
	return decode.AnalyzerOptions{NVMeQPs: u.nvmeQPs, NoULP: u.noNVMe, NoULPDetect: u.noNVMeDetect,
		RPCRDMAQPs: u.rpcQPs, NoRPCRDMA: u.noRPC, NoRPCRDMADetect: u.noRPCDetect, NoSMBDirect: u.noSMBD, NoSMBDirectDetect: u.noSMBDDetect,
		ISERQPs: u.iserQPs, NoISER: u.noISER, NoISERDetect: u.noISERDetect}
}

// writeGraph writes --graph psn:FILE or rate:FILE.
func (d *dumper) writeGraph() error {
	_, file, _ := strings.Cut(d.o.graph, ":")
	if d.rateGraph != nil {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		pfc, _ := d.analyzer.PFC()
		if err := d.rateGraph.WriteSVG(f, "Sending rate per QP direction, CE marks, CNPs and PFC pauses", d.analyzer.DCQCN(), pfc); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	title := "PSN graph: no connection"
	for _, c := range d.analyzer.Conversations() {
		if c.HasID(d.graph.Conv()) {
			title = fmt.Sprintf("PSN graph: %s QP 0x%06x <-> %s", c.A, c.QPNAB, c.B)
			if c.HasBA {
				title += fmt.Sprintf(" QP 0x%06x", c.QPNBA)
			}
			title += " (" + serviceLabel(c) + ")"
		}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := d.graph.WriteSVG(f, title); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func serviceLabel(c decode.Conversation) string {
	return c.Service.String() + ", paired by " + c.PairedBy.String()
}

func (d *dumper) openWriter(src source) error {
	var lt layers.LinkType = layers.LinkType(layers.LinkTypeEthernet)
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
	d.setEmits()
	// A file's loop asks ctx once: a cancel after that sets cancelled, so
	// each packet reads a flag instead of calling ctx.Err.
	var cancelled atomic.Bool
	if live == nil {
		defer watchCancel(ctx, &cancelled)()
	}
	var cp capture.Packet
	count := d.o.count
	for count == 0 || d.read < count {
		if live != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			_ = live.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		}
		if err := src.NextInto(&cp); err != nil {
			if errors.Is(err, io.EOF) {
				return exitOK
			}
			if live != nil && errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			return d.readFailed(err)
		}
		if cancelled.Load() {
			return exitOK
		}
		d.read++
		p := d.dec.Decode(cp)
		p.Correlation = d.correlation
		if d.analyse(p) && d.emits {
			if status, ok := d.emit(p); !ok {
				return status
			}
		}
		d.progress.update(d.read)
	}
	return exitOK
}

// watchCancel sets cancelled when ctx is done, now or later, so a loop
// reads a flag for each packet instead of calling ctx.Err; the function it
// returns stops watching.
func watchCancel(ctx context.Context, cancelled *atomic.Bool) (stop func() bool) {
	if ctx.Err() != nil {
		cancelled.Store(true)
	} else if ctx.Done() != nil {
		return context.AfterFunc(ctx, func() { cancelled.Store(true) })
	}
	return func() bool { return false }
}

// analyse is what a packet goes through in capture order: the --check
// counters, the analysis, -Y and the statistics. It reports whether -Y
// shows the packet.
func (d *dumper) analyse(p *decode.Packet) bool {
	d.account(p)
	if d.analyzer != nil {
		// The analysis sees every packet, before -Y, so -Y can use it.
		d.analyzer.Analyze(p)
	}
	if d.plain {
		d.shown++
		return true
	}
	shown := d.filterAndCount(p)
	// The findings and latencies of the packet were counted or dropped.
	d.pending, d.latPend = d.pending[:0], d.latPend[:0]
	return shown
}

// filterAndCount is the rest of analyse when a run has a filter, a graph,
// the doctor, -z follow or statistics fed packet by packet (see plain).
func (d *dumper) filterAndCount(p *decode.Packet) bool {
	for _, f := range d.follows {
		f.Add(p)
	}
	shown := d.filter == nil || d.filter.Match(p)
	if d.graph != nil {
		d.graph.Add(p, shown)
	}
	if d.doctor != nil {
		d.doctor.Add(p)
	}
	if !shown {
		return false
	}
	d.shown++
	if d.expert != nil {
		for i := range d.pending {
			d.expert.Add(&d.pending[i])
			if d.parquet != nil {
				d.parquet.Finding(d.pending[i])
			}
		}
	}
	for _, s := range d.latency {
		for _, l := range d.latPend {
			s.AddLatency(l)
		}
	}
	if d.shownConv != nil && p.Analysis.Conv != 0 {
		d.shownConv[p.Analysis.Conv] = true
	}
	for _, z := range d.zs {
		if z.add != nil {
			z.add(p)
		}
	}
	return true
}

// setEmits notes whether a shown packet goes anywhere, once per run
// rather than once per packet, and sets the calling goroutine's renderers.
func (d *dumper) setEmits() {
	d.emits = d.parquet != nil || d.writer != nil || !(d.o.quiet || d.o.countOnly)
	d.plain = len(d.follows) == 0 && d.filter == nil && d.graph == nil && d.doctor == nil && d.expert == nil &&
		len(d.latency) == 0 && d.shownConv == nil
	for _, z := range d.zs {
		if z.add != nil {
			d.plain = false
		}
	}
	d.own = renderer{summary: &d.summary, text: &d.text, fields: d.fields, tree: &d.tree}
}

// emit hands a shown packet to -T parquet, -w or the renderer; on an error
// it returns false with the exit status.
func (d *dumper) emit(p *decode.Packet) (int, bool) {
	if d.parquet != nil {
		if err := d.parquet.Packet(p); err != nil {
			d.progress.clear()
			fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
			return exitError, false
		}
		return exitOK, true
	}
	if d.writer != nil {
		if err := d.writer.WritePacket(p.Input); err != nil {
			fmt.Fprintf(d.stderr, "%s: -w %s: %v\n", d.o.prog, d.o.write, err)
			return exitError, false
		}
		if !d.o.print {
			return exitOK, true
		}
	}
	d.render(p)
	if d.o.lineBuf {
		d.out.Flush()
	}
	return exitOK, true
}

// readFailed reports a capture that cannot be read on (its error names
// the file and the record), after what was read so far, and returns the
// run's exit status.
func (d *dumper) readFailed(err error) int {
	d.out.Flush()
	d.progress.clear()
	fmt.Fprintf(d.stderr, "%s: %v\n", d.o.prog, err)
	return exitError
}

// account keeps the --check counters. A whole and sound packet, as nearly
// every one is, only counts; the rest is accountTrouble's.
func (d *dumper) account(p *decode.Packet) {
	if p.Err != nil || p.ICRC == layers.CRCBad || p.VCRC == layers.CRCBad {
		d.accountTrouble(p)
	} else if p.IsIB() {
		d.ib++
	}
}

// accountTrouble is account for a packet that is malformed, cut by the
// capture or fails a CRC check.
func (d *dumper) accountTrouble(p *decode.Packet) {
	if p.Cut() {
		// Whole on the wire, cut by the capture: nothing to check its
		// ICRC against, and no damage.
		d.ib++
		d.cut++
		return
	}
	if p.Err != nil {
		if !p.IBMalformed() {
			// Not InfiniBand (empty, cut before any IB header): other
			// traffic's trouble, no IB integrity failure.
			if d.o.check {
				d.problems = append(d.problems, fmt.Sprintf("frame %d: not InfiniBand, malformed: %v", p.Number, p.Err))
			}
			return
		}
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
	if _, _, ok := p.GSORun(); ok {
		d.gsoRuns++
		if d.o.check {
			d.problems = append(d.problems, fmt.Sprintf("frame %d: %s (%v QP 0x%06x PSN %v)", p.Number, p.GSONote(), b.Opcode, b.DestQP, b.PSN))
		}
	} else if p.ICRC == layers.CRCBad {
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
	d.buf = d.appendRendered(d.buf[:0], p, &d.own)
	d.out.Write(d.buf)
}

// appendRendered appends p in the chosen format with r's renderers (each
// worker has its own).
func (d *dumper) appendRendered(b []byte, p *decode.Packet, r *renderer) []byte {
	switch d.o.outFormat {
	case "fields":
		b = append(r.fields.Append(b, p), '\n')
	case "json":
		b = d.json.Append(b, p)
	case "jsonl":
		b = d.jsonl.Append(b, p)
	case "ek":
		b = d.ek.Append(b, p)
	case "text":
		if !d.o.verboseV {
			b = append(r.text.Append(b, p), '\n')
		}
	default:
		if !d.o.verboseV {
			start := len(b)
			b = r.summary.Append(b, p)
			if d.analyzer != nil {
				b = output.AppendAnalysisNotes(b, p)
			}
			if d.color {
				b = colorize(b, start, p)
			}
			b = append(b, '\n')
		}
	}
	if d.o.verboseV && d.o.outFormat != "json" && d.o.outFormat != "jsonl" && d.o.outFormat != "ek" && d.o.outFormat != "fields" {
		b = r.tree.Append(b, p)
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
	return b
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
	if d.o.outFormat == "json" && !d.statsOnlyJSON() {
		d.out.Write(d.json.End(nil))
	}
	if d.o.countOnly {
		fmt.Fprintf(d.out, "%d packets\n", d.shown)
	}
	if d.analyzer != nil {
		d.pending = d.pending[:0]
		d.analyzer.Finish()
		if d.expert != nil {
			// Requests left unanswered: reported when -Y showed their conversation.
			for i := range d.pending {
				if f := &d.pending[i]; d.shownConv == nil || d.shownConv[f.Conv] {
					d.expert.Add(f)
				}
			}
		}
	}
	for _, z := range d.zs {
		if d.o.outFormat == "json" {
			d.out.Write(z.json(nil))
		} else {
			z.text(d.out)
		}
	}
	if d.o.check {
		for _, p := range d.problems {
			fmt.Fprintln(d.out, p)
		}
		verdict := "ok"
		if d.icrcBad+d.vcrcBad+d.malformed > 0 {
			verdict = "FAILED"
		}
		cut := ""
		if d.cut > 0 {
			cut = fmt.Sprintf(", %d cut by the snapshot length (their ICRC not captured)", d.cut)
		}
		if d.gsoRuns > 0 {
			cut += fmt.Sprintf(", %d UDP GSO runs captured before segmentation (not damage)", d.gsoRuns)
		}
		fmt.Fprintf(d.out, "check %s: %d packets, %d RoCE/IB, %d bad ICRC, %d bad VCRC, %d malformed%s\n",
			verdict, d.read, d.ib, d.icrcBad, d.vcrcBad, d.malformed, cut)
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
	prog  string // the program name the line starts with
	name  string
	last  time.Time
	shown bool
}

func (pr *progress) update(n int) {
	if pr != nil && n%1024 == 0 {
		pr.show(n)
	}
}

// show writes the line with n packets read, at most every 100 ms.
func (pr *progress) show(n int) {
	if now := time.Now(); now.Sub(pr.last) >= 100*time.Millisecond {
		pr.last = now
		pr.shown = true
		fmt.Fprintf(pr.w, "\r\x1b[K%s: %s: %d packets", pr.prog, pr.name, n)
	}
}

func (pr *progress) clear() {
	if pr != nil && pr.shown {
		fmt.Fprint(pr.w, "\r\x1b[K")
		pr.shown = false
	}
}
