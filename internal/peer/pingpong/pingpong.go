// Package pingpong is ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong
// and ibv_srq_pingpong (rdma-core libibverbs/examples) in either role over
// the endpoint, for ibpeer pingpong. The set-up exchange is theirs
// (setup.PingpongClient/Server, ENDPOINT.md §2.1), and so are the
// defaults, the QP attributes, the traffic pattern and the output; the
// command line checks the flags as the tools do.
//
// Run opens the device on Config.Addr (drop reports on Config.Stderr),
// creates the QP as the tool does, runs the TCP set-up exchange as client
// or server, moves the QP to RTS and then plays the ping-pong: the client
// sends first, each side sends its next message once its previous one
// completed and a message arrived, Iters times; the report is the tool's.
package pingpong

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// Config is one run of a pingpong tool, checked as the tools check their
// flags (the command line's to do).
type Config struct {
	UDPOffload device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Type       endpoint.QPType   // RC, UC or UD: ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong
	Addr       netip.Addr        // UDP 4791 and the server's TCP port bind here; its GID is advertised
	Host       string            // the server to connect to; "" for the server
	Port       int               // TCP port of the set-up exchange
	Size       int
	MTU        layers.PathMTU // RC and UC
	RXDepth    int
	Iters      int
	Events     bool // sleep on CQ events rather than poll
	Check      bool // -c: validate the received buffer (RC, UC)
	// SRQ plays ibv_srq_pingpong instead: NumQP RC QPs (Type RC) taking
	// their receives from one shared receive queue (srq.go).
	SRQ   bool
	NumQP int
	// Stderr gets the tools' error messages and the drop reports.
	Stderr io.Writer

	// Listening, when set, learns the server's TCP address once it
	// accepts connections (tests use port 0).
	Listening func(net.Addr)
}

// Work request IDs, the tools' PINGPONG_RECV_WRID and PINGPONG_SEND_WRID.
const (
	recvWRID = 1
	sendWRID = 2
)

// grh is the room a UD receive needs in front of the payload.
const grh = 40

// ErrReported is a failure whose message (the tool's) is already on
// Config.Stderr.
var ErrReported = errors.New("reported")

// Run runs one test; the local and remote address lines and the report go
// to stdout. A failure the tool reports itself (on cfg.Stderr, in its
// words) returns ErrReported.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	if cfg.SRQ {
		return runSRQ(ctx, cfg, stdout, stderr)
	}
	if cfg.Type == endpoint.UD {
		if mtu := device.ActiveMTU(cfg.Addr); cfg.Size > mtu {
			fmt.Fprintf(stderr, "Requested size larger than port MTU (%d)\n", mtu)
			return ErrReported
		}
	}
	wire, err := cfg.UDPOffload.ListenUDP(netip.AddrPortFrom(cfg.Addr, layers.RoCEv2Port))
	if err != nil {
		return fmt.Errorf("RoCEv2 socket on %v: %w", cfg.Addr, err)
	}
	dev := device.Open(wire, stderr)
	defer dev.Close()

	bufLen := cfg.Size
	if cfg.Type == endpoint.UD {
		bufLen += grh
	}
	buf := make([]byte, bufLen)
	for i := range buf {
		buf[i] = 0x7b // what the tools fill it with
	}
	pd := dev.AllocPD()
	mr, err := pd.RegMR(buf, endpoint.AccessLocalWrite)
	if err != nil {
		return fmt.Errorf("register the buffer: %w", err)
	}
	cq := dev.CreateCQ(cfg.RXDepth + 1)
	qp, err := pd.CreateQP(endpoint.QPConfig{Type: cfg.Type, SendCQ: cq, RecvCQ: cq, MaxSendWR: 1, MaxRecvWR: cfg.RXDepth})
	if err != nil {
		return fmt.Errorf("create QP: %w", err)
	}
	initAttr := endpoint.QPAttr{State: endpoint.StateInit, QKey: endpoint.PingpongQKey}
	mask := endpoint.AttrState | endpoint.AttrAccess
	if cfg.Type == endpoint.UD {
		mask = endpoint.AttrState | endpoint.AttrQKey
	}
	if err := qp.Modify(initAttr, mask); err != nil {
		fmt.Fprintln(stderr, "Failed to modify QP to INIT")
		return ErrReported
	}
	recv := endpoint.RecvWR{ID: recvWRID, SGL: []endpoint.SGE{mr.SGE(0, bufLen)}}
	postRecv := func(n int) int {
		for i := range n {
			if qp.PostRecv(recv) != nil {
				return i
			}
		}
		return n
	}
	routs := postRecv(cfg.RXDepth)
	if routs < cfg.RXDepth {
		fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
		return ErrReported
	}

	local := setup.PingpongDest{QPN: qp.QPN(), PSN: endpoint.RandomPSN(), GID: dev.GID()}
	sep := ","
	if cfg.Type == endpoint.UD {
		sep = ":" // ibv_ud_pingpong's local line
	}
	fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %v\n",
		local.LID, local.QPN, uint32(local.PSN), sep, netip.AddrFrom16(local.GID))

	var remote setup.PingpongDest
	var remoteAddr netip.Addr
	connect := func(r setup.PingpongDest, tcpPeer net.Addr) error {
		remoteAddr = netip.AddrFrom16(r.GID).Unmap()
		if r.GID == [16]byte{} {
			// The tools without -g send no GID and cannot use RoCE; say
			// so and use the set-up connection's address.
			if ap, err := netip.ParseAddrPort(tcpPeer.String()); err == nil {
				remoteAddr = ap.Addr().Unmap()
			}
			fmt.Fprintf(stderr, "ibpeer pingpong: the peer sent GID :: (run the tool with -g <RoCEv2 GID index>); using %v\n", remoteAddr)
		}
		a := endpoint.ConnectAttr{LocalPSN: local.PSN, QKey: endpoint.PingpongQKey}
		if cfg.Type != endpoint.UD {
			a.Remote, a.RemoteQPN, a.RemotePSN, a.MTU = remoteAddr, r.QPN, layers.PSN(r.PSN), cfg.MTU
			a.NoAccess = true
			a.Timeout, a.RetryCnt, a.RNRRetry, a.MinRNRTimer = 14, 7, 7, 12
			a.MaxRdAtomic, a.MaxDestRdAtomic = 1, 1
			a.HopLimit = 1
		}
		if err := qp.Connect(a); err != nil {
			return fmt.Errorf("connect QP: %w", err)
		}
		return nil
	}

	var serverAddr net.Addr
	if cfg.Host != "" {
		remote, serverAddr, err = clientExchange(ctx, cfg, local, stderr)
		if err != nil {
			return err
		}
	} else {
		remote, err = serverExchange(ctx, cfg, local, connect, stderr)
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %v\n",
		remote.LID, remote.QPN, uint32(remote.PSN), netip.AddrFrom16(remote.GID))
	if cfg.Host != "" {
		if err := connect(remote, serverAddr); err != nil {
			return err
		}
	}

	send := &endpoint.SendWR{ID: sendWRID, Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, cfg.Size)}}
	if cfg.Type == endpoint.UD {
		send.SGL[0] = mr.SGE(grh, cfg.Size)
		send.Dest = endpoint.UDDest{Addr: remoteAddr, QPN: remote.QPN, QKey: endpoint.PingpongQKey, HopLimit: 1}
	}
	pageSize := os.Getpagesize()
	if cfg.Host != "" && cfg.Check {
		// The tools write i / page_size % sizeof(char): zero.
		for i := 0; i < cfg.Size; i += pageSize {
			buf[i] = 0
		}
	}

	pending := recvWRID
	if cfg.Host != "" {
		if err := qp.PostSend(send); err != nil {
			fmt.Fprintln(stderr, "Couldn't post send")
			return ErrReported
		}
		pending |= sendWRID
	}
	start := time.Now()
	rcnt, scnt := 0, 0
	wcs := make([]endpoint.WC, 2)
	for rcnt < cfg.Iters || scnt < cfg.Iters {
		n, err := poll(ctx, cq, wcs, cfg.Events)
		if err != nil {
			return fmt.Errorf("after %d sends and %d receives: %w", scnt, rcnt, err)
		}
		for _, wc := range wcs[:n] {
			if wc.Status != endpoint.StatusSuccess {
				fmt.Fprintf(stderr, "Failed status %s (%d) for wr_id %d\n", statusStr(wc.Status), wc.Status, wc.ID)
				return ErrReported
			}
			switch wc.ID {
			case sendWRID:
				scnt++
			case recvWRID:
				routs--
				if routs <= 1 {
					routs += postRecv(cfg.RXDepth - routs)
					if routs < cfg.RXDepth {
						fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
						return ErrReported
					}
				}
				rcnt++
			default:
				fmt.Fprintf(stderr, "Completion for unknown wr_id %d\n", wc.ID)
				return ErrReported
			}
			pending &^= int(wc.ID)
			if scnt < cfg.Iters && pending == 0 {
				if err := qp.PostSend(send); err != nil {
					fmt.Fprintln(stderr, "Couldn't post send")
					return ErrReported
				}
				pending = recvWRID | sendWRID
			}
		}
	}
	elapsed := time.Since(start)
	// A round trip through the QP's goroutine: the ACK for the peer's
	// last message has been handed to the wire before the device closes.
	_, _ = qp.Query()

	// The tools compute in float: usec is a float, usec / iters too.
	usec := float32(elapsed.Microseconds())
	bytes := int64(cfg.Size) * int64(cfg.Iters) * 2
	fmt.Fprintf(stdout, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, float64(usec)/1e6, float64(bytes)*8/float64(usec))
	fmt.Fprintf(stdout, "%d iters in %.2f seconds = %.2f usec/iter\n", cfg.Iters, float64(usec)/1e6, float64(usec/float32(cfg.Iters)))

	if cfg.Host == "" && cfg.Check {
		bad := false
		for i := 0; i < cfg.Size; i += pageSize {
			if buf[i] != 0 {
				fmt.Fprintf(stderr, "invalid data in page %d\n", i/pageSize)
				bad = true
			}
		}
		if bad {
			return ErrReported
		}
	}
	return nil
}

// dial connects to the server's set-up port, closing the connection if
// ctx ends first.
func dial(ctx context.Context, cfg Config, stderr io.Writer) (net.Conn, func(), error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		fmt.Fprintf(stderr, "Couldn't connect to %s:%d\n", cfg.Host, cfg.Port)
		return nil, nil, ErrReported
	}
	stopWatch := context.AfterFunc(ctx, func() { conn.Close() })
	return conn, func() { stopWatch(); conn.Close() }, nil
}

// accept waits for one client on the set-up port, closing the connection
// if ctx ends first.
func accept(ctx context.Context, cfg Config, stderr io.Writer) (net.Conn, func(), error) {
	var lc net.ListenConfig
	// --addr, not the wildcard the tools bind: this device answers on
	// that address only, and another server may have the port on
	// another address of the machine.
	ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(cfg.Addr, uint16(cfg.Port)).String())
	if err != nil {
		fmt.Fprintf(stderr, "Couldn't listen to port %d\n", cfg.Port)
		fmt.Fprintf(stderr, "ibpeer pingpong: %v\n", err)
		return nil, nil, ErrReported
	}
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	conn, err := ln.Accept()
	stopLn()
	ln.Close()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("waiting for a client on port %d: %w", cfg.Port, ctx.Err())
		}
		fmt.Fprintln(stderr, "accept() failed")
		return nil, nil, ErrReported
	}
	stopWatch := context.AfterFunc(ctx, func() { conn.Close() })
	return conn, func() { stopWatch(); conn.Close() }, nil
}

// clientExchange connects to the server and trades set-up messages; it
// returns the server's message and TCP address.
func clientExchange(ctx context.Context, cfg Config, local setup.PingpongDest, stderr io.Writer) (setup.PingpongDest, net.Addr, error) {
	conn, done, err := dial(ctx, cfg, stderr)
	if err != nil {
		return setup.PingpongDest{}, nil, err
	}
	defer done()
	remote, err := setup.PingpongClient(conn, local)
	if err != nil {
		return remote, nil, fmt.Errorf("set-up exchange with %v: %w", conn.RemoteAddr(), err)
	}
	return remote, conn.RemoteAddr(), nil
}

// serverExchange waits for one client, moves the QP to RTS with what it
// sent (connect), then answers.
func serverExchange(ctx context.Context, cfg Config, local setup.PingpongDest,
	connect func(setup.PingpongDest, net.Addr) error, stderr io.Writer) (setup.PingpongDest, error) {
	conn, done, err := accept(ctx, cfg, stderr)
	if err != nil {
		return setup.PingpongDest{}, err
	}
	defer done()
	remote, err := setup.PingpongServer(conn, local, func(r setup.PingpongDest) error {
		return connect(r, conn.RemoteAddr())
	})
	if err != nil {
		return remote, fmt.Errorf("set-up exchange with %v: %w", conn.RemoteAddr(), err)
	}
	return remote, nil
}

// ppSpin is how many empty polls the default (polling) mode makes before
// it sleeps on the CQ: the tools spin forever, which two processes on a
// small machine cannot afford.
const ppSpin = 200

// poll returns at least one completion, or ctx's error.
func poll(ctx context.Context, cq *endpoint.CQ, wcs []endpoint.WC, events bool) (int, error) {
	if !events {
		for range ppSpin {
			if n := cq.Poll(wcs); n > 0 {
				return n, nil
			}
		}
	}
	return cq.Wait(ctx, wcs)
}

// ppStatusNames are ibv_wc_status_str's strings.
var ppStatusNames = map[endpoint.Status]string{
	endpoint.StatusSuccess:        "success",
	endpoint.StatusLocLenErr:      "local length error",
	endpoint.StatusLocQPOpErr:     "local QP operation error",
	endpoint.StatusLocProtErr:     "local protection error",
	endpoint.StatusWRFlushErr:     "Work Request Flushed Error",
	endpoint.StatusBadRespErr:     "bad response error",
	endpoint.StatusLocAccessErr:   "local access error",
	endpoint.StatusRemInvReqErr:   "remote invalid request error",
	endpoint.StatusRemAccessErr:   "remote access error",
	endpoint.StatusRemOpErr:       "remote operational error",
	endpoint.StatusRetryExcErr:    "transport retry counter exceeded",
	endpoint.StatusRNRRetryExcErr: "RNR retry counter exceeded",
	endpoint.StatusGeneralErr:     "general error",
}

func statusStr(s endpoint.Status) string {
	if n, ok := ppStatusNames[s]; ok {
		return n
	}
	return "unknown"
}
