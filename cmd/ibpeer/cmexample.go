package main

// What librdmacm's example programs ucmatose and udaddy share on their
// command lines: -s server, -b bind address (--bind), -c connections,
// -C message count, -S message size, -p port, -f address format, -P port
// space.

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

	"github.com/ibwire/ibwire/internal/peer/device"
)

// cmExample is the checked common part of a ucmatose or udaddy command line.
type cmExample struct {
	server, local            netip.Addr
	port                     uint16
	connections, count, size int
	flags                    *flag.FlagSet // for the program's own flags
	offload                  device.UDPOffload
}

// cmExampleFlags defines the common flags; port is the program's default,
// portSpace the default of -P.
func cmExampleFlags(name string, port int, portSpace string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.String("s", "", "server address")
	fs.String("b", "", "bind address")
	fs.String("bind", "", "bind address")
	fs.Int("c", 1, "connections")
	fs.Int("C", 10, "message count")
	fs.Int("S", 100, "message size")
	fs.Int("p", port, "port")
	fs.String("t", "", "type of service")
	fs.String("f", "", "address format")
	fs.String("P", portSpace, "port space")
	device.UDPOffloadFlag(fs)
	return fs
}

// parseCMExample parses args with fs (cmExampleFlags and the program's
// own) and checks the common flags: the port space must be portSpace, a
// message at most maxSize bytes; a size of 0 sends no messages, as both
// programs' create_message says.
func parseCMExample(fs *flag.FlagSet, args []string, portSpace string, maxSize int) (cmExample, error) {
	if err := fs.Parse(ppSplitShort(fs, args)); err != nil {
		return cmExample{}, err
	}
	if fs.NArg() > 0 {
		return cmExample{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	c := cmExample{connections: get("c").(int), count: get("C").(int), size: get("S").(int), flags: fs, offload: udpOffloadOf(fs)}
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
	if c.server, err = ip("s", get("s").(string)); err != nil {
		return c, err
	}
	b := get("bind").(string)
	if b == "" {
		b = get("b").(string)
	}
	if c.local, err = ip("b", b); err != nil {
		return c, err
	}
	if !c.local.IsValid() || c.local.IsUnspecified() {
		return c, errors.New("give -b or --bind IP: the local address UDP 4791 binds to")
	}
	if p := get("p").(int); p < 0 || p > 65535 {
		return c, fmt.Errorf("-p %d: want a port, 0-65535", p)
	} else {
		c.port = uint16(p)
	}
	if ps := strings.ToLower(get("P").(string)); !strings.HasPrefix(ps, portSpace) {
		return c, fmt.Errorf("-P %s: only the %s port space", ps, portSpace)
	}
	if f := strings.ToLower(get("f").(string)); strings.HasPrefix(f, "gid") {
		return c, errors.New("-f gid: AF_IB addresses are not supported")
	}
	switch {
	case c.connections < 1 || c.connections > 1024:
		return c, fmt.Errorf("-c %d: want 1-1024 connections", c.connections)
	case c.count < 0 || c.count > 1<<16:
		return c, fmt.Errorf("-C %d: want 0-65536 messages", c.count)
	case c.size < 0 || c.size > maxSize:
		return c, fmt.Errorf("-S %d: want 0-%d bytes", c.size, maxSize)
	}
	if c.size == 0 {
		c.count = 0
	}
	return c, nil
}

// runCMExample is the body of ibpeer ucmatose and ibpeer udaddy: parse
// args (-h prints usage), run the program until SIGINT or SIGTERM, and
// return its exit status. failed is the program's error for its own
// non-zero return status, which its lines on stdout already tell; any
// other error is said on stderr.
func runCMExample[C any](name, usage string, args []string, stdout, stderr io.Writer,
	parse func([]string) (C, error), run func(context.Context, C, io.Writer) error, failed error) int {
	cfg, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer %s: %v\nRun 'ibpeer %s -h' for usage.\n", name, err, name)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmExampleStatus(name, run(ctx, cfg, stdout), failed, stderr)
}

// cmExampleStatus is the exit status of a program that ended with err.
func cmExampleStatus(name string, err, failed error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, failed) {
		fmt.Fprintf(stderr, "ibpeer %s: %v\n", name, err)
	}
	return exitError
}
