package main

// ibpeer ucmatose: librdmacm's ucmatose in either role; the program is
// internal/peer/ucmatose.

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

	"github.com/ibwire/ibwire/internal/peer/ucmatose"
)

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
	fs.Int("p", ucmatose.DefaultPort, "port")
	fs.String("t", "", "type of service")
	fs.Bool("m", false, "migrate")
	fs.String("f", "", "address format")
	fs.String("P", "tcp", "port space")
	return fs
}

func ucmatoseParse(args []string) (ucmatose.Config, error) {
	fs := ucmatoseFlags()
	if err := fs.Parse(ppSplitShort(fs, args)); err != nil {
		return ucmatose.Config{}, err
	}
	if fs.NArg() > 0 {
		return ucmatose.Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	cfg := ucmatose.Config{Connections: get("c").(int), Count: get("C").(int), Size: get("S").(int), Migrate: get("m").(bool)}
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
	if cfg.Server, err = ip("s", get("s").(string)); err != nil {
		return cfg, err
	}
	b := get("bind").(string)
	if b == "" {
		b = get("b").(string)
	}
	if cfg.Local, err = ip("b", b); err != nil {
		return cfg, err
	}
	if !cfg.Local.IsValid() || cfg.Local.IsUnspecified() {
		return cfg, errors.New("give -b or --bind IP: the local address UDP 4791 binds to")
	}
	if p := get("p").(int); p < 0 || p > 65535 {
		return cfg, fmt.Errorf("-p %d: want a port, 0-65535", p)
	} else {
		cfg.Port = uint16(p)
	}
	if ps := strings.ToLower(get("P").(string)); !strings.HasPrefix(ps, "tcp") {
		return cfg, fmt.Errorf("-P %s: only the tcp port space", ps)
	}
	if f := strings.ToLower(get("f").(string)); strings.HasPrefix(f, "gid") {
		return cfg, errors.New("-f gid: AF_IB addresses are not supported")
	}
	switch {
	case cfg.Connections < 1 || cfg.Connections > 1024:
		return cfg, fmt.Errorf("-c %d: want 1-1024 connections", cfg.Connections)
	case cfg.Count < 0 || cfg.Count > 1<<16:
		return cfg, fmt.Errorf("-C %d: want 0-65536 messages", cfg.Count)
	case cfg.Size < 0 || cfg.Size > 1<<24:
		return cfg, fmt.Errorf("-S %d: want 0-16777216 bytes", cfg.Size)
	}
	if cfg.Size == 0 {
		cfg.Count = 0 // as ucmatose's create_message
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
	return ucmatoseExit(ctx, cfg, stdout, stderr)
}

// ucmatoseExit runs ucmatose and returns the exit status: ucmatose's
// return status, 0 or 1.
func ucmatoseExit(ctx context.Context, cfg ucmatose.Config, stdout, stderr io.Writer) int {
	cfg.Stderr = stderr
	if err := ucmatose.Run(ctx, cfg, stdout); err != nil {
		if !errors.Is(err, ucmatose.ErrFailed) {
			fmt.Fprintf(stderr, "ibpeer ucmatose: %v\n", err)
		}
		return exitError
	}
	return exitOK
}
