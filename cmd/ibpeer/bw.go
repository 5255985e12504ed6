package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/internal/peer/serve"
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

// bwOps are the client commands: their name, the operation, perftest's
// name of the verb.
var bwOps = map[string]struct{ what, verb string }{
	"write":  {"WRITEs", "RDMA_Write"},
	"read":   {"READs", "RDMA_Read"},
	"send":   {"SENDs", "Send"},
	"atomic": {"atomics (FETCH_ADD, or CMP_SWAP with -A CMP_AND_SWAP)", "Atomic"},
}

func runWrite(args []string, stdout, stderr io.Writer) int {
	return runBW("write", args, stdout, stderr)
}
func runRead(args []string, stdout, stderr io.Writer) int { return runBW("read", args, stdout, stderr) }
func runSend(args []string, stdout, stderr io.Writer) int { return runBW("send", args, stdout, stderr) }
func runAtomic(args []string, stdout, stderr io.Writer) int {
	return runBW("atomic", args, stdout, stderr)
}

// bwJob is a checked client run.
type bwJob struct {
	op          string
	addr        netip.Addr
	to          netip.AddrPort
	size, iters int
	qps, depth  int
	mtu         int // 0: the server's
	verify, lat bool
	cas         bool
	faults      wiretest.Faults
	seed        uint64
	stall       time.Duration
	pcap        string
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
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, bwUsage, op, bwOps[op].what)
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
	j := &bwJob{op: op, size: *size, iters: *iters, qps: *qps, depth: *depth, mtu: *mtu, verify: *verify, lat: *lat, faults: fc, seed: *seed, stall: *stall, pcap: *pcap}
	if *addr == "" {
		return bad("give --addr IP, the local address")
	}
	a, err := netip.ParseAddr(*addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *addr)
	}
	j.addr = a.Unmap()
	if *to == "" {
		return bad("give --to HOST, the ibpeer serve to run against")
	}
	if j.to, err = parseHostPort(*to, setup.DefaultPort); err != nil {
		return bad("--to %q: %v", *to, err)
	}
	if !j.to.Addr().IsValid() {
		return bad("--to %q: want an IP address", *to)
	}
	switch atomicOp {
	case "FETCH_AND_ADD":
	case "CMP_AND_SWAP":
		j.cas = true
	default:
		return bad("-A %q: want FETCH_AND_ADD or CMP_AND_SWAP", atomicOp)
	}
	switch {
	case op == "atomic" && j.size != 8:
		return bad("--size %d: atomics move 8 bytes", j.size)
	case j.size < 1 || j.size > 1<<30:
		return bad("--size %d: want 1 to 1073741824 bytes", j.size)
	case j.iters < 1:
		return bad("--iters %d: want at least 1", j.iters)
	case j.qps < 1 || j.qps > 64:
		return bad("--qps %d: want 1-64", j.qps)
	case j.depth < 1 || j.depth > 1024:
		return bad("--tx-depth %d: want 1-1024", j.depth)
	case j.stall <= 0:
		return bad("--timeout %v: want a positive duration", j.stall)
	case int64(j.qps)*int64(j.iters) > 1<<24:
		return bad("--qps × --iters is %d: at most %d work requests in all", int64(j.qps)*int64(j.iters), 1<<24)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"--loss", fc.Loss}, {"--reorder", fc.Reorder}, {"--dup", fc.Duplicate}} {
		if !(p.v >= 0 && p.v < 1) {
			return bad("%s %v: want a probability in [0, 1)", p.name, p.v)
		}
	}
	if j.mtu != 0 {
		if _, err := device.PathMTU(j.mtu); err != nil {
			return bad("--mtu: %v", err)
		}
	}
	if j.lat {
		j.depth = 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := j.run(ctx, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitError
	}
	return exitOK
}

// bwConn is one QP of the client with its server side.
type bwConn struct {
	qp      *endpoint.QP
	tcp     net.Conn
	psn     layers.PSN
	remote  setup.PingpongDest
	region  serve.Region
	mr      *endpoint.MR // the messages (atomics: the results)
	mem     []byte
	check   *endpoint.MR // where verification reads back to
	checkMe []byte
}

// connect opens the set-up connection of one QP and moves the QP to RTS.
func (j *bwJob) connect(ctx context.Context, dev *endpoint.Device, c *bwConn) error {
	d := net.Dialer{Timeout: serve.SetupTimeout}
	tcp, err := d.DialContext(ctx, "tcp", j.to.String())
	if err != nil {
		return fmt.Errorf("set-up with %v: %w (is ibpeer serve running there?)", j.to, err)
	}
	c.tcp = tcp
	tcp.SetDeadline(time.Now().Add(serve.SetupTimeout))
	c.psn = endpoint.RandomPSN()
	local := setup.PingpongDest{QPN: c.qp.QPN(), PSN: c.psn, GID: dev.GID()}
	if c.remote, err = setup.PingpongClient(tcp, local); err != nil {
		return err
	}
	var msg [serve.RegionSize]byte
	if _, err := io.ReadFull(tcp, msg[:]); err != nil {
		return fmt.Errorf("set-up with %v: reading the region message: %w (is the server ibpeer serve?)", j.to, err)
	}
	if c.region, err = serve.ParseRegion(msg[:]); err != nil {
		return fmt.Errorf("set-up with %v: %w", j.to, err)
	}
	tcp.SetDeadline(time.Time{})
	if j.mtu != 0 && j.mtu != c.region.MTU {
		return fmt.Errorf("--mtu %d: the server's QPs use MTU %d (its --mtu); both sides must use the same", j.mtu, c.region.MTU)
	}
	mtu, _ := device.PathMTU(c.region.MTU)
	peer := netip.AddrFrom16(c.remote.GID).Unmap()
	return c.qp.Connect(endpoint.ConnectAttr{Remote: peer, RemoteQPN: c.remote.QPN, RemotePSN: layers.PSN(c.remote.PSN),
		LocalPSN: c.psn, MTU: mtu})
}

// slots returns how many messages fit the server side at once and where
// the n-th lands: distinct slots of the region (WRITE, READ) or the
// receive buffers (SEND).
func (j *bwJob) slots(r serve.Region) (count int, stride uint64, err error) {
	switch j.op {
	case "send":
		if uint64(j.size) > uint64(r.RecvLen) {
			return 0, 0, fmt.Errorf("--size %d: the server's receive buffers hold %d bytes (ibpeer serve --mr-size/--recv)", j.size, r.RecvLen)
		}
		return r.RecvCount, uint64(r.RecvLen), nil
	case "atomic":
		return 1, 0, nil
	}
	if uint64(j.size) > r.Size {
		return 0, 0, fmt.Errorf("--size %d: the server's region has %d bytes (ibpeer serve --mr-size)", j.size, r.Size)
	}
	return int(min(r.Size/uint64(j.size), 1<<20)), uint64(j.size), nil
}

func (j *bwJob) run(ctx context.Context, stdout, stderr io.Writer) error {
	wire, err := endpoint.ListenUDP(netip.AddrPortFrom(j.addr, endpoint.RoCEv2Port))
	if err != nil {
		return err
	}
	var w endpoint.Wire = wire
	var pw *device.PcapWire
	if j.pcap != "" {
		if pw, err = device.NewPcapWire(wire, j.pcap); err != nil {
			wire.Close()
			return fmt.Errorf("--pcap: %w", err)
		}
		w = pw
	}
	var fw *wiretest.FaultyWire
	if j.faults.Any() {
		// faults before the capture: it holds what went out
		if fw, err = wiretest.NewFaulty(w, j.faults, j.seed); err != nil {
			w.Close()
			return err
		}
		w = fw
	}
	diag := device.Open(w, stderr)
	defer diag.Close()
	dev := diag.Device
	pd := dev.AllocPD()
	cq := dev.CreateCQ(j.qps*(j.depth+8) + 64)
	conns := make([]*bwConn, j.qps)
	defer func() {
		for _, c := range conns {
			if c != nil && c.tcp != nil {
				c.tcp.Close()
			}
		}
	}()
	window := j.depth
	for q := range conns {
		c := &bwConn{}
		conns[q] = c
		if c.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: j.depth + 8, MaxRecvWR: 1}); err != nil {
			return err
		}
		if err := j.connect(ctx, dev, c); err != nil {
			return fmt.Errorf("QP %d: %w", q, err)
		}
		k, _, err := j.slots(c.region)
		if err != nil {
			return err
		}
		window = min(window, k)
	}
	// Local memory: one slot per message in flight (atomics: one result
	// word per work request when verifying), and as much for reading back.
	for _, c := range conns {
		n := window * j.size
		if j.op == "atomic" && j.verify {
			n = 8 * j.iters
		}
		c.mem = make([]byte, n)
		if c.mr, err = pd.RegMR(c.mem, endpoint.AccessLocalWrite); err != nil {
			return err
		}
		c.checkMe = make([]byte, window*j.size)
		if c.check, err = pd.RegMR(c.checkMe, endpoint.AccessLocalWrite); err != nil {
			return err
		}
	}
	var times perf.Times
	var lat []float64
	measured := func(r perf.Times) {
		times.Add(r)
		lat = append(lat, r.LatencyMicros()...)
	}
	var verified string
	switch {
	case j.op == "atomic":
		verified, err = j.runAtomic(ctx, cq, conns, window, measured)
	case j.verify:
		verified, err = j.runVerified(ctx, cq, conns, window, measured)
	default:
		var r perf.Times
		r, err = perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qpsOf(conns), Depth: j.depth, Iters: j.iters, Stall: j.stall,
			Next: func(q, i int) endpoint.SendWR { return j.wr(conns[q], i, i%window) }})
		if err == nil {
			measured(r)
		}
	}
	if err != nil {
		if fw != nil {
			err = fmt.Errorf("%w; %s", err, fw.Summary())
		}
		return err
	}
	if err := j.report(stdout, dev, conns, &times, lat); err != nil {
		return err
	}
	if verified != "" {
		fmt.Fprintln(stdout, "verified:", verified)
	}
	if fw != nil {
		fmt.Fprintln(stdout, fw.Summary())
	}
	for _, c := range conns {
		c.tcp.Close()
	}
	if err := diag.Close(); err != nil && pw != nil {
		return fmt.Errorf("--pcap: %w", err)
	}
	if pw != nil {
		fmt.Fprintf(stdout, "%s: %d packets sent and received\n", j.pcap, pw.Packets())
	}
	return nil
}

func qpsOf(conns []*bwConn) []*endpoint.QP {
	qps := make([]*endpoint.QP, len(conns))
	for i, c := range conns {
		qps[i] = c.qp
	}
	return qps
}

// wr is the measured work request number i of c, using local slot s.
func (j *bwJob) wr(c *bwConn, i, s int) endpoint.SendWR {
	k, stride, _ := j.slots(c.region)
	remote := c.region.VA + uint64(i%k)*stride
	local := []endpoint.SGE{c.mr.SGE(s*j.size, j.size)}
	switch j.op {
	case "write":
		return endpoint.SendWR{Op: endpoint.WRWrite, SGL: local, RemoteAddr: remote, RKey: c.region.RKey}
	case "read":
		return endpoint.SendWR{Op: endpoint.WRRead, SGL: local, RemoteAddr: remote, RKey: c.region.RKey}
	case "send":
		return endpoint.SendWR{Op: endpoint.WRSend, SGL: local}
	}
	if j.cas {
		return endpoint.SendWR{Op: endpoint.WRCompareSwap, SGL: local, RemoteAddr: c.region.VA, RKey: c.region.RKey,
			CompareAdd: uint64(i), Swap: uint64(i) + 1}
	}
	return endpoint.SendWR{Op: endpoint.WRFetchAdd, SGL: local, RemoteAddr: c.region.VA, RKey: c.region.RKey, CompareAdd: 1}
}

// runVerified runs WRITE, READ or SEND in rounds of window messages per
// QP, each round prepared and checked around its measured part.
func (j *bwJob) runVerified(ctx context.Context, cq *endpoint.CQ, conns []*bwConn, window int, measured func(perf.Times)) (string, error) {
	qps := qpsOf(conns)
	size := j.size
	// side runs one unmeasured WR per slot of the round on every QP.
	side := func(n int, wr func(c *bwConn, s int) endpoint.SendWR) error {
		_, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.depth, Iters: n, Stall: j.stall,
			Next: func(q, s int) endpoint.SendWR { return wr(conns[q], s) }})
		if err != nil {
			return fmt.Errorf("verification traffic: %w", err)
		}
		return nil
	}
	remoteOf := func(c *bwConn, i int) uint64 {
		k, stride, _ := j.slots(c.region)
		return c.region.VA + uint64(i%k)*stride
	}
	want := make([]byte, size)
	for base := 0; base < j.iters; base += window {
		n := min(window, j.iters-base)
		for q, c := range conns {
			for s := range n {
				perf.FillPattern(c.mem[s*size:(s+1)*size], perf.PatternSeed(q, base+s))
			}
		}
		if j.op == "read" {
			err := side(n, func(c *bwConn, s int) endpoint.SendWR {
				return endpoint.SendWR{Op: endpoint.WRWrite, SGL: []endpoint.SGE{c.mr.SGE(s*size, size)}, RemoteAddr: remoteOf(c, base+s), RKey: c.region.RKey}
			})
			if err != nil {
				return "", err
			}
			for _, c := range conns {
				clear(c.mem[:n*size])
			}
		}
		r, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.depth, Iters: n, Stall: j.stall,
			Next: func(q, s int) endpoint.SendWR { return j.wr(conns[q], base+s, s) }})
		if err != nil {
			return "", err
		}
		measured(r)
		if j.op != "read" {
			err := side(n, func(c *bwConn, s int) endpoint.SendWR {
				return endpoint.SendWR{Op: endpoint.WRRead, SGL: []endpoint.SGE{c.check.SGE(s*size, size)}, RemoteAddr: remoteOf(c, base+s), RKey: c.region.RKey}
			})
			if err != nil {
				return "", err
			}
		}
		for q, c := range conns {
			for s := range n {
				i := base + s
				got := c.mem[s*size : (s+1)*size] // what READ brought
				if j.op != "read" {
					got = c.checkMe[s*size : (s+1)*size] // what the server holds
				}
				perf.FillPattern(want, perf.PatternSeed(q, i))
				if d := perf.FirstDiff(got, want); d >= 0 {
					return "", fmt.Errorf("verify: QP %d message %d (%d bytes, server VA %#x): byte %d is %#02x, want %#02x",
						q, i, size, remoteOf(c, i), d, got[d], want[d])
				}
			}
		}
	}
	how := map[string]string{"write": "read back from the server", "read": "compared with what was written there", "send": "read back from the server's receive buffers"}[j.op]
	return fmt.Sprintf("%d %s of %d bytes on %d QPs, %s, byte-exact", j.iters*len(conns), strings.ToUpper(j.op)+"s", size, len(conns), how), nil
}

// runAtomic runs the atomics; verifying, it zeroes the word first and
// checks every returned value and the final word.
func (j *bwJob) runAtomic(ctx context.Context, cq *endpoint.CQ, conns []*bwConn, window int, measured func(perf.Times)) (string, error) {
	qps := qpsOf(conns)
	word := func(op endpoint.WROpcode) error {
		_, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: 1, Iters: 1, Stall: j.stall,
			Next: func(q, _ int) endpoint.SendWR {
				c := conns[q]
				return endpoint.SendWR{Op: op, SGL: []endpoint.SGE{c.check.SGE(0, 8)}, RemoteAddr: c.region.VA, RKey: c.region.RKey}
			}})
		if err != nil {
			return fmt.Errorf("verification traffic: %w", err)
		}
		return nil
	}
	if j.verify {
		for _, c := range conns {
			clear(c.checkMe[:8])
		}
		if err := word(endpoint.WRWrite); err != nil {
			return "", err
		}
	}
	r, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.depth, Iters: j.iters, Stall: j.stall,
		Next: func(q, i int) endpoint.SendWR {
			s := i % window
			if j.verify {
				s = i
			}
			return j.wr(conns[q], i, s)
		}})
	if err != nil {
		return "", err
	}
	measured(r)
	if !j.verify {
		return "", nil
	}
	if err := word(endpoint.WRRead); err != nil {
		return "", err
	}
	name := "FETCH_ADD"
	if j.cas {
		name = "CMP_SWAP"
	}
	for q, c := range conns {
		for i := range j.iters {
			if v := binary.NativeEndian.Uint64(c.mem[8*i:]); v != uint64(i) {
				return "", fmt.Errorf("verify: QP %d %s %d returned %d, want %d", q, name, i, v, i)
			}
		}
		if v := binary.NativeEndian.Uint64(c.checkMe); v != uint64(j.iters) {
			return "", fmt.Errorf("verify: QP %d: the server's word is %d after %d %ss, want %d", q, v, j.iters, name, j.iters)
		}
	}
	return fmt.Sprintf("%d %ss on %d QPs returned 0, 1, 2, … in order and left each server word at %d", j.iters*len(conns), name, len(conns), j.iters), nil
}

// report prints perftest's report of the run.
func (j *bwJob) report(w io.Writer, dev *endpoint.Device, conns []*bwConn, times *perf.Times, lat []float64) error {
	rdma := j.op != "send"
	outReads := 0
	if j.op == "read" || j.op == "atomic" {
		a, err := conns[0].qp.Query()
		if err != nil {
			return err
		}
		outReads = int(a.MaxRdAtomic)
	}
	info := perf.TestInfo{Verb: bwOps[j.op].verb, Latency: j.lat, Device: "ibpeer", QPs: len(conns), Transport: "IB",
		Connection: "RC", TXDepth: j.depth, MTU: conns[0].region.MTU, LinkType: "Ethernet", GIDIndex: -1, OutReads: outReads}
	if !j.lat {
		info.CQModeration = 1 // every work request is signalled
	}
	if err := perf.WriteTestInfo(w, info); err != nil {
		return err
	}
	for _, c := range conns {
		d := perf.Dest{QPN: c.qp.QPN(), PSN: uint32(c.psn), OutReads: outReads, RKey: c.mr.RKey(), VAddr: c.mr.Addr(), RDMA: rdma, GID: dev.GID()}
		if err := perf.WriteDest(w, "local", d); err != nil {
			return err
		}
	}
	for _, c := range conns {
		d := perf.Dest{LID: c.remote.LID, QPN: c.remote.QPN, PSN: uint32(c.remote.PSN), OutReads: outReads, RKey: c.region.RKey, VAddr: c.region.VA, RDMA: rdma, GID: c.remote.GID}
		if err := perf.WriteDest(w, "remote", d); err != nil {
			return err
		}
	}
	if j.lat {
		return perf.WriteLatTable(w, []perf.LatRow{perf.LatStats(uint64(j.size), lat)})
	}
	return perf.WriteBWTable(w, false, []perf.BWRow{times.BWRow(uint64(j.size), j.iters, j.iters*len(conns), false)})
}
