package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

const perftestUsage = `usage: ibpeer perftest write|read|send|atomic --addr IP [flags] [SERVER]

Plays perftest's ib_write_bw, ib_read_bw, ib_send_bw or ib_atomic_bw, as
the server (no SERVER given: it waits for one client on TCP -p) or as the
client of SERVER, against perftest itself or another ibpeer perftest. The
set-up is perftest's TCP ("Ethernet") exchange as perftest 6.06 runs it,
advertising version 6.06 (later versions then skip their binary parameter
negotiation): versions, buffer sizes, MTU (each side proposes its active
MTU, the smaller wins), the 108-byte QP messages, and after the traffic
the bandwidth report of write/read/atomic, which the server prints. One RC
QP, perftest's defaults (size 65536, atomics 8; 5000 iterations for write,
1000 for the others; TX depth 128; 512 receives posted by a SEND server),
QP attributes as perftest sets them (timeout 14, retry 7, RNR retry 7,
hop limit 255, outstanding READs/atomics as the peer advertises). The
output is perftest's: test information, both addresses, the table, in
MB/s (2^20 bytes per second) as perftest's default, or Gb/s with
--report_gbits.

The active MTU is rxe's rule applied to --addr's interface: the largest IB
MTU not above the netdev MTU (1500 gives 1024, loopback 4096).

Every work request is signalled (perftest signals one in 100, its CQ
moderation); the figures are computed as perftest computes them: average
from the first post to the last completion, peak the best
(completion j - post i)/(j - i + 1), up to 20000 iterations.

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

Exit status: 0 when the test ran and every completion succeeded, 1
otherwise, 2 for bad flags.

Flags:
`

// perftestJob is a checked ibpeer perftest run.
type perftestJob struct {
	verb   string // write, read, send, atomic
	addr   netip.Addr
	server netip.AddrPort // invalid: this side is the server
	port   int
	size   int
	iters  int
	mtu    int // bytes, this side's proposal
	depth  int
	outs   int
	cas    bool
	mbps   bool // perftest's default report unit; --report_gbits: Gb/s
	stall  time.Duration
	rdmacm bool   // -R: set-up exchange and QP connected over RDMA CM
	dump   string // --dump-region: where the buffer goes when the test has ended

	// diag receives the drop reports (stderr; tests may leave it nil).
	diag io.Writer
	// ready, when set, learns the listener's address (tests).
	ready func(netip.AddrPort)
}

// perftestVerbs maps the verb to perftest's name of the test.
var perftestVerbs = map[string]string{"write": "RDMA_Write", "read": "RDMA_Read", "send": "Send", "atomic": "Atomic"}

func runPerftest(args []string, stdout, stderr io.Writer) int {
	j, code := parsePerftest(args, stdout, stderr)
	if j == nil {
		return code
	}
	j.diag = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := j.run(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "ibpeer perftest %s: %v\n", j.verb, err)
		return exitError
	}
	return exitOK
}

// parsePerftest checks the command line; it returns no job and the exit
// status when there is nothing to run (help, bad flags).
func parsePerftest(args []string, stdout, stderr io.Writer) (*perftestJob, int) {
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
	bad := func(format string, a ...any) (*perftestJob, int) {
		fmt.Fprintf(stderr, "ibpeer perftest: %s\nRun 'ibpeer perftest -h' for usage.\n", fmt.Sprintf(format, a...))
		return nil, exitUsage
	}
	if len(args) == 0 {
		return bad("give the test: write, read, send or atomic")
	}
	verb := args[0]
	if _, ok := perftestVerbs[verb]; !ok {
		return bad("unknown test %q: want write, read, send or atomic", verb)
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
	j := &perftestJob{verb: verb, port: *v.port, size: *v.size, iters: *v.iters, mtu: *v.mtu, depth: *v.depth, outs: *v.outs, mbps: !*v.gbits, stall: *v.stall, rdmacm: *v.rdmacm, dump: *v.dump}
	if *v.addr == "" {
		return bad("give --addr IP, the local address (its GID is what the peer learns)")
	}
	a, err := netip.ParseAddr(*v.addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *v.addr)
	}
	j.addr = a.Unmap()
	switch len(operands) {
	case 0:
	case 1:
		s, err := netip.ParseAddr(operands[0])
		if err != nil {
			return bad("server %q: not an IP address", operands[0])
		}
		j.server = netip.AddrPortFrom(s.Unmap(), uint16(j.port))
	default:
		return bad("unexpected argument %q", operands[1])
	}
	switch *v.atomic {
	case "FETCH_AND_ADD":
	case "CMP_AND_SWAP":
		j.cas = true
	default:
		return bad("-A %q: want FETCH_AND_ADD or CMP_AND_SWAP", *v.atomic)
	}
	if verb == "atomic" && j.size != 8 {
		return bad("-s %d: atomics move 8 bytes", j.size)
	}
	switch {
	case j.port < 0 || j.port > 65535 || j.port == 0 && j.server.IsValid():
		return bad("-p %d: want a TCP port", j.port)
	case j.size < 1 || j.size > 1<<30:
		return bad("-s %d: want 1 to 1073741824 bytes", j.size)
	case j.iters < 5 || j.iters > 1<<24:
		return bad("-n %d: want at least 5 (perftest's minimum) and at most %d", j.iters, 1<<24)
	case j.depth < 1 || j.depth > 1024:
		return bad("-t %d: want 1-1024", j.depth)
	case j.outs < 1 || j.outs > perftestOutReads:
		return bad("-o %d: want 1-%d", j.outs, perftestOutReads)
	case j.stall <= 0:
		return bad("--timeout %v: want a positive duration", j.stall)
	}
	if j.mtu == 0 {
		j.mtu = device.ActiveMTU(j.addr)
	} else if _, err := device.PathMTU(j.mtu); err != nil {
		return bad("-m: %v", err)
	}
	return j, exitOK
}

type perftestFlagValues struct {
	addr, atomic, dump                  *string
	gbits, rdmacm                       *bool
	port, size, iters, mtu, depth, outs *int
	stall                               *time.Duration
}

func perftestFlags(verb string, out io.Writer) (*flag.FlagSet, perftestFlagValues) {
	fs := flag.NewFlagSet("ibpeer perftest "+verb, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	var v perftestFlagValues
	v.addr = fs.String("addr", "", "local `IP` address: the GID, UDP 4791 and (server) the TCP listener bind here (required)")
	fs.StringVar(v.addr, "bind", "", "same as --addr")
	v.port = fs.Int("p", setup.DefaultPort, "TCP `port` of the set-up exchange")
	size, iters := 65536, 1000
	if verb == "atomic" {
		size = 8
	}
	if verb == "write" {
		iters = 5000
	}
	v.size = fs.Int("s", size, "message `size` in bytes (atomics: 8)")
	v.iters = fs.Int("n", iters, "number of `iterations` (5000 for write, 1000 for the others)")
	v.mtu = fs.Int("m", 0, "proposed path `MTU` in bytes (default: the active MTU of --addr's interface)")
	v.depth = fs.Int("t", 128, "TX depth: work requests outstanding on the client")
	v.outs = fs.Int("o", perftestOutReads, "outstanding READs/atomics this side accepts as responder, advertised to the peer (read and atomic)")
	v.atomic = fs.String("A", "FETCH_AND_ADD", "atomic operation: FETCH_AND_ADD or CMP_AND_SWAP")
	v.gbits = fs.Bool("report_gbits", false, "report Gb/s instead of MB/s (perftest's flag; both sides should agree, the server prints the client's figures)")
	v.stall = fs.Duration("timeout", 10*time.Second, "fail when no completion arrives for this long")
	v.rdmacm = fs.Bool("R", false, "perftest's -R (--rdma_cm): the set-up exchange and the QP connected over RDMA CM (QP1) on port -p instead of TCP")
	fs.BoolVar(v.rdmacm, "rdma_cm", false, "same as -R")
	v.dump = fs.String("dump-region", "", "write the test's buffer to `FILE` when the test has ended (what a WRITE or SEND server received, a READ client read, a client sent)")
	return fs, v
}

// perftestCycleBuffer and perftestCacheLine are what this side proposes in
// the buffer-size exchange: perftest's page size and cache-line defaults.
const (
	perftestCycleBuffer = 4096
	perftestCacheLine   = 64
)

// perftestMaxCycleBuffer bounds the peer's cycle buffer, which sizes the
// region (perftest sends its page size).
const perftestMaxCycleBuffer = 1 << 24

// perftestOutReads is the most READs/atomics outstanding perftest's read
// and atomic tests use and grant (-o 128, rxe's max_qp_rd_atom).
const perftestOutReads = 128

// perftestRxDepth is the receives a SEND server posts (perftest's
// DEF_RX_SEND), at most one per iteration.
const perftestRxDepth = 512

func (j *perftestJob) isServer() bool { return !j.server.IsValid() }

// cmConfig is this side of perftest -R's connections.
func (j *perftestJob) cmConfig() exchange.PerftestCMConfig {
	mtu, _ := layers.PathMTUOf(j.mtu) // checked with the flags
	return exchange.PerftestCMConfig{Server: j.server.Addr(), Local: j.addr, Port: j.port, MTU: mtu, Ready: j.ready}
}

func (j *perftestJob) run(ctx context.Context, stdout io.Writer) (err error) {
	wire, err := endpoint.ListenUDP(netip.AddrPortFrom(j.addr, endpoint.RoCEv2Port))
	if err != nil {
		return err
	}
	diagOut := j.diag
	if diagOut == nil {
		diagOut = io.Discard
	}
	diag := device.Open(wire, diagOut)
	defer diag.Close()
	dev := diag.Device
	var cmx *exchange.PerftestCM
	var conn net.Conn
	if j.rdmacm {
		if cmx, err = exchange.DialPerftestCM(ctx, dev, j.cmConfig(), stdout); err != nil {
			return err
		}
		defer cmx.Close()
		conn = cmx.Msg()
	} else if conn, err = j.dial(ctx, stdout); err != nil {
		return err
	}
	defer conn.Close()
	stopWatch := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopWatch()
	p := setup.NewPerftestConn(conn, j.isServer())
	if j.rdmacm {
		p = setup.NewPerftestConnRDMACM(conn, j.isServer())
	}
	proposed, _ := layers.PathMTUOf(j.mtu) // checked with the flags
	opening, err := p.Open(setup.PerftestParams{CycleBuffer: perftestCycleBuffer, CacheLine: perftestCacheLine,
		MaxCycle: perftestMaxCycleBuffer, MTU: proposed})
	if err != nil {
		return err
	}
	cycle, mtu := opening.CycleBuffer, opening.MTU

	pd := dev.AllocPD()
	mem := make([]byte, 2*max(j.size, int(cycle)))
	if j.verb != "atomic" {
		// perftest fills its buffers with rand(); data that differs from
		// byte to byte is what lets a capture show a misplaced segment.
		perf.FillPattern(mem, uint64(time.Now().UnixNano()))
	}
	if j.dump != "" {
		defer func() {
			if err == nil {
				err = os.WriteFile(j.dump, mem, 0o644)
			}
		}()
	}
	mr, err := pd.RegMR(mem, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite|endpoint.AccessRemoteRead|endpoint.AccessRemoteAtomic)
	if err != nil {
		return err
	}
	rx := min(perftestRxDepth, j.iters)
	cq := dev.CreateCQ(j.depth + rx + 64)
	qp, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: j.depth + 8, MaxRecvWR: rx})
	if err != nil {
		return err
	}
	outReads := 1
	if j.verb == "read" || j.verb == "atomic" {
		outReads = j.outs
	}
	psn := endpoint.RandomPSN()
	if j.rdmacm {
		// perftest -R: an all-zero pingpong_dest each way, the data QP's
		// own RDMA CM connection, another zero exchange; the QP messages
		// that follow only inform.
		if err := p.ExchangeEmptyDest(); err != nil {
			return err
		}
		// A client asks for READ/atomic resources only for those tests,
		// as perftest's does; a server grants what its TCP mode grants
		// (at least one), so a READ-back of a WRITE test's region
		// (ibpeer replay --payload) is answered on -R too.
		resources := uint8(0)
		if j.isServer() || j.verb == "read" || j.verb == "atomic" {
			resources = uint8(outReads)
		}
		if err := cmx.ConnectData(ctx, qp, mtu, resources); err != nil {
			return err
		}
		if err := p.ExchangeEmptyDest(); err != nil {
			return err
		}
		if a, err := qp.Query(); err == nil {
			psn = a.SQPSN
		}
	}
	local := setup.PerftestDest{OutReads: uint16(outReads), QPN: qp.QPN(), PSN: psn, RKey: mr.RKey(), VAddr: mr.Addr(), GID: dev.GID()}
	remote, err := p.Handshake(local) // #1
	if err != nil {
		return err
	}
	peer := netip.AddrFrom16(remote.GID)
	if peer.Is4In6() != netip.AddrFrom16(local.GID).Is4In6() {
		return fmt.Errorf("the peer's GID %v and ours %v are not of the same IP version (perftest's GID compatibility check)", peer, dev.GID())
	}
	maxRd := min(max(int(remote.OutReads), 1), perftestOutReads)
	if !j.rdmacm {
		err = qp.Connect(endpoint.ConnectAttr{Remote: peer.Unmap(), RemoteQPN: remote.QPN, RemotePSN: layers.PSN(remote.PSN), LocalPSN: psn,
			MTU: mtu, HopLimit: 255, MaxRdAtomic: uint8(maxRd), MaxDestRdAtomic: uint8(outReads)})
		if err != nil {
			return err
		}
	}
	if _, err := p.Handshake(local); err != nil { // #2
		return err
	}
	info := perf.TestInfo{Verb: perftestVerbs[j.verb], Device: "ibpeer", QPs: 1, Transport: "IB", Connection: "RC",
		CQModeration: 1, MTU: mtu.Bytes(), LinkType: "Ethernet", GIDIndex: -1, RDMACM: j.rdmacm, DataExRDMACM: j.rdmacm}
	if !j.isServer() {
		info.TXDepth = j.depth
	} else if j.verb == "send" {
		info.RXDepth = rx
	}
	rdma := j.verb != "send"
	if j.verb == "read" || j.verb == "atomic" {
		info.OutReads = outReads
	}
	if err := perf.WriteTestInfo(stdout, info); err != nil {
		return err
	}
	dest := func(d setup.PerftestDest) perf.Dest {
		pd := perf.Dest{LID: d.LID, QPN: d.QPN, PSN: uint32(d.PSN), RKey: d.RKey, VAddr: d.VAddr, RDMA: rdma, GID: d.GID}
		if j.verb == "read" || j.verb == "atomic" {
			pd.OutReads = int(d.OutReads)
		}
		return pd
	}
	if err := perf.WriteDest(stdout, "local", dest(local)); err != nil {
		return err
	}
	if _, err := p.Handshake(local); err != nil { // #3
		return err
	}
	if err := perf.WriteDest(stdout, "remote", dest(remote)); err != nil {
		return err
	}
	size := uint64(j.size)

	if j.verb == "send" {
		var times perf.Times
		var runErr error
		if j.isServer() {
			for k := range rx {
				if err := qp.PostRecv(endpoint.RecvWR{ID: uint64(k), SGL: []endpoint.SGE{mr.SGE(0, j.size)}}); err != nil {
					return err
				}
			}
			if _, err := p.Handshake(local); err != nil { // #4: receives are posted
				return err
			}
			times, runErr = receiveTraffic(ctx, qp, cq, mr, j.size, j.iters, rx, j.stall)
		} else {
			if _, err := p.Handshake(local); err != nil { // #4
				return err
			}
			times, runErr = perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: []*endpoint.QP{qp}, Depth: j.depth, Iters: j.iters, Stall: j.stall,
				Next: func(_, _ int) endpoint.SendWR {
					return endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, j.size)}}
				}})
		}
		if runErr != nil {
			return runErr
		}
		if err := perf.WriteBWTable(stdout, j.mbps, []perf.BWRow{times.BWRow(size, j.iters, j.iters, j.mbps)}); err != nil {
			return err
		}
		if _, err := p.Handshake(local); err != nil { // closing
			return err
		}
		return j.done(ctx, p, cmx)
	}

	var row perf.BWRow
	if !j.isServer() {
		times, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: []*endpoint.QP{qp}, Depth: j.depth, Iters: j.iters, Stall: j.stall,
			Next: func(_, i int) endpoint.SendWR { return j.wr(mr, remote, i) }})
		if err != nil {
			return err
		}
		row = times.BWRow(size, j.iters, j.iters, j.mbps)
	}
	mine := setup.PerftestBWReport{Size: row.Bytes, Iterations: row.Iterations, BWPeak: row.PeakGbps, BWAverage: row.AvgGbps, MsgRate: row.MsgRate}
	// The server waits in Finish for the end of the traffic.
	err = p.Finish(local, mine, func(theirs setup.PerftestBWReport) error {
		if j.isServer() {
			// The server prints the client's figures, as perftest's
			// does, and checks its QP before the client may tear it down.
			row = perf.BWRow{Bytes: theirs.Size, Iterations: theirs.Iterations, PeakGbps: theirs.BWPeak, AvgGbps: theirs.BWAverage, MsgRate: theirs.MsgRate}
			if st, err := qp.Query(); err == nil && st.State != endpoint.StateRTS {
				return fmt.Errorf("the QP ended in %v", st.State)
			}
		}
		return perf.WriteBWTable(stdout, j.mbps, []perf.BWRow{row})
	})
	if err != nil {
		return err
	}
	return j.done(ctx, p, cmx)
}

// done ends the set-up exchange: TCP's "done" message, or perftest -R's
// disconnects (the client's DREQ for the data QP, then the server's for
// the set-up connection).
func (j *perftestJob) done(ctx context.Context, p *setup.PerftestConn, cmx *exchange.PerftestCM) error {
	if cmx == nil {
		return p.ExchangeDone()
	}
	return cmx.Disconnect(ctx)
}

// wr is the client's i-th work request: to the start of the server's
// buffer, from the start of ours.
func (j *perftestJob) wr(mr *endpoint.MR, remote setup.PerftestDest, i int) endpoint.SendWR {
	switch j.verb {
	case "write":
		return endpoint.SendWR{Op: endpoint.WRWrite, SGL: []endpoint.SGE{mr.SGE(0, j.size)}, RemoteAddr: remote.VAddr, RKey: remote.RKey}
	case "read":
		return endpoint.SendWR{Op: endpoint.WRRead, SGL: []endpoint.SGE{mr.SGE(0, j.size)}, RemoteAddr: remote.VAddr, RKey: remote.RKey}
	}
	if j.cas {
		return endpoint.SendWR{Op: endpoint.WRCompareSwap, SGL: []endpoint.SGE{mr.SGE(0, 8)}, RemoteAddr: remote.VAddr, RKey: remote.RKey,
			CompareAdd: uint64(i), Swap: uint64(i) + 1}
	}
	return endpoint.SendWR{Op: endpoint.WRFetchAdd, SGL: []endpoint.SGE{mr.SGE(0, 8)}, RemoteAddr: remote.VAddr, RKey: remote.RKey, CompareAdd: 1}
}

// dial connects the set-up exchange: as the server, it accepts one client.
func (j *perftestJob) dial(ctx context.Context, stdout io.Writer) (net.Conn, error) {
	if !j.isServer() {
		d := net.Dialer{Timeout: exchange.SetupTimeout}
		c, err := d.DialContext(ctx, "tcp", j.server.String())
		if err != nil {
			return nil, fmt.Errorf("set-up with %v: %w", j.server, err)
		}
		return c, nil
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(j.addr, uint16(j.port)).String())
	if err != nil {
		return nil, fmt.Errorf("set-up listener: %w", err)
	}
	defer ln.Close()
	fmt.Fprint(stdout, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
	if j.ready != nil {
		a := ln.Addr().(*net.TCPAddr).AddrPort()
		j.ready(netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	c, err := ln.Accept()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("set-up listener: %w", err)
	}
	return c, nil
}

// receiveTraffic is a SEND server's side: iters receives, the rx posted
// ones reposted as they complete while more are due. Its times have every
// message "posted" when the first receive was waited for, perftest's
// tposted[0] for the whole run.
func receiveTraffic(ctx context.Context, qp *endpoint.QP, cq *endpoint.CQ, mr *endpoint.MR, size, iters, rx int, stall time.Duration) (perf.Times, error) {
	t := perf.Times{Posted: make([]time.Duration, 0, iters), Completed: make([]time.Duration, 0, iters)}
	posted := rx
	wcs := make([]endpoint.WC, 64)
	timer := time.NewTimer(stall)
	defer timer.Stop()
	start := time.Now()
	for len(t.Completed) < iters {
		n := cq.Poll(wcs)
		if n == 0 {
			select {
			case <-cq.Notify():
			case <-ctx.Done():
				return t, ctx.Err()
			case <-timer.C:
				return t, fmt.Errorf("%w for %v: %d of %d SENDs received", perf.ErrStall, stall, len(t.Completed), iters)
			}
			continue
		}
		now := time.Since(start)
		for _, wc := range wcs[:n] {
			if wc.Status != endpoint.StatusSuccess {
				return t, &perf.WCError{WR: len(t.Completed), WC: wc}
			}
			if wc.ByteLen != uint32(size) {
				return t, fmt.Errorf("SEND %d carried %d bytes, want %d", len(t.Completed), wc.ByteLen, size)
			}
			t.Posted = append(t.Posted, 0)
			t.Completed = append(t.Completed, now)
			if posted < iters {
				if err := qp.PostRecv(endpoint.RecvWR{ID: wc.ID, SGL: []endpoint.SGE{mr.SGE(0, size)}}); err != nil {
					return t, err
				}
				posted++
			}
		}
		timer.Reset(stall)
	}
	return t, nil
}
