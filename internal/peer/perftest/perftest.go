// Package perftest is ibpeer perftest: perftest's ib_write_bw,
// ib_read_bw, ib_send_bw and ib_atomic_bw, and the latency tests
// ib_write_lat, ib_read_lat, ib_send_lat and ib_atomic_lat, in either role.
//
// Run opens the device, then the set-up exchange: perftest's TCP
// ("Ethernet") messages as perftest 6.06 runs them (setup.PerftestConn),
// or with RDMACM the same messages as SENDs over an RC QP that RDMA CM
// connects (exchange.PerftestCM), the data QP then connected by RDMA CM
// too. Versions, buffer sizes and MTU (each side proposes its active MTU,
// the smaller wins) come first, then the QP messages, the traffic (the
// client's through perf.RunTraffic, a SEND server's receives reposted as
// they complete), the closing handshakes and the client's bandwidth
// report, which the server prints as its own. A latency test shares the
// set-up and runs one message at a time instead (latency.go). Output is
// perftest's: test information, both addresses, the table.
package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// Verbs maps the test to perftest's name of its operation.
var Verbs = map[string]string{"write": "RDMA_Write", "read": "RDMA_Read", "send": "Send", "atomic": "Atomic",
	"write_lat": "RDMA_Write", "read_lat": "RDMA_Read", "send_lat": "Send", "atomic_lat": "Atomic"}

// latencySuffix marks a latency test's name (read_lat is ib_read_lat).
const latencySuffix = "_lat"

// maxCycleBuffer bounds the peer's cycle buffer, which sizes the region
// (perftest sends its page size).
const maxCycleBuffer = 1 << 24

// rxDepth is the receives a SEND server posts (perftest's DEF_RX_SEND), at
// most one per iteration.
const rxDepth = 512

// MaxQPs bounds -q: each QP has its own part of the buffer.
const MaxQPs = 64

// Config is a checked ibpeer perftest run.
type Config struct {
	UDPOffload device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Verb       string            // write, read, send, atomic
	QPs        int               // -q: RC QPs driven round-robin (write and read); 0 means 1
	// Bidirectional is perftest -b of a WRITE test: both sides write to
	// each other at once and print the sum of the two sides' figures.
	Bidirectional bool
	Addr          netip.Addr
	Server        netip.AddrPort // invalid: this side is the server
	Port          int
	Size          int
	Iters         int
	MTU           int // bytes, this side's proposal
	Depth         int
	OutReads      int // READs/atomics this side accepts as responder, advertised
	CAS           bool
	MBps          bool // perftest's default report unit; else Gb/s (--report_gbits)
	Stall         time.Duration
	RDMACM        bool   // -R: set-up exchange and QP connected over RDMA CM
	Dump          string // --dump-region: where the buffer goes when the test has ended
	Inline        int    // perftest's -I, printed as "Max inline data" (no effect on the wire)

	// Stderr receives the drop reports (tests may leave it nil).
	Stderr io.Writer
	// Ready, when set, learns the listener's address (tests).
	Ready func(netip.AddrPort)
}

// Op is the test's operation: write, read, send or atomic.
func (c Config) Op() string { return strings.TrimSuffix(c.Verb, latencySuffix) }

// Latency says whether the test is one of perftest's latency tests.
func (c Config) Latency() bool { return strings.HasSuffix(c.Verb, latencySuffix) }

// job is a run under way.
type job struct{ Config }

// Run runs the test, as the server or the client, and writes perftest's
// output to stdout.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	j := &job{cfg}
	return j.run(ctx, stdout)
}

func (j *job) isServer() bool { return !j.Server.IsValid() }

// cmConfig is this side of perftest -R's connections.
func (j *job) cmConfig() exchange.PerftestCMConfig {
	mtu, _ := layers.PathMTUOf(j.MTU) // checked with the flags
	return exchange.PerftestCMConfig{Server: j.Server.Addr(), Local: j.Addr, Port: j.Port, MTU: mtu, Ready: j.Ready}
}

func (j *job) run(ctx context.Context, stdout io.Writer) (err error) {
	wire, err := j.UDPOffload.ListenUDP(netip.AddrPortFrom(j.Addr, layers.RoCEv2Port))
	if err != nil {
		return err
	}
	diagOut := j.Stderr
	if diagOut == nil {
		diagOut = io.Discard
	}
	diag := device.Open(wire, diagOut)
	defer diag.Close()
	dev := diag.Device
	var cmx *exchange.PerftestCM
	var conn net.Conn
	if j.RDMACM {
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
	if j.RDMACM {
		p = setup.NewPerftestConnRDMACM(conn, j.isServer())
	}
	proposed, _ := layers.PathMTUOf(j.MTU) // checked with the flags
	opening, err := p.Open(setup.PerftestParams{CycleBuffer: setup.PerftestCycleBuffer, CacheLine: setup.PerftestCacheLine,
		MaxCycle: maxCycleBuffer, MTU: proposed})
	if err != nil {
		return err
	}
	cycle, mtu := opening.CycleBuffer, opening.MTU

	pd := dev.AllocPD()
	n := max(j.QPs, 1)
	// Each QP has its own part of the buffer, as perftest's: the peer's
	// QP i writes or reads part i.
	stride := 2 * max(j.Size, int(cycle))
	mem := make([]byte, n*stride)
	if j.Op() != "atomic" {
		// perftest fills its buffers with rand(); data that differs from
		// byte to byte is what lets a capture show a misplaced segment.
		perf.FillPattern(mem, uint64(time.Now().UnixNano()))
	}
	if j.Dump != "" {
		defer func() {
			if err == nil {
				err = os.WriteFile(j.Dump, mem, 0o644)
			}
		}()
	}
	mr, err := pd.RegMR(mem, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite|endpoint.AccessRemoteRead|endpoint.AccessRemoteAtomic)
	if err != nil {
		return err
	}
	rx := min(rxDepth, j.Iters)
	cq := dev.CreateCQ(n*j.Depth + rx + 64)
	qps := make([]*endpoint.QP, n)
	for i := range qps {
		if qps[i], err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: j.Depth + 8, MaxRecvWR: rx}); err != nil {
			return err
		}
	}
	qp := qps[0] // the only one of the tests that run one
	outReads := 1
	if j.Op() == "read" || j.Op() == "atomic" {
		outReads = j.OutReads
	}
	psns := make([]layers.PSN, n)
	for i := range psns {
		psns[i] = endpoint.RandomPSN()
	}
	if j.RDMACM {
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
		if j.isServer() || j.Op() == "read" || j.Op() == "atomic" {
			resources = uint8(outReads)
		}
		if err := cmx.ConnectData(ctx, qp, mtu, resources); err != nil {
			return err
		}
		if err := p.ExchangeEmptyDest(); err != nil {
			return err
		}
		if a, err := qp.Query(); err == nil {
			psns[0] = a.SQPSN
		}
	}
	vaddr := mr.Addr()
	if j.Verb == "write_lat" {
		// the peer WRITEs into the second half; this side's own
		// WRITEs go out of the first (perftest's layout)
		vaddr += uint64(mr.Len() / 2)
	}
	locals := make([]setup.PerftestDest, n)
	for i := range locals {
		locals[i] = setup.PerftestDest{OutReads: uint16(outReads), QPN: qps[i].QPN(), PSN: psns[i], RKey: mr.RKey(),
			VAddr: vaddr + uint64(i*stride), GID: dev.GID()}
	}
	local := locals[0] // what every handshake after the QP messages carries, as perftest's my_dest[0]
	guard := &qpGuard{want: n}
	rcvd := dev.Counters().RcvdPkts // before the peer can know our QP
	// #1: a QP message each way per QP, as perftest's loop of handshakes.
	remotes := make([]setup.PerftestDest, n)
	for i := range remotes {
		if remotes[i], err = p.HandshakeChecked(locals[i], guard.check); err != nil {
			return err
		}
	}
	remote := remotes[0]
	peer := netip.AddrFrom16(remote.GID)
	if peer.Is4In6() != netip.AddrFrom16(local.GID).Is4In6() {
		return fmt.Errorf("the peer's GID %v and ours %v are not of the same IP version (perftest's GID compatibility check)", peer, dev.GID())
	}
	maxRd := min(max(int(remote.OutReads), 1), setup.PerftestOutReads)
	if !j.RDMACM {
		for i, q := range qps {
			r := remotes[i]
			err = q.Connect(endpoint.ConnectAttr{Remote: peer.Unmap(), RemoteQPN: r.QPN, RemotePSN: layers.PSN(r.PSN), LocalPSN: psns[i],
				MTU: mtu, HopLimit: 255, MaxRdAtomic: uint8(maxRd), MaxDestRdAtomic: uint8(outReads)})
			if err != nil {
				return err
			}
		}
	}
	if j.Latency() && j.Op() == "send" {
		// before the handshakes that let the peer send (ib_send_lat
		// posts its own before its last one)
		if err := postLatencyRecvs(qp, mr, j.Size, rx); err != nil {
			return err
		}
	}
	// #2: a handshake per QP again, each with that QP's message (perftest
	// 6.06 prints each remote QP's after one; with -q 4 a guest that got
	// only one here printed the first QP's four times and broke off).
	for _, l := range locals {
		if _, err := p.HandshakeChecked(l, guard.check); err != nil {
			return err
		}
	}
	info := perf.TestInfo{Verb: Verbs[j.Verb], Latency: j.Latency(), Device: "ibpeer", QPs: n, Transport: "IB", Connection: "RC",
		CQModeration: 1, MTU: mtu.Bytes(), LinkType: "Ethernet", GIDIndex: -1, MaxInline: j.Inline, RDMACM: j.RDMACM, DataExRDMACM: j.RDMACM}
	if j.Latency() {
		// perftest's latency tests keep one message in flight and
		// print no CQ moderation
		info.CQModeration = 0
	}
	if !j.isServer() {
		info.TXDepth = j.Depth
		if j.Latency() {
			info.TXDepth = 1
		}
	} else if j.Op() == "send" {
		info.RXDepth = rx
	}
	rdma := j.Op() != "send"
	if j.Op() == "read" || j.Op() == "atomic" {
		info.OutReads = outReads
	}
	if err := perf.WriteTestInfo(stdout, info); err != nil {
		return err
	}
	dest := func(d setup.PerftestDest) perf.Dest {
		pd := perf.Dest{LID: d.LID, QPN: d.QPN, PSN: uint32(d.PSN), RKey: d.RKey, VAddr: d.VAddr, RDMA: rdma, GID: d.GID}
		if j.Op() == "read" || j.Op() == "atomic" {
			pd.OutReads = int(d.OutReads)
		}
		return pd
	}
	for _, l := range locals {
		if err := perf.WriteDest(stdout, "local", dest(l)); err != nil {
			return err
		}
	}
	if _, err := p.HandshakeChecked(local, guard.check); err != nil { // #3
		return err
	}
	for _, r := range remotes {
		if err := perf.WriteDest(stdout, "remote", dest(r)); err != nil {
			return err
		}
	}
	size := uint64(j.Size)

	if j.Latency() {
		return j.runLatency(ctx, stdout, conn, p, cmx, guard, local, remote, qp, cq, mr, rx)
	}
	if j.Op() == "send" {
		var times perf.Times
		var runErr error
		if j.isServer() {
			for k := range rx {
				if err := qp.PostRecv(endpoint.RecvWR{ID: uint64(k), SGL: []endpoint.SGE{mr.SGE(0, j.Size)}}); err != nil {
					return err
				}
			}
			if _, err := p.HandshakeChecked(local, guard.check); err != nil { // #4: receives are posted
				return err
			}
			if err := guard.drain(p, local); err != nil {
				return err
			}
			times, runErr = receiveTraffic(ctx, qp, cq, mr, j.Size, j.Iters, rx, j.Stall)
		} else {
			if _, err := p.HandshakeChecked(local, guard.check); err != nil { // #4
				return err
			}
			if err := guard.drain(p, local); err != nil {
				return err
			}
			times, runErr = perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: []*endpoint.QP{qp}, Depth: j.Depth, Iters: j.Iters, Stall: j.Stall,
				Next: func(_, _ int) endpoint.SendWR {
					return endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, j.Size)}}
				}})
		}
		if runErr != nil {
			return runErr
		}
		if err := perf.WriteBWTable(stdout, j.MBps, []perf.BWRow{times.BWRow(size, j.Iters, j.Iters, j.MBps)}); err != nil {
			return err
		}
		if _, err := p.Handshake(local); err != nil { // closing
			return err
		}
		return j.done(ctx, p, cmx)
	}

	if err := guard.drain(p, local); err != nil {
		return err
	}
	if j.Bidirectional {
		return j.runBidirectional(ctx, stdout, p, local, qps, remotes, cq, mr, stride)
	}
	var row perf.BWRow
	// A bidirectional client (perftest -b) sends the handshake a
	// one-way server takes for the end of its traffic before its traffic,
	// then runs that traffic and prints its figures: refuse it there, before
	// answering, when nothing has arrived since before the set-up (TCP
	// mode: the device carries the data QP alone).
	var endCheck func(setup.PerftestDest) error
	if j.isServer() && !j.RDMACM {
		endCheck = func(setup.PerftestDest) error {
			if dev.Counters().RcvdPkts == rcvd {
				return fmt.Errorf("%w: the client announced the end of its traffic before sending any: it runs a bidirectional test (perftest -b): run this side with -b too", ErrRefused)
			}
			return nil
		}
	}
	if !j.isServer() {
		times, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.Depth, Iters: j.Iters, Stall: j.Stall,
			Next: func(q, i int) endpoint.SendWR { return j.wr(mr, q*stride, remotes[q], i) }})
		if err != nil {
			return err
		}
		// -n is each QP's: the figures count every QP's messages, as
		// perftest's do.
		row = times.BWRow(size, j.Iters, n*j.Iters, j.MBps)
	}
	mine := setup.PerftestBWReport{Size: row.Bytes, Iterations: row.Iterations, BWPeak: row.PeakGbps, BWAverage: row.AvgGbps, MsgRate: row.MsgRate}
	// The server waits in Finish for the end of the traffic.
	err = p.FinishChecked(local, mine, endCheck, func(theirs setup.PerftestBWReport) error {
		if j.isServer() {
			// The server prints the client's figures, as perftest's
			// does, and checks its QP before the client may tear it down.
			row = perf.BWRow{Bytes: theirs.Size, Iterations: theirs.Iterations, PeakGbps: theirs.BWPeak, AvgGbps: theirs.BWAverage, MsgRate: theirs.MsgRate}
			for i, q := range qps {
				if st, err := q.Query(); err == nil && st.State != endpoint.StateRTS {
					return fmt.Errorf("QP %d (QPN %#06x) ended in %v", i, q.QPN(), st.State)
				}
			}
		}
		return perf.WriteBWTable(stdout, j.MBps, []perf.BWRow{row})
	})
	if err != nil {
		return err
	}
	return j.done(ctx, p, cmx)
}

// runBidirectional is perftest -b of a WRITE test once the QPs are set up:
// one more handshake to start both sides at once, each side's traffic to
// the other's buffer, the two reports swapped, and each side prints their
// sum (perftest's print_full_bw_report with both); then the closing
// handshake and "done", as the one-way test ends.
func (j *job) runBidirectional(ctx context.Context, stdout io.Writer, p *setup.PerftestConn, local setup.PerftestDest,
	qps []*endpoint.QP, remotes []setup.PerftestDest, cq *endpoint.CQ, mr *endpoint.MR, stride int) error {
	if _, err := p.Handshake(local); err != nil {
		return err
	}
	times, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.Depth, Iters: j.Iters, Stall: j.Stall,
		Next: func(q, i int) endpoint.SendWR { return j.wr(mr, q*stride, remotes[q], i) }})
	if err != nil {
		return err
	}
	mine := times.BWRow(uint64(j.Size), j.Iters, len(qps)*j.Iters, j.MBps)
	theirs, err := p.ExchangeBWReports(setup.PerftestBWReport{Size: mine.Bytes, Iterations: mine.Iterations, BWPeak: mine.PeakGbps,
		BWAverage: mine.AvgGbps, MsgRate: mine.MsgRate})
	if err != nil {
		return err
	}
	both := perf.BWRow{Bytes: mine.Bytes, Iterations: mine.Iterations, PeakGbps: mine.PeakGbps + theirs.BWPeak,
		AvgGbps: mine.AvgGbps + theirs.BWAverage, MsgRate: mine.MsgRate + theirs.MsgRate}
	if err := perf.WriteBWTable(stdout, j.MBps, []perf.BWRow{both}); err != nil {
		return err
	}
	for i, q := range qps {
		if st, err := q.Query(); err == nil && st.State != endpoint.StateRTS {
			return fmt.Errorf("QP %d (QPN %#06x) ended in %v", i, q.QPN(), st.State)
		}
	}
	if _, err := p.Handshake(local); err != nil { // closing
		return err
	}
	return j.done(ctx, p, nil)
}

// ErrRefused is the class of a test the peer runs that this side does not
// run with it: another number of QPs than -q, a bidirectional test (-b)
// against a one-way one. It is found in the set-up exchange, before any
// traffic, and the peer learns it as the set-up connection closing.
var ErrRefused = errors.New("refused")

// qpGuard finds a peer running another number of QPs than this side
// (perftest -q N) in the set-up exchange: perftest sends one QP message per
// QP in its first handshakes, then its first QP's message for every later
// one, so the QPNs seen before the first repeat are the peer's QPs. The
// guard lets new QPNs through, to count them (answering them sets nothing
// up on the wire), and refuses at the first repeat when their number is
// not want.
type qpGuard struct {
	want int
	qpns []uint32
}

func (g *qpGuard) check(remote setup.PerftestDest) error {
	if slices.Contains(g.qpns, remote.QPN) {
		if len(g.qpns) != g.want {
			return fmt.Errorf("%w: the peer runs %d QP%s (perftest -q %d), this side %d (-q %d)", ErrRefused, len(g.qpns), plural(len(g.qpns)), len(g.qpns), g.want, g.want)
		}
		return nil
	}
	if len(g.qpns) == MaxQPs {
		// a peer that keeps naming new QPs would keep the set-up going
		return fmt.Errorf("%w: the peer names more than %d QPs", ErrRefused, MaxQPs)
	}
	g.qpns = append(g.qpns, remote.QPN)
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// drain runs the handshakes left before the traffic when the guard has
// seen more QPs than this side's but not yet the repeat: it ends in the
// refusal.
func (g *qpGuard) drain(p *setup.PerftestConn, local setup.PerftestDest) error {
	for len(g.qpns) > g.want {
		if _, err := p.HandshakeChecked(local, g.check); err != nil {
			return err
		}
	}
	return nil
}

// done ends the set-up exchange: TCP's "done" message, or perftest -R's
// disconnects (the client's DREQ for the data QP, then the server's for
// the set-up connection).
func (j *job) done(ctx context.Context, p *setup.PerftestConn, cmx *exchange.PerftestCM) error {
	if cmx == nil {
		return p.ExchangeDone()
	}
	return cmx.Disconnect(ctx)
}

// wr is the client's i-th work request of a QP: to the start of the
// server's buffer part for it, from the start of ours, at offset in mr.
func (j *job) wr(mr *endpoint.MR, offset int, remote setup.PerftestDest, i int) endpoint.SendWR {
	switch j.Op() {
	case "write":
		return endpoint.SendWR{Op: endpoint.WRWrite, SGL: []endpoint.SGE{mr.SGE(offset, j.Size)}, RemoteAddr: remote.VAddr, RKey: remote.RKey}
	case "read":
		return endpoint.SendWR{Op: endpoint.WRRead, SGL: []endpoint.SGE{mr.SGE(offset, j.Size)}, RemoteAddr: remote.VAddr, RKey: remote.RKey}
	}
	if j.CAS {
		return endpoint.SendWR{Op: endpoint.WRCompareSwap, SGL: []endpoint.SGE{mr.SGE(0, 8)}, RemoteAddr: remote.VAddr, RKey: remote.RKey,
			CompareAdd: uint64(i), Swap: uint64(i) + 1}
	}
	return endpoint.SendWR{Op: endpoint.WRFetchAdd, SGL: []endpoint.SGE{mr.SGE(0, 8)}, RemoteAddr: remote.VAddr, RKey: remote.RKey, CompareAdd: 1}
}

// dial connects the set-up exchange: as the server, it accepts one client.
func (j *job) dial(ctx context.Context, stdout io.Writer) (net.Conn, error) {
	if !j.isServer() {
		d := net.Dialer{Timeout: exchange.SetupTimeout}
		c, err := d.DialContext(ctx, "tcp", j.Server.String())
		if err != nil {
			return nil, fmt.Errorf("set-up with %v: %w", j.Server, err)
		}
		return c, nil
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(j.Addr, uint16(j.Port)).String())
	if err != nil {
		return nil, fmt.Errorf("set-up listener: %w", err)
	}
	defer ln.Close()
	fmt.Fprint(stdout, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
	if j.Ready != nil {
		a := ln.Addr().(*net.TCPAddr).AddrPort()
		j.Ready(netip.AddrPortFrom(a.Addr().Unmap(), a.Port()))
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
