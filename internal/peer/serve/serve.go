// Package serve is ibpeer serve: RDMA served on an address, a region and
// an RC QP per set-up connection.
//
// Run listens on UDP 4791 (RoCEv2) and on a TCP port for the set-up
// exchange, which is ibv_rc_pingpong's with one message more: each TCP
// connection gets its own QP, and, once the client has sent its address,
// its own memory region, whose rkey, VA, size, path MTU and receive
// buffers the region message (setup.ServeRegion) tells the client after the pingpong
// messages. SENDs land in the region's receive buffers, each posted again
// as soon as it completed. The QP and the region live as long as the TCP
// connection; MaxConns bounds the connections held, SetupTimeout the
// set-up of each, and refusals are logged at most once a second. The
// clients' side of the region message is package exchange's.
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// Config is ibpeer serve's checked configuration.
type Config struct {
	UDPOffload device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Addr       netip.Addr        // UDP 4791 and the TCP set-up port bind here; its GID is the server's
	Port       int               // TCP port of the set-up exchange (0: the kernel's choice)
	MRSize     int               // bytes of each connection's region
	MTU        int               // path MTU of the QPs, in bytes
	Recv       int               // receive buffers per QP, each MRSize/Recv bytes
	Pcap       string            // record the packets to this pcap file
	Image      []byte            // the first bytes of every region (--image)

	// Diag receives the drop reports (stderr; tests leave it nil and get
	// them with the rest of the output).
	Diag io.Writer
	// Ready, when set, learns the TCP listener's address once the server
	// accepts connections (tests use port 0).
	Ready func(tcp netip.AddrPort)
	// Region, when set, may change what a connection is told about its
	// region (tests use it to hand out a wrong rkey).
	Region func(*setup.ServeRegion)
	// Held, when set, learns the number of regions the server holds each
	// time it changes (tests).
	Held func(n int)
	// SetupTimeout bounds each set-up exchange (default
	// exchange.SetupTimeout).
	SetupTimeout time.Duration
	// MaxConns bounds the connections held at once (default
	// DefaultMaxConns).
	MaxConns int
}

// server is a running ibpeer serve.
type server struct {
	cfg  Config
	mtu  layers.PathMTU // cfg.MTU as a path MTU code
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
	if s.cfg.Held != nil {
		s.cfg.Held(n)
	}
}

func (s *server) printf(format string, a ...any) {
	s.outM.Lock()
	defer s.outM.Unlock()
	fmt.Fprintf(s.out, format, a...)
}

// Run runs the server until ctx ends; its lines (and, without
// Config.Diag, the drop reports) go to out.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	// The MTU is checked before anything is opened: every QP uses it.
	mtu, err := layers.ParsePathMTU(cfg.MTU)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	wire, err := cfg.UDPOffload.ListenUDP(netip.AddrPortFrom(cfg.Addr, layers.RoCEv2Port))
	if err != nil {
		return err
	}
	var w endpoint.Wire = wire
	var pw *device.PcapWire
	if cfg.Pcap != "" {
		if pw, err = device.NewPcapWire(wire, cfg.Pcap); err != nil {
			wire.Close()
			return fmt.Errorf("--pcap: %w", err)
		}
		w = pw
	}
	diagOut := cfg.Diag
	if diagOut == nil {
		diagOut = out
	}
	diag := device.Open(w, diagOut)
	defer diag.Close()
	dev := diag.Device
	ln, err := net.Listen("tcp", netip.AddrPortFrom(cfg.Addr, uint16(cfg.Port)).String())
	if err != nil {
		return fmt.Errorf("set-up listener: %w", err)
	}
	if cfg.SetupTimeout <= 0 {
		cfg.SetupTimeout = exchange.SetupTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	s := &server{cfg: cfg, mtu: mtu, dev: dev, pd: dev.AllocPD(), out: out, conns: map[net.Conn]struct{}{}}
	s.log = &device.RateLog{Out: func(line string) { s.printf("%s\n", line) }}
	tcp := ln.Addr().(*net.TCPAddr).AddrPort()
	s.printf("ibpeer serve: GID %v, RoCEv2 on %v, set-up on TCP %v\n", dev.GID(), dev.Addr(), tcp)
	s.printf("ibpeer serve: each connection gets an RC QP (MTU %d) and a %d-byte region with %d receive buffers of %d bytes\n",
		cfg.MTU, cfg.MRSize, cfg.Recv, cfg.MRSize/cfg.Recv)
	if len(cfg.Image) > 0 {
		s.printf("ibpeer serve: every region starts with the %d bytes of --image\n", len(cfg.Image))
	}
	if cfg.Ready != nil {
		cfg.Ready(netip.AddrPortFrom(tcp.Addr().Unmap(), tcp.Port()))
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
		if len(s.conns) >= cfg.MaxConns {
			s.mu.Unlock()
			s.log.Printf("set-up connections refused", "refused a set-up connection from %v: %d connections held (--max-conns %d)",
				c.RemoteAddr(), cfg.MaxConns, cfg.MaxConns)
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
		s.printf("%s: %d packets sent and received\n", cfg.Pcap, pw.Packets())
	}
	return acceptErr
}

// DefaultMaxConns is --max-conns's default.
const DefaultMaxConns = 64

// handle runs one connection: QP, region, exchange, then the receive
// buffers until the client closes the connection.
func (s *server) handle(ctx context.Context, id int, c net.Conn) {
	cfg := s.cfg
	fail := func(err error) {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			s.printf("conn %d from %v: set-up not finished within %v, dropped\n", id, c.RemoteAddr(), cfg.SetupTimeout)
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
	cq := s.dev.CreateCQ(cfg.Recv + 16)
	qp, err := s.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxRecvWR: cfg.Recv, MaxSendWR: 16})
	if err != nil {
		fail(err)
		return
	}
	defer qp.Destroy()
	slot := cfg.MRSize / cfg.Recv
	psn := endpoint.RandomPSN()
	local := setup.PingpongDest{QPN: qp.QPN(), PSN: psn, GID: s.dev.GID()}
	c.SetDeadline(time.Now().Add(cfg.SetupTimeout))
	remote, err := setup.PingpongServer(c, local, func(r setup.PingpongDest) error {
		mem := make([]byte, cfg.MRSize)
		copy(mem, cfg.Image)
		var err error
		mr, err = s.pd.RegMR(mem, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite|endpoint.AccessRemoteRead|endpoint.AccessRemoteAtomic)
		if err != nil {
			return err
		}
		s.regionHeld(1)
		peer := netip.AddrFrom16(r.GID).Unmap()
		if err := qp.Connect(endpoint.ConnectAttr{Remote: peer, RemoteQPN: r.QPN, RemotePSN: r.PSN, LocalPSN: psn, MTU: s.mtu}); err != nil {
			return err
		}
		for k := range cfg.Recv {
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
	reg := setup.ServeRegion{RKey: mr.RKey(), VA: mr.Addr(), Size: uint64(cfg.MRSize), MTU: cfg.MTU, RecvLen: uint32(slot), RecvCount: cfg.Recv}
	if cfg.Region != nil {
		cfg.Region(&reg)
	}
	s.printf("conn %d from %v: client QPN %#06x PSN %#06x GID %v; served by QPN %#06x PSN %#06x rkey %#08x VA %#x size %d\n",
		id, c.RemoteAddr(), remote.QPN, uint32(remote.PSN), netip.AddrFrom16(remote.GID).Unmap(), qp.QPN(), uint32(psn), reg.RKey, reg.VA, reg.Size)
	if _, err := c.Write(reg.Marshal()); err != nil {
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
