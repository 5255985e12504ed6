// Package rping is librdmacm's rping (rdma-core librdmacm/examples) in
// either role over the endpoint, connected by RDMA CM on QP1
// (endpoint.CM), for ibpeer rping.
//
// The exchange is rping's: the client SENDs the address, rkey and length
// of its source buffer (16 bytes, big endian); the server RDMA READs it,
// SENDs "go ahead"; the client SENDs its sink buffer; the server RDMA
// WRITEs the ping back and SENDs "go ahead" again; Count times. Run opens
// the device (drop reports on Config.Stderr), the CM and, as the server,
// the listener; each connection gets a conn (rping's control block: one
// QP, its CQ and the four buffers) and runs the server's or the client's
// loop. Output is rping's, line for line, so scripts written for rping
// read ibpeer's.
package rping

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// DefaultPort is rping's port.
const DefaultPort = 7174

// MinSize is rping's RPING_MIN_BUFSIZE: sizeof("2147483647") +
// sizeof("rdma-ping-%d: ").
const MinSize = 11 + 15

// Config is one rping run, checked (rping's own limits are the command
// line's to enforce: MinSize, a count from 0).
type Config struct {
	UDPOffload device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Server     bool              // else the client
	Persistent bool              // -P: the server serves one client after another
	Local      netip.Addr
	Remote     netip.Addr // client: the server
	Port       uint16
	Count      int // pings; 0: forever
	Size       int
	Verbose    bool // -v: ping data to Run's writer
	Validate   bool // -V
	Debug      bool // -d
	CM         endpoint.CMConfig
	// Stderr gets rping's error messages and the drop reports.
	Stderr io.Writer

	// Listening, when set, is called once the server listens (tests).
	Listening func()
	// Wire, when set, opens the wire instead of a UDP socket (tests).
	Wire func(netip.Addr) (endpoint.Wire, error)
}

// ErrReported is a failure whose message (rping's) is on Config.Stderr.
var ErrReported = errors.New("reported")

// errDisconnected: the peer disconnected.
var errDisconnected = errors.New("disconnected")

// output serializes output lines of concurrent connections (-P).
type output struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	debug          bool
}

func (o *output) out(format string, a ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.stdout, format, a...)
	o.mu.Unlock()
}

func (o *output) err(format string, a ...any) {
	o.mu.Lock()
	fmt.Fprintf(o.stderr, format, a...)
	o.mu.Unlock()
}

func (o *output) dbg(format string, a ...any) {
	if o.debug {
		o.out(format, a...)
	}
}

// Run runs one client or server; what rping prints on stdout goes to
// stdout. A failure rping reports itself (on cfg.Stderr, in its words)
// returns ErrReported.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	var wire endpoint.Wire
	var err error
	if cfg.Wire != nil {
		wire, err = cfg.Wire(cfg.Local)
	} else {
		wire, err = cfg.UDPOffload.ListenUDP(netip.AddrPortFrom(cfg.Local, layers.RoCEv2Port))
	}
	if err != nil {
		return fmt.Errorf("RoCEv2 socket on %v: %w", cfg.Local, err)
	}
	dev := device.Open(wire, stderr)
	defer dev.Close()
	cm, err := endpoint.NewCM(dev.Device, cfg.CM)
	if err != nil {
		return err
	}
	defer cm.Close()
	o := &output{stdout: stdout, stderr: stderr, debug: cfg.Debug}
	sid := layers.IPCMServiceID(layers.PortSpaceTCP, cfg.Port)
	if !cfg.Server {
		return client(ctx, cfg, dev.Device, cm, sid, o)
	}
	l, err := cm.Listen(sid)
	if err != nil {
		fmt.Fprintln(stderr, "rdma_bind_addr: Address already in use")
		return ErrReported
	}
	defer l.Close()
	o.dbg("rdma_bind_addr successful\nrdma_listen\n")
	if cfg.Listening != nil {
		cfg.Listening()
	}
	if !cfg.Persistent {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		return serve(ctx, cfg, dev.Device, c, o)
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
			_ = serve(ctx, cfg, dev.Device, c, o)
		}()
	}
}

// conn is one side's verbs resources: rping's control block.
type conn struct {
	qp                *endpoint.QP
	cq                *endpoint.CQ
	recvMR, sendMR    *endpoint.MR
	rdmaMR, startMR   *endpoint.MR
	recvBuf, sendBuf  []byte
	rdmaBuf, startBuf []byte
	wcs               [8]endpoint.WC
	pending           []endpoint.WC
	disc              <-chan struct{}
	o                 *output
	remoteAddr        uint64
	remoteRKey        uint32
	remoteLen         uint32
	server            bool
	verb              bool
}

// rpingInfoLen is the size of struct rping_rdma_info: buf (8), rkey (4),
// size (4), big endian.
const rpingInfoLen = 16

func newConn(dev *endpoint.Device, size int, server bool, o *output) (*conn, error) {
	pd := dev.AllocPD()
	r := &conn{cq: dev.CreateCQ(32), recvBuf: make([]byte, rpingInfoLen), sendBuf: make([]byte, rpingInfoLen),
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

func (r *conn) postRecv() error {
	return r.qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{r.recvMR.SGE(0, rpingInfoLen)}})
}

// send posts rping's 16-byte SEND of the send buffer.
func (r *conn) send() error {
	return r.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{r.sendMR.SGE(0, rpingInfoLen)}})
}

// formatSend puts buf's address, rkey and length in the send buffer.
func (r *conn) formatSend(mr *endpoint.MR, size int) {
	binary.BigEndian.PutUint64(r.sendBuf[0:], mr.Addr())
	binary.BigEndian.PutUint32(r.sendBuf[8:], mr.RKey())
	binary.BigEndian.PutUint32(r.sendBuf[12:], uint32(size))
	r.o.dbg("RDMA addr %x rkey %x len %d\n", mr.Addr(), mr.RKey(), size)
}

// wait returns the next completion of kind op, handling the others as
// rping's CQ thread does: flushed ones are skipped, a failed one ends the
// test, a receive is checked and its buffer reposted.
func (r *conn) wait(ctx context.Context, op endpoint.WCOpcode) error {
	for {
		for len(r.pending) > 0 {
			wc := r.pending[0]
			r.pending = r.pending[1:]
			if wc.Status == endpoint.StatusWRFlushErr {
				continue
			}
			if wc.Status != endpoint.StatusSuccess {
				r.o.err("cq completion failed status %d\n", int(wc.Status))
				return ErrReported
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
					return ErrReported
				}
				if r.server {
					r.remoteAddr = binary.BigEndian.Uint64(r.recvBuf[0:])
					r.remoteRKey = binary.BigEndian.Uint32(r.recvBuf[8:])
					r.remoteLen = binary.BigEndian.Uint32(r.recvBuf[12:])
					r.o.dbg("Received rkey %x addr %x len %d from peer\n", r.remoteRKey, r.remoteAddr, r.remoteLen)
				}
				if err := r.postRecv(); err != nil {
					r.o.err("post recv error: %d\n", -1)
					return ErrReported
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
			return ErrReported
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
			return errDisconnected
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// serve runs the server side of one connection request.
func serve(ctx context.Context, cfg Config, dev *endpoint.Device, c *endpoint.CMConn, o *output) error {
	o.dbg("cma_event type RDMA_CM_EVENT_CONNECT_REQUEST cma_id (child)\n")
	r, err := newConn(dev, cfg.Size, true, o)
	if err != nil {
		_ = c.Reject(nil)
		o.err("setup_qp failed: %v\n", err)
		return ErrReported
	}
	r.verb = cfg.Verbose
	defer r.qp.Destroy()
	r.disc = c.Disconnected()
	o.dbg("accepting client connection request\n")
	// rdma_accept without parameters: as many resources as the REQ asks.
	p := endpoint.DefaultCMParam()
	p.ResponderResources, p.InitiatorDepth = 16, 16
	if err := c.Accept(ctx, r.qp, p); err != nil {
		o.err("rdma_accept: %v\nconnect error -1\n", err)
		return ErrReported
	}
	o.dbg("ESTABLISHED\n")
	err = testServer(ctx, r)
	if errors.Is(err, errDisconnected) {
		o.err("server DISCONNECT EVENT...\n")
		o.err("wait for RDMA_READ_ADV state %d\n", 10)
		err = nil
	} else if err != nil && !errors.Is(err, context.Canceled) {
		o.err("rping server failed: %d\n", -1)
	}
	_ = disconnect(ctx, c)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// disconnectWait bounds the wait for the peer's DREP: rping's
// rdma_disconnect does not wait for it at all (the kernel's CM goes on
// resending the DREQ after the program exits), while this side's CM
// resends it 15 times 4.3 s apart before giving up, 64 s in which a peer
// that has exited (its DREP lost) answers nothing. Long enough for one
// DREQ sent again.
const disconnectWait = 5 * time.Second

// disconnect sends the DREQ and waits at most disconnectWait for its
// answer; the CM's Close ends the retries.
func disconnect(ctx context.Context, c *endpoint.CMConn) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), disconnectWait)
	defer cancel()
	return c.Disconnect(ctx)
}

// testServer is rping_test_server: serve pings until the client
// disconnects.
func testServer(ctx context.Context, r *conn) error {
	for {
		// The client's start buffer.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		r.o.dbg("server received sink adv\n")
		if int(r.remoteLen) > len(r.rdmaBuf) {
			r.o.err("cq completion failed status %d\n", int(endpoint.StatusLocLenErr))
			return ErrReported
		}
		if err := r.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRRead, SGL: []endpoint.SGE{r.rdmaMR.SGE(0, int(r.remoteLen))},
			RemoteAddr: r.remoteAddr, RKey: r.remoteRKey}); err != nil {
			r.o.err("post send error %d\n", -1)
			return ErrReported
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
			return ErrReported
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
			return ErrReported
		}
		r.o.dbg("rdma write from lkey %x laddr %x len %d\n", r.rdmaMR.LKey(), r.rdmaMR.Addr(), n)
		if err := r.wait(ctx, endpoint.WCWrite); err != nil {
			return err
		}
		r.o.dbg("server rdma write complete \n")
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return ErrReported
		}
		r.o.dbg("server posted go ahead\n")
	}
}

// verbose prints the RDMA buffer as the C string it holds, with format
// (rping -v).
func (r *conn) verbose(format string) {
	s := r.rdmaBuf
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	r.o.out(format, s)
}

// client runs rping_run_client.
func client(ctx context.Context, cfg Config, dev *endpoint.Device, cm *endpoint.CM, sid layers.ServiceID, o *output) error {
	r, err := newConn(dev, cfg.Size, false, o)
	if err != nil {
		o.err("setup_qp failed: %v\n", err)
		return ErrReported
	}
	defer r.qp.Destroy()
	c, err := cm.Connect(ctx, r.qp, cfg.Remote, sid, 0, endpoint.DefaultCMParam())
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
		return ErrReported
	}
	o.dbg("rdma_connect successful\n")
	r.disc = c.Disconnected()
	err = testClient(ctx, cfg, r)
	if errors.Is(err, errDisconnected) {
		o.err("client DISCONNECT EVENT...\n")
		err = nil
	} else if err != nil && !errors.Is(err, context.Canceled) {
		o.err("rping client failed: %d\n", -1)
	}
	if derr := disconnect(ctx, c); derr == nil && err == nil {
		o.err("client DISCONNECT EVENT...\n")
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Fill writes ping number ping into buf as rping does: "rdma-ping-N: "
// then characters from start up to 'z', wrapping to 'A', and a NUL.
func Fill(buf []byte, ping int, start byte) {
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

// testClient is rping_test_client.
func testClient(ctx context.Context, cfg Config, r *conn) error {
	start := byte(65)
	for ping := 0; cfg.Count == 0 || ping < cfg.Count; ping++ {
		Fill(r.startBuf, ping, start)
		start++
		if start > 122 {
			start = 65
		}
		r.formatSend(r.startMR, cfg.Size)
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return ErrReported
		}
		// The server read it and says go ahead.
		if err := r.wait(ctx, endpoint.WCRecv); err != nil {
			return err
		}
		r.formatSend(r.rdmaMR, cfg.Size)
		if err := r.send(); err != nil {
			r.o.err("post send error %d\n", -1)
			return ErrReported
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
		if cfg.Validate && !bytes.Equal(r.startBuf, r.rdmaBuf) {
			r.o.err("data mismatch!\n")
			return ErrReported
		}
		if cfg.Verbose {
			r.verbose("ping data: %s\n")
		}
	}
	return nil
}
