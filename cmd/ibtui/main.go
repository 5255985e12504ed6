// Command ibtui is a terminal viewer for RDMA captures (RoCEv1, RoCEv2,
// InfiniBand): packet list, detail tree and bytes (where it opens), QP
// table, expert findings, Follow QP, I/O, PSN and latency graphs, and with
// --correlate several captures as capture points (each packet's time at
// each point, losses and delays per hop). When its standard output is not
// a terminal it is ibdump, with the same flags.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/ibdumpcli"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/internal/tui"
	"github.com/ibwire/ibwire/pcaps"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, isTerminal(os.Stdout))
	stop()
	os.Exit(code)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// options are ibtui's flags: the ones of ibdump that choose what to read
// and show.
type options struct {
	read      string
	filter    string
	count     int
	iface     string
	snaplen   int
	noPromisc bool
	decodeAs  listFlag
	dc        bool
	color     string
	version   bool
	maxPkts   int
	frame     int // -g
	correlate bool
	points    listFlag // --point NAME=FILE
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibtui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.read, "r", "", "read packets from `file` (pcap, pcapng, gzip); - reads standard input")
	fs.StringVar(&o.filter, "Y", "", "start with this display `filter` (Wireshark syntax)")
	fs.IntVar(&o.count, "c", 0, "stop reading after `n` packets")
	fs.StringVar(&o.iface, "i", "", "capture live on `interface` (AF_PACKET; RoCE traffic only) and update continuously")
	fs.IntVar(&o.snaplen, "s", 262144, "capture `snaplen` bytes of each live packet (0 means 262144)")
	fs.BoolVar(&o.noPromisc, "p", false, "do not put the interface into promiscuous mode")
	fs.Var(&o.decodeAs, "d", "decode as: `udp.port==N,infiniband` treats UDP port N as RoCEv2 (repeatable)")
	fs.BoolVar(&o.dc, "dc", false, "decode opcodes 0x40-0x5F as Mellanox DC (20-byte BTH) instead of IBTA RD")
	fs.StringVar(&o.color, "color", "auto", "colour: auto, always or never (auto honours NO_COLOR and TERM=dumb)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.IntVar(&o.frame, "g", 0, "open at frame `N` (selected once it is read; vim's NG, and a row of ibdump -T parquet's output)")
	fs.IntVar(&o.maxPkts, "max-packets", defaultMaxPackets, "keep at most `n` packets (about 9 bytes of memory each); reading stops there and the\nstatus bar says so (0: no bound)")
	fs.BoolVar(&o.correlate, "correlate", false, "each file is a capture point of the same traffic: the Points view (W) shows where each packet\nwas seen, its time at each point, and the per-hop table; the packet list shows the first point's capture")
	fs.Var(&o.points, "point", "with --correlate: a capture point `NAME=FILE` (repeatable; implies --correlate)")
	fs.Usage = func() { usage(fs, stderr) }
	return fs
}

// defaultMaxPackets bounds ibtui's memory at about 90 MB of index: ten
// times the benchmark capture, and far past what a screen is for (a larger
// capture is ibdump's, or -Y's in ibdump -w first).
const defaultMaxPackets = 10_000_000

func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: ibtui [flags] [file ...]

ibtui shows RoCEv1, RoCEv2 and InfiniBand captures in the terminal. It
opens on the packet list, which shows packets as soon as they are read; C
shows the queue-pair conversations, E the expert findings. Given no file
and no -i, it opens a bundled sample. Large files load in the background
while you look; the memory it needs grows by about 9 bytes a packet
(frames are spooled to a temporary file and decoded again when shown), up
to --max-packets.

When standard output is not a terminal, ibtui behaves exactly like ibdump
with the same arguments (every ibdump flag is accepted then), so
"ibtui -Y ... f.pcap | grep" works.

Examples:
  ibtui capture.pcap
  ibtui -Y 'infiniband.aeth.syndrome.opcode == 3' capture.pcap
  ibtui -g 1007 capture.pcap                  open at frame 1007 (a row of ibdump -T parquet)
  tcpdump -i mlx5_0 -w - | ibtui -r -
  ibtui --correlate host.pcap switch.pcap     the same traffic at two points (W: Points view)
  ibtui -i eth0

Views (tabs): Packets (list, detail tree, bytes), QPs (-z conv,qp, sortable),
Expert, Follow (messages of a connection), I/O (sparklines of -z io,stat
columns), PSN (time against PSN with retransmission, NAK, RNR and CNP
markers), Latency (histograms), Rate (DCQCN), Cmds (U: every NVMe-oF
command, RPC-over-RDMA call, iSER task and SMB2 request with its status,
latency and frames, as the -z ...,srt tables match them; enter goes to the
command), Points (W, with --correlate: each packet's time at each capture
point, and losses, capture drops and one-way delays per hop).

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprint(w, "\n"+tui.KeyHelp())
	fmt.Fprint(w, `
Exit status: 0 success, 2 bad usage or unreadable input.
Colour: NO_COLOR set and non-empty, TERM=dumb or --color=never select the
monochrome theme.
`)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, tty bool) int {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" {
			var o options
			newFlagSet(&o, stderr).Usage()
			return ibdumpcli.ExitOK
		}
	}
	if !tty {
		return ibdumpcli.Run(ctx, "ibtui", withoutViewerFlags(args), stdin, stdout, stderr)
	}
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ibdumpcli.ExitOK
		}
		return ibdumpcli.ExitError
	}
	if o.version {
		return ibdumpcli.Run(ctx, "ibtui", []string{"--version"}, stdin, stdout, stderr)
	}
	if o.frame < 0 {
		fmt.Fprintf(stderr, "ibtui: -g %d: want a frame number (1 is the first)\n", o.frame)
		return ibdumpcli.ExitError
	}
	if o.maxPkts < 0 {
		fmt.Fprintf(stderr, "ibtui: --max-packets %d: want 0 (no bound) or more\n", o.maxPkts)
		return ibdumpcli.ExitError
	}
	// The heap is mostly the packet index, which never becomes garbage:
	// collecting at half again its size, not twice, keeps ibtui's memory
	// within twice ibdump's on large captures for a little CPU while loading.
	debug.SetGCPercent(50)
	mono, err := monochrome(o.color)
	if err != nil {
		fmt.Fprintf(stderr, "ibtui: %v\n", err)
		return ibdumpcli.ExitError
	}
	dopts, err := decodeOptions(&o)
	if err != nil {
		fmt.Fprintf(stderr, "ibtui: %v\n", err)
		return ibdumpcli.ExitError
	}
	files := fs.Args()
	if o.read != "" {
		files = append([]string{o.read}, files...)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var points *tui.Points
	if o.correlate || len(o.points) > 0 {
		pts, err := ibdumpcli.CorrelatePoints(o.points, files)
		if err != nil {
			fmt.Fprintf(stderr, "ibtui: --correlate: %v\n", err)
			return ibdumpcli.ExitError
		}
		points = correlatePoints(ctx, correlate.Config{Points: pts, Decode: dopts})
		files = []string{pts[0].Path}
	}
	// tui.Run has each model tell the viewer of its changes: models are
	// made before it.
	openModel := func(files []string) (*tui.Model, func(), error) {
		src, name, streaming, closeSrc, err := openSource(&o, files, stdin)
		if err != nil {
			return nil, nil, err
		}
		m, err := tui.NewModel(ctx, src, tui.Options{Name: name, Decode: dopts, Filter: o.filter, Count: o.count,
			MaxPackets: o.maxPkts, Streaming: streaming})
		if err != nil {
			closeSrc()
			return nil, nil, err
		}
		return m, func() { closeSrc(); m.Close() }, nil
	}
	m, closeModel, err := openModel(files)
	if err != nil {
		fmt.Fprintf(stderr, "ibtui: %v\n", err)
		return ibdumpcli.ExitError
	}
	closers := []func(){closeModel}
	err = tui.Run(ctx, tui.Config{Model: m, Mono: mono, Frame: o.frame, Points: points, Open: func(path string) (*tui.Model, error) {
		o.filter = ""
		m, c, err := openModel([]string{path})
		if err == nil {
			closers = append(closers, c)
		}
		return m, err
	}})
	cancel()
	for _, c := range closers {
		c()
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibtui: %v\n", err)
		return ibdumpcli.ExitError
	}
	return ibdumpcli.ExitOK
}

// correlatePoints runs the correlation of cfg's capture points in the
// background (until ctx is done) into the model of ibtui's Points view:
// each packet as its fate is known, then the report as ibdump prints it.
func correlatePoints(ctx context.Context, cfg correlate.Config) *tui.Points {
	names := make([]string, len(cfg.Points))
	for i, p := range cfg.Points {
		names[i] = p.Name
	}
	pts := tui.NewPoints(names)
	cfg.Packet = func(s *correlate.Sighting) {
		pts.Add(&tui.PointSighting{Flow: s.Flow, PSN: s.PSN, Opcode: s.Opcode, Copy: s.Copy, Frames: s.Frames,
			Times: s.Times, Dropped: s.Dropped, Path: s.Path, LostAfter: s.LostAfter, LostOn: s.LostOn})
	}
	go func() {
		rep, err := correlate.Run(ctx, cfg)
		var text bytes.Buffer
		if err == nil {
			err = output.WriteCorrelation(&text, rep)
		}
		pts.Finish(text.String(), err)
	}()
	return pts
}

// withoutViewerFlags drops --max-packets, which bounds the viewer's memory
// and means nothing to ibdump, which streams.
func withoutViewerFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		switch {
		case a != name && (name == "max-packets" || name == "g"):
			i++ // and its value
		case a != name && (strings.HasPrefix(name, "max-packets=") || strings.HasPrefix(name, "g=")):
		default:
			out = append(out, a)
		}
	}
	return out
}

// monochrome applies --color, NO_COLOR and TERM=dumb (output.UseColor):
// ibtui draws on the terminal, so auto means colour unless they say not.
func monochrome(mode string) (bool, error) {
	color, err := output.UseColor(mode, true, os.Getenv)
	return !color, err
}

func decodeOptions(o *options) (decode.Options, error) {
	opts := decode.Options{DecodeDC: o.dc}
	for _, s := range o.decodeAs {
		sel, proto, ok := strings.Cut(s, ",")
		port, found := strings.CutPrefix(sel, "udp.port==")
		if !ok || !found || proto != "infiniband" {
			return opts, fmt.Errorf("-d %s: want udp.port==N,infiniband", s)
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return opts, fmt.Errorf("-d %s: bad port: %v", s, err)
		}
		opts.RoCEv2Ports = append(opts.RoCEv2Ports, uint16(n))
	}
	return opts, nil
}

// openSource opens what to show: a live interface, standard input, files,
// or the bundled sample. streaming says the source may pause between
// packets.
func openSource(o *options, files []string, stdin io.Reader) (tui.Source, string, bool, func(), error) {
	switch {
	case o.iface != "":
		snap := o.snaplen
		if snap <= 0 {
			snap = 262144
		}
		l, err := capture.OpenLive(o.iface, snap, capture.RoCEFilter())
		if err != nil {
			return nil, "", false, nil, err
		}
		if !o.noPromisc {
			_ = l.SetPromiscuous(true)
		}
		return l, "live " + o.iface, true, func() { l.Close() }, nil
	case len(files) == 0:
		r, err := capture.NewReader(bytes.NewReader(pcaps.Sample), pcaps.SampleName)
		return r, pcaps.SampleName + " (bundled sample)", false, func() {}, err
	case len(files) == 1 && files[0] == "-":
		r, err := capture.NewReader(stdin, "stdin")
		return r, "stdin", true, func() {}, err
	}
	r, err := capture.OpenMulti(files...)
	if err != nil {
		return nil, "", false, nil, err
	}
	return r, strings.Join(files, ", "), false, func() { r.Close() }, nil
}
