package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/setup"
)

const serveUsage = `usage: ibpeer serve --addr IP [flags]

Serves RDMA on IP: RoCEv2 on UDP 4791 and a set-up exchange on TCP 18515
(--port). Each TCP connection gets its own RC QP and its own memory region
of --mr-size bytes (remote write, read and atomic allowed), so several
clients, or one client with --qps N, can run at once without touching each
other's data. The QP and the region live as long as the TCP connection.
Runs until SIGINT or SIGTERM, then prints the packet counters.

Set-up exchange, ibv_rc_pingpong's with one message more:
  client -> server  52 bytes  "LLLL:QQQQQQ:PPPPPP:GID" and a NUL: the client QP's
                              LID, QPN, first PSN and GID (ibv_rc_pingpong's text)
  server -> client  52 bytes  the same for the server's QP, sent once that QP is
                              ready to receive
  client -> server   5 bytes  "done" and a NUL
  server -> client  62 bytes  "RRRRRRRR:VVVVVVVVVVVVVVVV:SSSSSSSSSSSSSSSS:MMMM:LLLLLLLL:CCCC"
                              and a NUL, in hex: the region's rkey, VA and size,
                              the path MTU in bytes, and the length and number of
                              the receive buffers SENDs land in
The region comes last, after ibv_rc_pingpong's own sequence, so the first
three messages are exactly that tool's and anything that reads its format
(ibdump pairing QPs by their set-up, a plain pingpong client) still parses
them; a client that wants the region reads one message more.

SENDs land in the region: receive buffer k covers [k·L, (k+1)·L), posted
in order and posted again, in the same order, as soon as it completed, so
the n-th SEND of a connection lands in buffer n mod C. The QP's path MTU is
--mtu; the client must use the same.

--image FILE seeds every connection's region: it starts with FILE's bytes
(the rest is zero). ibpeer replay --image writes such a file from a
capture, with offset 0 at the captured responder's VA, so that replay's
compare mode with --payload finds the data the capture's READs and atomics
found.

At most --max-conns TCP connections (default 64) are held at once, each
with its QP and, once the client has sent its first message, its region:
one more is closed at once, with a line saying so ("refused a set-up
connection from ADDR: 64 connections held (--max-conns 64)"), and gets
nothing. A connection that has not finished the set-up exchange within
10 s is dropped ("set-up not finished within 10s, dropped"). Refusal lines
come at most once a second; the others are counted on the next one and at
exit.

--cm PORT serves RDMA CM connections (QP1) instead, answering like
librdmacm's ucmatose server: 'ibpeer serve --cm 7471 -h' for its flags.

Exit status: 0 when stopped by SIGINT or SIGTERM, 1 when it cannot serve
(UDP 4791 or the TCP port taken, --pcap not writable, the listener
failing), 2 for bad flags.

Example:
  ibpeer serve --addr 127.0.0.2
  ibpeer write --addr 127.0.0.1 --to 127.0.0.2 --size 1048576 --iters 64 --verify --loss 0.05
  ibpeer replay --image region.bin pcaps/rxe/read_bw.pcap
  ibpeer serve --addr 127.0.0.2 --image region.bin
  ibpeer replay --compare --to 127.0.0.2 --setup pingpong --payload pcaps/rxe/read_bw.pcap

Flags:
`

// serveConfig is ibpeer serve's checked configuration.
type serveConfig struct {
	addr   netip.Addr
	port   int
	mrSize int
	mtu    int
	recv   int
	pcap   string
	image  []byte // the first bytes of every region (--image)

	// diag receives the drop reports (stderr; tests leave it nil and get
	// them with the rest of the output).
	diag io.Writer
	// ready, when set, learns the TCP listener's address once the server
	// accepts connections (tests use port 0).
	ready func(tcp netip.AddrPort)
	// region, when set, may change what a connection is told about its
	// region (tests use it to hand out a wrong rkey).
	region func(*serveRegion)
	// held, when set, learns the number of regions the server holds each
	// time it changes (tests).
	held func(n int)
	// setupTimeout bounds each set-up exchange (default setupTimeout).
	setupTimeout time.Duration
	// maxConns bounds the connections held at once (--max-conns).
	maxConns int
}

func runServe(args []string, stdout, stderr io.Writer) int {
	if hasCMFlag(args) {
		return runServeCM(args, stdout, stderr) // cmserve.go
	}
	fs := flag.NewFlagSet("ibpeer serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "local `IP` address: the GID, UDP 4791 and the TCP set-up port bind here (required)")
	port := fs.Int("port", setup.DefaultPort, "TCP `port` of the set-up exchange")
	mrSize := fs.Int("mr-size", 4<<20, "bytes of the memory region each connection gets")
	mtu := fs.Int("mtu", 1024, "path MTU of the QPs: 256, 512, 1024, 2048 or 4096 (ibv_rc_pingpong's default is 1024)")
	recv := fs.Int("recv", 16, "receive buffers per QP; each is mr-size/recv bytes")
	image := fs.String("image", "", "start every connection's region with the bytes of `FILE` (ibpeer replay --image writes one from a capture)")
	pcap := fs.String("pcap", "", "write the RoCEv2 packets the server sends and receives to pcap `FILE` (raw IP; see ibpeer write -h)")
	maxConns := fs.Int("max-conns", serveDefaultMaxConns, "TCP connections (each with a QP and a region) held at once; more are refused")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, serveUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "Run 'ibpeer serve -h' for usage.")
		return exitUsage
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ibpeer serve: %s\nRun 'ibpeer serve -h' for usage.\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	cfg := serveConfig{port: *port, mrSize: *mrSize, mtu: *mtu, recv: *recv, pcap: *pcap, diag: stderr, maxConns: *maxConns}
	if *addr == "" {
		return bad("give --addr IP, the address to serve on")
	}
	a, err := netip.ParseAddr(*addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *addr)
	}
	cfg.addr = a.Unmap()
	switch {
	case *port < 0 || *port > 65535:
		return bad("--port %d: want 0-65535", *port)
	case *mrSize < 8:
		return bad("--mr-size %d: want at least 8 bytes", *mrSize)
	case *recv < 1 || *recv > 4096:
		return bad("--recv %d: want 1-4096", *recv)
	case *mrSize / *recv < 1:
		return bad("--mr-size %d is too small for %d receive buffers", *mrSize, *recv)
	case *maxConns < 1 || *maxConns > 1<<16:
		return bad("--max-conns %d: want 1-65536", *maxConns)
	}
	if _, err := device.PathMTU(*mtu); err != nil {
		return bad("--mtu: %v", err)
	}
	if *image != "" {
		if cfg.image, err = os.ReadFile(*image); err != nil {
			return bad("--image: %v", err)
		}
		if len(cfg.image) > *mrSize {
			return bad("--image %s: %d bytes do not fit a region of --mr-size %d", *image, len(cfg.image), *mrSize)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "ibpeer serve: %v\n", err)
		return exitError
	}
	return exitOK
}

// serveRegionSize is the size of the region message: 61 characters and a
// NUL.
const serveRegionSize = 62

// serveRegion is the message that follows ibv_rc_pingpong's exchange: what
// a client needs to reach the connection's memory.
type serveRegion struct {
	RKey      uint32
	VA        uint64
	Size      uint64
	MTU       int    // path MTU in bytes
	RecvLen   uint32 // bytes per receive buffer
	RecvCount int    // receive buffers, posted in order at offsets k·RecvLen
}

func (r serveRegion) marshal() []byte {
	b := fmt.Appendf(make([]byte, 0, serveRegionSize), "%08x:%016x:%016x:%04x:%08x:%04x", r.RKey, r.VA, r.Size, r.MTU, r.RecvLen, r.RecvCount)
	return append(b, 0)
}

// parseServeRegion parses a region message strictly: six hexadecimal
// fields of the widths above, values that make sense together.
func parseServeRegion(b []byte) (serveRegion, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f := strings.Split(string(b), ":")
	widths := []int{8, 16, 16, 4, 8, 4}
	names := []string{"rkey", "VA", "size", "MTU", "receive length", "receive count"}
	if len(f) != len(widths) {
		return serveRegion{}, fmt.Errorf("region message %q: want 6 fields separated by ':', have %d", clip(b), len(f))
	}
	v := make([]uint64, len(f))
	for i, s := range f {
		if len(s) != widths[i] {
			return serveRegion{}, fmt.Errorf("region message: %s %q: want %d hexadecimal digits", names[i], s, widths[i])
		}
		n, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return serveRegion{}, fmt.Errorf("region message: %s %q: not hexadecimal", names[i], s)
		}
		v[i] = n
	}
	r := serveRegion{RKey: uint32(v[0]), VA: v[1], Size: v[2], MTU: int(v[3]), RecvLen: uint32(v[4]), RecvCount: int(v[5])}
	if _, err := device.PathMTU(r.MTU); err != nil {
		return serveRegion{}, fmt.Errorf("region message: %v", err)
	}
	if r.Size == 0 || r.RecvCount == 0 || uint64(r.RecvLen)*uint64(r.RecvCount) > r.Size {
		return serveRegion{}, fmt.Errorf("region message: %d receive buffers of %d bytes do not fit a region of %d bytes", r.RecvCount, r.RecvLen, r.Size)
	}
	return r, nil
}

func clip(b []byte) []byte {
	if len(b) > 70 {
		return b[:70]
	}
	return b
}

// server is a running ibpeer serve.
type server struct {
	cfg  serveConfig
	dev  *endpoint.Device
	pd   *endpoint.PD
	outM sync.Mutex
	out  io.Writer

	log     *device.RateLog // refusals
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	n       int // connections accepted
	regions int // regions allocated and not yet freed
}

// regionHeld counts a region allocated (+1) or freed (-1).
func (s *server) regionHeld(d int) {
	s.mu.Lock()
	s.regions += d
	n := s.regions
	s.mu.Unlock()
	if s.cfg.held != nil {
		s.cfg.held(n)
	}
}

func (s *server) printf(format string, a ...any) {
	s.outM.Lock()
	defer s.outM.Unlock()
	fmt.Fprintf(s.out, format, a...)
}

// serve runs the server until ctx ends.
func serve(ctx context.Context, cfg serveConfig, out io.Writer) error {
	wire, err := endpoint.ListenUDP(netip.AddrPortFrom(cfg.addr, endpoint.RoCEv2Port))
	if err != nil {
		return err
	}
	var w endpoint.Wire = wire
	var pw *device.PcapWire
	if cfg.pcap != "" {
		if pw, err = device.NewPcapWire(wire, cfg.pcap); err != nil {
			wire.Close()
			return fmt.Errorf("--pcap: %w", err)
		}
		w = pw
	}
	diagOut := cfg.diag
	if diagOut == nil {
		diagOut = out
	}
	diag := device.Open(w, diagOut)
	defer diag.Close()
	dev := diag.Device
	ln, err := net.Listen("tcp", netip.AddrPortFrom(cfg.addr, uint16(cfg.port)).String())
	if err != nil {
		return fmt.Errorf("set-up listener: %w", err)
	}
	if cfg.setupTimeout <= 0 {
		cfg.setupTimeout = setupTimeout
	}
	if cfg.maxConns <= 0 {
		cfg.maxConns = serveDefaultMaxConns
	}
	s := &server{cfg: cfg, dev: dev, pd: dev.AllocPD(), out: out, conns: map[net.Conn]struct{}{}}
	s.log = &device.RateLog{Out: func(line string) { s.printf("%s\n", line) }}
	tcp := ln.Addr().(*net.TCPAddr).AddrPort()
	s.printf("ibpeer serve: GID %v, RoCEv2 on %v, set-up on TCP %v\n", dev.GID(), dev.Addr(), tcp)
	s.printf("ibpeer serve: each connection gets an RC QP (MTU %d) and a %d-byte region with %d receive buffers of %d bytes\n",
		cfg.mtu, cfg.mrSize, cfg.recv, cfg.mrSize/cfg.recv)
	if len(cfg.image) > 0 {
		s.printf("ibpeer serve: every region starts with the %d bytes of --image\n", len(cfg.image))
	}
	if cfg.ready != nil {
		cfg.ready(netip.AddrPortFrom(tcp.Addr().Unmap(), tcp.Port()))
	}
	var wg sync.WaitGroup
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-stopped:
		}
		ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
	}()
	var acceptErr error
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = fmt.Errorf("set-up listener: %w", err)
			}
			break
		}
		s.mu.Lock()
		if ctx.Err() != nil {
			s.mu.Unlock()
			c.Close()
			break
		}
		if len(s.conns) >= cfg.maxConns {
			s.mu.Unlock()
			s.log.Printf("set-up connections refused", "refused a set-up connection from %v: %d connections held (--max-conns %d)",
				c.RemoteAddr(), cfg.maxConns, cfg.maxConns)
			c.Close()
			continue
		}
		s.n++
		id := s.n
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handle(ctx, id, c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
	close(stopped)
	wg.Wait()
	s.log.Flush()
	k := dev.Counters()
	s.printf("ibpeer serve: stopped after %d connections; packets sent %d, received %d; dropped: %d short, %d address, %d QP, %d ICRC, %d queue; duplicate requests %d, sequence NAKs sent %d, RNR NAKs sent %d\n",
		s.n, k.SentPkts, k.RcvdPkts, k.DropShort, k.DropAddr, k.DropQP, k.DropICRC, k.DropQueue, k.DuplicateRequest, k.OutOfSeqRequest, k.SendRNRErr)
	if err := diag.Close(); err != nil && pw != nil {
		return errors.Join(acceptErr, fmt.Errorf("--pcap: %w", err))
	}
	if pw != nil {
		s.printf("%s: %d packets sent and received\n", cfg.pcap, pw.Packets())
	}
	return acceptErr
}

// setupTimeout bounds each set-up exchange: a connection that has not
// finished it by then is dropped.
const setupTimeout = 10 * time.Second

// serveDefaultMaxConns is --max-conns's default.
const serveDefaultMaxConns = 64

// handle runs one connection: QP, region, exchange, then the receive
// buffers until the client closes the connection.
func (s *server) handle(ctx context.Context, id int, c net.Conn) {
	cfg := s.cfg
	fail := func(err error) {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.printf("conn %d from %v: set-up not finished within %v, dropped\n", id, c.RemoteAddr(), cfg.setupTimeout)
			return
		}
		s.printf("conn %d from %v: %v\n", id, c.RemoteAddr(), err)
	}
	// The region comes once the client has sent its address: a
	// connection that never does costs none.
	var mr *endpoint.MR
	defer func() {
		if mr != nil {
			mr.Dereg()
			s.regionHeld(-1)
		}
	}()
	cq := s.dev.CreateCQ(cfg.recv + 16)
	qp, err := s.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxRecvWR: cfg.recv, MaxSendWR: 16})
	if err != nil {
		fail(err)
		return
	}
	defer qp.Destroy()
	mtu, _ := device.PathMTU(cfg.mtu)
	slot := cfg.mrSize / cfg.recv
	psn := endpoint.RandomPSN()
	local := setup.PingpongDest{QPN: qp.QPN(), PSN: psn, GID: s.dev.GID()}
	c.SetDeadline(time.Now().Add(cfg.setupTimeout))
	remote, err := setup.PingpongServer(c, local, func(r setup.PingpongDest) error {
		mem := make([]byte, cfg.mrSize)
		copy(mem, cfg.image)
		var err error
		mr, err = s.pd.RegMR(mem, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite|endpoint.AccessRemoteRead|endpoint.AccessRemoteAtomic)
		if err != nil {
			return err
		}
		s.regionHeld(1)
		peer := netip.AddrFrom16(r.GID).Unmap()
		if err := qp.Connect(endpoint.ConnectAttr{Remote: peer, RemoteQPN: r.QPN, RemotePSN: r.PSN, LocalPSN: psn, MTU: mtu}); err != nil {
			return err
		}
		for k := range cfg.recv {
			if err := qp.PostRecv(endpoint.RecvWR{ID: uint64(k), SGL: []endpoint.SGE{mr.SGE(k*slot, slot)}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		fail(err)
		return
	}
	reg := serveRegion{RKey: mr.RKey(), VA: mr.Addr(), Size: uint64(cfg.mrSize), MTU: cfg.mtu, RecvLen: uint32(slot), RecvCount: cfg.recv}
	if cfg.region != nil {
		cfg.region(&reg)
	}
	s.printf("conn %d from %v: client QPN %#06x PSN %#06x GID %v; served by QPN %#06x PSN %#06x rkey %#08x VA %#x size %d\n",
		id, c.RemoteAddr(), remote.QPN, uint32(remote.PSN), netip.AddrFrom16(remote.GID).Unmap(), qp.QPN(), uint32(psn), reg.RKey, reg.VA, reg.Size)
	if _, err := c.Write(reg.marshal()); err != nil {
		fail(fmt.Errorf("sending the region: %w", err))
		return
	}
	c.SetDeadline(time.Time{})

	// Receive buffers go back to the queue, in completion order, until
	// the client closes the connection (or the server stops).
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c)
		close(closed)
	}()
	var sends, bytesIn uint64
	var status string
	wcs := make([]endpoint.WC, 32)
loop:
	for {
		n := cq.Poll(wcs)
		for _, wc := range wcs[:n] {
			if wc.Status != endpoint.StatusSuccess {
				status = fmt.Sprintf("; QP failed: %v", wc)
				break loop
			}
			sends++
			bytesIn += uint64(wc.ByteLen)
			k := int(wc.ID)
			if err := qp.PostRecv(endpoint.RecvWR{ID: wc.ID, SGL: []endpoint.SGE{mr.SGE(k*slot, slot)}}); err != nil {
				status = fmt.Sprintf("; reposting a receive: %v", err)
				break loop
			}
		}
		if n > 0 {
			continue
		}
		select {
		case <-cq.Notify():
		case <-closed:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	c.Close()
	<-closed
	st, _ := qp.Query()
	s.printf("conn %d closed: %d SENDs received (%d bytes), QP %v%s\n", id, sends, bytesIn, st.State, status)
}
