// Package ucmatose is librdmacm's ucmatose (rdma-core
// librdmacm/examples/cmatose.c) in either role, for ibpeer ucmatose and
// ibpeer serve --cm: RDMA CM connections on QP1, then the server SENDs
// Count messages of Size bytes on each connection, the client answers
// with as many, and the server disconnects.
//
// Run is ucmatose: as the client (Config.Server set) it connects
// Connections RC QPs by RDMA CM, receives the server's messages and sends
// as many back, then answers the server's DREQs; as the server it accepts
// the connections one after another, as ucmatose does, and runs the
// transfer once all are established. Both print ucmatose's lines. Serve is
// ibpeer serve --cm, the same server built to stay up: it answers each
// connection request on a goroutine of its own, so that one a client never
// completes holds no one else up, bounds the requests in progress and the
// connections held (ServeConfig.MaxConns), and logs what it refuses at
// most once a second per kind.
package ucmatose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// DefaultPort is ucmatose's port.
const DefaultPort = 7471

// Config is the checked configuration of either role (ucmatose's limits
// are the command line's to enforce).
type Config struct {
	UDPOffload  device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Server      netip.Addr        // the server to connect to: client mode when valid
	Local       netip.Addr        // UDP 4791 binds here
	Port        uint16
	Connections int
	Count       int // messages each way per connection; 0 when Size is 0
	Size        int
	Migrate     bool // -m: print ucmatose's line (nothing to move)
	// Loop: the server serves one test after another (ibpeer serve --cm
	// --loop) instead of exiting after the first.
	Loop bool
	CM   endpoint.CMConfig
	// Stderr gets the drop reports and Serve's log of refused requests.
	Stderr io.Writer

	// Listening, when set, is called once the server listens (tests).
	Listening func()
	// Wire, when set, opens the wire instead of a UDP socket (tests).
	Wire func(netip.Addr) (endpoint.Wire, error)
}

// ErrFailed is ucmatose's return status 1: the test failed, as the lines
// written to stdout say.
var ErrFailed = errors.New("return status 1")

// Run runs the test: ucmatose's lines go to stdout. It returns ErrFailed
// when ucmatose would return status 1, or an error that kept the test from
// starting.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	dev, cm, err := device.OpenCM(cfg.Local, cfg.Wire, cfg.UDPOffload, cfg.CM, stderrOf(cfg))
	if err != nil {
		return err
	}
	defer dev.Close()
	defer cm.Close()
	var ret int
	if cfg.Server.IsValid() {
		ret = client(ctx, cfg, dev.Device, cm, stdout)
	} else {
		ret = server(ctx, cfg, dev.Device, cm, stdout)
	}
	if ret != 0 {
		return ErrFailed
	}
	return nil
}

// stderrOf is cfg's Stderr, or io.Discard.
func stderrOf(cfg Config) io.Writer {
	if cfg.Stderr == nil {
		return io.Discard
	}
	return cfg.Stderr
}

// node is one connection: cmatest_node.
type node struct {
	qp       *endpoint.QP
	scq, rcq *endpoint.CQ
	mr       *endpoint.MR
	conn     *endpoint.CMConn
}

func newNode(dev *endpoint.Device, cfg Config) (*node, error) {
	pd := dev.AllocPD()
	cqe := max(cfg.Count, 1)
	n := &node{scq: dev.CreateCQ(cqe), rcq: dev.CreateCQ(cqe)}
	var err error
	if n.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: n.scq, RecvCQ: n.rcq, MaxSendWR: cqe, MaxRecvWR: cqe}); err != nil {
		return nil, err
	}
	if cfg.Count > 0 {
		if n.mr, err = pd.RegMR(make([]byte, cfg.Size), endpoint.AccessLocalWrite); err != nil {
			return nil, err
		}
	}
	if err := endpoint.InitQP(n.qp); err != nil {
		return nil, err
	}
	for range cfg.Count {
		if err := n.qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{n.mr.SGE(0, cfg.Size)}}); err != nil {
			return nil, fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return n, nil
}

func (n *node) postSends(cfg Config) error {
	for range cfg.Count {
		if err := n.qp.PostSend(&endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{n.mr.SGE(0, cfg.Size)}}); err != nil {
			return err
		}
	}
	return nil
}

// poll waits for count completions on cq (ucmatose's poll_cqs, which does
// not look at their status).
func poll(ctx context.Context, cq *endpoint.CQ, count int, disc <-chan struct{}) error {
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

func (n *node) destroy() {
	if n.qp != nil {
		n.qp.Destroy()
	}
}

func server(ctx context.Context, cfg Config, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	l, err := cm.Listen(layers.IPCMServiceID(layers.PortSpaceTCP, cfg.Port))
	if err != nil {
		fmt.Fprintf(out, "cmatose: bind address failed: %v\n", err)
		return 1
	}
	defer l.Close()
	if cfg.Listening != nil {
		cfg.Listening()
	}
	for {
		ret := serveOnce(ctx, cfg, dev, l, out)
		if !cfg.Loop || ctx.Err() != nil {
			return ret
		}
	}
}

// serveOnce is ucmatose's run_server after the listen.
func serveOnce(ctx context.Context, cfg Config, dev *endpoint.Device, l *endpoint.CMListener, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting server")
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.destroy()
		}
	}()
	ret := func() int {
		for len(nodes) < cfg.Connections {
			c, err := l.Accept(ctx)
			if err != nil {
				return 1
			}
			n, err := newNode(dev, cfg)
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
		return serverTransfer(ctx, cfg, nodes, out)
	}()
	fmt.Fprintln(out, "test complete")
	fmt.Fprintf(out, "return status %d\n", ret)
	return ret
}

// serverTransfer is what ucmatose's server does once its connections
// are established: the SENDs each way, then the DREQs.
func serverTransfer(ctx context.Context, cfg Config, nodes []*node, out io.Writer) int {
	if cfg.Count > 0 {
		fmt.Fprintln(out, "initiating data transfers")
		for _, n := range nodes {
			if err := n.postSends(cfg); err != nil {
				fmt.Fprintf(out, "failed to post sends: %v\n", err)
				return 1
			}
		}
		fmt.Fprintln(out, "completing sends")
		for _, n := range nodes {
			if err := poll(ctx, n.scq, cfg.Count, n.conn.Disconnected()); err != nil {
				return 1
			}
		}
		fmt.Fprintln(out, "receiving data transfers")
		for _, n := range nodes {
			if err := poll(ctx, n.rcq, cfg.Count, n.conn.Disconnected()); err != nil {
				return 1
			}
		}
		fmt.Fprintln(out, "data transfers complete")
	}
	if cfg.Migrate {
		fmt.Fprintln(out, "migrating to new event channel")
	}
	fmt.Fprintln(out, "cmatose: disconnecting")
	for _, n := range nodes {
		_ = n.conn.Disconnect(ctx)
	}
	fmt.Fprintln(out, "disconnected")
	return 0
}

// client is ucmatose's run_client.
func client(ctx context.Context, cfg Config, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting client")
	fmt.Fprintln(out, "cmatose: connecting")
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			n.destroy()
		}
	}()
	ret := func() int {
		sid := layers.IPCMServiceID(layers.PortSpaceTCP, cfg.Port)
		for range cfg.Connections {
			n, err := newNode(dev, cfg)
			if err != nil {
				fmt.Fprintf(out, "cmatose: failed to create messages: %v\n", err)
				return 1
			}
			nodes = append(nodes, n)
			// ucmatose's conn_param: 1 and 1, retry 5, RNR retry 0.
			p := endpoint.CMParam{ResponderResources: 1, InitiatorDepth: 1, RetryCount: 5, MTU: layers.MTU1024}
			c, err := cm.Connect(ctx, n.qp, cfg.Server, sid, 0, p)
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
		if cfg.Count > 0 {
			fmt.Fprintln(out, "receiving data transfers")
			for _, n := range nodes {
				if err := poll(ctx, n.rcq, cfg.Count, n.conn.Disconnected()); err != nil {
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
		if cfg.Migrate {
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
