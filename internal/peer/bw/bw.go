// Package bw is ibpeer write, read, send and atomic: the clients of ibpeer
// serve, with perftest's report.
//
// Run opens the device (behind the --pcap recorder and the faults of
// Config.Faults, in that order, so that the capture holds what really went
// out), then one QP per Config.QPs, each with its own set-up connection to
// ibpeer serve (ibv_rc_pingpong's exchange and serve's Region message) and
// so its own region on the server. The measured traffic runs through
// perf.RunTraffic; with Verify it runs in rounds, each message with its
// own pattern written to a distinct slot of the region (or receive
// buffer), then READ back and compared, only the measured operations
// timed; atomics check the sequence of values they return. The report is
// perftest's (perf.WriteReport's parts): test information, both sides'
// addresses, the bandwidth or latency table.
package bw

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// Ops are the clients, by command name: what each moves (for the usage
// text) and perftest's name of its verb.
var Ops = map[string]struct{ What, Verb string }{
	"write":  {"WRITEs", "RDMA_Write"},
	"read":   {"READs", "RDMA_Read"},
	"send":   {"SENDs", "Send"},
	"atomic": {"atomics (FETCH_ADD, or CMP_SWAP with -A CMP_AND_SWAP)", "Atomic"},
}

// Config is a checked client run.
type Config struct {
	UDPOffload  device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Op          string            // write, read, send or atomic
	Addr        netip.Addr
	To          netip.AddrPort // ibpeer serve's set-up address
	Size, Iters int            // Iters per QP
	QPs, Depth  int            // Depth: work requests outstanding per QP
	MTU         int            // 0: the server's
	Verify, Lat bool
	CAS         bool // atomics: CMP_SWAP instead of FETCH_ADD
	Faults      wiretest.Faults
	Seed        uint64
	Stall       time.Duration // fail when no completion arrives for this long
	Pcap        string        // record the packets to this pcap file
	// Stderr gets the drop reports.
	Stderr io.Writer
}

// job is a run under way.
type job struct{ Config }

// Run runs the client against ibpeer serve and writes perftest's report
// to stdout, then what --verify found, the faults' summary and the
// capture's count.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	j := &job{cfg}
	return j.run(ctx, stdout, stderr)
}

// bwConn is one QP of the client with its server side.
type bwConn struct {
	qp      *endpoint.QP
	tcp     net.Conn
	psn     layers.PSN
	remote  setup.PingpongDest
	region  setup.ServeRegion
	mr      *endpoint.MR // the messages (atomics: the results)
	mem     []byte
	check   *endpoint.MR // where verification reads back to
	checkMe []byte
}

// connect opens the set-up connection of one QP and moves the QP to RTS.
func (j *job) connect(ctx context.Context, dev *endpoint.Device, c *bwConn) error {
	d := net.Dialer{Timeout: exchange.SetupTimeout}
	tcp, err := d.DialContext(ctx, "tcp", j.To.String())
	if err != nil {
		return fmt.Errorf("set-up with %v: %w (is ibpeer serve running there?)", j.To, err)
	}
	c.tcp = tcp
	tcp.SetDeadline(time.Now().Add(exchange.SetupTimeout))
	c.psn = endpoint.RandomPSN()
	local := setup.PingpongDest{QPN: c.qp.QPN(), PSN: c.psn, GID: dev.GID()}
	if c.remote, err = setup.PingpongClient(tcp, local); err != nil {
		return err
	}
	region, ok, err := setup.ReadServeRegion(tcp)
	switch {
	case err != nil:
		return fmt.Errorf("set-up with %v: %w", j.To, err)
	case !ok:
		return fmt.Errorf("set-up with %v: the server hung up after the pingpong exchange without a region message: it is not ibpeer serve", j.To)
	}
	c.region = region
	tcp.SetDeadline(time.Time{})
	if j.MTU != 0 && j.MTU != c.region.MTU {
		return fmt.Errorf("--mtu %d: the server's QPs use MTU %d (its --mtu); both sides must use the same", j.MTU, c.region.MTU)
	}
	mtu, err := layers.ParsePathMTU(c.region.MTU)
	if err != nil { // ReadServeRegion refuses such a region; kept so a change there cannot pass a zero code on
		return fmt.Errorf("set-up with %v: %w", j.To, err)
	}
	peer := netip.AddrFrom16(c.remote.GID).Unmap()
	return c.qp.Connect(endpoint.ConnectAttr{Remote: peer, RemoteQPN: c.remote.QPN, RemotePSN: layers.PSN(c.remote.PSN),
		LocalPSN: c.psn, MTU: mtu})
}

// slots returns how many messages fit the server side at once and where
// the n-th lands: distinct slots of the region (WRITE, READ) or the
// receive buffers (SEND).
func (j *job) slots(r setup.ServeRegion) (count int, stride uint64, err error) {
	switch j.Op {
	case "send":
		if uint64(j.Size) > uint64(r.RecvLen) {
			return 0, 0, fmt.Errorf("--size %d: the server's receive buffers hold %d bytes (ibpeer serve --mr-size/--recv)", j.Size, r.RecvLen)
		}
		return r.RecvCount, uint64(r.RecvLen), nil
	case "atomic":
		return 1, 0, nil
	}
	if uint64(j.Size) > r.Size {
		return 0, 0, fmt.Errorf("--size %d: the server's region has %d bytes (ibpeer serve --mr-size)", j.Size, r.Size)
	}
	return int(min(r.Size/uint64(j.Size), 1<<20)), uint64(j.Size), nil
}

func (j *job) run(ctx context.Context, stdout, stderr io.Writer) error {
	wire, err := j.UDPOffload.ListenUDP(netip.AddrPortFrom(j.Addr, layers.RoCEv2Port))
	if err != nil {
		return err
	}
	var w endpoint.Wire = wire
	var pw *device.PcapWire
	if j.Pcap != "" {
		if pw, err = device.NewPcapWire(wire, j.Pcap); err != nil {
			wire.Close()
			return fmt.Errorf("--pcap: %w", err)
		}
		w = pw
	}
	var fw *wiretest.FaultyWire
	if j.Faults.Any() {
		// faults before the capture: it holds what went out
		if fw, err = wiretest.NewFaulty(w, j.Faults, j.Seed); err != nil {
			w.Close()
			return err
		}
		w = fw
	}
	diag := device.Open(w, stderr)
	defer diag.Close()
	dev := diag.Device
	pd := dev.AllocPD()
	cq := dev.CreateCQ(j.QPs*(j.Depth+8) + 64)
	conns := make([]*bwConn, j.QPs)
	defer func() {
		for _, c := range conns {
			if c != nil && c.tcp != nil {
				c.tcp.Close()
			}
		}
	}()
	window := j.Depth
	for q := range conns {
		c := &bwConn{}
		conns[q] = c
		if c.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: j.Depth + 8, MaxRecvWR: 1}); err != nil {
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
		n := window * j.Size
		if j.Op == "atomic" && j.Verify {
			n = 8 * j.Iters
		}
		c.mem = make([]byte, n)
		if c.mr, err = pd.RegMR(c.mem, endpoint.AccessLocalWrite); err != nil {
			return err
		}
		c.checkMe = make([]byte, window*j.Size)
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
	case j.Op == "atomic":
		verified, err = j.runAtomic(ctx, cq, conns, window, measured)
	case j.Verify:
		verified, err = j.runVerified(ctx, cq, conns, window, measured)
	default:
		var r perf.Times
		r, err = perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qpsOf(conns), Depth: j.Depth, Iters: j.Iters, Stall: j.Stall,
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
		fmt.Fprintf(stdout, "%s: %d packets sent and received\n", j.Pcap, pw.Packets())
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
func (j *job) wr(c *bwConn, i, s int) endpoint.SendWR {
	k, stride, _ := j.slots(c.region)
	remote := c.region.VA + uint64(i%k)*stride
	local := []endpoint.SGE{c.mr.SGE(s*j.Size, j.Size)}
	switch j.Op {
	case "write":
		return endpoint.SendWR{Op: endpoint.WRWrite, SGL: local, RemoteAddr: remote, RKey: c.region.RKey}
	case "read":
		return endpoint.SendWR{Op: endpoint.WRRead, SGL: local, RemoteAddr: remote, RKey: c.region.RKey}
	case "send":
		return endpoint.SendWR{Op: endpoint.WRSend, SGL: local}
	}
	if j.CAS {
		return endpoint.SendWR{Op: endpoint.WRCompareSwap, SGL: local, RemoteAddr: c.region.VA, RKey: c.region.RKey,
			CompareAdd: uint64(i), Swap: uint64(i) + 1}
	}
	return endpoint.SendWR{Op: endpoint.WRFetchAdd, SGL: local, RemoteAddr: c.region.VA, RKey: c.region.RKey, CompareAdd: 1}
}

// runVerified runs WRITE, READ or SEND in rounds of window messages per
// QP, each round prepared and checked around its measured part.
func (j *job) runVerified(ctx context.Context, cq *endpoint.CQ, conns []*bwConn, window int, measured func(perf.Times)) (string, error) {
	qps := qpsOf(conns)
	size := j.Size
	// side runs one unmeasured WR per slot of the round on every QP.
	side := func(n int, wr func(c *bwConn, s int) endpoint.SendWR) error {
		_, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.Depth, Iters: n, Stall: j.Stall,
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
	for base := 0; base < j.Iters; base += window {
		n := min(window, j.Iters-base)
		for q, c := range conns {
			for s := range n {
				perf.FillPattern(c.mem[s*size:(s+1)*size], perf.PatternSeed(q, base+s))
			}
		}
		if j.Op == "read" {
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
		r, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.Depth, Iters: n, Stall: j.Stall,
			Next: func(q, s int) endpoint.SendWR { return j.wr(conns[q], base+s, s) }})
		if err != nil {
			return "", err
		}
		measured(r)
		if j.Op != "read" {
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
				if j.Op != "read" {
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
	how := map[string]string{"write": "read back from the server", "read": "compared with what was written there", "send": "read back from the server's receive buffers"}[j.Op]
	return fmt.Sprintf("%d %s of %d bytes on %d QPs, %s, byte-exact", j.Iters*len(conns), strings.ToUpper(j.Op)+"s", size, len(conns), how), nil
}

// runAtomic runs the atomics; verifying, it zeroes the word first and
// checks every returned value and the final word.
func (j *job) runAtomic(ctx context.Context, cq *endpoint.CQ, conns []*bwConn, window int, measured func(perf.Times)) (string, error) {
	qps := qpsOf(conns)
	word := func(op endpoint.WROpcode) error {
		_, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: 1, Iters: 1, Stall: j.Stall,
			Next: func(q, _ int) endpoint.SendWR {
				c := conns[q]
				return endpoint.SendWR{Op: op, SGL: []endpoint.SGE{c.check.SGE(0, 8)}, RemoteAddr: c.region.VA, RKey: c.region.RKey}
			}})
		if err != nil {
			return fmt.Errorf("verification traffic: %w", err)
		}
		return nil
	}
	if j.Verify {
		for _, c := range conns {
			clear(c.checkMe[:8])
		}
		if err := word(endpoint.WRWrite); err != nil {
			return "", err
		}
	}
	r, err := perf.RunTraffic(ctx, perf.Traffic{CQ: cq, QPs: qps, Depth: j.Depth, Iters: j.Iters, Stall: j.Stall,
		Next: func(q, i int) endpoint.SendWR {
			s := i % window
			if j.Verify {
				s = i
			}
			return j.wr(conns[q], i, s)
		}})
	if err != nil {
		return "", err
	}
	measured(r)
	if !j.Verify {
		return "", nil
	}
	if err := word(endpoint.WRRead); err != nil {
		return "", err
	}
	name := "FETCH_ADD"
	if j.CAS {
		name = "CMP_SWAP"
	}
	for q, c := range conns {
		for i := range j.Iters {
			if v := binary.NativeEndian.Uint64(c.mem[8*i:]); v != uint64(i) {
				return "", fmt.Errorf("verify: QP %d %s %d returned %d, want %d", q, name, i, v, i)
			}
		}
		if v := binary.NativeEndian.Uint64(c.checkMe); v != uint64(j.Iters) {
			return "", fmt.Errorf("verify: QP %d: the server's word is %d after %d %ss, want %d", q, v, j.Iters, name, j.Iters)
		}
	}
	return fmt.Sprintf("%d %ss on %d QPs returned 0, 1, 2, … in order and left each server word at %d", j.Iters*len(conns), name, len(conns), j.Iters), nil
}

// report prints perftest's report of the run.
func (j *job) report(w io.Writer, dev *endpoint.Device, conns []*bwConn, times *perf.Times, lat []float64) error {
	rdma := j.Op != "send"
	outReads := 0
	if j.Op == "read" || j.Op == "atomic" {
		a, err := conns[0].qp.Query()
		if err != nil {
			return err
		}
		outReads = int(a.MaxRdAtomic)
	}
	info := perf.TestInfo{Verb: Ops[j.Op].Verb, Latency: j.Lat, Device: "ibpeer", QPs: len(conns), Transport: "IB",
		Connection: "RC", TXDepth: j.Depth, MTU: conns[0].region.MTU, LinkType: "Ethernet", GIDIndex: -1, OutReads: outReads}
	if !j.Lat {
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
	if j.Lat {
		return perf.WriteLatTable(w, []perf.LatRow{perf.LatStats(uint64(j.Size), lat)})
	}
	return perf.WriteBWTable(w, false, []perf.BWRow{times.BWRow(uint64(j.Size), j.Iters, j.Iters*len(conns), false)})
}
