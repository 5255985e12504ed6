// Package ibdumpcli is the whole of the ibdump command: it reads RoCE and
// InfiniBand captures (or captures live) and prints them the way tcpdump
// and tshark users expect, with Wireshark's field names and RDMA-aware
// summaries. It is a package, not a main, so that ibtui can behave exactly
// like ibdump when its standard output is not a terminal.
package ibdumpcli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// Exit statuses.
const (
	ExitOK       = 0
	ExitFindings = 1 // --check found bad CRCs or malformed packets, or --doctor (-z doctor) a warning or worse
	ExitError    = 2 // bad flags, unreadable or corrupt input
)

// The unexported names the code was written with.
const (
	exitOK       = ExitOK
	exitFindings = ExitFindings
	exitError    = ExitError
)

type options struct {
	prog       string // the program name in messages and usage: ibdump, or ibtui falling back
	read       string
	write      string
	format     string
	count      int
	countOnly  bool
	filter     string
	verboseV   bool
	only       listFlag
	hex        int // -x 1, -xx 2
	hexASCII   int // -X 1, -XX 2
	ascii      bool
	quiet      bool
	numeric    countFlag
	verbose    countFlag
	times      [5]bool // -t -tt -ttt -tttt -ttttt
	number     bool
	nano       bool
	micro      bool
	outFormat  string
	fields     listFlag
	fieldOpts  listFlag
	stats      listFlag
	check      bool
	doctor     bool
	color      string
	version    bool
	glossary   string
	listIfaces bool
	iface      string
	snaplen    int
	bufferKiB  int // -B: the live capture's socket buffer, in KiB (0: capture.DefaultLiveBuffer)
	noPromisc  bool
	decodeAs   listFlag
	disabled   listFlag // --disable-protocol
	noHeur     listFlag // --disable-heuristic
	dc         bool
	ether      bool
	lineBuf    bool
	jobs       int // -j: cores a file's run may use (0: all)
	print      bool
	twoPass    bool
	graph      string
	linkSpeed  string
	correlate  bool
	points     listFlag // --point NAME=FILE
	noClockFix bool
	window     time.Duration
	labels     listFlag // --label, with -T parquet
	shard      string   // --shard, with -T parquet
	files      []string // the captures to read: -r's, then the arguments
	frames     string   // --frames FILE:FRAME@OFFSET,...
	offsets    string   // --offsets OFFSET,... of -r's file
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	if o.prog == "" {
		o.prog = "ibdump"
	}
	fs := flag.NewFlagSet(o.prog, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.read, "r", "", "read packets from `file` (pcap, pcapng, gzip); - reads standard input")
	fs.StringVar(&o.write, "w", "", "write the packets (after -Y) to `file`; - writes standard output; with -T parquet, the folder the tables go into")
	fs.StringVar(&o.format, "F", "pcap", "`format` of -w: pcap or pcapng")
	fs.IntVar(&o.count, "c", 0, "stop after `n` packets (counted before -Y)")
	fs.BoolVar(&o.countOnly, "count", false, "print only the number of packets that pass -Y")
	fs.StringVar(&o.filter, "Y", "", "display `filter` in Wireshark syntax, e.g. 'bth.opcode == RC_RDMA_WRITE_ONLY && aeth.syndrome.opcode == 3'")
	fs.BoolVar(&o.verboseV, "V", false, "print the detail tree of every packet (tshark -V)")
	fs.Var(&o.only, "O", "with -V, show only `protocol` in detail (repeatable)")
	fs.BoolFunc("x", "print each packet in hex, from the network header (tcpdump -x)", func(string) error { o.hex = max(o.hex, 1); return nil })
	fs.BoolFunc("xx", "print each packet in hex, link header included", func(string) error { o.hex = 2; return nil })
	fs.BoolFunc("X", "as -x, with ASCII", func(string) error { o.hexASCII = max(o.hexASCII, 1); return nil })
	fs.BoolFunc("XX", "as -xx, with ASCII", func(string) error { o.hexASCII = 2; return nil })
	fs.BoolVar(&o.ascii, "A", false, "print each packet's IB payload in ASCII")
	fs.BoolVar(&o.quiet, "q", false, "print no per-packet lines (use with -z or --check)")
	fs.Var(&o.numeric, "n", "do not resolve names (ibdump never resolves; accepted for tcpdump habits)")
	fs.Var(&o.verbose, "v", "more detail and integrity checks: IP TOS/ECN/TTL/ID, ICRC and VCRC verified (repeatable)")
	fs.BoolFunc("vv", "as -v -v", func(string) error { o.verbose += 2; return nil })
	for i, name := range []string{"t", "tt", "ttt", "tttt", "ttttt"} {
		i := i
		usage := [...]string{"no timestamp", "seconds since 1970", "time since the previous packet",
			"date and time of day", "time since the first packet"}[i]
		fs.BoolFunc(name, usage, func(string) error { o.times[i] = true; return nil })
	}
	fs.BoolVar(&o.number, "#", false, "print the packet number first")
	fs.BoolVar(&o.number, "number", false, "print the packet number first")
	fs.BoolVar(&o.nano, "nano", false, "nanosecond timestamps")
	fs.BoolVar(&o.micro, "micro", false, "microsecond timestamps (default)")
	fs.StringVar(&o.outFormat, "T", "", "output `format`: text (tshark's line), fields, json, jsonl, ek, parquet (tables packets, connections\n"+
		"and findings under the folder -w names; see --label, --shard, -e); default: ibdump's one-line summary")
	fs.Var(&o.fields, "e", "with -T fields, print `field` (repeatable); with -T parquet, add it as a column of packets; see -G fields")
	fs.StringVar(&o.frames, "frames", "", "read only these records, by byte offset and without scanning: `FILE:FRAME@OFFSET,...` (the packets table's\n"+
		"file, frame and byte_offset columns of -T parquet); pcap and pcapng, not gzip")
	fs.StringVar(&o.offsets, "offsets", "", "with -r FILE, read only the records at these byte `offsets` (comma-separated), without scanning")
	fs.Var(&o.labels, "label", "with -T parquet, a `key=value` put into every row and into the folders' names (host=a17; repeatable)")
	fs.StringVar(&o.shard, "shard", "", "with -T parquet, spread packets over N files by connection id: `conv[,N]` (N 8 by default)")
	fs.Var(&o.fieldOpts, "E", "-T fields `option`: header=y|n, separator=/t|/s|c, occurrence=f|l|a, aggregator=c, quote=d|s|n")
	fs.Var(&o.stats, "z", "`statistics` (repeatable): conv,qp | expert[,error|warn|note|chat] | latency | opcodes | endpoints,gid |\n"+
		"nvme,srt | rpc,srt | iscsi,srt (or iser,srt) | smb2,srt (or smbd,srt) (upper-layer service response times per command) |\n"+
		"io,stat,INTERVAL[,FILTER|FUNC(field)FILTER...] with FUNC one of SUM COUNT MIN MAX AVG | follow,qp,hex|ascii,FILTER |\n"+
		"pfc[,WINDOW[,PERCENT]] (pause timeline per port and priority; storm: paused > PERCENT (50) of a WINDOW (1s)) |\n"+
		"doctor (see --doctor) | dcqcn[,INTERVAL] (per direction: ECN codepoints, CE ratio, CNPs and their spacing, the sender's reaction, rate per INTERVAL (100us), victims);\n"+
		"tables, or JSON with -T json (after the packets; -q leaves the statistics alone). With -Y, each counts the shown packets\n"+
		"(conv,qp: their connections). With -q, CRCs are checked only with -v or --check (ICRC findings, icrc_errors)")
	fs.BoolVar(&o.twoPass, "2", false, "two passes: a packet can name later frames (\"answered by N\") and carries its connection's final conv_id; memory then grows with the capture (files only)")
	fs.StringVar(&o.linkSpeed, "link-speed", "", "`speed` of the links PAUSE and PFC frames travel on (10G, 25G, 40G, 50G, 100G, 200G, 400G): turns pause quanta\n"+
		"(512 bit times) into time for -z pfc; default: the pcapng if_speed, else durations stay unknown")
	fs.StringVar(&o.graph, "graph", "", "write a graph: psn:`FILE.svg` plots PSN against time for the connection of the first packet -Y shows (tcptrace style);\n"+
		"rate:FILE.svg plots each QP direction's sending rate per -z dcqcn interval with its CE marks, CNPs, rate cuts and the PFC pauses\n"+
		"of its priority (with --link-speed), once the capture shows congestion")
	fs.BoolVar(&o.doctor, "doctor", false, "lint the RoCE configuration the capture shows (same as -q -z doctor): Not-ECT data, CNPs or ACKs in another class than\n"+
		"the data, untagged priority-0 RoCE beside PFC, mixed DSCPs, small path MTUs, shared UDP source ports, RoCEv1 beside v2, CM GIDs that are not the IPs, ICRC errors,\n"+
		"CM contract breaches, senders deaf to CNPs; each with evidence frames and the usual fix; exit 1 at warning or above")
	fs.BoolVar(&o.check, "check", false, "verify every ICRC and VCRC; exit 1 with a summary if any is wrong or a packet is malformed")
	fs.StringVar(&o.color, "color", "auto", "colour: auto, always or never (auto honours NO_COLOR and TERM=dumb)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.StringVar(&o.glossary, "G", "", "print a glossary and exit: `fields`")
	fs.BoolVar(&o.listIfaces, "D", false, "list the interfaces -i can capture on")
	fs.StringVar(&o.iface, "i", "", "capture live on `interface` (AF_PACKET; RoCE traffic only: UDP 4791, ethertype 0x8915)")
	fs.IntVar(&o.snaplen, "s", 262144, "capture `snaplen` bytes of each live packet (0 means 262144)")
	fs.BoolVar(&o.noPromisc, "p", false, "do not put the interface into promiscuous mode")
	fs.IntVar(&o.bufferKiB, "B", 0, "live capture's socket buffer in `KiB` (tcpdump's -B; 0 means 32768; bursts beyond it are dropped and counted)")
	fs.Var(&o.decodeAs, "d", "decode as: `udp.port==N,infiniband` treats UDP port N as RoCEv2, qp==N,nvme-rdma the connection of QP N as NVMe-oF, qp==N,rpcrdma as RPC over RDMA, qp==N,iser as iSER (repeatable)")
	fs.Var(&o.disabled, "disable-protocol", "do not decode `PROTO` (nvme-rdma: NVMe over Fabrics; rpcrdma or rpcordma: RPC over RDMA and the NFS in it; iser: iSER and the iSCSI in it; smb_direct: SMB Direct and the SMB2 in it)")
	fs.Var(&o.noHeur, "disable-heuristic", "do not look for `PROTO` by content on connections with no CM set-up (nvme-rdma, rpcrdma, iser, smb_direct)")
	fs.BoolVar(&o.dc, "dc", false, "decode opcodes 0x40-0x5F as Mellanox DC (20-byte BTH) instead of IBTA RD")
	fs.BoolVar(&o.ether, "ether", false, "print the link-level header on each line (tcpdump's -e)")
	fs.BoolVar(&o.lineBuf, "l", false, "flush standard output after every packet")
	fs.IntVar(&o.jobs, "j", 0, "cores a file's run may count on (0: all; at most the cores and 64): `n` workers take batches of packets in\n"+
		"turn, each decoding its own and printing them, while the analysis and the statistics see every packet in\n"+
		"order; 1: one goroutine does everything, as -l, -i and --frames always do; the output is the same")
	fs.BoolVar(&o.print, "P", false, "print packets while writing them with -w")
	fs.BoolVar(&o.correlate, "correlate", false, "correlate the files as captures of the same traffic at several points, one file per point named after\n"+
		"the file: clocks, path, losses by segment, capture drops per point, delay per hop (text, or -T json);\n"+
		"-w FILE.pcapng writes the captures merged on the corrected clocks, one interface per point; -Y, -T fields|text|jsonl|ek\n"+
		"and -V list the packets instead, with ibwire.correlate.* fields (point, seen, dropped, lost_on, copy, delay), in\n"+
		"the order each packet's fate is known; -z path adds the report")
	fs.Var(&o.points, "point", "with --correlate, a capture point `NAME=FILE` (repeatable; implies --correlate)")
	fs.BoolVar(&o.noClockFix, "no-clock-fix", false, "with --correlate, measure delays on the clocks as captured rather than corrected")
	fs.DurationVar(&o.window, "correlate-window", correlate.DefaultWindow, "with --correlate, how long a packet waits for its copies at the other points (`duration`)")
	fs.Usage = func() { usage(o.prog, fs, stderr) }
	return fs
}

// usage prints the help; prog replaces the program name everywhere in it.
func usage(prog string, fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, strings.ReplaceAll(`Usage: ibdump [flags] [file ...]
       ibdump completion bash|zsh|fish

ibdump reads RoCEv1, RoCEv2 and native InfiniBand captures (pcap, pcapng,
gzip; LINKTYPE Ethernet, Linux SLL/SLL2, raw IP, ERF, InfiniBand) and prints
one line per packet. Given no file and no -i, it decodes a bundled sample.

Examples:
  ibdump capture.pcap                         one line per packet
  ibdump -V -O infiniband capture.pcap        detail tree of the IB headers
  ibdump -Y 'aeth.syndrome.opcode == 3' f.pcap   NAKs only
  ibdump -T fields -E header=y -e frame.number -e bth.psn f.pcap
  ibdump -q -z conv,qp f.pcap                 each QP connection: traffic, losses, NAKs, latency
  ibdump -q -z expert f.pcap                  anomalies by severity (PSN gaps, NAKs, timeouts, CRCs)
  ibdump -q -z pfc --link-speed 100G f.pcap   PFC pauses: intervals, paused time, storms, packets sent while paused
  ibdump -q -z dcqcn f.pcap                   ECN marks, CNPs, each CNP's rate cut, rate per interval, victims
  ibdump --doctor f.pcap                      RoCE configuration lint; exit 1 when it finds a warning or worse
  ibdump -Y ibwire.analysis.retransmission f.pcap   retransmitted packets only
  ibdump -Y 'bth.destqp == 0x11' --graph psn:qp.svg f.pcap   PSN graph of a connection
  ibdump --check f.pcap                       verify every ICRC/VCRC
  ibdump --correlate a.pcap b.pcap            the same traffic at two points: clocks, losses by hop, drops
  ibdump -T parquet -w out --label host=a17 f.pcap   packets, connections, findings as Parquet
  tcpdump -i mlx5_0 -w - | ibdump -r -        hardware RoCE via libpcap's rdmasniff

Flags:
`, "ibdump", prog))
	fs.PrintDefaults()
	fmt.Fprint(w, strings.ReplaceAll(`
Exit status: 0 success, 1 --check found problems, 2 bad usage or unreadable input.
Flags may be clustered, have their values attached and follow the files, as in
tcpdump and tshark: -nnvX, -c1, -Tfields, ibdump f.pcap -Y ibwire.analysis.nak.
Fields: Wireshark's names (infiniband.bth.psn; the "infiniband." prefix may be
omitted) plus ibwire.* (ibdump -G fields lists them all); ibwire.analysis.*
hold what the conversation analysis found (retransmission, psn_gap, nak,
ack_rtt, read_latency, request_frame ...), usable in -Y and -e.
Analysis memory grows with the live connections, not with the capture,
except with -2, which keeps a few bytes per frame between the passes.
Colour: NO_COLOR set and non-empty turns colour off unless --color=always.
`, "ibdump", prog))
}

// Run is ibdump: it parses args (without the program name), reads the
// captures they name (or stdin, or a live interface) and prints to stdout,
// and returns the exit status. prog is the name messages and the usage start
// with. Cancelling ctx stops a live capture or a long read cleanly.
func Run(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "completion" {
		return completion(prog, args[1:], stdout, stderr)
	}
	o := options{prog: prog}
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(flagsFirst(fs, expandClusters(fs, args))); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitError
	}
	switch {
	case o.version:
		fmt.Fprintln(stdout, versionString(prog))
		return exitOK
	case o.glossary != "":
		if o.glossary != "fields" {
			fmt.Fprintf(stderr, "%s: -G %s: only \"fields\" is known\n", prog, o.glossary)
			return exitError
		}
		printGlossary(stdout)
		return exitOK
	case o.listIfaces:
		return listInterfaces(prog, stdout, stderr)
	case o.bufferKiB < 0 || o.bufferKiB > 1<<21:
		fmt.Fprintf(stderr, "%s: -B %d: want a buffer size in KiB, 1 to 2097152 (0: the default 32768)\n", prog, o.bufferKiB)
		return exitError
	}
	files := fs.Args()
	if o.read != "" {
		files = append([]string{o.read}, files...)
	}
	o.files = files
	if o.correlate || len(o.points) > 0 {
		return runCorrelate(ctx, &o, files, stdout, stderr)
	}
	d, err := newDumper(&o, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return exitError
	}
	return d.run(ctx, files, stdin)
}

func versionString(prog string) string {
	v, rev, when, modified, gp := "(devel)", "", "", "", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/google/gopacket" {
				gp = dep.Version
			}
		}
	}
	info := ""
	if rev != "" {
		info = fmt.Sprintf(" (rev %s, %s%s)", rev, when, modified)
	}
	return fmt.Sprintf("%s %s%s gopacket %s %s", prog, v, info, gp, goVersion())
}

func printGlossary(w io.Writer) {
	bw := bufio.NewWriter(w)
	for _, f := range decode.Fields() {
		base := f.Base.String()
		if bits := f.BoolBits(); bits > 0 {
			base = strconv.Itoa(bits) // tshark's FT_BOOLEAN display: the integer's width
		}
		// tshark's columns, its bitmask included (0x0 for none).
		fmt.Fprintf(bw, "F\t%s\t%s\t%s\t%s\t%s\t0x%x\n", f.Title, f.Name, f.GlossaryType(), f.Protocol(), base, f.GlossaryMask())
	}
	bw.Flush()
}

func listInterfaces(prog string, stdout, stderr io.Writer) int {
	ifs, err := capture.Interfaces()
	if err != nil {
		fmt.Fprintf(stderr, "%s: -D: %v\n", prog, err)
		return exitError
	}
	for i, ifc := range ifs {
		// tcpdump -D's shape: "1.eth0 [Up, Running]", with the addresses.
		fmt.Fprintf(stdout, "%d.%s [%s]", i+1, ifc.Name, ifc.Flags)
		if len(ifc.Addrs) > 0 {
			fmt.Fprintf(stdout, " %s", strings.Join(ifc.Addrs, " "))
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}

// ulpChoice is what -d, --disable-protocol and --disable-heuristic say
// of the upper-layer protocols ibdump decodes: NVMe-oF (nvme-rdma) and
// RPC over RDMA (rpcrdma, or Wireshark's rpcordma).
type ulpChoice struct {
	nvmeQPs, rpcQPs      []uint32
	noNVMe, noNVMeDetect bool
	noRPC, noRPCDetect   bool
	iserQPs              []uint32
	noISER, noISERDetect bool
	noSMBD, noSMBDDetect bool
}

// ulpProtocol names the protocol a -d or --disable-* argument means: "nvme"
// or "rpc", "" for one ibdump does not decode.
func ulpProtocol(name string) string {
	switch name {
	case "nvme-rdma", "nvme":
		return "nvme"
	case "rpcrdma", "rpcordma":
		return "rpc"
	case "iser", "iscsi":
		return "iser"
	case "smb_direct", "smbdirect":
		return "smbd"
	}
	return ""
}

// parseDecodeAs reads -d udp.port==N,infiniband and -d qp==N,nvme-rdma or
// qp==N,rpcrdma (also infiniband.bth.destqp==N,...; N decimal or 0x hex):
// the second names a QP whose connection carries that protocol.
func parseDecodeAs(specs []string, ulp *ulpChoice) (ports []uint16, err error) {
	for _, s := range specs {
		sel, proto, ok := strings.Cut(s, ",")
		if qp, found := cutAnyPrefix(sel, "qp==", "infiniband.bth.destqp=="); ok && found {
			which := ulpProtocol(proto)
			if which == "" || which == "smbd" || proto == "nvme" {
				return nil, fmt.Errorf("-d %s: a QP decodes as nvme-rdma, rpcrdma or iser", s)
			}
			n, err := strconv.ParseUint(qp, 0, 24)
			if err != nil {
				return nil, fmt.Errorf("-d %s: bad QP number: %v", s, err)
			}
			switch which {
			case "nvme":
				ulp.nvmeQPs = append(ulp.nvmeQPs, uint32(n))
			case "iser":
				ulp.iserQPs = append(ulp.iserQPs, uint32(n))
			default:
				ulp.rpcQPs = append(ulp.rpcQPs, uint32(n))
			}
			continue
		}
		port, found := strings.CutPrefix(sel, "udp.port==")
		if !ok || !found || proto != "infiniband" {
			return nil, fmt.Errorf("-d %s: want udp.port==N,infiniband, qp==N,nvme-rdma or qp==N,rpcrdma", s)
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("-d %s: bad port: %v", s, err)
		}
		ports = append(ports, uint16(n))
	}
	return ports, nil
}

func cutAnyPrefix(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return s, false
}

// ulpOptions applies --disable-protocol and --disable-heuristic to the
// upper-layer protocols ibdump decodes: nvme-rdma and rpcrdma.
func ulpOptions(disabled, noHeur []string, ulp *ulpChoice) error {
	for _, p := range disabled {
		switch ulpProtocol(p) {
		case "nvme":
			ulp.noNVMe = true
		case "rpc":
			ulp.noRPC = true
		case "iser":
			ulp.noISER = true
		case "smbd":
			ulp.noSMBD = true
		default:
			return fmt.Errorf("--disable-protocol %s: ibdump can disable nvme-rdma, rpcrdma, iser and smb_direct", p)
		}
	}
	for _, p := range noHeur {
		switch {
		case p == "nvme-rdma":
			ulp.noNVMeDetect = true
		case ulpProtocol(p) == "rpc":
			ulp.noRPCDetect = true
		case ulpProtocol(p) == "iser":
			ulp.noISERDetect = true
		case ulpProtocol(p) == "smbd":
			ulp.noSMBDDetect = true
		default:
			return fmt.Errorf("--disable-heuristic %s: ibdump can disable nvme-rdma, rpcrdma, iser and smb_direct", p)
		}
	}
	return nil
}

// colorEnabled applies --color, NO_COLOR, TERM=dumb and whether out is a
// terminal (output.UseColor).
func colorEnabled(mode string, out io.Writer) (bool, error) {
	f, ok := out.(*os.File)
	return output.UseColor(mode, ok && term.IsTerminal(int(f.Fd())), os.Getenv)
}
