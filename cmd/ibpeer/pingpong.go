package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// ibpeer pingpong: ibv_rc_pingpong, ibv_uc_pingpong and ibv_ud_pingpong
// (rdma-core libibverbs/examples) in either role, over the endpoint. The
// set-up exchange is theirs (setup.PingpongClient/Server, ENDPOINT.md
// §2.1), and so are the defaults, the flags, the QP attributes, the traffic
// pattern, the output and the exit status (0, or 1 for any failure
// including bad flags).

const pingpongUsage = `usage: ibpeer pingpong [--rc|--uc|--ud] --addr IP [flags]          start a server and wait for connection
       ibpeer pingpong [--rc|--uc|--ud] --addr IP [flags] <host>   connect to server at <host>

Plays ibv_rc_pingpong (--rc, the default), ibv_uc_pingpong (--uc) or ibv_ud_pingpong (--ud)
against the rdma-core tool on any RoCEv2 device (rdma_rxe, a NIC) or against another ibpeer:
the same TCP set-up exchange (port 18515, "LID:QPN:PSN:GID"), QP attributes, SEND/RECV
ping-pong and report. The client sends first; each side sends its next message once its
previous one completed and a message arrived, iters times.

ibpeer's own flags:
  --rc, --uc, --ud        transport (default --rc)
  --addr IP               local IP address: UDP 4791 and the server's TCP port bind here
                          (not the wildcard, as the tools do) and the GID advertised is its
                          ::ffff-mapped form (required; --bind is the same flag)

The tools' flags (short or long form; "-s 8192", "-s8192", "--size=8192" all work):
  -p, --port=<port>       listen on/connect to TCP port <port> (default 18515)
  -d, --ib-dev=<dev>      accepted and ignored: the device is --addr's
  -i, --ib-port=<port>    port of the device; there is one, 1 (default 1)
  -s, --size=<size>       size of message to exchange (default 4096; --ud 1024, as ibv_ud_pingpong
                          of rdma-core 44; --ud at most the port MTU of --addr's interface)
  -m, --mtu=<size>        path MTU: 256, 512, 1024, 2048 or 4096 (default 1024; --rc and --uc)
  -r, --rx-depth=<dep>    number of receives to post at a time (default 500)
  -n, --iters=<iters>     number of exchanges (default 1000)
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

// pingpongConfig is ibpeer pingpong's checked configuration.
type pingpongConfig struct {
	typ     endpoint.QPType
	addr    netip.Addr
	host    string // "" for the server
	port    int
	size    int
	mtu     layers.PathMTU
	rxDepth int
	iters   int
	events  bool
	check   bool

	// listening, when set, learns the server's TCP address once it
	// accepts connections (tests use port 0).
	listening func(net.Addr)
}

// Work request IDs, the tools' PINGPONG_RECV_WRID and PINGPONG_SEND_WRID.
const (
	ppRecvWRID = 1
	ppSendWRID = 2
)

// ppGRH is the room a UD receive needs in front of the payload.
const ppGRH = 40

// ppFlagAliases are the tools' long option names for the short flags.
var ppFlagAliases = [][2]string{
	{"p", "port"}, {"d", "ib-dev"}, {"i", "ib-port"}, {"s", "size"}, {"m", "mtu"}, {"r", "rx-depth"},
	{"n", "iters"}, {"l", "sl"}, {"e", "events"}, {"g", "gid-idx"}, {"c", "chk"}, {"o", "odp"},
	{"P", "prefetch"}, {"j", "dm"}, {"t", "ts"}, {"addr", "bind"},
}

// pingpongFlags defines ibpeer pingpong's flags.
func pingpongFlags(out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("ibpeer pingpong", flag.ContinueOnError)
	fs.SetOutput(out) // the caller prints the parse errors
	fs.Usage = func() {}
	fs.Bool("rc", false, "ibv_rc_pingpong (default)")
	fs.Bool("uc", false, "ibv_uc_pingpong")
	fs.Bool("ud", false, "ibv_ud_pingpong")
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
func ppParse(fs *flag.FlagSet, args []string) (pingpongConfig, error) {
	var positional []string
	rest := ppSplitShort(fs, args)
	for {
		if err := fs.Parse(rest); err != nil {
			return pingpongConfig{}, err
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

	cfg := pingpongConfig{typ: endpoint.RC}
	modes := 0
	for _, m := range []struct {
		flag string
		typ  endpoint.QPType
	}{{"rc", endpoint.RC}, {"uc", endpoint.UC}, {"ud", endpoint.UD}} {
		if boolv(m.flag) {
			modes++
			cfg.typ = m.typ
		}
	}
	if modes > 1 {
		return cfg, errors.New("give one of --rc, --uc, --ud")
	}
	switch len(positional) {
	case 0:
	case 1:
		cfg.host = positional[0]
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
	cfg.addr = a.Unmap()

	cfg.port = intv("p")
	if cfg.port < 0 || cfg.port > 65535 {
		return cfg, fmt.Errorf("-p %d: want a TCP port, 0-65535", cfg.port)
	}
	if p := intv("i"); p != 1 {
		return cfg, fmt.Errorf("-i %d: the device has one port, 1", p)
	}
	cfg.size = intv("s")
	if !isSet("s") {
		cfg.size = 4096
		if cfg.typ == endpoint.UD {
			cfg.size = 1024
		}
	}
	if cfg.size < 1 || cfg.size > 1<<30 {
		return cfg, fmt.Errorf("-s %d: want 1 to %d bytes", cfg.size, 1<<30)
	}
	if cfg.typ == endpoint.UD && isSet("m") {
		return cfg, errors.New("-m: ibv_ud_pingpong has no path MTU; its size is bounded by the port MTU")
	}
	mtu := intv("m")
	switch mtu {
	case 256:
		cfg.mtu = layers.MTU256
	case 512:
		cfg.mtu = layers.MTU512
	case 1024:
		cfg.mtu = layers.MTU1024
	case 2048:
		cfg.mtu = layers.MTU2048
	case 4096:
		cfg.mtu = layers.MTU4096
	default:
		return cfg, fmt.Errorf("-m %d: want 256, 512, 1024, 2048 or 4096", mtu)
	}
	cfg.rxDepth = intv("r")
	if cfg.rxDepth < 1 || cfg.rxDepth > 16384 {
		return cfg, fmt.Errorf("-r %d: want 1-16384 receives", cfg.rxDepth)
	}
	cfg.iters = intv("n")
	if cfg.iters < 1 {
		return cfg, fmt.Errorf("-n %d: want at least 1 exchange", cfg.iters)
	}
	if sl := intv("l"); sl < 0 || sl > 15 {
		return cfg, fmt.Errorf("-l %d: want a service level, 0-15", sl)
	}
	cfg.events = boolv("e")
	cfg.check = boolv("c")
	if cfg.check && cfg.typ == endpoint.UD {
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
	if err := pingpong(ctx, cfg, stdout, stderr); err != nil {
		if !errors.Is(err, errPingpongReported) {
			fmt.Fprintf(stderr, "ibpeer pingpong: %v\n", err)
		}
		return exitError
	}
	return exitOK
}

// errPingpongReported is a failure whose message (the tool's) is already
// on stderr.
var errPingpongReported = errors.New("reported")

// pingpong runs one test; the local and remote address lines and the
// report go to stdout.
func pingpong(ctx context.Context, cfg pingpongConfig, stdout, stderr io.Writer) error {
	if cfg.typ == endpoint.UD {
		if mtu := device.ActiveMTU(cfg.addr); cfg.size > mtu {
			fmt.Fprintf(stderr, "Requested size larger than port MTU (%d)\n", mtu)
			return errPingpongReported
		}
	}
	wire, err := endpoint.ListenUDP(netip.AddrPortFrom(cfg.addr, endpoint.RoCEv2Port))
	if err != nil {
		return fmt.Errorf("RoCEv2 socket on %v: %w", cfg.addr, err)
	}
	dev := device.Open(wire, stderr)
	defer dev.Close()

	bufLen := cfg.size
	if cfg.typ == endpoint.UD {
		bufLen += ppGRH
	}
	buf := make([]byte, bufLen)
	for i := range buf {
		buf[i] = 0x7b // what the tools fill it with
	}
	pd := dev.AllocPD()
	mr, err := pd.RegMR(buf, endpoint.AccessLocalWrite)
	if err != nil {
		return fmt.Errorf("register the buffer: %w", err)
	}
	cq := dev.CreateCQ(cfg.rxDepth + 1)
	qp, err := pd.CreateQP(endpoint.QPConfig{Type: cfg.typ, SendCQ: cq, RecvCQ: cq, MaxSendWR: 1, MaxRecvWR: cfg.rxDepth})
	if err != nil {
		return fmt.Errorf("create QP: %w", err)
	}
	initAttr := endpoint.QPAttr{State: endpoint.StateInit, QKey: endpoint.PingpongQKey}
	mask := endpoint.AttrState | endpoint.AttrAccess
	if cfg.typ == endpoint.UD {
		mask = endpoint.AttrState | endpoint.AttrQKey
	}
	if err := qp.Modify(initAttr, mask); err != nil {
		fmt.Fprintln(stderr, "Failed to modify QP to INIT")
		return errPingpongReported
	}
	recv := endpoint.RecvWR{ID: ppRecvWRID, SGL: []endpoint.SGE{mr.SGE(0, bufLen)}}
	postRecv := func(n int) int {
		for i := range n {
			if qp.PostRecv(recv) != nil {
				return i
			}
		}
		return n
	}
	routs := postRecv(cfg.rxDepth)
	if routs < cfg.rxDepth {
		fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
		return errPingpongReported
	}

	local := setup.PingpongDest{QPN: qp.QPN(), PSN: endpoint.RandomPSN(), GID: dev.GID()}
	sep := ","
	if cfg.typ == endpoint.UD {
		sep = ":" // ibv_ud_pingpong's local line
	}
	fmt.Fprintf(stdout, "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %v\n",
		local.LID, local.QPN, uint32(local.PSN), sep, netip.AddrFrom16(local.GID))

	var remote setup.PingpongDest
	var remoteAddr netip.Addr
	connect := func(r setup.PingpongDest, tcpPeer net.Addr) error {
		remoteAddr = netip.AddrFrom16(r.GID).Unmap()
		if r.GID == [16]byte{} {
			// The tools without -g send no GID and cannot use RoCE; say
			// so and use the set-up connection's address.
			if ap, err := netip.ParseAddrPort(tcpPeer.String()); err == nil {
				remoteAddr = ap.Addr().Unmap()
			}
			fmt.Fprintf(stderr, "ibpeer pingpong: the peer sent GID :: (run the tool with -g <RoCEv2 GID index>); using %v\n", remoteAddr)
		}
		a := endpoint.ConnectAttr{LocalPSN: local.PSN, QKey: endpoint.PingpongQKey}
		if cfg.typ != endpoint.UD {
			a.Remote, a.RemoteQPN, a.RemotePSN, a.MTU = remoteAddr, r.QPN, layers.PSN(r.PSN), cfg.mtu
			a.NoAccess = true
			a.Timeout, a.RetryCnt, a.RNRRetry, a.MinRNRTimer = 14, 7, 7, 12
			a.MaxRdAtomic, a.MaxDestRdAtomic = 1, 1
			a.HopLimit = 1
		}
		if err := qp.Connect(a); err != nil {
			return fmt.Errorf("connect QP: %w", err)
		}
		return nil
	}

	var serverAddr net.Addr
	if cfg.host != "" {
		remote, serverAddr, err = ppClientExchange(ctx, cfg, local, stderr)
		if err != nil {
			return err
		}
	} else {
		remote, err = ppServerExchange(ctx, cfg, local, connect, stderr)
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %v\n",
		remote.LID, remote.QPN, uint32(remote.PSN), netip.AddrFrom16(remote.GID))
	if cfg.host != "" {
		if err := connect(remote, serverAddr); err != nil {
			return err
		}
	}

	send := &endpoint.SendWR{ID: ppSendWRID, Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, cfg.size)}}
	if cfg.typ == endpoint.UD {
		send.SGL[0] = mr.SGE(ppGRH, cfg.size)
		send.Dest = endpoint.UDDest{Addr: remoteAddr, QPN: remote.QPN, QKey: endpoint.PingpongQKey, HopLimit: 1}
	}
	pageSize := os.Getpagesize()
	if cfg.host != "" && cfg.check {
		// The tools write i / page_size % sizeof(char): zero.
		for i := 0; i < cfg.size; i += pageSize {
			buf[i] = 0
		}
	}

	pending := ppRecvWRID
	if cfg.host != "" {
		if err := qp.PostSend(send); err != nil {
			fmt.Fprintln(stderr, "Couldn't post send")
			return errPingpongReported
		}
		pending |= ppSendWRID
	}
	start := time.Now()
	rcnt, scnt := 0, 0
	wcs := make([]endpoint.WC, 2)
	for rcnt < cfg.iters || scnt < cfg.iters {
		n, err := ppPoll(ctx, cq, wcs, cfg.events)
		if err != nil {
			return fmt.Errorf("after %d sends and %d receives: %w", scnt, rcnt, err)
		}
		for _, wc := range wcs[:n] {
			if wc.Status != endpoint.StatusSuccess {
				fmt.Fprintf(stderr, "Failed status %s (%d) for wr_id %d\n", ppStatusStr(wc.Status), wc.Status, wc.ID)
				return errPingpongReported
			}
			switch wc.ID {
			case ppSendWRID:
				scnt++
			case ppRecvWRID:
				routs--
				if routs <= 1 {
					routs += postRecv(cfg.rxDepth - routs)
					if routs < cfg.rxDepth {
						fmt.Fprintf(stderr, "Couldn't post receive (%d)\n", routs)
						return errPingpongReported
					}
				}
				rcnt++
			default:
				fmt.Fprintf(stderr, "Completion for unknown wr_id %d\n", wc.ID)
				return errPingpongReported
			}
			pending &^= int(wc.ID)
			if scnt < cfg.iters && pending == 0 {
				if err := qp.PostSend(send); err != nil {
					fmt.Fprintln(stderr, "Couldn't post send")
					return errPingpongReported
				}
				pending = ppRecvWRID | ppSendWRID
			}
		}
	}
	elapsed := time.Since(start)
	// A round trip through the QP's goroutine: the ACK for the peer's
	// last message has been handed to the wire before the device closes.
	_, _ = qp.Query()

	// The tools compute in float: usec is a float, usec / iters too.
	usec := float32(elapsed.Microseconds())
	bytes := int64(cfg.size) * int64(cfg.iters) * 2
	fmt.Fprintf(stdout, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, float64(usec)/1e6, float64(bytes)*8/float64(usec))
	fmt.Fprintf(stdout, "%d iters in %.2f seconds = %.2f usec/iter\n", cfg.iters, float64(usec)/1e6, float64(usec/float32(cfg.iters)))

	if cfg.host == "" && cfg.check {
		bad := false
		for i := 0; i < cfg.size; i += pageSize {
			if buf[i] != 0 {
				fmt.Fprintf(stderr, "invalid data in page %d\n", i/pageSize)
				bad = true
			}
		}
		if bad {
			return errPingpongReported
		}
	}
	return nil
}

// ppClientExchange connects to the server and trades set-up messages; it
// returns the server's message and TCP address.
func ppClientExchange(ctx context.Context, cfg pingpongConfig, local setup.PingpongDest, stderr io.Writer) (setup.PingpongDest, net.Addr, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		fmt.Fprintf(stderr, "Couldn't connect to %s:%d\n", cfg.host, cfg.port)
		return setup.PingpongDest{}, nil, errPingpongReported
	}
	defer conn.Close()
	stopWatch := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopWatch()
	remote, err := setup.PingpongClient(conn, local)
	if err != nil {
		return remote, nil, fmt.Errorf("set-up exchange with %v: %w", conn.RemoteAddr(), err)
	}
	return remote, conn.RemoteAddr(), nil
}

// ppServerExchange waits for one client, moves the QP to RTS with what it
// sent (connect), then answers.
func ppServerExchange(ctx context.Context, cfg pingpongConfig, local setup.PingpongDest,
	connect func(setup.PingpongDest, net.Addr) error, stderr io.Writer) (setup.PingpongDest, error) {
	var lc net.ListenConfig
	// --addr, not the wildcard the tools bind: this device answers on
	// that address only, and another server may have the port on
	// another address of the machine.
	ln, err := lc.Listen(ctx, "tcp", netip.AddrPortFrom(cfg.addr, uint16(cfg.port)).String())
	if err != nil {
		fmt.Fprintf(stderr, "Couldn't listen to port %d\n", cfg.port)
		fmt.Fprintf(stderr, "ibpeer pingpong: %v\n", err)
		return setup.PingpongDest{}, errPingpongReported
	}
	if cfg.listening != nil {
		cfg.listening(ln.Addr())
	}
	stopLn := context.AfterFunc(ctx, func() { ln.Close() })
	conn, err := ln.Accept()
	stopLn()
	ln.Close()
	if err != nil {
		if ctx.Err() != nil {
			return setup.PingpongDest{}, fmt.Errorf("waiting for a client on port %d: %w", cfg.port, ctx.Err())
		}
		fmt.Fprintln(stderr, "accept() failed")
		return setup.PingpongDest{}, errPingpongReported
	}
	defer conn.Close()
	stopWatch := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopWatch()
	remote, err := setup.PingpongServer(conn, local, func(r setup.PingpongDest) error {
		return connect(r, conn.RemoteAddr())
	})
	if err != nil {
		return remote, fmt.Errorf("set-up exchange with %v: %w", conn.RemoteAddr(), err)
	}
	return remote, nil
}

// ppSpin is how many empty polls the default (polling) mode makes before
// it sleeps on the CQ: the tools spin forever, which two processes on a
// small machine cannot afford.
const ppSpin = 200

// ppPoll returns at least one completion, or ctx's error.
func ppPoll(ctx context.Context, cq *endpoint.CQ, wcs []endpoint.WC, events bool) (int, error) {
	if !events {
		for range ppSpin {
			if n := cq.Poll(wcs); n > 0 {
				return n, nil
			}
		}
	}
	return cq.Wait(ctx, wcs)
}

// ppStatusNames are ibv_wc_status_str's strings.
var ppStatusNames = map[endpoint.Status]string{
	endpoint.StatusSuccess:        "success",
	endpoint.StatusLocLenErr:      "local length error",
	endpoint.StatusLocQPOpErr:     "local QP operation error",
	endpoint.StatusLocProtErr:     "local protection error",
	endpoint.StatusWRFlushErr:     "Work Request Flushed Error",
	endpoint.StatusBadRespErr:     "bad response error",
	endpoint.StatusLocAccessErr:   "local access error",
	endpoint.StatusRemInvReqErr:   "remote invalid request error",
	endpoint.StatusRemAccessErr:   "remote access error",
	endpoint.StatusRemOpErr:       "remote operational error",
	endpoint.StatusRetryExcErr:    "transport retry counter exceeded",
	endpoint.StatusRNRRetryExcErr: "RNR retry counter exceeded",
	endpoint.StatusGeneralErr:     "general error",
}

func ppStatusStr(s endpoint.Status) string {
	if n, ok := ppStatusNames[s]; ok {
		return n
	}
	return "unknown"
}
