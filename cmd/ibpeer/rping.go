package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// ibpeer rping: librdmacm's rping (rdma-core librdmacm/examples) in either
// role over the endpoint, connected by RDMA CM on QP1 (endpoint.CM). The
// exchange is rping's: the client SENDs the address, rkey and length of
// its source buffer (16 bytes, big endian); the server RDMA READs it,
// SENDs "go ahead"; the client SENDs its sink buffer; the server RDMA
// WRITEs the ping back and SENDs "go ahead" again; -C times.

const rpingUsage = `usage: ibpeer rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port] [-P] [--bind IP]
       ibpeer rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port] [--bind IP]

Plays librdmacm's rping against rping on any RDMA CM device (rdma_rxe, a NIC) or another ibpeer:
RDMA CM over QP1 (REQ, REP, RTU; DREQ, DREP) in the TCP port space, one RC QP, and rping's
ping loop (the client's buffer advertised by SEND, RDMA READ by the server, RDMA WRITE back).

  -c            client side
  -s            server side
  -a addr       client: the server's address; server: the address to listen on
  -I addr       client: the source address to bind to (same as --bind)
  --bind IP     the local address: UDP 4791 binds here (server default: -a)
  -p port       port (default 7174)
  -C count      ping count (default 0: forever; the server serves until the client disconnects)
  -S size       ping data size (default 64; 26 to 65535)
  -v            display ping data to stdout
  -V            validate ping data
  -d            debug printfs
  -P            persistent server mode allowing multiple connections
  -q            use a self-created, self-modified QP (accepted: ibpeer always does)
  -t tos        type of service (accepted, not used)

Output, as rping prints it: the client "ping data: rdma-ping-0: ABCDEF...", the server
"server ping data: rdma-ping-0: ABCDEF..." (with -v).
`

// rpingDefaultPort is rping's port.
const rpingDefaultPort = 7174

// rpingMinSize is rping's RPING_MIN_BUFSIZE: sizeof("2147483647") +
// sizeof("rdma-ping-%d: ").
const rpingMinSize = 11 + 15

// rpingConfig is ibpeer rping's checked configuration.
type rpingConfig struct {
	server     bool
	persistent bool
	local      netip.Addr
	remote     netip.Addr // client: the server
	port       uint16
	count      int
	size       int
	verbose    bool
	validate   bool
	debug      bool
	cm         endpoint.CMConfig

	// listening, when set, is called once the server listens (tests).
	listening func()
	// wire, when set, opens the wire instead of a UDP socket (tests).
	wire func(netip.Addr) (endpoint.Wire, error)
}

// rpingBoolFlags are the flags getopt lets a user bundle ("-vV").
const rpingBoolFlags = "scvVdPq"

func rpingFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer rping", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	fs.Bool("s", false, "server")
	fs.Bool("c", false, "client")
	fs.String("a", "", "address")
	fs.String("I", "", "source address")
	fs.String("bind", "", "local address")
	fs.Int("p", rpingDefaultPort, "port")
	fs.Int("C", 0, "count")
	fs.Int("S", 64, "size")
	fs.Bool("v", false, "verbose")
	fs.Bool("V", false, "validate")
	fs.Bool("d", false, "debug")
	fs.Bool("P", false, "persistent server")
	fs.Bool("q", false, "self-created QP")
	fs.Int("t", 0, "type of service (ignored)")
	return fs
}

// rpingExpand splits getopt's bundles ("-vV") and attached values ("-C10").
func rpingExpand(fs *flag.FlagSet, args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && fs.Lookup(a[1:]) == nil {
			if strings.Trim(a[1:], rpingBoolFlags) == "" {
				for _, c := range a[1:] {
					out = append(out, "-"+string(c))
				}
				continue
			}
		}
		out = append(out, a)
	}
	return ppSplitShort(fs, out)
}

func rpingParse(args []string) (rpingConfig, error) {
	fs := rpingFlags(io.Discard)
	if err := fs.Parse(rpingExpand(fs, args)); err != nil {
		return rpingConfig{}, err
	}
	if fs.NArg() > 0 {
		return rpingConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	cfg := rpingConfig{server: get("s").(bool), persistent: get("P").(bool), count: get("C").(int),
		size: get("S").(int), verbose: get("v").(bool), validate: get("V").(bool), debug: get("d").(bool)}
	client := get("c").(bool)
	if cfg.server == client {
		return cfg, errors.New("give -s (server) or -c (client)")
	}
	addr := func(flag string) (netip.Addr, error) {
		s := get(flag).(string)
		if s == "" {
			return netip.Addr{}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return a, fmt.Errorf("-%s %q: not an IP address", flag, s)
		}
		return a.Unmap(), nil
	}
	a, err := addr("a")
	if err != nil {
		return cfg, err
	}
	bind, err := addr("bind")
	if err != nil {
		return cfg, err
	}
	src, err := addr("I")
	if err != nil {
		return cfg, err
	}
	if !bind.IsValid() {
		bind = src
	}
	if cfg.server {
		if !bind.IsValid() {
			bind = a
		}
		if a.IsValid() && a != bind && !a.IsUnspecified() {
			return cfg, fmt.Errorf("-a %v and --bind %v: the server listens on one address", a, bind)
		}
	} else {
		if !a.IsValid() {
			return cfg, errors.New("the client needs -a: the server's address")
		}
		cfg.remote = a
	}
	if !bind.IsValid() || bind.IsUnspecified() {
		return cfg, errors.New("give --bind IP: the local address UDP 4791 binds to")
	}
	cfg.local = bind
	p := get("p").(int)
	if p < 0 || p > 65535 {
		return cfg, fmt.Errorf("-p %d: want a port, 0-65535", p)
	}
	cfg.port = uint16(p)
	if cfg.size < rpingMinSize || cfg.size > 64*1024-1 {
		//lint:ignore ST1005 rping's own message, capital included, as scripts match it
		return cfg, fmt.Errorf("Invalid size %d (valid range is %d to %d)", cfg.size, rpingMinSize, 64*1024)
	}
	if cfg.count < 0 {
		//lint:ignore ST1005 rping's own message, capital included, as scripts match it
		return cfg, fmt.Errorf("Invalid count %d", cfg.count)
	}
	return cfg, nil
}

func runRping(args []string, stdout, stderr io.Writer) int {
	cfg, err := rpingParse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, rpingUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer rping: %v\nRun 'ibpeer rping -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rping(ctx, cfg, stdout, stderr); err != nil {
		if !errors.Is(err, errRpingReported) {
			fmt.Fprintf(stderr, "ibpeer rping: %v\n", err)
		}
		return exitError
	}
	return exitOK
}

// errRpingReported is a failure whose message (rping's) is on stderr.
var errRpingReported = errors.New("reported")

// errRpingDisconnected: the peer disconnected.
var errRpingDisconnected = errors.New("disconnected")

// rpingOut serializes output lines of concurrent connections (-P).
type rpingOut struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	debug          bool
}

func (o *rpingOut) out(format string, a ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.stdout, format, a...)
	o.mu.Unlock()
}

func (o *rpingOut) err(format string, a ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.stderr, format, a...)
	o.mu.Unlock()
}

func (o *rpingOut) dbg(format string, a ...any) {
	if o.debug {
		o.out(format, a...)
	}
}

// rping runs one client or server.
func rping(ctx context.Context, cfg rpingConfig, stdout, stderr io.Writer) error {
	var wire endpoint.Wire
	var err error
	if cfg.wire != nil {
		wire, err = cfg.wire(cfg.local)
	} else {
		wire, err = endpoint.ListenUDP(netip.AddrPortFrom(cfg.local, endpoint.RoCEv2Port))
	}
	if err != nil {
		return fmt.Errorf("RoCEv2 socket on %v: %w", cfg.local, err)
	}
	dev := device.Open(wire, stderr)
	defer dev.Close()
	cm, err := endpoint.NewCM(dev.Device, cfg.cm)
	if err != nil {
		return err
	}
	defer cm.Close()
	o := &rpingOut{stdout: stdout, stderr: stderr, debug: cfg.debug}
	sid := layers.IPCMServiceID(layers.PortSpaceTCP, cfg.port)
	if !cfg.server {
		return rpingClient(ctx, cfg, dev.Device, cm, sid, o)
	}
	l, err := cm.Listen(sid)
	if err != nil {
		fmt.Fprintln(stderr, "rdma_bind_addr: Address already in use")
		return errRpingReported
	}
	defer l.Close()
	o.dbg("rdma_bind_addr successful\nrdma_listen\n")
	if cfg.listening != nil {
		cfg.listening()
	}
	if !cfg.persistent {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		return rpingServe(ctx, cfg, dev.Device, c, o)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = rpingServe(ctx, cfg, dev.Device, c, o)
		}()
	}
}

// rpingConn is one side's verbs resources: rping's control block.
type rpingConn struct {
	qp                *endpoint.QP
	cq                *endpoint.CQ
	recvMR, sendMR    *endpoint.MR
	rdmaMR, startMR   *endpoint.MR
	recvBuf, sendBuf  []byte
	rdmaBuf, startBuf []byte
	wcs               [8]endpoint.WC
	pending           []endpoint.WC
	disc              <-chan struct{}
	o                 *rpingOut
	remoteAddr        uint64
	remoteRKey        uint32
	remoteLen         uint32
	server            bool
	verb              bool
}

// rpingInfoLen is the size of struct rping_rdma_info: buf (8), rkey (4),
// size (4), big endian.
const rpingInfoLen = 16

func newRpingConn(dev *endpoint.Device, size int, server bool, o *rpingOut) (*rpingConn, error) {
	pd := dev.AllocPD()
	r := &rpingConn{cq: dev.CreateCQ(32), recvBuf: make([]byte, rpingInfoLen), sendBuf: make([]byte, rpingInfoLen),
		rdmaBuf: make([]byte, size), server: server, o: o}
	var err error
	qp, err := pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: r.cq, RecvCQ: r.cq, MaxSendWR: 16, MaxRecvWR: 2})
	if err != nil {
		return nil, err
	}
	r.qp = qp
	remote := endpoint.AccessLocalWrite | endpoint.AccessRemoteRead | endpoint.AccessRemoteWrite
	if r.recvMR, err = pd.RegMR(r.recvBuf, endpoint.AccessLocalWrite); err != nil {
		return nil, err
	}
	if r.sendMR, err = pd.RegMR(r.sendBuf, 0); err != nil {
		return nil, err
	}
	if r.rdmaMR, err = pd.RegMR(r.rdmaBuf, remote); err != nil {
		return nil, err
	}
	if !server {
		r.startBuf = make([]byte, size)
		if r.startMR, err = pd.RegMR(r.startBuf, remote); err != nil {
			return nil, err
		}
	}
	o.dbg("allocated & registered buffers...\n")
	if err := endpoint.InitQP(qp); err != nil {
		return nil, err
	}
	return r, r.postRecv()
}

func (r *rpingConn) postRecv() error {
	return r.qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{r.recvMR.SGE(0, rpingInfoLen)}})
}

// send posts rping's 16-byte SEND of the send buffer.
func (r *rpingConn) send() error {
	return r.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{r.sendMR.SGE(0, rpingInfoLen)}})
}

// formatSend puts buf's address, rkey and length in the send buffer.
func (r *rpingConn) formatSend(mr *endpoint.MR, size int) {
	binary.BigEndian.PutUint64(r.sendBuf[0:], mr.Addr())
	binary.BigEndian.PutUint32(r.sendBuf[8:], mr.RKey())
	binary.BigEndian.PutUint32(r.sendBuf[12:], uint32(size))
	r.o.dbg("RDMA addr %x rkey %x len %d\n", mr.Addr(), mr.RKey(), size)
}

// wait returns the next completion of kind op, handling the others as
// rping's CQ thread does: flushed ones are skipped, a failed one ends the
// test, a receive is checked and its buffer reposted.
func (r *rpingConn) wait(ctx context.Context, op endpoint.WCOpcode) error {
	for {
		for len(r.pending) > 0 {
			wc := r.pending[0]
			r.pending = r.pending[1:]
			if wc.Status == endpoint.StatusWRFlushErr {
				continue
			}
			if wc.Status != endpoint.StatusSuccess {
				r.o.err("cq completion failed status %d\n", int(wc.Status))
				return errRpingReported
			}
			switch wc.Op {
			case endpoint.WCSend:
				r.o.dbg("send completion\n")
				continue
			case endpoint.WCRecv:
				r.o.dbg("recv completion\n")
				if wc.ByteLen != rpingInfoLen {
					r.o.err("Received bogus data, size %d\n", wc.ByteLen)
					r.o.err("recv wc error: -1\n")
					return errRpingReported
				}
				if r.server {
					r.remoteAddr = binary.BigEndian.Uint64(r.recvBuf[0:])
					r.remoteRKey = binary.BigEndian.Uint32(r.recvBuf[8:])
					r.remoteLen = binary.BigEndian.Uint32(r.recvBuf[12:])
					r.o.dbg("Received rkey %x addr %x len %d from peer\n", r.remoteRKey, r.remoteAddr, r.remoteLen)
				}
				if err := r.postRecv(); err != nil {
					r.o.err("post recv error: %d\n", -1)
					return errRpingReported
				}
			case endpoint.WCRead:
				r.o.dbg("rdma read completion\n")
			case endpoint.WCWrite:
				r.o.dbg("rdma write completion\n")
			}
			if wc.Op == op {
				return nil
			}
			r.o.err("unexpected %v completion\n", wc.Op)
			return errRpingReported
		}
		if n := r.cq.Poll(r.wcs[:]); n > 0 {
			r.pending = append(r.pending[:0], r.wcs[:n]...)
			continue
		}
		select {
		case <-r.cq.Notify():
		case <-r.disc:
			// Completions flushed by the disconnect may still come;
			// the connection is over either way.
			return errRpingDisconnected
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// rpingServe runs the server side of one connection request.
func rpingServe(ctx context.Context, cfg rpingConfig, dev *endpoint.Device, c *endpoint.CMConn, o *rpingOut) error {
	o.dbg("cma_event type RDMA_CM_EVENT_CONNECT_REQUEST cma_id (child)\n")
	r, err := newRpingConn(dev, cfg.size, true, o)
	if err != nil {
		_ = c.Reject(nil)
		o.err("setup_qp failed: %v\n", err)
		return errRpingReported
	}
	r.verb = cfg.verbose
	defer r.qp.Destroy()
	r.disc = c.Disconnected()
	o.dbg("accepting client connection request\n")
	// rdma_accept without parameters: as many resources as the REQ asks.
	p := endpoint.DefaultCMParam()
	p.ResponderResources, p.InitiatorDepth = 16, 16
	if err := c.Accept(ctx, r.qp, p); err != nil {
		o.err("rdma_accept: %v\nconnect error -1\n", err)
		return errRpingReported
	}
	o.dbg("ESTABLISHED\n")
	err = rpingTestServer(ctx, r)
	if errors.Is(err, errRpingDisconnected) {
		o.err("server DISCONNECT EVENT...\n")
		o.err("wait for RDMA_READ_ADV state %d\n", 10)
		err = nil
	} else if err != nil && !errors.Is(err, context.Canceled) {
		o.err("rping server failed: %d\n", -1)
	}
	_ = c.Disconnect(context.WithoutCancel(ctx))
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// rpingTestServer is rping_test_server: serve pings until the client
// disconnects.
func rpingTestServer(ctx context.Context, r *rpingConn) error {
	for {
		// The client's start buffer.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		r.o.dbg("server received sink adv\n")
		if int(r.remoteLen) > len(r.rdmaBuf) {
			r.o.err("cq completion failed status %d\n", int(endpoint.StatusLocLenErr))
			return errRpingReported
		}
		if err := r.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRRead, SGL: []endpoint.SGE{r.rdmaMR.SGE(0, int(r.remoteLen))},
			RemoteAddr: r.remoteAddr, RKey: r.remoteRKey}); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		r.o.dbg("server posted rdma read req \n")
		if err := r.wait(ctx, endpoint.WCRead); err != nil {
			return err
		}
		r.o.dbg("server received read complete\n")
		if r.verb {
			r.verbose("server ping data: %s\n")
		}
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		r.o.dbg("server posted go ahead\n")
		// The client's sink buffer.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		r.o.dbg("server received sink adv\n")
		n := bytes.IndexByte(r.rdmaBuf, 0) + 1
		if n == 0 {
			n = len(r.rdmaBuf)
		}
		if err := r.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRWrite, SGL: []endpoint.SGE{r.rdmaMR.SGE(0, n)},
			RemoteAddr: r.remoteAddr, RKey: r.remoteRKey}); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		r.o.dbg("rdma write from lkey %x laddr %x len %d\n", r.rdmaMR.LKey(), r.rdmaMR.Addr(), n)
		if err := r.wait(ctx, endpoint.WCWrite); err != nil {
			return err
		}
		r.o.dbg("server rdma write complete \n")
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		r.o.dbg("server posted go ahead\n")
	}
}

// verbose prints the RDMA buffer as the C string it holds, with format
// (rping -v).
func (r *rpingConn) verbose(format string) {
	s := r.rdmaBuf
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	r.o.out(format, s)
}

// rpingClient runs rping_run_client.
func rpingClient(ctx context.Context, cfg rpingConfig, dev *endpoint.Device, cm *endpoint.CM, sid layers.ServiceID, o *rpingOut) error {
	r, err := newRpingConn(dev, cfg.size, false, o)
	if err != nil {
		o.err("setup_qp failed: %v\n", err)
		return errRpingReported
	}
	defer r.qp.Destroy()
	c, err := cm.Connect(ctx, r.qp, cfg.remote, sid, 0, endpoint.DefaultCMParam())
	if err != nil {
		var rej *endpoint.CMRejectError
		switch {
		case errors.As(err, &rej):
			o.err("cma event RDMA_CM_EVENT_REJECTED, error %d\n", int(rej.Reason))
		case errors.Is(err, endpoint.ErrCMTimeout):
			o.err("cma event RDMA_CM_EVENT_UNREACHABLE, error -110\n")
		case ctx.Err() != nil:
			return nil
		default:
			o.err("rdma_connect: %v\n", err)
		}
		o.err("connect error -1\n")
		return errRpingReported
	}
	o.dbg("rdma_connect successful\n")
	r.disc = c.Disconnected()
	err = rpingTestClient(ctx, cfg, r)
	if errors.Is(err, errRpingDisconnected) {
		o.err("client DISCONNECT EVENT...\n")
		err = nil
	} else if err != nil && !errors.Is(err, context.Canceled) {
		o.err("rping client failed: %d\n", -1)
	}
	if derr := c.Disconnect(context.WithoutCancel(ctx)); derr == nil && err == nil {
		o.err("client DISCONNECT EVENT...\n")
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// rpingFill writes ping number ping into buf as rping does: "rdma-ping-N: "
// then characters from start up to 'z', wrapping to 'A', and a NUL.
func rpingFill(buf []byte, ping int, start byte) {
	n := copy(buf, fmt.Sprintf("rdma-ping-%d: ", ping))
	c := start
	for i := n; i < len(buf); i++ {
		buf[i] = c
		c++
		if c > 122 {
			c = 65
		}
	}
	buf[len(buf)-1] = 0
}

// rpingTestClient is rping_test_client.
func rpingTestClient(ctx context.Context, cfg rpingConfig, r *rpingConn) error {
	start := byte(65)
	for ping := 0; cfg.count == 0 || ping < cfg.count; ping++ {
		rpingFill(r.startBuf, ping, start)
		start++
		if start > 122 {
			start = 65
		}
		r.formatSend(r.startMR, cfg.size)
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		// The server read it and says go ahead.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		r.formatSend(r.rdmaMR, cfg.size)
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return errRpingReported
		}
		// The server wrote it back.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		// The peer's WRITE landed from the QP's goroutine: a round trip
		// through it orders that before the read below.
		if _, err := r.qp.Query(); err != nil {
			return err
		}
		if cfg.validate && !bytes.Equal(r.startBuf, r.rdmaBuf) {
			r.o.err("data mismatch!\n")
			return errRpingReported
		}
		if cfg.verbose {
			r.verbose("ping data: %s\n")
		}
	}
	return nil
}
