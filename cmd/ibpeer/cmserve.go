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
	"syscall"
)

// ibpeer serve --cm PORT: accept RDMA CM connections (QP1, TCP port
// space, port PORT) and answer them as ucmatose's server does: -C SENDs
// of -S bytes on each connection, the client's as many back, then the
// server's DREQ. One test, as ucmatose, unless --loop.

const cmServeUsage = `usage: ibpeer serve --cm PORT --bind IP [--connections N] [--count C] [--size S] [--loop]

Accepts RDMA CM connections (REQ, REP, RTU over QP1; TCP port space) on PORT and answers
like librdmacm's ucmatose server: once N connections are established it SENDs C messages of
S bytes on each, receives as many, and disconnects (DREQ). ucmatose -s IP (the client) runs
against it. Output, ucmatose's lines ending in "test complete" and "return status 0".

  --cm PORT          the RDMA CM port to listen on (ucmatose's is 7471, rping's 7174)
  --bind IP          local address: UDP 4791 binds here (--addr is the same flag)
  --connections N    connections per test (default 1; ucmatose -c)
  --count C          messages each way per connection (default 10; ucmatose -C)
  --size S           bytes per message (default 100; ucmatose -S)
  --loop             serve one test after another until SIGINT/SIGTERM (default: one test)
`

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
	cfg.loop = *loop
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ucmatose(ctx, cfg, stdout, stderr)
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
