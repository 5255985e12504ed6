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

	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/serve"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

const serveUsage = `usage: ibpeer serve --addr IP [flags]

Serves RDMA on IP: RoCEv2 on UDP 4791 and a set-up exchange on TCP 18515
(--port). Each TCP connection gets its own RC QP and its own memory region
of --mr-size bytes (remote write, read and atomic allowed), so several
clients, or one client with --qps N, can run at once without touching each
other's data. The QP and the region live as long as the TCP connection.
Runs until SIGINT or SIGTERM, then prints the packet counters.

Set-up exchange, ibv_rc_pingpong's with one message more:
  client -> server  52 bytes  "LLLL:QQQQQQ:PPPPPP:GID" and a NUL: the client QP's
                              LID, QPN, first PSN and GID (ibv_rc_pingpong's text)
  server -> client  52 bytes  the same for the server's QP, sent once that QP is
                              ready to receive
  client -> server   5 bytes  "done" and a NUL
  server -> client  62 bytes  "RRRRRRRR:VVVVVVVVVVVVVVVV:SSSSSSSSSSSSSSSS:MMMM:LLLLLLLL:CCCC"
                              and a NUL, in hex: the region's rkey, VA and size,
                              the path MTU in bytes, and the length and number of
                              the receive buffers SENDs land in
The region comes last, after ibv_rc_pingpong's own sequence, so the first
three messages are exactly that tool's and anything that reads its format
(ibdump pairing QPs by their set-up, a plain pingpong client) still parses
them; a client that wants the region reads one message more.

SENDs land in the region: receive buffer k covers [k·L, (k+1)·L), posted
in order and posted again, in the same order, as soon as it completed, so
the n-th SEND of a connection lands in buffer n mod C. The QP's path MTU is
--mtu; the client must use the same.

--image FILE seeds every connection's region: it starts with FILE's bytes
(the rest is zero). ibpeer replay --image writes such a file from a
capture, with offset 0 at the captured responder's VA, so that replay's
compare mode with --payload finds the data the capture's READs and atomics
found.

At most --max-conns TCP connections (default 64) are held at once, each
with its QP and, once the client has sent its first message, its region:
one more is closed at once, with a line saying so ("refused a set-up
connection from ADDR: 64 connections held (--max-conns 64)"), and gets
nothing. A connection that has not finished the set-up exchange within
10 s is dropped ("set-up not finished within 10s, dropped"). Refusal lines
come at most once a second; the others are counted on the next one and at
exit.

--cm PORT serves RDMA CM connections (QP1) instead, answering like
librdmacm's ucmatose server: 'ibpeer serve --cm 7471 -h' for its flags.

Exit status: 0 when stopped by SIGINT or SIGTERM, 1 when it cannot serve
(UDP 4791 or the TCP port taken, --pcap not writable, the listener
failing), 2 for bad flags.

Example:
  ibpeer serve --addr 127.0.0.2
  ibpeer write --addr 127.0.0.1 --to 127.0.0.2 --size 1048576 --iters 64 --verify --loss 0.05
  ibpeer replay --image region.bin pcaps/rxe/read_bw.pcap
  ibpeer serve --addr 127.0.0.2 --image region.bin
  ibpeer replay --compare --to 127.0.0.2 --setup pingpong --payload pcaps/rxe/read_bw.pcap

Flags:
`

func runServe(args []string, stdout, stderr io.Writer) int {
	if hasCMFlag(args) {
		return runServeCM(args, stdout, stderr) // cmserve.go
	}
	fs := flag.NewFlagSet("ibpeer serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "", "local `IP` address: the GID, UDP 4791 and the TCP set-up port bind here (required)")
	port := fs.Int("port", setup.DefaultPort, "TCP `port` of the set-up exchange")
	mrSize := fs.Int("mr-size", 4<<20, "bytes of the memory region each connection gets")
	mtu := fs.Int("mtu", 1024, "path MTU of the QPs: 256, 512, 1024, 2048 or 4096 (ibv_rc_pingpong's default is 1024)")
	recv := fs.Int("recv", 16, "receive buffers per QP; each is mr-size/recv bytes")
	image := fs.String("image", "", "start every connection's region with the bytes of `FILE` (ibpeer replay --image writes one from a capture)")
	pcap := fs.String("pcap", "", "write the RoCEv2 packets the server sends and receives to pcap `FILE` (raw IP; see ibpeer write -h)")
	offload := device.UDPOffloadFlag(fs)
	maxConns := fs.Int("max-conns", serve.DefaultMaxConns, "TCP connections (each with a QP and a region) held at once; more are refused")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, serveUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "Run 'ibpeer serve -h' for usage.")
		return exitUsage
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ibpeer serve: %s\nRun 'ibpeer serve -h' for usage.\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	cfg := serve.Config{Port: *port, MRSize: *mrSize, MTU: *mtu, Recv: *recv, Pcap: *pcap, Diag: stderr, MaxConns: *maxConns, UDPOffload: *offload}
	if *addr == "" {
		return bad("give --addr IP, the address to serve on")
	}
	a, err := netip.ParseAddr(*addr)
	if err != nil {
		return bad("--addr %q: not an IP address", *addr)
	}
	cfg.Addr = a.Unmap()
	switch {
	case *port < 0 || *port > 65535:
		return bad("--port %d: want 0-65535", *port)
	case *mrSize < 8:
		return bad("--mr-size %d: want at least 8 bytes", *mrSize)
	case *recv < 1 || *recv > 4096:
		return bad("--recv %d: want 1-4096", *recv)
	case *mrSize / *recv < 1:
		return bad("--mr-size %d is too small for %d receive buffers", *mrSize, *recv)
	case *maxConns < 1 || *maxConns > 1<<16:
		return bad("--max-conns %d: want 1-65536", *maxConns)
	}
	if _, err := layers.ParsePathMTU(*mtu); err != nil {
		return bad("--mtu: %v", err)
	}
	if *image != "" {
		if cfg.Image, err = os.ReadFile(*image); err != nil {
			return bad("--image: %v", err)
		}
		if len(cfg.Image) > *mrSize {
			return bad("--image %s: %d bytes do not fit a region of --mr-size %d", *image, len(cfg.Image), *mrSize)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.Run(ctx, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "ibpeer serve: %v\n", err)
		return exitError
	}
	return exitOK
}
