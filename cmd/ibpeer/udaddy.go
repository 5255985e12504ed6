package main

// ibpeer udaddy: librdmacm's udaddy in either role; the program is
// internal/peer/udaddy.

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

	"github.com/ibwire/ibwire/internal/peer/udaddy"
)

const udaddyUsage = `usage: ibpeer udaddy [-s server_address] [-b bind_address] [-c connections]
                     [-C message_count] [-S message_size] [-p port_number] [--bind IP]

Plays librdmacm's udaddy against udaddy on any RDMA CM device (rdma_rxe, a NIC) or another
ibpeer: without -s it is the server, with -s the client. UD over RDMA CM: the client resolves
the server's UD QP with a SIDR_REQ on QP1 (UDP port space; the SIDR_REP names the QPN and the
Q_Key 0x01234567), SENDs -C datagrams of -S bytes with immediate data (its QPN) on each of -c
connections, and waits for as many back; the server answers each client at the address and QPN
its first datagram names. The server serves all its clients from one UD QP.

  -s server_address   the server's address (client mode)
  -b bind_address     the local address: UDP 4791 binds here (--bind is the same flag)
  -c connections      number of connections (default 1)
  -C message_count    datagrams each way per connection (default 10)
  -S message_size     bytes per datagram, at most the port's active MTU (default 100)
  -p port_number      port (default 7174)
  -f address_format   name or ip (accepted; addresses are IP literals)
  -P port_space       udp (the only one)

Output (stdout), udaddy's lines ending in "test complete" and "return status 0"; the exit
status is 0 when the return status is, 1 otherwise. -t (type of service) is refused: the
datagrams are sent with traffic class 0.
`

func udaddyFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer udaddy", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.String("s", "", "server address")
	fs.String("b", "", "bind address")
	fs.String("bind", "", "bind address")
	fs.Int("c", 1, "connections")
	fs.Int("C", 10, "message count")
	fs.Int("S", 100, "message size")
	fs.Int("p", udaddy.DefaultPort, "port")
	fs.String("t", "", "type of service")
	fs.String("f", "", "address format")
	fs.String("P", "udp", "port space")
	return fs
}

func udaddyParse(args []string) (udaddy.Config, error) {
	fs := udaddyFlags()
	if err := fs.Parse(ppSplitShort(fs, args)); err != nil {
		return udaddy.Config{}, err
	}
	if fs.NArg() > 0 {
		return udaddy.Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	cfg := udaddy.Config{Connections: get("c").(int), Count: get("C").(int), Size: get("S").(int)}
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
	if get("t").(string) != "" {
		return cfg, errors.New("-t: type of service is not supported (datagrams go with traffic class 0)")
	}
	if ps := strings.ToLower(get("P").(string)); !strings.HasPrefix(ps, "udp") {
		return cfg, fmt.Errorf("-P %s: only the udp port space", ps)
	}
	if f := strings.ToLower(get("f").(string)); strings.HasPrefix(f, "gid") {
		return cfg, errors.New("-f gid: AF_IB addresses are not supported")
	}
	switch {
	case cfg.Connections < 1 || cfg.Connections > 1024:
		return cfg, fmt.Errorf("-c %d: want 1-1024 connections", cfg.Connections)
	case cfg.Count < 0 || cfg.Count > 1<<16:
		return cfg, fmt.Errorf("-C %d: want 0-65536 messages", cfg.Count)
	case cfg.Size < 0 || cfg.Size > 4096:
		return cfg, fmt.Errorf("-S %d: want 0-4096 bytes (a datagram fits one packet)", cfg.Size)
	}
	if cfg.Size == 0 {
		cfg.Count = 0 // as udaddy's create_message
	}
	return cfg, nil
}

func runUdaddy(args []string, stdout, stderr io.Writer) int {
	cfg, err := udaddyParse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, udaddyUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer udaddy: %v\nRun 'ibpeer udaddy -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Stderr = stderr
	if err := udaddy.Run(ctx, cfg, stdout); err != nil {
		if !errors.Is(err, udaddy.ErrFailed) {
			fmt.Fprintf(stderr, "ibpeer udaddy: %v\n", err)
		}
		return exitError
	}
	return exitOK
}
