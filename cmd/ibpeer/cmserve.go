package main

// ibpeer serve --cm PORT: ucmatose's server, built to stay up, and
// udaddy's beside it on the same port; the programs are
// internal/peer/ucmatose's Serve and internal/peer/udaddy's Echo.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"syscall"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/ucmatose"
	"github.com/ibwire/ibwire/internal/peer/udaddy"
)

var cmServeUsage = `usage: ibpeer serve --cm PORT --bind IP [--connections N] [--count C] [--size S] [--loop] [--max-conns M]

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

On the same PORT it answers udaddy clients too (UD over RDMA CM: udaddy -s IP -p PORT, or
ibpeer udaddy): a SIDR_REQ for the UDP port space's service ID gets a SIDR_REP naming one UD
QP (Q_Key 0x01234567), which echoes each datagram at once, with its length and this QP's
number as immediate data, to the address and QPN the datagram names. udaddy's port is 7174.

  --cm PORT          the RDMA CM port to listen on (ucmatose's is 7471, udaddy's and rping's 7174)
  --bind IP          local address: UDP 4791 binds here (--addr is the same flag)
  --connections N    connections per test (default 1; ucmatose -c)
  --count C          messages each way per connection (default 10; ucmatose -C)
  --size S           bytes per message (default 100; ucmatose -S)
  --loop             serve one test after another until SIGINT/SIGTERM (default: one test)
  --max-conns M      connection requests in progress, and connections held, at most
                     (default 64; at least N)
` + udpOffloadHelp + ``

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
	offload := device.UDPOffloadFlag(fs)
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
		"-S", fmt.Sprint(*size), "--udp-offload", offload.String()}
	cfg, err := ucmatoseParse(args)
	if err != nil {
		return bad("%v", err)
	}
	if *maxConns < cfg.Connections || *maxConns > 1<<16 {
		return bad("--max-conns %d: want %d (--connections) to 65536", *maxConns, cfg.Connections)
	}
	cfg.Loop = *loop
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveCMExit(ctx, ucmatose.ServeConfig{Config: cfg, MaxConns: *maxConns}, stdout, stderr)
}

// serveCMExit runs serve --cm and returns the exit status.
func serveCMExit(ctx context.Context, cfg ucmatose.ServeConfig, stdout, stderr io.Writer) int {
	cfg.Stderr = stderr
	cfg.Beside = func(dev *endpoint.Device, cm *endpoint.CM) (func(context.Context), error) {
		echo, err := udaddy.NewEcho(dev, cm, cfg.Port)
		if err != nil {
			return nil, fmt.Errorf("udaddy echo: %w", err)
		}
		return func(ctx context.Context) {
			dropped, err := echo.Run(ctx)
			if err != nil {
				fmt.Fprintf(stderr, "ibpeer serve: udaddy echo: %v\n", err)
			}
			if dropped > 0 {
				fmt.Fprintf(stderr, "ibpeer serve: udaddy echo: %d datagrams not answered\n", dropped)
			}
		}, nil
	}
	return cmExampleStatus("serve", ucmatose.Serve(ctx, cfg, stdout), ucmatose.ErrFailed, stderr)
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
