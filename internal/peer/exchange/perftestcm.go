package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// perftest -R (--rdma_cm), as perftest 6.06 runs it (an rxe<->rxe capture
// of ib_write_bw -R shows it): the client connects a set-up QP with RDMA
// CM to the server's port -p (TCP port space, no responder resources);
// the version, buffer-size and MTU messages of the TCP mode travel as
// SENDs on it; then an all-zero struct pingpong_dest each way, the data
// QP's own RDMA CM connection to the same port, another zero exchange,
// and the QP messages in binary. At the end the client disconnects the
// data QP and the server the set-up QP.

// SetupTimeout bounds a set-up exchange: ibpeer serve drops a connection
// that has not finished it by then, and ibpeer's clients give a server as
// long.
const SetupTimeout = 10 * time.Second

// PerftestCMConfig is one side of perftest -R's connections.
type PerftestCMConfig struct {
	// Server is the server's address; invalid on the server.
	Server netip.Addr
	// Local is this side's address (the server's Ready gets it).
	Local netip.Addr
	// Port is the RDMA CM port (perftest's -p).
	Port int
	// MTU is the set-up QP's path MTU.
	MTU layers.PathMTU
	// Ready, when set, learns the server's address once it listens (tests).
	Ready func(netip.AddrPort)
}

// PerftestCM is a perftest -R side's RDMA CM state: the CM, the set-up
// QP's connection and the message channel over it, and, once
// ConnectData has run, the data QP's connection.
type PerftestCM struct {
	server   bool
	port     int
	cm       *endpoint.CM
	listener *endpoint.CMListener // server
	ctrl     *endpoint.CMConn
	ctrlQP   *endpoint.QP
	data     *endpoint.CMConn
	msg      *endpoint.MsgConn
	peer     netip.Addr
	sid      layers.ServiceID
}

// Msg is the set-up exchange's channel: SENDs on the set-up QP.
func (x *PerftestCM) Msg() *endpoint.MsgConn { return x.msg }

// perftestMsgSize is the largest set-up message: struct pingpong_dest.
const perftestMsgSize = 64

// perftestConnectTries is how often perftest's client sends a REQ that is
// rejected (retry_rdma_connect).
const perftestConnectTries = 10

// perftestDisconnectWait bounds the wait for the peer's disconnect.
const perftestDisconnectWait = 3 * time.Second

// DialPerftestCM connects the set-up QP: as the server, it accepts one
// client, and says so on stdout as perftest does.
func DialPerftestCM(ctx context.Context, dev *endpoint.Device, cfg PerftestCMConfig, stdout io.Writer) (*PerftestCM, error) {
	cm, err := endpoint.NewCM(dev, endpoint.CMConfig{})
	if err != nil {
		return nil, err
	}
	x := &PerftestCM{server: !cfg.Server.IsValid(), port: cfg.Port, cm: cm, sid: layers.IPCMServiceID(layers.PortSpaceTCP, uint16(cfg.Port))}
	ok := false
	defer func() {
		if !ok {
			x.Close()
		}
	}()
	pd := dev.AllocPD()
	cq := dev.CreateCQ(16)
	if x.ctrlQP, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: 4, MaxRecvWR: 4}); err != nil {
		return nil, err
	}
	if err := endpoint.InitQP(x.ctrlQP); err != nil {
		return nil, err
	}
	if x.msg, err = endpoint.NewMsgConn(pd, x.ctrlQP, cq, perftestMsgSize, 4); err != nil {
		return nil, err
	}
	// perftest's set-up connection asks for no READ/atomic resources.
	p := endpoint.CMParam{RetryCount: 7, RNRRetryCount: 7, MTU: cfg.MTU}
	if !x.server {
		x.peer = cfg.Server
		if x.ctrl, err = cm.Connect(ctx, x.ctrlQP, x.peer, x.sid, 0, p); err != nil {
			return nil, fmt.Errorf("rdma_cm set-up connection to %v port %d: %w", x.peer, cfg.Port, err)
		}
		x.msg.SetRemote(x.peer)
		ok = true
		return x, nil
	}
	if x.listener, err = cm.Listen(x.sid); err != nil {
		return nil, err
	}
	fmt.Fprint(stdout, "\n************************************\n* Waiting for client to connect... *\n************************************\n")
	if cfg.Ready != nil {
		cfg.Ready(netip.AddrPortFrom(cfg.Local, uint16(cfg.Port)))
	}
	c, err := x.listener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.Accept(ctx, x.ctrlQP, p); err != nil {
		return nil, fmt.Errorf("rdma_cm set-up connection: %w", err)
	}
	x.ctrl, x.peer = c, c.Remote()
	x.msg.SetRemote(x.peer)
	ok = true
	return x, nil
}

// ConnectData connects the data QP over RDMA CM: the client's second
// connection to the same port, the server's second accepted one.
func (x *PerftestCM) ConnectData(ctx context.Context, qp *endpoint.QP, mtu layers.PathMTU, resources uint8) error {
	p := endpoint.CMParam{ResponderResources: resources, InitiatorDepth: resources, RetryCount: 7, RNRRetryCount: 7, MTU: mtu}
	if !x.server {
		// The server may not listen for it yet: perftest's client tries
		// 10 times, 100 ms apart, while it is rejected.
		for try := 1; ; try++ {
			c, err := x.cm.Connect(ctx, qp, x.peer, x.sid, 0, p)
			if err == nil {
				x.data = c
				return nil
			}
			var rej *endpoint.CMRejectError
			if !errors.As(err, &rej) || try == perftestConnectTries {
				return fmt.Errorf("rdma_cm data connection: %w", err)
			}
			if err := qp.Modify(endpoint.QPAttr{State: endpoint.StateReset}, endpoint.AttrState); err != nil {
				return err
			}
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	c, err := x.listener.Accept(ctx)
	if err != nil {
		return err
	}
	if err := c.Accept(ctx, qp, p); err != nil {
		return fmt.Errorf("rdma_cm data connection: %w", err)
	}
	x.data = c
	return nil
}

// Disconnect ends both connections as perftest does: the client sends the
// data QP's DREQ and waits for the server's DREQ of the set-up QP; the
// server waits for the first and sends the second.
func (x *PerftestCM) Disconnect(ctx context.Context) error {
	server := x.server
	wait := func(c *endpoint.CMConn) {
		if c == nil {
			return
		}
		select {
		case <-c.Disconnected():
		case <-time.After(perftestDisconnectWait):
		case <-ctx.Done():
		}
	}
	if !server {
		if x.data != nil {
			if err := x.data.Disconnect(ctx); err != nil {
				return err
			}
		}
		wait(x.ctrl)
		return nil
	}
	wait(x.data)
	if x.ctrl != nil {
		return x.ctrl.Disconnect(ctx)
	}
	return nil
}

// Abort ends both connections at once, without waiting for the peer: for
// a session that broke off, whose peer may be waiting for us.
func (x *PerftestCM) Abort(ctx context.Context) error {
	if x.data != nil {
		x.data.Disconnect(ctx)
	}
	if x.ctrl == nil {
		return nil
	}
	return x.ctrl.Disconnect(ctx)
}

// Close frees the CM, the listener and the set-up QP.
func (x *PerftestCM) Close() {
	if x.msg != nil {
		x.msg.Close()
	}
	if x.listener != nil {
		x.listener.Close()
	}
	x.cm.Close()
	if x.ctrlQP != nil {
		x.ctrlQP.Destroy()
	}
}
