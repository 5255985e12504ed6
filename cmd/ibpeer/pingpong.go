package main

// ibpeer pingpong: the pingpong tools in either role; the program is
// internal/peer/pingpong.

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

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/pingpong"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

var pingpongUsage = `usage: ibpeer pingpong [--rc|--uc|--ud|--srq] --addr IP [flags]          start a server and wait for connection
       ibpeer pingpong [--rc|--uc|--ud|--srq] --addr IP [flags] <host>   connect to server at <host>

Plays ibv_rc_pingpong (--rc, the default), ibv_uc_pingpong (--uc), ibv_ud_pingpong (--ud) or
ibv_srq_pingpong (--srq) against the rdma-core tool on any RoCEv2 device (rdma_rxe, a NIC) or
against another ibpeer: the same TCP set-up exchange (port 18515, "LID:QPN:PSN:GID"), QP
attributes, SEND/RECV ping-pong and report. The client sends first; each side sends its next
message once its previous one completed and a message arrived, iters times.

--srq: -q RC QPs take their receives from one shared receive queue of -r WRs. The set-up
exchange is ibv_srq_pingpong's: 256 messages each way, whatever -q says (those beyond the
QPs all zero), then "done". The client sends on every QP at once; each QP sends again once
its send completed and a message arrived for it, until -n sends and -n receives in all
(ibv_srq_pingpong counts across its QPs). It has no -c, -o, -P, -j or -t.

ibpeer's own flags:
  --rc, --uc, --ud, --srq transport (default --rc; --srq is RC)
  --addr IP               local IP address: UDP 4791 and the server's TCP port bind here
                          (not the wildcard, as the tools do) and the GID advertised is its
                          ::ffff-mapped form (required; --bind is the same flag)
` + udpOffloadHelp + `
The tools' flags (short or long form; "-s 8192", "-s8192", "--size=8192" all work):
  -p, --port=<port>       listen on/connect to TCP port <port> (default 18515)
  -d, --ib-dev=<dev>      accepted and ignored: the device is --addr's
  -i, --ib-port=<port>    port of the device; there is one, 1 (default 1)
  -s, --size=<size>       size of message to exchange (default 4096; --ud 1024, as ibv_ud_pingpong
                          of rdma-core 44; --ud at most the port MTU of --addr's interface)
  -m, --mtu=<size>        path MTU: 256, 512, 1024, 2048 or 4096 (default 1024; --rc and --uc)
  -r, --rx-depth=<dep>    number of receives to post at a time (default 500)
  -n, --iters=<iters>     number of exchanges (default 1000)
  -q, --num-qp=<num>      number of QPs with --srq, 1-256 (default 16; at most -r)
  -l, --sl=<sl>           service level 0-15 (accepted; RoCEv2 packets do not carry it)
  -e, --events            sleep on CQ events (default: poll, briefly spinning before it sleeps)
  -g, --gid-idx=<idx>     accepted and ignored: the one GID is --addr's, always sent
  -c, --chk               validate received buffer (--rc, --uc): the client zeroes the first
                          byte of each page before the first send, the server checks them at the
                          end ("invalid data in page N", exit 1)
  -o, --odp               on demand paging: accepted, the memory is always resident
  -P, --prefetch          prefetch with --odp: accepted, nothing to prefetch
  -j, --dm                device memory: not supported (fails, as on rdma_rxe)
  -t, --ts                completion timestamps: not supported (fails, as on rdma_rxe)

Output (stdout), as the tools print it:
    local address:  LID 0x0000, QPN 0x000011, PSN 0x6bbcca, GID ::ffff:192.168.77.1
    remote address: LID 0x0000, QPN 0x000011, PSN 0x1c2f9e, GID ::ffff:192.168.77.11
  8192000 bytes in 0.02 seconds = 3276.80 Mbit/sec
  1000 iters in 0.02 seconds = 20.00 usec/iter
(ibv_ud_pingpong writes "PSN 0x......: GID" in its local line; --ud does too.) Dropped packets
are explained on stderr, at most once per cause per second ("ibpeer: dropped 3 packets from
192.168.77.11: unknown destination QPN 0x000123 (...)").

Exit status: 0 when every exchange completed, 1 otherwise (bad flags too, as the tools).
`

// ppFlagAliases are the tools' long option names for the short flags.
var ppFlagAliases = [][2]string{
	{"p", "port"}, {"d", "ib-dev"}, {"i", "ib-port"}, {"s", "size"}, {"m", "mtu"}, {"r", "rx-depth"},
	{"n", "iters"}, {"l", "sl"}, {"e", "events"}, {"g", "gid-idx"}, {"c", "chk"}, {"o", "odp"},
	{"P", "prefetch"}, {"j", "dm"}, {"t", "ts"}, {"q", "num-qp"}, {"addr", "bind"},
}

// pingpongFlags defines ibpeer pingpong's flags.
func pingpongFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer pingpong", flag.ContinueOnError)
	fs.SetOutput(out) // the caller prints the parse errors
	fs.Usage = func() {}
	fs.Bool("rc", false, "ibv_rc_pingpong (default)")
	fs.Bool("uc", false, "ibv_uc_pingpong")
	fs.Bool("ud", false, "ibv_ud_pingpong")
	fs.Bool("srq", false, "ibv_srq_pingpong")
	device.UDPOffloadFlag(fs)
	fs.Int("q", 16, "QPs (--srq)")
	fs.String("addr", "", "local IP address (required)")
	fs.Int("p", setup.DefaultPort, "TCP port")
	fs.String("d", "", "IB device (ignored)")
	fs.Int("i", 1, "IB port")
	fs.Int("s", 0, "message size")
	fs.Int("m", 1024, "path MTU")
	fs.Int("r", 500, "rx depth")
	fs.Int("n", 1000, "iterations")
	fs.Int("l", 0, "service level")
	fs.Bool("e", false, "sleep on CQ events")
	fs.Int("g", -1, "GID index (ignored)")
	fs.Bool("c", false, "validate received buffer")
	fs.Bool("o", false, "on demand paging (no effect)")
	fs.Bool("P", false, "prefetch (no effect)")
	fs.Bool("j", false, "device memory (not supported)")
	fs.Bool("t", false, "completion timestamps (not supported)")
	for _, a := range ppFlagAliases {
		f := fs.Lookup(a[0])
		fs.Var(f.Value, a[1], "same as -"+a[0])
	}
	return fs
}

// ppSplitShort turns getopt's "-s8192" into "-s", "8192" for the short
// flags that take a value, so that the tools' command lines parse.
func ppSplitShort(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !strings.Contains(a, "=") && fs.Lookup(a[1:]) == nil {
			if f := fs.Lookup(a[1:2]); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
					out = append(out, a[:2], a[2:])
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// ppParse parses args as getopt does, flags and the host in any order,
// and checks them. A non-nil error is a usage error.
func ppParse(fs *flag.FlagSet, args []string) (pingpong.Config, error) {
	var positional []string
	rest := ppSplitShort(fs, args)
	for {
		if err := fs.Parse(rest); err != nil {
			return pingpong.Config{}, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	isSet := func(name string) bool {
		if set[name] {
			return true
		}
		for _, a := range ppFlagAliases {
			if a[0] == name && set[a[1]] {
				return true
			}
		}
		return false
	}
	get := func(name string) flag.Getter { return fs.Lookup(name).Value.(flag.Getter) }
	intv := func(name string) int { return get(name).Get().(int) }
	boolv := func(name string) bool { return get(name).Get().(bool) }

	cfg := pingpong.Config{Type: endpoint.RC}
	modes := 0
	for _, m := range []struct {
		flag string
		typ  endpoint.QPType
	}{{"rc", endpoint.RC}, {"uc", endpoint.UC}, {"ud", endpoint.UD}, {"srq", endpoint.RC}} {
		if boolv(m.flag) {
			modes++
			cfg.Type = m.typ
		}
	}
	if modes > 1 {
		return cfg, errors.New("give one of --rc, --uc, --ud, --srq")
	}
	cfg.SRQ = boolv("srq")
	if isSet("q") && !cfg.SRQ {
		return cfg, errors.New("-q: the number of QPs is ibv_srq_pingpong's (--srq)")
	}
	if cfg.SRQ {
		for _, f := range []string{"c", "o", "P", "j", "t"} {
			if isSet(f) {
				return cfg, fmt.Errorf("-%s: ibv_srq_pingpong has no such flag", f)
			}
		}
		cfg.NumQP = intv("q")
		if cfg.NumQP < 1 || cfg.NumQP > setup.SRQPingpongRecords {
			return cfg, fmt.Errorf("-q %d: want 1-%d QPs (ibv_srq_pingpong's MAX_QP)", cfg.NumQP, setup.SRQPingpongRecords)
		}
	}
	switch len(positional) {
	case 0:
	case 1:
		cfg.Host = positional[0]
	default:
		return cfg, fmt.Errorf("one host, please: have %q", positional)
	}
	addr := get("addr").Get().(string)
	if addr == "" {
		return cfg, errors.New("give --addr IP: the local address to bind UDP 4791 to, whose GID is advertised")
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return cfg, fmt.Errorf("--addr %q: not an IP address", addr)
	}
	cfg.Addr = a.Unmap()

	cfg.Port = intv("p")
	if cfg.Port < 0 || cfg.Port > 65535 {
		return cfg, fmt.Errorf("-p %d: want a TCP port, 0-65535", cfg.Port)
	}
	if p := intv("i"); p != 1 {
		return cfg, fmt.Errorf("-i %d: the device has one port, 1", p)
	}
	cfg.Size = intv("s")
	if !isSet("s") {
		cfg.Size = 4096
		if cfg.Type == endpoint.UD {
			cfg.Size = 1024
		}
	}
	if cfg.Size < 1 || cfg.Size > 1<<30 {
		return cfg, fmt.Errorf("-s %d: want 1 to %d bytes", cfg.Size, 1<<30)
	}
	if cfg.Type == endpoint.UD && isSet("m") {
		return cfg, errors.New("-m: ibv_ud_pingpong has no path MTU; its size is bounded by the port MTU")
	}
	mtu := intv("m")
	switch mtu {
	case 256:
		cfg.MTU = layers.MTU256
	case 512:
		cfg.MTU = layers.MTU512
	case 1024:
		cfg.MTU = layers.MTU1024
	case 2048:
		cfg.MTU = layers.MTU2048
	case 4096:
		cfg.MTU = layers.MTU4096
	default:
		return cfg, fmt.Errorf("-m %d: want 256, 512, 1024, 2048 or 4096", mtu)
	}
	cfg.RXDepth = intv("r")
	if cfg.RXDepth < 1 || cfg.RXDepth > 16384 {
		return cfg, fmt.Errorf("-r %d: want 1-16384 receives", cfg.RXDepth)
	}
	cfg.Iters = intv("n")
	if cfg.Iters < 1 {
		return cfg, fmt.Errorf("-n %d: want at least 1 exchange", cfg.Iters)
	}
	if cfg.SRQ && cfg.NumQP > cfg.RXDepth {
		return cfg, fmt.Errorf("rx_depth %d is too small for %d QPs -- must have at least one receive per QP", cfg.RXDepth, cfg.NumQP)
	}
	if sl := intv("l"); sl < 0 || sl > 15 {
		return cfg, fmt.Errorf("-l %d: want a service level, 0-15", sl)
	}
	cfg.Events = boolv("e")
	cfg.UDPOffload = udpOffloadOf(fs)
	cfg.Check = boolv("c")
	if cfg.Check && cfg.Type == endpoint.UD {
		return cfg, errors.New("-c: ibv_ud_pingpong has no buffer validation")
	}
	if boolv("P") && !boolv("o") {
		return cfg, errors.New("-P: prefetch needs -o (on demand paging)")
	}
	return cfg, nil
}

func runPingpong(args []string, stdout, stderr io.Writer) int {
	fs := pingpongFlags(io.Discard)
	cfg, err := ppParse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, pingpongUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibpeer pingpong: %v\nRun 'ibpeer pingpong -h' for usage.\n", err)
		return exitError
	}
	v := func(name string) bool { return fs.Lookup(name).Value.(flag.Getter).Get().(bool) }
	// What rdma_rxe answers to these (no device memory, no timestamps).
	if v("j") {
		fmt.Fprintln(stderr, "ibpeer pingpong: -j: the device does not support device memory")
		return exitError
	}
	if v("t") {
		fmt.Fprintln(stderr, "The device isn't completion timestamp capable")
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Stderr = stderr
	if err := pingpong.Run(ctx, cfg, stdout); err != nil {
		if !errors.Is(err, pingpong.ErrReported) {
			fmt.Fprintf(stderr, "ibpeer pingpong: %v\n", err)
		}
		return exitError
	}
	return exitOK
}
