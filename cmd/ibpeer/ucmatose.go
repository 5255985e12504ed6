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
	"strings"
	"syscall"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// ibpeer ucmatose: librdmacm's ucmatose (rdma-core librdmacm/examples/
// cmatose.c) in either role: RDMA CM connections on QP1, then the server
// SENDs -C messages of -S bytes on each connection, the client answers
// with as many, and the server disconnects.

const ucmatoseUsage = `usage: ibpeer ucmatose [-s server_address] [-b bind_address] [-c connections]
                       [-C message_count] [-S message_size] [-p port_number] [-t tos] [--bind IP]

Plays librdmacm's ucmatose against ucmatose on any RDMA CM device (rdma_rxe, a NIC) or another
ibpeer: without -s it is the server, with -s the client. Each of -c connections is an RC QP
connected by RDMA CM over QP1 (TCP port space); the server SENDs -C messages of -S bytes on
each, the client receives them and sends as many back, then the server disconnects (DREQ).

  -s server_address   the server's address (client mode)
  -b bind_address     the local address: UDP 4791 binds here (--bind is the same flag)
  -c connections      number of connections (default 1)
  -C message_count    messages each way per connection (default 10)
  -S message_size     bytes per message (default 100)
  -p port_number      port (default 7471)
  -t tos              type of service (accepted, not used)
  -m                  migrate to a new event channel (prints ucmatose's line, nothing to move)
  -f address_format   name or ip (accepted; addresses are IP literals)
  -P port_space       tcp (the only one)

Output (stdout), ucmatose's lines ending in "test complete" and "return status 0".
`

// ucmatoseDefaultPort is ucmatose's port.
const ucmatoseDefaultPort = 7471

// ucmatoseConfig is the checked configuration of either role.
type ucmatoseConfig struct {
	server      netip.Addr // client mode when valid
	local       netip.Addr
	port        uint16
	connections int
	count       int
	size        int
	migrate     bool
	// loop: the server serves one test after another (ibpeer serve --cm
	// --loop) instead of exiting after the first.
	loop bool
	cm   endpoint.CMConfig

	listening func()
	wire      func(netip.Addr) (endpoint.Wire, error)
}

func ucmatoseFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer ucmatose", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.String("s", "", "server address")
	fs.String("b", "", "bind address")
	fs.String("bind", "", "bind address")
	fs.Int("c", 1, "connections")
	fs.Int("C", 10, "message count")
	fs.Int("S", 100, "message size")
	fs.Int("p", ucmatoseDefaultPort, "port")
	fs.String("t", "", "type of service")
	fs.Bool("m", false, "migrate")
	fs.String("f", "", "address format")
	fs.String("P", "tcp", "port space")
	return fs
}

func ucmatoseParse(args []string) (ucmatoseConfig, error) {
	fs := ucmatoseFlags()
	if err := fs.Parse(ppSplitShort(fs, args)); err != nil {
		return ucmatoseConfig{}, err
	}
	if fs.NArg() > 0 {
		return ucmatoseConfig{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	cfg := ucmatoseConfig{connections: get("c").(int), count: get("C").(int), size: get("S").(int), migrate: get("m").(bool)}
	ip := func(flag, s string) (netip.Addr, error) {
		if s == "" {
			return netip.Addr{}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return a, fmt.Errorf("-%s %q: not an IP address", flag, s)
		}
		return a.Unmap(), nil
	}
	var err error
	if cfg.server, err = ip("s", get("s").(string)); err != nil {
		return cfg, err
	}
	b := get("bind").(string)
	if b == "" {
		b = get("b").(string)
	}
	if cfg.local, err = ip("b", b); err != nil {
		return cfg, err
	}
	if !cfg.local.IsValid() || cfg.local.IsUnspecified() {
		return cfg, errors.New("give -b or --bind IP: the local address UDP 4791 binds to")
	}
	if p := get("p").(int); p < 0 || p > 65535 {
		return cfg, fmt.Errorf("-p %d: want a port, 0-65535", p)
	} else {
		cfg.port = uint16(p)
	}
	if ps := strings.ToLower(get("P").(string)); !strings.HasPrefix(ps, "tcp") {
		return cfg, fmt.Errorf("-P %s: only the tcp port space", ps)
	}
	if f := strings.ToLower(get("f").(string)); strings.HasPrefix(f, "gid") {
		return cfg, errors.New("-f gid: AF_IB addresses are not supported")
	}
	switch {
	case cfg.connections < 1 || cfg.connections > 1024:
		return cfg, fmt.Errorf("-c %d: want 1-1024 connections", cfg.connections)
	case cfg.count < 0 || cfg.count > 1<<16:
		return cfg, fmt.Errorf("-C %d: want 0-65536 messages", cfg.count)
	case cfg.size < 0 || cfg.size > 1<<24:
		return cfg, fmt.Errorf("-S %d: want 0-16777216 bytes", cfg.size)
	}
	if cfg.size == 0 {
		cfg.count = 0 // as ucmatose's create_message
	}
	return cfg, nil
}

func runUcmatose(args []string, stdout, stderr io.Writer) int {
	cfg, err := ucmatoseParse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, ucmatoseUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer ucmatose: %v\nRun 'ibpeer ucmatose -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ucmatose(ctx, cfg, stdout, stderr)
}

// ucmatose runs the test and returns the exit status (ucmatose's return
// status: 0, or 1 for a failure).
func ucmatose(ctx context.Context, cfg ucmatoseConfig, stdout, stderr io.Writer) int {
	dev, cm, err := device.OpenCM(cfg.local, cfg.wire, cfg.cm, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer ucmatose: %v\n", err)
		return exitError
	}
	defer dev.Close()
	defer cm.Close()
	var ret int
	if cfg.server.IsValid() {
		ret = ucmClient(ctx, cfg, dev.Device, cm, stdout)
	} else {
		ret = ucmServer(ctx, cfg, dev.Device, cm, stdout)
	}
	if ret != 0 {
		return exitError
	}
	return exitOK
}

// ucmNode is one connection: cmatest_node.
type ucmNode struct {
	qp       *endpoint.QP
	scq, rcq *endpoint.CQ
	mr       *endpoint.MR
	conn     *endpoint.CMConn
}

func newUcmNode(dev *endpoint.Device, cfg ucmatoseConfig) (*ucmNode, error) {
	pd := dev.AllocPD()
	cqe := max(cfg.count, 1)
	n := &ucmNode{scq: dev.CreateCQ(cqe), rcq: dev.CreateCQ(cqe)}
	var err error
	if n.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: n.scq, RecvCQ: n.rcq, MaxSendWR: cqe, MaxRecvWR: cqe}); err != nil {
		return nil, err
	}
	if cfg.count > 0 {
		if n.mr, err = pd.RegMR(make([]byte, cfg.size), endpoint.AccessLocalWrite); err != nil {
			return nil, err
		}
	}
	if err := endpoint.InitQP(n.qp); err != nil {
		return nil, err
	}
	for range cfg.count {
		if err := n.qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{n.mr.SGE(0, cfg.size)}}); err != nil {
			return nil, fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return n, nil
}

func (n *ucmNode) postSends(cfg ucmatoseConfig) error {
	for range cfg.count {
		if err := n.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{n.mr.SGE(0, cfg.size)}}); err != nil {
			return err
		}
	}
	return nil
}

// poll waits for count completions on cq (ucmatose's poll_cqs, which does
// not look at their status).
func ucmPoll(ctx context.Context, cq *endpoint.CQ, count int, disc <-chan struct{}) error {
	var wcs [8]endpoint.WC
	for done := 0; done < count; {
		if n := cq.Poll(wcs[:]); n > 0 {
			done += n
			continue
		}
		select {
		case <-cq.Notify():
		case <-disc:
			if cq.Len() == 0 {
				return errors.New("disconnected")
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (n *ucmNode) destroy() {
	if n.qp != nil {
		n.qp.Destroy()
	}
}

func ucmServer(ctx context.Context, cfg ucmatoseConfig, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	l, err := cm.Listen(layers.IPCMServiceID(layers.PortSpaceTCP, cfg.port))
	if err != nil {
		fmt.Fprintf(out, "cmatose: bind address failed: %v\n", err)
		return 1
	}
	defer l.Close()
	if cfg.listening != nil {
		cfg.listening()
	}
	for {
		ret := ucmServeOnce(ctx, cfg, dev, l, out)
		if !cfg.loop || ctx.Err() != nil {
			return ret
		}
	}
}

// ucmServeOnce is ucmatose's run_server after the listen.
func ucmServeOnce(ctx context.Context, cfg ucmatoseConfig, dev *endpoint.Device, l *endpoint.CMListener, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting server")
	var nodes []*ucmNode
	defer func() {
		for _, n := range nodes {
			n.destroy()
		}
	}()
	ret := func() int {
		for len(nodes) < cfg.connections {
			c, err := l.Accept(ctx)
			if err != nil {
				return 1
			}
			n, err := newUcmNode(dev, cfg)
			if err != nil {
				fmt.Fprintln(out, "cmatose: failing connection request")
				_ = c.Reject(nil)
				continue
			}
			nodes = append(nodes, n)
			// rdma_accept without parameters: what the REQ asks for.
			p := endpoint.DefaultCMParam()
			p.ResponderResources, p.InitiatorDepth = 16, 16
			if err := c.Accept(ctx, n.qp, p); err != nil {
				var rej *endpoint.CMRejectError
				if errors.As(err, &rej) {
					fmt.Fprintf(out, "cmatose: event: RDMA_CM_EVENT_REJECTED, error: %d\n", int(rej.Reason))
				} else {
					fmt.Fprintf(out, "cmatose: event: RDMA_CM_EVENT_CONNECT_ERROR, error: %d\n", -110)
				}
				return 1
			}
			n.conn = c
		}
		return ucmServerTransfer(ctx, cfg, nodes, out)
	}()
	fmt.Fprintln(out, "test complete")
	fmt.Fprintf(out, "return status %d\n", ret)
	return ret
}

// ucmServerTransfer is what ucmatose's server does once its connections
// are established: the SENDs each way, then the DREQs.
func ucmServerTransfer(ctx context.Context, cfg ucmatoseConfig, nodes []*ucmNode, out io.Writer) int {
	if cfg.count > 0 {
		fmt.Fprintln(out, "initiating data transfers")
		for _, n := range nodes {
			if err := n.postSends(cfg); err != nil {
				fmt.Fprintf(out, "failed to post sends: %v\n", err)
				return 1
			}
		}
		fmt.Fprintln(out, "completing sends")
		for _, n := range nodes {
			if err := ucmPoll(ctx, n.scq, cfg.count, n.conn.Disconnected()); err != nil {
				return 1
			}
		}
		fmt.Fprintln(out, "receiving data transfers")
		for _, n := range nodes {
			if err := ucmPoll(ctx, n.rcq, cfg.count, n.conn.Disconnected()); err != nil {
				return 1
			}
		}
		fmt.Fprintln(out, "data transfers complete")
	}
	if cfg.migrate {
		fmt.Fprintln(out, "migrating to new event channel")
	}
	fmt.Fprintln(out, "cmatose: disconnecting")
	for _, n := range nodes {
		_ = n.conn.Disconnect(ctx)
	}
	fmt.Fprintln(out, "disconnected")
	return 0
}

// ucmClient is ucmatose's run_client.
func ucmClient(ctx context.Context, cfg ucmatoseConfig, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting client")
	fmt.Fprintln(out, "cmatose: connecting")
	var nodes []*ucmNode
	defer func() {
		for _, n := range nodes {
			n.destroy()
		}
	}()
	ret := func() int {
		sid := layers.IPCMServiceID(layers.PortSpaceTCP, cfg.port)
		for range cfg.connections {
			n, err := newUcmNode(dev, cfg)
			if err != nil {
				fmt.Fprintf(out, "cmatose: failed to create messages: %v\n", err)
				return 1
			}
			nodes = append(nodes, n)
			// ucmatose's conn_param: 1 and 1, retry 5, RNR retry 0.
			p := endpoint.CMParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5, MTU: layers.MTU1024}
			c, err := cm.Connect(ctx, n.qp, cfg.server, sid, 0, p)
			if err != nil {
				var rej *endpoint.CMRejectError
				switch {
				case errors.As(err, &rej):
					fmt.Fprintf(out, "cmatose: event: RDMA_CM_EVENT_REJECTED, error: %d\n", int(rej.Reason))
				case errors.Is(err, endpoint.ErrCMTimeout):
					fmt.Fprintf(out, "cmatose: event: RDMA_CM_EVENT_UNREACHABLE, error: %d\n", -110)
				default:
					fmt.Fprintf(out, "cmatose: failure connecting: %v\n", err)
				}
				return 1
			}
			n.conn = c
		}
		if cfg.count > 0 {
			fmt.Fprintln(out, "receiving data transfers")
			for _, n := range nodes {
				if err := ucmPoll(ctx, n.rcq, cfg.count, n.conn.Disconnected()); err != nil {
					return 1
				}
			}
			fmt.Fprintln(out, "sending replies")
			for _, n := range nodes {
				if err := n.postSends(cfg); err != nil {
					fmt.Fprintf(out, "failed to post sends: %v\n", err)
					return 1
				}
			}
			fmt.Fprintln(out, "data transfers complete")
		}
		if cfg.migrate {
			fmt.Fprintln(out, "migrating to new event channel")
		}
		// disconnect_events: the server disconnects; answer each DREQ.
		for _, n := range nodes {
			select {
			case <-n.conn.Disconnected():
			case <-ctx.Done():
				return 1
			}
		}
		return 0
	}()
	fmt.Fprintln(out, "test complete")
	fmt.Fprintf(out, "return status %d\n", ret)
	return ret
}
