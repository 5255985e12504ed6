package ucmatose

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// ServeConfig is serve --cm's configuration: ucmatose's server's, and
// the bound.
type ServeConfig struct {
	Config
	// MaxConns bounds the connection requests in progress, and the
	// connections held (at least Connections).
	MaxConns int
	// Held, when set, learns the number of connections (with their QP
	// and buffers) the server holds each time it changes (tests).
	Held func(n int)
	// Beside, when set, sets up another service on the same device and CM
	// (serve --cm's udaddy echo) before the server says it listens; the
	// run it returns goes on for as long as the server, whose stop ends
	// its ctx.
	Beside func(dev *endpoint.Device, cm *endpoint.CM) (run func(ctx context.Context), err error)
}

// cmServer is a running serve --cm.
type cmServer struct {
	cfg  ServeConfig
	dev  *endpoint.Device
	log  *device.RateLog
	est  chan *node // established connections, waiting for a test
	wg   sync.WaitGroup
	mu   sync.Mutex
	held int // nodes alive: pending and established
	nest int // of which established
}

// Serve runs ibpeer serve --cm until its test is done (or, with Loop,
// ctx ends): ucmatose's server's lines go to stdout, the log of refused and
// failed requests to Config.Stderr. It returns ErrFailed when a test
// failed, or an error that kept it from serving; stopped (ctx ended) while
// it waited for a test's first connection, it returns nil.
func Serve(ctx context.Context, cfg ServeConfig, stdout io.Writer) error {
	cfg.CM.MaxPending, cfg.CM.Backlog = cfg.MaxConns, cfg.MaxConns
	stderr := stderrOf(cfg.Config)
	dev, cm, err := device.OpenCM(cfg.Local, cfg.Wire, cfg.UDPOffload, cfg.CM, stderr)
	if err != nil {
		return err
	}
	defer dev.Close()
	defer cm.Close()
	l, err := cm.Listen(layers.IPCMServiceID(layers.PortSpaceTCP, cfg.Port))
	if err != nil {
		return err
	}
	var beside func(context.Context)
	if cfg.Beside != nil {
		if beside, err = cfg.Beside(dev.Device, cm); err != nil {
			_ = l.Close()
			return err
		}
	}
	if cfg.Listening != nil {
		cfg.Listening()
	}
	s := &cmServer{cfg: cfg, dev: dev.Device, log: &device.RateLog{Out: func(line string) { fmt.Fprintln(stderr, line) }}, est: make(chan *node, cfg.MaxConns)}
	actx, stopAccepting := context.WithCancel(ctx)
	s.wg.Go(func() { s.accept(actx, l) })
	if beside != nil {
		s.wg.Go(func() { beside(actx) })
	}
	ret := 0
	for {
		ret = s.serveOnce(ctx, stdout)
		if !cfg.Loop || ctx.Err() != nil {
			break
		}
	}
	stopAccepting()
	_ = l.Close()
	s.wg.Wait()
	close(s.est)
	for n := range s.est {
		s.drop(n, true)
	}
	s.log.Flush()
	if ret != 0 && ret != stoppedIdle {
		return ErrFailed
	}
	return nil
}

// accept answers each connection request on a goroutine of its own.
func (s *cmServer) accept(ctx context.Context, l *endpoint.CMListener) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		r := c.Request()
		if !s.count(&s.held) {
			s.log.Printf("connection requests refused", "ibpeer serve: refused the connection request of %v (QPN %#06x): %d connections held (--max-conns %d)",
				r.Remote, r.RemoteQPN, s.cfg.MaxConns, s.cfg.MaxConns)
			_ = c.Reject(nil)
			continue
		}
		s.changed()
		n, err := newNode(s.dev, s.cfg.Config)
		if err != nil {
			s.log.Printf("connection requests failed", "ibpeer serve: connection request of %v (QPN %#06x): %v", r.Remote, r.RemoteQPN, err)
			_ = c.Reject(nil)
			s.drop(n, false)
			continue
		}
		s.wg.Go(func() {
			// rdma_accept without parameters: what the REQ asks for.
			p := endpoint.DefaultCMParam()
			p.ResponderResources, p.InitiatorDepth = 16, 16
			if err := c.Accept(ctx, n.qp, p); err != nil {
				if ctx.Err() == nil {
					s.log.Printf("connection requests failed", "ibpeer serve: connection request of %v (QPN %#06x) not completed: %v", r.Remote, r.RemoteQPN, err)
				}
				s.drop(n, false)
				return
			}
			n.conn = c
			if !s.count(&s.nest) {
				s.log.Printf("connection requests refused", "ibpeer serve: disconnected %v (QPN %#06x) once established: %d connections held (--max-conns %d)",
					r.Remote, r.RemoteQPN, s.cfg.MaxConns, s.cfg.MaxConns)
				_ = c.Disconnect(ctx)
				s.drop(n, false)
				return
			}
			select {
			case s.est <- n: // room for every established node
			case <-ctx.Done():
				s.drop(n, true)
			}
		})
	}
}

// drop destroys a node and forgets it.
// count adds one to counter (held or nest) while fewer than --max-conns
// connections are established, and says whether it did: a request is
// refused, or an accepted connection closed, only when the established
// ones fill the bound.
func (s *cmServer) count(counter *int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nest >= s.cfg.MaxConns {
		return false
	}
	*counter++
	return true
}

func (s *cmServer) drop(n *node, established bool) {
	if n != nil {
		n.destroy()
	}
	s.mu.Lock()
	s.held--
	if established {
		s.nest--
	}
	s.mu.Unlock()
	s.changed()
}

func (s *cmServer) changed() {
	if s.cfg.Held == nil {
		return
	}
	s.mu.Lock()
	n := s.held
	s.mu.Unlock()
	s.cfg.Held(n)
}

// stoppedIdle is serveOnce's status when the server was stopped (ctx
// ended) before any connection of the test came: a daemon stopped, not a
// failed test, and no ucmatose line says otherwise.
const stoppedIdle = -1

// serveOnce is one test: ucmatose's run_server once its connections are
// established.
func (s *cmServer) serveOnce(ctx context.Context, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting server")
	var nodes []*node
	ret := func() int {
		for len(nodes) < s.cfg.Connections {
			select {
			case n := <-s.est:
				nodes = append(nodes, n)
			case <-ctx.Done():
				if len(nodes) == 0 {
					return stoppedIdle
				}
				return 1
			}
		}
		return serverTransfer(ctx, s.cfg.Config, nodes, out)
	}()
	for _, n := range nodes {
		s.drop(n, true)
	}
	if ret == stoppedIdle {
		return ret
	}
	fmt.Fprintln(out, "test complete")
	fmt.Fprintf(out, "return status %d\n", ret)
	return ret
}
