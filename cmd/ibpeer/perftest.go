package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/perftest"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

const perftestUsage = `usage: ibpeer perftest write|read|send|atomic|write_lat|read_lat|send_lat|atomic_lat --addr IP [flags] [SERVER]

Plays perftest's ib_write_bw, ib_read_bw, ib_send_bw or ib_atomic_bw, or
the latency tests ib_write_lat, ib_read_lat, ib_send_lat or ib_atomic_lat,
as the server (no SERVER given: it waits for one client on TCP -p) or as the
client of SERVER, against perftest itself or another ibpeer perftest. The
set-up is perftest's TCP ("Ethernet") exchange as perftest 6.06 runs it,
advertising version 6.06 (later versions then skip their binary parameter
negotiation): versions, buffer sizes, MTU (each side proposes its active
MTU, the smaller wins), the 108-byte QP messages, and after the traffic
the bandwidth report of write/read/atomic, which the server prints. One RC
QP, or -q N of them for write and read (both sides must say the same -q,
as with perftest: N QP messages each way, then the traffic round-robin over
the QPs, -n on each, each QP to its own part of the peer's buffer);
perftest's defaults (size 65536, atomics 8; 5000 iterations for write,
1000 for the others; TX depth 128; 512 receives posted by a SEND server),
QP attributes as perftest sets them (timeout 14, retry 7, RNR retry 7,
hop limit 255, outstanding READs/atomics as the peer advertises). The
output is perftest's: test information, both addresses, the table, in
MB/s (2^20 bytes per second) as perftest's default, or Gb/s with
--report_gbits.

The active MTU is rxe's rule applied to --addr's interface: the largest IB
MTU not above the netdev MTU (1500 gives 1024, loopback 4096).

-b is perftest's bidirectional WRITE test: after the set-up one more
handshake starts both sides at once, each writes -n messages (on each of
its -q QPs) to the other's buffer, the two reports are swapped and both
sides print their sum, as perftest's does; the peer must run -b too.

Refused at once, with a message and exit status 2, before any set-up:
-q N other than 1 for send, atomic and the latency tests or with -R, -b
(bidirectional) other than of write or with -R, -a (all sizes), -D (timed
runs), --run_infinitely, -c other than RC. As the server, a perftest client that asks for them, or
runs another number of QPs than -q, is refused in the set-up exchange,
before any traffic, with exit status 1: the number of QPs shows in the QP
messages (perftest sends one per QP), a bidirectional client as the
end-of-traffic handshake arriving before any of its traffic. The refused
peer sees the set-up connection close, and prints no result. As the
client, a perftest server running another number of QPs is refused the
same way.

Every work request is signalled (perftest signals one in 100, its CQ
moderation); the figures are computed as perftest computes them: average
from the first post to the last completion, peak the best
(completion j - post i)/(j - i + 1), up to 20000 iterations.

The latency tests (write_lat, read_lat, send_lat, atomic_lat) share the
set-up and run one message at a time: the client's READs or atomics, each
posted once the last completed (the server only answers, and prints no
result), or a ping-pong of WRITEs or SENDs that the client starts (both
print a result; a WRITE's last byte carries the sender's count, which
perftest polls for).
Defaults are perftest's: size 2 (atomics 8), 1000 iterations. The report
is perftest's latency row: t_min, t_max, t_typical (the median), t_avg,
t_stdev and the 99% and 99.9% percentiles in microseconds, taken from the
time between consecutive posts (halved for WRITE and SEND, whose round
trip carries two messages). -I (inline size) is printed as perftest
prints it and changes nothing on the wire. -R with a latency test is
refused at once.

--bind is another name of --addr, the one the interop scenarios use.

The buffer holds random bytes for write, read and send, as perftest's
does (atomics start from zero). --dump-region FILE writes it to FILE when
the test has ended: the bytes a WRITE or SEND server received, a READ
client read, or a client sent, so that a capture of the run can be
checked against them (ibpeer replay --image; interop's check_data).

-R (--rdma_cm) is perftest's RDMA CM mode: the set-up exchange runs as
SENDs over an RC QP that RDMA CM (QP1) connects to port -p, the QP
messages are perftest's binary struct pingpong_dest, and the data QP is
connected by RDMA CM too (a second connection to the same port); at the
end the client disconnects the data QP and the server the set-up one.

Examples:
  ibpeer perftest write --addr 127.0.0.2                     # server
  ibpeer perftest write --addr 127.0.0.1 127.0.0.2          # client
  ibpeer perftest atomic -A CMP_AND_SWAP --addr 192.168.77.1 -n 200 192.168.77.11
  ibpeer perftest write_lat --addr 192.168.77.1 -n 200 192.168.77.11

Exit status: 0 when the test ran and every completion succeeded, 1
otherwise, 2 for bad flags.

Flags:
`

func runPerftest(args []string, stdout, stderr io.Writer) int {
	j, code := parsePerftest(args, stdout, stderr)
	if j == nil {
		return code
	}
	j.Stderr = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := perftest.Run(ctx, *j, stdout); err != nil {
		fmt.Fprintf(stderr, "ibpeer perftest %s: %v\n", j.Verb, err)
		return exitError
	}
	return exitOK
}

// parsePerftest checks the command line; it returns no job and the exit
// status when there is nothing to run (help, bad flags).
func parsePerftest(args []string, stdout, stderr io.Writer) (*perftest.Config, int) {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, perftestUsage)
			fs, _ := perftestFlags("write", io.Discard)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, exitOK
		}
	}
	bad := func(format string, a ...any) (*perftest.Config, int) {
		fmt.Fprintf(stderr, "ibpeer perftest: %s\nRun 'ibpeer perftest -h' for usage.\n", fmt.Sprintf(format, a...))
		return nil, exitUsage
	}
	if len(args) == 0 {
		return bad("give the test: write, read, send, atomic, write_lat, read_lat, send_lat or atomic_lat")
	}
	verb := args[0]
	if _, ok := perftest.Verbs[verb]; !ok {
		return bad("unknown test %q: want write, read, send, atomic, write_lat, read_lat, send_lat or atomic_lat", verb)
	}
	fs, v := perftestFlags(verb, stderr)
	// perftest's getopt takes flags after the server's address too
	// (ib_write_bw 192.168.77.11 -s 4096): parse again after each operand.
	var operands []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, perftestUsage)
				fs.SetOutput(stdout)
				fs.PrintDefaults()
				return nil, exitOK
			}
			fmt.Fprintln(stderr, "Run 'ibpeer perftest -h' for usage.")
			return nil, exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		operands = append(operands, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	// perftest options this mode does not run are refused before anything
	// starts, never half-run
	switch {
	case *v.qps < 1 || *v.qps > perftest.MaxQPs:
		return bad("-q %d: want 1 to %d QPs", *v.qps, perftest.MaxQPs)
	case *v.qps != 1 && verb != "write" && verb != "read":
		return bad("-q %d: several QPs run with write and read; %s runs one QP", *v.qps, verb)
	case *v.qps != 1 && *v.rdmacm:
		return bad("-q %d with -R: several QPs connect over the TCP exchange only", *v.qps)
	case *v.bidirectional && verb != "write":
		return bad("-b: the bidirectional test runs with write; %s runs one direction", verb)
	case *v.bidirectional && *v.rdmacm:
		return bad("-b with -R: the bidirectional test runs over the TCP exchange only")
	case *v.all:
		return bad("-a: give one size with -s; the run over all sizes (perftest -a) is not supported")
	case *v.duration != 0:
		return bad("-D %d: give iterations with -n; timed runs (perftest -D) are not supported", *v.duration)
	case *v.infinite:
		return bad("--run_infinitely: give iterations with -n; endless runs are not supported")
	case *v.connection != "RC":
		return bad("-c %s: ibpeer perftest runs RC only", *v.connection)
	}
	j := &perftest.Config{Verb: verb, QPs: *v.qps, Bidirectional: *v.bidirectional, Port: *v.port, Size: *v.size, Iters: *v.iters, MTU: *v.mtu, Depth: *v.depth, OutReads: *v.outs, MBps: !*v.gbits, Stall: *v.stall, RDMACM: *v.rdmacm, Dump: *v.dump, Inline: *v.inline, UDPOffload: *v.offload}
	if j.Latency() && j.RDMACM {
		return bad("-R: a latency test over RDMA CM is not supported; run it with the TCP exchange (no -R)")
	}
	if *v.addr == "" {
		return bad("give --addr IP, the local address (its GID is what the peer learns)")
	}
	a, err := netip.ParseAddr(*v.addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *v.addr)
	}
	j.Addr = a.Unmap()
	switch len(operands) {
	case 0:
	case 1:
		s, err := netip.ParseAddr(operands[0])
		if err != nil {
			return bad("server %q: not an IP address", operands[0])
		}
		j.Server = netip.AddrPortFrom(s.Unmap(), uint16(j.Port))
	default:
		return bad("unexpected argument %q", operands[1])
	}
	switch *v.atomic {
	case "FETCH_AND_ADD":
	case "CMP_AND_SWAP":
		j.CAS = true
	default:
		return bad("-A %q: want FETCH_AND_ADD or CMP_AND_SWAP", *v.atomic)
	}
	if j.Op() == "atomic" && j.Size != 8 {
		return bad("-s %d: atomics move 8 bytes", j.Size)
	}
	switch {
	case j.Port < 0 || j.Port > 65535 || j.Port == 0 && j.Server.IsValid():
		return bad("-p %d: want a TCP port", j.Port)
	case j.Size < 1 || j.Size > 1<<30:
		return bad("-s %d: want 1 to 1073741824 bytes", j.Size)
	case j.Iters < 5 || j.Iters > 1<<24:
		return bad("-n %d: want at least 5 (perftest's minimum) and at most %d", j.Iters, 1<<24)
	case j.Depth < 1 || j.Depth > 1024:
		return bad("-t %d: want 1-1024", j.Depth)
	case j.OutReads < 1 || j.OutReads > setup.PerftestOutReads:
		return bad("-o %d: want 1-%d", j.OutReads, setup.PerftestOutReads)
	case j.Stall <= 0:
		return bad("--timeout %v: want a positive duration", j.Stall)
	case j.Inline < 0 || j.Inline > 1024:
		return bad("-I %d: want 0-1024 bytes", j.Inline)
	}
	if j.MTU == 0 {
		j.MTU = device.ActiveMTU(j.Addr)
	} else if _, err := layers.ParsePathMTU(j.MTU); err != nil {
		return bad("-m: %v", err)
	}
	return j, exitOK
}

type perftestFlagValues struct {
	addr, atomic, dump                          *string
	gbits, rdmacm                               *bool
	port, size, iters, mtu, depth, outs, inline *int
	stall                                       *time.Duration
	offload                                     *device.UDPOffload
	// perftest's flags ibpeer perftest does not run: taken only to be
	// refused by name
	qps, duration                *int
	bidirectional, all, infinite *bool
	connection                   *string
}

func perftestFlags(verb string, out io.Writer) (*flag.FlagSet, perftestFlagValues) {
	fs := flag.NewFlagSet("ibpeer perftest "+verb, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	var v perftestFlagValues
	v.offload = device.UDPOffloadFlag(fs)
	v.addr = fs.String("addr", "", "local `IP` address: the GID, UDP 4791 and (server) the TCP listener bind here (required)")
	fs.StringVar(v.addr, "bind", "", "same as --addr")
	v.port = fs.Int("p", setup.DefaultPort, "TCP `port` of the set-up exchange")
	size, iters := 65536, 1000
	if strings.HasSuffix(verb, "_lat") {
		size = 2
	}
	if strings.TrimSuffix(verb, "_lat") == "atomic" {
		size = 8
	}
	if verb == "write" {
		iters = 5000
	}
	v.size = fs.Int("s", size, "message `size` in bytes (65536; latency tests 2; atomics 8)")
	v.iters = fs.Int("n", iters, "number of `iterations` (5000 for write, 1000 for the others)")
	v.inline = fs.Int("I", 0, "perftest's max inline `size`: printed as \"Max inline data\"; nothing changes on the wire")
	v.mtu = fs.Int("m", 0, "proposed path `MTU` in bytes (default: the active MTU of --addr's interface)")
	v.depth = fs.Int("t", 128, "TX depth: work requests outstanding on the client")
	v.outs = fs.Int("o", setup.PerftestOutReads, "outstanding READs/atomics this side accepts as responder, advertised to the peer (read and atomic)")
	v.atomic = fs.String("A", "FETCH_AND_ADD", "atomic operation: FETCH_AND_ADD or CMP_AND_SWAP")
	v.gbits = fs.Bool("report_gbits", false, "report Gb/s instead of MB/s (perftest's flag; both sides should agree, the server prints the client's figures)")
	v.stall = fs.Duration("timeout", 10*time.Second, "fail when no completion arrives for this long")
	v.rdmacm = fs.Bool("R", false, "perftest's -R (--rdma_cm): the set-up exchange and the QP connected over RDMA CM (QP1) on port -p instead of TCP")
	fs.BoolVar(v.rdmacm, "rdma_cm", false, "same as -R")
	v.qps = fs.Int("q", 1, "perftest's number of QPs, driven round-robin (write and read; the peer must run as many)")
	v.bidirectional = fs.Bool("b", false, "perftest's bidirectional test (write): both sides write at once and print the sum (the peer must run -b too)")
	fs.BoolVar(v.bidirectional, "bidirectional", false, "same as -b")
	v.all = fs.Bool("a", false, "perftest's run over all sizes: refused")
	fs.BoolVar(v.all, "all", false, "same as -a")
	v.duration = fs.Int("D", 0, "perftest's timed run in seconds: refused (give -n)")
	fs.IntVar(v.duration, "duration", 0, "same as -D")
	v.infinite = fs.Bool("run_infinitely", false, "perftest's endless run: refused")
	v.connection = fs.String("c", "RC", "perftest's connection type: only RC (UC, UD, XRC, DC are refused)")
	fs.StringVar(v.connection, "connection", "RC", "same as -c")
	v.dump = fs.String("dump-region", "", "write the test's buffer to `FILE` when the test has ended (what a WRITE or SEND server received, a READ client read, a client sent)")
	return fs, v
}
