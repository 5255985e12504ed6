package main

// ibpeer rping: librdmacm's rping in either role; the program is
// internal/peer/rping.

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
	"github.com/ibwire/ibwire/internal/peer/rping"
)

var rpingUsage = `usage: ibpeer rping -s [-vVd] [-S size] [-C count] [-a addr] [-p port] [-P] [--bind IP]
       ibpeer rping -c [-vVd] [-S size] [-C count] [-I addr] -a addr [-p port] [--bind IP]

Plays librdmacm's rping against rping on any RDMA CM device (rdma_rxe, a NIC) or another ibpeer:
RDMA CM over QP1 (REQ, REP, RTU; DREQ, DREP) in the TCP port space, one RC QP, and rping's
ping loop (the client's buffer advertised by SEND, RDMA READ by the server, RDMA WRITE back).

  -c            client side
  -s            server side
  -a addr       client: the server's address; server: the address to listen on
  -I addr       client: the source address to bind to (same as --bind)
  --bind IP     the local address: UDP 4791 binds here (server default: -a)
  -p port       port (default 7174)
  -C count      ping count (default 0: forever; the server serves until the client disconnects)
  -S size       ping data size (default 64; 26 to 65535)
  -v            display ping data to stdout
  -V            validate ping data
  -d            debug printfs
  -P            persistent server mode allowing multiple connections
  -q            use a self-created, self-modified QP (accepted: ibpeer always does)
  -t tos        type of service (accepted, not used)
` + udpOffloadHelp + `
Output, as rping prints it: the client "ping data: rdma-ping-0: ABCDEF...", the server
"server ping data: rdma-ping-0: ABCDEF..." (with -v).
`

// rpingBoolFlags are the flags getopt lets a user bundle ("-vV").
const rpingBoolFlags = "scvVdPq"

func rpingFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer rping", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {}
	fs.Bool("s", false, "server")
	fs.Bool("c", false, "client")
	fs.String("a", "", "address")
	fs.String("I", "", "source address")
	fs.String("bind", "", "local address")
	fs.Int("p", rping.DefaultPort, "port")
	fs.Int("C", 0, "count")
	fs.Int("S", 64, "size")
	fs.Bool("v", false, "verbose")
	fs.Bool("V", false, "validate")
	fs.Bool("d", false, "debug")
	fs.Bool("P", false, "persistent server")
	fs.Bool("q", false, "self-created QP")
	fs.Int("t", 0, "type of service (ignored)")
	device.UDPOffloadFlag(fs)
	return fs
}

// rpingExpand splits getopt's bundles ("-vV") and attached values ("-C10").
func rpingExpand(fs *flag.FlagSet, args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && fs.Lookup(a[1:]) == nil {
			if strings.Trim(a[1:], rpingBoolFlags) == "" {
				for _, c := range a[1:] {
					out = append(out, "-"+string(c))
				}
				continue
			}
		}
		out = append(out, a)
	}
	return ppSplitShort(fs, out)
}

func rpingParse(args []string) (rping.Config, error) {
	fs := rpingFlags(io.Discard)
	if err := fs.Parse(rpingExpand(fs, args)); err != nil {
		return rping.Config{}, err
	}
	if fs.NArg() > 0 {
		return rping.Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	get := func(name string) any { return fs.Lookup(name).Value.(flag.Getter).Get() }
	cfg := rping.Config{Server: get("s").(bool), Persistent: get("P").(bool), Count: get("C").(int),
		Size: get("S").(int), Verbose: get("v").(bool), Validate: get("V").(bool), Debug: get("d").(bool), UDPOffload: udpOffloadOf(fs)}
	client := get("c").(bool)
	if cfg.Server == client {
		return cfg, errors.New("give -s (server) or -c (client)")
	}
	addr := func(flag string) (netip.Addr, error) {
		s := get(flag).(string)
		if s == "" {
			return netip.Addr{}, nil
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return a, fmt.Errorf("-%s %q: not an IP address", flag, s)
		}
		return a.Unmap(), nil
	}
	a, err := addr("a")
	if err != nil {
		return cfg, err
	}
	bind, err := addr("bind")
	if err != nil {
		return cfg, err
	}
	src, err := addr("I")
	if err != nil {
		return cfg, err
	}
	if !bind.IsValid() {
		bind = src
	}
	if cfg.Server {
		if !bind.IsValid() {
			bind = a
		}
		if a.IsValid() && a != bind && !a.IsUnspecified() {
			return cfg, fmt.Errorf("-a %v and --bind %v: the server listens on one address", a, bind)
		}
	} else {
		if !a.IsValid() {
			return cfg, errors.New("the client needs -a: the server's address")
		}
		cfg.Remote = a
	}
	if !bind.IsValid() || bind.IsUnspecified() {
		return cfg, errors.New("give --bind IP: the local address UDP 4791 binds to")
	}
	cfg.Local = bind
	p := get("p").(int)
	if p < 0 || p > 65535 {
		return cfg, fmt.Errorf("-p %d: want a port, 0-65535", p)
	}
	cfg.Port = uint16(p)
	if cfg.Size < rping.MinSize || cfg.Size > 64*1024-1 {
		//lint:ignore ST1005 rping's own message, capital included, as scripts match it
		return cfg, fmt.Errorf("Invalid size %d (valid range is %d to %d)", cfg.Size, rping.MinSize, 64*1024)
	}
	if cfg.Count < 0 {
		//lint:ignore ST1005 rping's own message, capital included, as scripts match it
		return cfg, fmt.Errorf("Invalid count %d", cfg.Count)
	}
	return cfg, nil
}

func runRping(args []string, stdout, stderr io.Writer) int {
	cfg, err := rpingParse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, rpingUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer rping: %v\nRun 'ibpeer rping -h' for usage.\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Stderr = stderr
	if err := rping.Run(ctx, cfg, stdout); err != nil {
		if !errors.Is(err, rping.ErrReported) {
			fmt.Fprintf(stderr, "ibpeer rping: %v\n", err)
		}
		return exitError
	}
	return exitOK
}
