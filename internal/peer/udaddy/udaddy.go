// Package udaddy is librdmacm's udaddy (rdma-core
// librdmacm/examples/udaddy.c) in either role, for ibpeer udaddy: UD over
// RDMA CM. The client resolves the server's UD QP with a SIDR_REQ for the
// UDP port space's service ID (the SIDR_REP carries the QPN and Q_Key), SENDs
// Count datagrams of Size bytes with its own QPN as immediate data, and
// waits for as many back; the server receives them, answers each sender at
// the address the GRH of its first datagram names and the QPN its
// immediate data names, and waits for its sends to complete.
//
// udaddy's server makes a QP per connection request; this one serves every
// request from one UD QP, which is what a datagram QP is for: the SIDR_REPs
// name the same QPN and the datagrams are told apart by their sender. What
// goes on the wire otherwise is udaddy's: SEND Only with Immediate, Q_Key
// 0x01234567 (RDMA_UDP_QKEY), one datagram per message.
package udaddy

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

// DefaultPort is udaddy's port.
const DefaultPort = 7174

// maxServerSlots bounds the receive buffers the server keeps posted,
// whatever Connections times Count asks for: each is reposted as soon as
// its datagram is read.
const maxServerSlots = 4096

// Config is the checked configuration of either role.
type Config struct {
	UDPOffload  device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Server      netip.Addr        // the server to resolve: client mode when valid
	Local       netip.Addr        // UDP 4791 binds here
	Port        uint16
	Connections int
	Count       int // datagrams each way per connection; 0 when Size is 0
	Size        int
	// ActiveMTU is the port MTU a datagram must fit (udaddy checks it
	// against Size); zero means the MTU rxe would have on Local's
	// interface.
	ActiveMTU int
	CM        endpoint.CMConfig
	// Stderr gets the drop reports.
	Stderr io.Writer

	// Listening, when set, is called once the server answers SIDR_REQs
	// (tests).
	Listening func()
	// Wire, when set, opens the wire instead of a UDP socket (tests).
	Wire func(netip.Addr) (endpoint.Wire, error)
}

// ErrFailed is udaddy's non-zero return status: the test failed, as the
// lines written to stdout say.
var ErrFailed = errors.New("return status not 0")

// Run runs the test: udaddy's lines go to stdout. It returns ErrFailed
// when udaddy would return a non-zero status, or an error that kept the
// test from starting.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	dev, cm, err := device.OpenCM(cfg.Local, cfg.Wire, cfg.UDPOffload, cfg.CM, stderr)
	if err != nil {
		return err
	}
	defer dev.Close()
	defer cm.Close()
	if cfg.ActiveMTU == 0 {
		cfg.ActiveMTU = device.ActiveMTU(cfg.Local)
	}
	var ret int
	if cfg.Server.IsValid() {
		fmt.Fprintln(stdout, "udaddy: starting client")
		ret = client(ctx, cfg, dev.Device, cm, stdout)
	} else {
		fmt.Fprintln(stdout, "udaddy: starting server")
		ret = server(ctx, cfg, dev.Device, cm, stdout)
	}
	fmt.Fprintln(stdout, "test complete")
	fmt.Fprintf(stdout, "return status %d\n", ret)
	if ret != 0 {
		return ErrFailed
	}
	return nil
}

// Statuses udaddy returns: librdmacm's event status, negative errnos.
const (
	statusInvalid  = -22  // EINVAL: a SIDR_REP that refuses the service, a message over the MTU
	statusTimedOut = -110 // ETIMEDOUT: no SIDR_REP
)

// node is one UD QP with its receive buffers: udaddy's cmatest_node.
type node struct {
	pd       *endpoint.PD
	qp       *endpoint.QP
	scq, rcq *endpoint.CQ
	mr       *endpoint.MR
	slot     int // bytes per receive: the GRH, then the datagram
	sendOff  int // where the datagram sent lies in mr, after the receive slots
}

// newNode makes a UD QP in RTS with the UDP port space's Q_Key, and slots
// receive buffers posted (WR ID = slot index).
func newNode(dev *endpoint.Device, cfg Config, sends, slots int) (*node, error) {
	pd := dev.AllocPD()
	n := &node{pd: pd, scq: dev.CreateCQ(max(sends, 1)), rcq: dev.CreateCQ(max(slots, 1)), slot: layers.GRHLength + cfg.Size}
	n.sendOff = slots * n.slot
	var err error
	n.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.UD, SendCQ: n.scq, RecvCQ: n.rcq,
		MaxSendWR: max(sends, 1), MaxRecvWR: max(slots, 1)})
	if err != nil {
		return nil, err
	}
	if err := n.qp.Connect(endpoint.ConnectAttr{QKey: endpoint.RDMAUDPQKey}); err != nil {
		n.qp.Destroy()
		return nil, err
	}
	if n.mr, err = pd.RegMR(make([]byte, max(n.sendOff+cfg.Size, 1)), endpoint.AccessLocalWrite); err != nil {
		n.qp.Destroy()
		return nil, err
	}
	for i := range slots {
		if err := n.repost(i); err != nil {
			n.qp.Destroy()
			return nil, fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return n, nil
}

func (n *node) repost(slot int) error {
	return n.qp.PostRecv(endpoint.RecvWR{ID: uint64(slot), SGL: []endpoint.SGE{n.mr.SGE(slot*n.slot, n.slot)}})
}

// postSends posts count SENDs with immediate to dest, udaddy's post_sends:
// the immediate data is this QP's number, which the server answers to.
func (n *node) postSends(dest endpoint.UDDest, count, size int, signaled bool) error {
	for range count {
		wr := &endpoint.SendWR{Op: endpoint.WRSendWithImm, Imm: n.qp.QPN(), Dest: dest, Unsignaled: !signaled,
			SGL: []endpoint.SGE{n.mr.SGE(n.sendOff, size)}}
		if err := n.qp.PostSend(wr); err != nil {
			return err
		}
	}
	return nil
}

// poll waits until count completions on cq are counted: udaddy's
// poll_cqs. counts, when set, sees each and says whether it counts (the
// server does not count a datagram that is not udaddy's); without it every
// completion counts, whatever its status, as poll_cqs does.
func poll(ctx context.Context, cq *endpoint.CQ, count int, counts func(endpoint.WC) bool) error {
	var wcs [8]endpoint.WC
	for done := 0; done < count; {
		k, err := cq.Wait(ctx, wcs[:])
		if err != nil {
			return err
		}
		for _, wc := range wcs[:k] {
			if counts == nil || counts(wc) {
				done++
			}
		}
	}
	return nil
}

func (n *node) destroy() {
	if n != nil && n.qp != nil {
		n.qp.Destroy()
	}
}

// checkMTU is udaddy's verify_test_params.
func checkMTU(cfg Config, out io.Writer) bool {
	if cfg.Count > 0 && cfg.Size > cfg.ActiveMTU {
		fmt.Fprintf(out, "udaddy: message_size %d is larger than active mtu %d\n", cfg.Size, cfg.ActiveMTU)
		return false
	}
	return true
}

// client is udaddy's run_client after its first line.
func client(ctx context.Context, cfg Config, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	fmt.Fprintln(out, "udaddy: connecting")
	if !checkMTU(cfg, out) {
		return statusInvalid
	}
	type conn struct {
		*node
		dest endpoint.UDDest
	}
	var conns []conn
	defer func() {
		for _, c := range conns {
			c.destroy()
		}
	}()
	sid := layers.IPCMServiceID(layers.PortSpaceUDP, cfg.Port)
	for range cfg.Connections {
		n, err := newNode(dev, cfg, cfg.Count, cfg.Count)
		if err != nil {
			fmt.Fprintf(out, "udaddy: failed to create messages: %v\n", err)
			return 1
		}
		conns = append(conns, conn{node: n})
		svc, err := cm.ResolveSIDR(ctx, cfg.Server, sid, nil)
		if err != nil {
			var refused *endpoint.SIDRError
			switch {
			case errors.As(err, &refused):
				fmt.Fprintf(out, "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: %d\n", statusInvalid)
				return statusInvalid
			case errors.Is(err, endpoint.ErrCMTimeout):
				fmt.Fprintf(out, "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: %d\n", statusTimedOut)
				return statusTimedOut
			}
			fmt.Fprintf(out, "udaddy: failure connecting: %v\n", err)
			return 1
		}
		conns[len(conns)-1].dest = endpoint.UDDest{Addr: cfg.Server, QPN: svc.QPN, QKey: svc.QKey}
	}
	if cfg.Count == 0 {
		return 0
	}
	fmt.Fprintln(out, "initiating data transfers")
	for _, c := range conns {
		if err := c.postSends(c.dest, cfg.Count, cfg.Size, false); err != nil {
			fmt.Fprintf(out, "failed to post sends: %v\n", err)
			return 1
		}
	}
	fmt.Fprintln(out, "receiving data transfers")
	for _, c := range conns {
		if err := poll(ctx, c.rcq, cfg.Count, nil); err != nil {
			return 1
		}
	}
	fmt.Fprintln(out, "data transfers complete")
	return 0
}

// sender is a client the server heard from: the address of its first
// datagram's GRH and the QPN of its immediate data (create_reply_ah).
type sender struct {
	dest     endpoint.UDDest
	received int
}

// server is udaddy's run_server after its first line: it answers SIDR_REQs
// with its UD QP, receives Count datagrams from each of Connections
// clients, then answers each with as many.
func server(ctx context.Context, cfg Config, dev *endpoint.Device, cm *endpoint.CM, out io.Writer) int {
	if !checkMTU(cfg, out) {
		return statusInvalid
	}
	total := cfg.Connections * cfg.Count
	n, err := newNode(dev, cfg, total, min(total, maxServerSlots))
	if err != nil {
		fmt.Fprintf(out, "udaddy: failed to create messages: %v\n", err)
		return 1
	}
	defer n.destroy()
	sid := layers.IPCMServiceID(layers.PortSpaceUDP, cfg.Port)
	requests := make(chan endpoint.SIDRRequest, cfg.Connections+64)
	if err := cm.ServeSIDR(sid, endpoint.SIDRService{QPN: n.qp.QPN(), QKey: endpoint.RDMAUDPQKey, Requests: requests}); err != nil {
		fmt.Fprintf(out, "udaddy: failure trying to listen: %v\n", err)
		return 1
	}
	if cfg.Listening != nil {
		cfg.Listening()
	}
	// connect_events: one SIDR_REQ per connection (a resent one counts
	// once), each answered by now.
	for clients := map[endpoint.SIDRRequest]bool{}; len(clients) < cfg.Connections; {
		select {
		case r := <-requests:
			clients[r] = true
		case <-ctx.Done():
			return 1
		}
	}
	if cfg.Count == 0 {
		return 0
	}
	fmt.Fprintln(out, "receiving data transfers")
	type key struct {
		addr netip.Addr
		qpn  uint32
	}
	var order []*sender
	senders := map[key]*sender{}
	err = poll(ctx, n.rcq, total, func(wc endpoint.WC) bool {
		slot := int(wc.ID)
		defer func() { _ = n.repost(slot) }()
		src, ok := endpoint.GRHSource(n.mr.Bytes()[slot*n.slot:])
		if wc.Status != endpoint.StatusSuccess || !ok || !wc.WithImm {
			// not a udaddy datagram: nothing to answer, not counted
			return false
		}
		k := key{src, wc.Imm}
		s := senders[k]
		if s == nil {
			s = &sender{dest: endpoint.UDDest{Addr: src, QPN: wc.Imm, QKey: endpoint.RDMAUDPQKey}}
			senders[k] = s
			order = append(order, s)
		}
		if s.received == cfg.Count {
			return false // a connection's share is Count: more takes no other's
		}
		s.received++
		return true
	})
	if err != nil {
		return 1
	}
	fmt.Fprintln(out, "sending replies")
	for _, s := range order {
		if err := n.postSends(s.dest, s.received, cfg.Size, true); err != nil {
			fmt.Fprintf(out, "failed to post sends: %v\n", err)
			return 1
		}
	}
	if err := poll(ctx, n.scq, total, nil); err != nil {
		return 1
	}
	fmt.Fprintln(out, "data transfers complete")
	return 0
}
