package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
)

// ibpeer serve --cm PORT: accept RDMA CM connections (QP1, TCP port
// space, port PORT) and answer them as ucmatose's server does: -C SENDs
// of -S bytes on each connection, the client's as many back, then the
// server's DREQ. One test, as ucmatose, unless --loop. Unlike ucmatose's
// server, it answers each connection request on its own, so that one a
// client never completes holds no one else up.

const cmServeUsage = `usage: ibpeer serve --cm PORT --bind IP [--connections N] [--count C] [--size S] [--loop] [--max-conns M]

Accepts RDMA CM connections (REQ, REP, RTU over QP1; TCP port space) on PORT and answers
like librdmacm's ucmatose server: once N connections are established it SENDs C messages of
S bytes on each, receives as many, and disconnects (DREQ). ucmatose -s IP (the client) runs
against it. Output, ucmatose's lines ending in "test complete" and "return status 0".

Each connection request is answered at once (REP), whatever the others do: one that its
client never completes (no RTU) holds no one else up. Its REP goes again as often as the
REQ's Max CM Retries say, after each Local CM Response Timeout (4.096 us x 2^n) it names,
then it is dropped. At most M requests wait for their RTU: beyond, a REQ is answered REJ
"no resources" (3), unless another address holds more of them than the REQ's sender, whose
oldest is then dropped for it. At most M established connections wait for or run a test:
beyond, REJ "consumer reject" (28). Refused and failed requests are logged on stderr.

  --cm PORT          the RDMA CM port to listen on (ucmatose's is 7471, rping's 7174)
  --bind IP          local address: UDP 4791 binds here (--addr is the same flag)
  --connections N    connections per test (default 1; ucmatose -c)
  --count C          messages each way per connection (default 10; ucmatose -C)
  --size S           bytes per message (default 100; ucmatose -S)
  --loop             serve one test after another until SIGINT/SIGTERM (default: one test)
  --max-conns M      connection requests in progress, and connections held, at most
                     (default 64; at least N)
`

// cmServeDefaultMaxConns is --max-conns's default.
const cmServeDefaultMaxConns = 64

// runServeCM is ibpeer serve with --cm.
func runServeCM(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ibpeer serve --cm", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	port := fs.Int("cm", -1, "RDMA CM port")
	bind := fs.String("bind", "", "local address")
	fs.StringVar(bind, "addr", "", "local address")
	conns := fs.Int("connections", 1, "connections per test")
	count := fs.Int("count", 10, "messages each way")
	size := fs.Int("size", 100, "message size")
	loop := fs.Bool("loop", false, "serve tests until stopped")
	maxConns := fs.Int("max-conns", cmServeDefaultMaxConns, "connection requests in progress and connections held, at most")
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ibpeer serve: %s\nRun 'ibpeer serve --cm 0 -h' for usage.\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, cmServeUsage)
			return exitOK
		}
		return bad("%v", err)
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if *port < 0 || *port > 65535 {
		return bad("--cm %d: want a port, 0-65535", *port)
	}
	a, err := netip.ParseAddr(*bind)
	if err != nil || a.IsUnspecified() {
		return bad("give --bind IP, the address to serve on")
	}
	args = []string{"-b", a.String(), "-p", fmt.Sprint(*port), "-c", fmt.Sprint(*conns), "-C", fmt.Sprint(*count),
		"-S", fmt.Sprint(*size)}
	cfg, err := ucmatoseParse(args)
	if err != nil {
		return bad("%v", err)
	}
	if *maxConns < cfg.connections || *maxConns > 1<<16 {
		return bad("--max-conns %d: want %d (--connections) to 65536", *maxConns, cfg.connections)
	}
	cfg.loop = *loop
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmServe(ctx, cmServeConfig{ucmatoseConfig: cfg, maxConns: *maxConns}, stdout, stderr)
}

// cmServeConfig is serve --cm's configuration: ucmatose's server's, and
// the bound.
type cmServeConfig struct {
	ucmatoseConfig
	maxConns int
	// held, when set, learns the number of connections (with their QP
	// and buffers) the server holds each time it changes (tests).
	held func(n int)
}

// cmServer is a running serve --cm.
type cmServer struct {
	cfg  cmServeConfig
	dev  *endpoint.Device
	log  *rateLog
	est  chan *ucmNode // established connections, waiting for a test
	wg   sync.WaitGroup
	mu   sync.Mutex
	held int // nodes alive: pending and established
	nest int // of which established
}

// cmServe runs serve --cm until its test is done (or, with --loop, ctx
// ends) and returns the exit status.
func cmServe(ctx context.Context, cfg cmServeConfig, stdout, stderr io.Writer) int {
	cfg.cm.MaxPending, cfg.cm.Backlog = cfg.maxConns, cfg.maxConns
	dev, cm, err := device.OpenCM(cfg.local, cfg.wire, cfg.cm, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer serve: %v\n", err)
		return exitError
	}
	defer dev.Close()
	defer cm.Close()
	l, err := cm.Listen(layers.IPCMServiceID(layers.PortSpaceTCP, cfg.port))
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer serve: %v\n", err)
		return exitError
	}
	if cfg.listening != nil {
		cfg.listening()
	}
	s := &cmServer{cfg: cfg, dev: dev.Device, log: &rateLog{out: func(line string) { fmt.Fprintln(stderr, line) }}, est: make(chan *ucmNode, cfg.maxConns)}
	actx, stopAccepting := context.WithCancel(ctx)
	s.wg.Go(func() { s.accept(actx, l) })
	ret := 0
	for {
		ret = s.serveOnce(ctx, stdout)
		if !cfg.loop || ctx.Err() != nil {
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
	s.log.flush()
	if ret != 0 {
		return exitError
	}
	return exitOK
}

// accept answers each connection request on a goroutine of its own.
func (s *cmServer) accept(ctx context.Context, l *endpoint.CMListener) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		r := c.Request()
		s.mu.Lock()
		full := s.nest >= s.cfg.maxConns
		if !full {
			s.held++
		}
		s.mu.Unlock()
		if full {
			s.log.printf("connection requests refused", "ibpeer serve: refused the connection request of %v (QPN %#06x): %d connections held (--max-conns %d)",
				r.Remote, r.RemoteQPN, s.cfg.maxConns, s.cfg.maxConns)
			_ = c.Reject(nil)
			continue
		}
		s.changed()
		n, err := newUcmNode(s.dev, s.cfg.ucmatoseConfig)
		if err != nil {
			s.log.printf("connection requests failed", "ibpeer serve: connection request of %v (QPN %#06x): %v", r.Remote, r.RemoteQPN, err)
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
					s.log.printf("connection requests failed", "ibpeer serve: connection request of %v (QPN %#06x) not completed: %v", r.Remote, r.RemoteQPN, err)
				}
				s.drop(n, false)
				return
			}
			n.conn = c
			s.mu.Lock()
			full := s.nest >= s.cfg.maxConns
			if !full {
				s.nest++
			}
			s.mu.Unlock()
			if full {
				s.log.printf("connection requests refused", "ibpeer serve: disconnected %v (QPN %#06x) once established: %d connections held (--max-conns %d)",
					r.Remote, r.RemoteQPN, s.cfg.maxConns, s.cfg.maxConns)
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
func (s *cmServer) drop(n *ucmNode, established bool) {
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
	if s.cfg.held == nil {
		return
	}
	s.mu.Lock()
	n := s.held
	s.mu.Unlock()
	s.cfg.held(n)
}

// serveOnce is one test: ucmatose's run_server once its connections are
// established.
func (s *cmServer) serveOnce(ctx context.Context, out io.Writer) int {
	fmt.Fprintln(out, "cmatose: starting server")
	var nodes []*ucmNode
	ret := func() int {
		for len(nodes) < s.cfg.connections {
			select {
			case n := <-s.est:
				nodes = append(nodes, n)
			case <-ctx.Done():
				return 1
			}
		}
		return ucmServerTransfer(ctx, s.cfg.ucmatoseConfig, nodes, out)
	}()
	for _, n := range nodes {
		s.drop(n, true)
	}
	fmt.Fprintln(out, "test complete")
	fmt.Fprintf(out, "return status %d\n", ret)
	return ret
}

// rateLog writes serve's lines about refused and failed connections,
// each kind at most once a second: a flood of them is counted, not written
// out one by one. A kind names what its lines are about ("connection
// requests refused").
type rateLog struct {
	mu   sync.Mutex
	out  func(line string) // writes one line
	last map[string]time.Time
	held map[string]int // lines not written since the last one of the kind
}

func (l *rateLog) printf(kind, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.held = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	if t, ok := l.last[kind]; ok && now.Sub(t) < time.Second {
		l.held[kind]++
		return
	}
	l.last[kind] = now
	line := fmt.Sprintf(format, a...)
	if n := l.held[kind]; n > 0 {
		line += fmt.Sprintf(" (and %d more %s since the last such line)", n, kind)
		l.held[kind] = 0
	}
	l.out(line)
}

// flush writes the counts of the lines held back.
func (l *rateLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, kind := range slices.Sorted(maps.Keys(l.held)) {
		if n := l.held[kind]; n > 0 {
			l.out(fmt.Sprintf("ibpeer serve: %d more %s", n, kind))
		}
	}
}

// hasCMFlag reports whether serve's arguments ask for the RDMA CM server.
func hasCMFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, p := range []string{"-cm", "--cm"} {
			if a == p || len(a) > len(p) && a[:len(p)+1] == p+"=" {
				return true
			}
		}
	}
	return false
}
