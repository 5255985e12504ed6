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
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/bw"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

const bwUsage = `usage: ibpeer %[1]s --addr IP --to HOST[:PORT] [flags]

Runs RDMA %[2]s against an ibpeer serve at HOST (set-up on TCP PORT, 18515 by
default; RoCEv2 on UDP 4791 on both sides) and prints perftest's report: the
test information, both QPs' addresses, and the bandwidth table (bytes,
iterations, BW peak and average in Gb/s, MsgRate in Mpps) or, with --lat,
the latency table (post-to-completion time of each work request, with its
99%% and 99.9%% percentiles; not halved: each is a whole round trip).

Each of --qps QPs opens its own set-up connection and so gets its own QP
and region on the server. --iters counts work requests per QP, as perftest.
At most --tx-depth are outstanding per QP (1 with --lat).

--verify checks every byte moved, in rounds of up to --tx-depth messages
per QP, each message with its own pattern (only the measured operations are
timed, and only they count towards the figures):
  write   WRITE the messages to distinct slots of the region, then READ the
          slots back and compare
  read    WRITE patterns into the slots first, then READ them and compare
  send    SEND the messages; the server's receive buffers are posted in
          order and reposted in order, so message n lands in buffer n mod C
          (ibpeer serve -h); READ those buffers back and compare
  atomic  WRITE 0 to the region's first word, then FETCH_ADD 1 (or, with
          -A CMP_AND_SWAP, compare n swap n+1) --iters times: the n-th must
          return n and the word must end at --iters
--loss, --reorder and --dup damage the datagrams this side sends (ibpeer's
own send path, seeded by --seed: the same seed gives the same faults):
each is dropped with probability --loss, else held back and sent after the
next one with probability --reorder, and sent twice with probability --dup.
The transport's retransmission must make up for it.

--pcap FILE records the packets this side sends (after the faults: what
really went out) and receives, as raw IP packets whose IP and UDP headers
are rebuilt as the UDP wire sends them (IPv4 identification 0, DF), so
that ibdump --check can verify every ICRC.

Exit status: 0 when every completion succeeded and verification passed, 1
otherwise (the reason on standard error), 2 for bad flags.

Examples:
  ibpeer serve --addr 127.0.0.2 &
  ibpeer %[1]s --addr 127.0.0.1 --to 127.0.0.2 --size 65536 --iters 1000
  ibpeer %[1]s --addr 127.0.0.1 --to 127.0.0.2 --size 1048576 --iters 64 --verify --loss 0.05 --qps 2

Flags:
`

func runWrite(args []string, stdout, stderr io.Writer) int {
	return runBW("write", args, stdout, stderr)
}
func runRead(args []string, stdout, stderr io.Writer) int { return runBW("read", args, stdout, stderr) }
func runSend(args []string, stdout, stderr io.Writer) int { return runBW("send", args, stdout, stderr) }
func runAtomic(args []string, stdout, stderr io.Writer) int {
	return runBW("atomic", args, stdout, stderr)
}

func runBW(op string, args []string, stdout, stderr io.Writer) int {
	name := "ibpeer " + op
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "local `IP` address: the GID, UDP 4791 binds here (required)")
	to := fs.String("to", "", "the server, `HOST[:PORT]` of its set-up exchange (required; port 18515 by default)")
	defSize := 65536
	if op == "atomic" {
		defSize = 8
	}
	size := fs.Int("size", defSize, "bytes per message (atomics: 8)")
	iters := fs.Int("iters", 1000, "work requests per QP")
	mtu := fs.Int("mtu", 0, "path MTU: 256, 512, 1024, 2048 or 4096; it must be the server's (default: the server's)")
	qps := fs.Int("qps", 1, "number of QPs, each with its own set-up connection and server region")
	depth := fs.Int("tx-depth", 128, "work requests outstanding per QP")
	verify := fs.Bool("verify", false, "check every byte moved (see above)")
	lat := fs.Bool("lat", false, "measure latency: one work request at a time, latency table instead of bandwidth")
	atomicOp := "FETCH_AND_ADD"
	if op == "atomic" {
		fs.StringVar(&atomicOp, "A", "FETCH_AND_ADD", "atomic operation: FETCH_AND_ADD or CMP_AND_SWAP")
	}
	var fc wiretest.Faults
	fs.Float64Var(&fc.Loss, "loss", 0, "drop each datagram this side sends with probability `P` (0-1)")
	fs.Float64Var(&fc.Reorder, "reorder", 0, "send a datagram after the next one with probability `P` (0-1)")
	fs.Float64Var(&fc.Duplicate, "dup", 0, "send a datagram twice with probability `P` (0-1)")
	seed := fs.Uint64("seed", 1, "seed of the fault decisions")
	stall := fs.Duration("timeout", 10*time.Second, "fail when no completion arrives for this long")
	pcap := fs.String("pcap", "", "write the RoCEv2 packets this side sends and receives to pcap `FILE` (raw IP)")
	device.UDPOffloadFlag(fs)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, bwUsage, op, bw.Ops[op].What)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintf(stderr, "Run '%s -h' for usage.\n", name)
		return exitUsage
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "%s: %s\nRun '%s -h' for usage.\n", name, fmt.Sprintf(format, a...), name)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	j := &bw.Config{Op: op, Size: *size, Iters: *iters, QPs: *qps, Depth: *depth, MTU: *mtu, Verify: *verify, Lat: *lat, Faults: fc, Seed: *seed, Stall: *stall, Pcap: *pcap, Stderr: stderr, UDPOffload: udpOffloadOf(fs)}
	if *addr == "" {
		return bad("give --addr IP, the local address")
	}
	a, err := netip.ParseAddr(*addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *addr)
	}
	j.Addr = a.Unmap()
	if *to == "" {
		return bad("give --to HOST, the ibpeer serve to run against")
	}
	if j.To, err = parseHostPort(*to, setup.DefaultPort); err != nil {
		return bad("--to %q: %v", *to, err)
	}
	if !j.To.Addr().IsValid() {
		return bad("--to %q: want an IP address", *to)
	}
	switch atomicOp {
	case "FETCH_AND_ADD":
	case "CMP_AND_SWAP":
		j.CAS = true
	default:
		return bad("-A %q: want FETCH_AND_ADD or CMP_AND_SWAP", atomicOp)
	}
	switch {
	case op == "atomic" && j.Size != 8:
		return bad("--size %d: atomics move 8 bytes", j.Size)
	case j.Size < 1 || j.Size > 1<<30:
		return bad("--size %d: want 1 to 1073741824 bytes", j.Size)
	case j.Iters < 1:
		return bad("--iters %d: want at least 1", j.Iters)
	case j.QPs < 1 || j.QPs > 64:
		return bad("--qps %d: want 1-64", j.QPs)
	case j.Depth < 1 || j.Depth > 1024:
		return bad("--tx-depth %d: want 1-1024", j.Depth)
	case j.Stall <= 0:
		return bad("--timeout %v: want a positive duration", j.Stall)
	case int64(j.QPs)*int64(j.Iters) > 1<<24:
		return bad("--qps × --iters is %d: at most %d work requests in all", int64(j.QPs)*int64(j.Iters), 1<<24)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"--loss", fc.Loss}, {"--reorder", fc.Reorder}, {"--dup", fc.Duplicate}} {
		if !(p.v >= 0 && p.v < 1) {
			return bad("%s %v: want a probability in [0, 1)", p.name, p.v)
		}
	}
	if j.MTU != 0 {
		if _, err := layers.ParsePathMTU(j.MTU); err != nil {
			return bad("--mtu: %v", err)
		}
	}
	if j.Lat {
		j.Depth = 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bw.Run(ctx, *j, stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitError
	}
	return exitOK
}
