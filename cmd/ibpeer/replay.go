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
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/replaycmd"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
	"github.com/ibwire/ibwire/setup"
)

const replayUsage = `usage: ibpeer replay [flags] FILE

Sends the frames of a capture again — tcpreplay and tcprewrite for RDMA.
Frames can be chosen with a display filter, rewritten (MACs, IPs and GIDs,
UDP ports, LIDs, QPNs, PSN bases, R_Keys, VAs) with every ICRC, VCRC and IP,
UDP and TCP checksum brought up to date, and paced. The set-up messages
follow the rewrite too: CM REQ/REP on QP1 and the TCP exchanges of perftest
and ibv_rc_pingpong. An ICRC the capture had wrong stays wrong by the same
amount (--fix-crc repairs it), so rewriting back gives the original bytes.
Exactly one destination:

  -w FILE           write the rewritten frames to a capture (offline, like tcprewrite)
  --to HOST[:PORT]  send the RoCEv2 datagrams through the endpoint's UDP wire
                    (port 4791 by default); the wire writes each ICRC for the
                    addresses it really sends from and to
  -i IFACE          send whole Ethernet frames out of IFACE (AF_PACKET, root)

Safety: only loopback targets and interfaces unless --allow-remote; sending
is capped at 10000 packets/s and 100 Mb/s unless --top (or --cap-pps and
--cap-mbps) says otherwise.

Compare mode (--compare, with --to) plays the requester half of one captured
RC connection against a live responder: it learns the peer's QPN, R_Key
and VA in a set-up exchange, remaps the requests to them (and their PSNs to
the first PSN announced), and compares the responses with the captured
ones. --setup says how:

  perftest  perftest's TCP exchange on --oob (ib_write_bw, ib_read_bw,
            ib_atomic_bw as server, or ibpeer perftest write|read|atomic)
  pingpong  ibv_rc_pingpong's TCP exchange on --oob; ibpeer serve's region
            message after it gives the R_Key and VA
  cm        perftest's RDMA CM mode (ib_write_bw -R, ibpeer perftest ... -R):
            a set-up QP connected by RDMA CM (REQ/REP/RTU on QP1, over the
            same UDP port as the requests) to the port of --oob :PORT
            (default 18515), the binary QP messages as SENDs on it, the data
            QP connected by RDMA CM, which picks its QPN and first PSN; at the
            end the data QP's DREQ, as perftest's client. perftest-cm is
            another name for it
  manual    the peer's values from --peer-qpn, --peer-rkey, --peer-va

Without --setup, replay tries perftest's exchange and, when the peer does
not answer its first message within a second (ibpeer serve says nothing
to it), ibpeer serve's (pingpong) on a new connection, and says so.

It compares opcodes, PSNs relative to the first, AETH syndromes and MSNs,
lengths, and with --payload READ data and atomic original values; with
--payload it also reads the span the captured WRITEs cover back from the
peer after the play (RDMA READs after the last request) and checks it holds
what they wrote. The peer must allow remote READ of its region: ibpeer
serve and ibpeer perftest do; perftest's ib_write_bw registers its buffer
for remote write only, so leave --payload out against it. Each
request is sent once the peer has answered as far as the capture had
before it. A responder may acknowledge several messages with one ACK
(coalescing, which the IBTA allows and rxe does not do): unless
--strict-acks, the ACKs are judged by those the peer sent, each of which
must match a captured one, and a captured ACK the peer covered with a later
one is no difference; the report counts both. A peer that holds its ACKs
back until the wait for them (--timeout) runs out differs even so. A peer
that answers RNR NAK (its receive queue was empty) gets the request again
after the NAK's timer, as a requester sends it, up to 7 times; the report
says so on its first line, with the fix (ibpeer serve's --recv), and the
RNR NAKs are no difference unless the peer never took the request. The
peer's path MTU need not be the capture's: any MTU at which every played
message (and every READ's responses) takes as many packets as captured
will do (a capture of 2-byte messages fits 256 to 4096); the set-up
refuses a peer outside that range and names it.
Differences are printed like diff: "-frame N" a captured response the peer
did not send, "+live #K ... (to frame N)" the K-th live response, which the
capture does not have, with the frame of the captured request whose PSN
it carries. The exit status is 1 when there is any difference. --image writes the responder's region as the capture
shows it, for seeding the peer so that --payload can pass (given alone, it
needs no destination).

Mapping file (--map): one rule a line, # comments:
  mac  52:54:00:00:00:0b -> 02:00:00:00:00:01
  ip   192.168.77.11 -> 127.0.0.1      # also the GID ::ffff:192.168.77.11
  gid  fe80::1 -> fe80::2
  port 49441 -> 50000
  lid  1 -> 7
  qpn  0x11 -> 0x22
  rkey 0x2c6 -> 0x1234
  va   0x56005f76d000 -> 0x1000 len 0x100000
  psn-base qpn=0x11 +1000             # requests to QP 0x11 and their responses
The rule flags take the same values as FROM,TO (no shell quoting needed) or,
as tcprewrite, FROM:TO when neither side has colons: --port 49441:50000;
--psn-base takes the file's 'qpn=0x11 +1000' or 0x11,+1000.

Examples:
  ibpeer replay --ip 192.168.77.11,10.0.0.1 --ip 192.168.77.12,10.0.0.2 -w moved.pcap pcaps/rxe/write_bw.pcap
  ibpeer replay --map back.map -w orig.pcap moved.pcap
  ibpeer replay -Y 'bth.opcode == RC_RDMA_WRITE_ONLY' --conn -w writes.pcap capture.pcap
  ibpeer replay --to 127.0.0.1 --pps 10000 --loop 5 pcaps/rxe/send_bw_small.pcap
  ibpeer replay --to 127.0.0.1 --top pcaps/rxe/write_bw.pcap
  ibpeer replay -i lo --speed 2 pcaps/rxe/rc_pingpong.pcap
  ibpeer replay --image region.bin pcaps/rxe/read_bw.pcap
  ibpeer replay --compare --to 127.0.0.1 --setup perftest --payload pcaps/rxe/read_bw.pcap
  ibpeer perftest read -R --addr 127.0.0.2 &   # then:
  ibpeer replay --compare --to 127.0.0.2 --setup cm pcaps/rxe/read_bw.pcap
  ibpeer serve --addr 127.0.0.2 --image region.bin &   # then:
  ibpeer replay --compare --to 127.0.0.2 --setup pingpong --payload pcaps/rxe/read_bw.pcap

Flags (tcpreplay's short names in brackets):
`

// replayFlags are the parsed flags of ibpeer replay.
type replayFlags struct {
	offload                                        device.UDPOffload
	out, format, to, iface, from, filter, mapFile  string
	conn, fixCRC, reverse, allowRemote, top, quiet bool
	speed, pps, mbps, capPPS, capMbps              float64
	loop, count                                    int
	rules                                          map[string]*listFlag

	compare, payload, strictACK bool
	imageOut, imageMask         string
	setup, oob                  string
	setupGiven                  bool // --setup was on the command line
	peerQPN, peerPSN, peerRKey  uint64
	peerVA                      uint64
	localQPN, localPSN          uint64
	convNo                      int
	side                        string
	timeout                     time.Duration
}

var ruleKinds = []string{replay.KindMAC, replay.KindIP, replay.KindGID, replay.KindPort, replay.KindLID,
	replay.KindQPN, replay.KindRKey, replay.KindVA, replay.KindPSNBase}

var ruleHelp = map[string]string{
	replay.KindMAC:     "OLD,NEW: rewrite an Ethernet (and ARP) address",
	replay.KindIP:      "OLD,NEW: rewrite an IPv4 or IPv6 address, in IP headers, ARP and GIDs",
	replay.KindGID:     "OLD,NEW: rewrite a GID (an IPv6 address) in GRHs and IPv6 headers",
	replay.KindPort:    "OLD,NEW: rewrite a UDP or TCP port",
	replay.KindLID:     "OLD,NEW: rewrite a native IB LID",
	replay.KindQPN:     "OLD,NEW: rewrite a QPN (BTH destination QP, DETH source QP)",
	replay.KindRKey:    "OLD,NEW: rewrite an R_Key (RETH, AtomicETH, IETH)",
	replay.KindVA:      "OLD,NEW[,LEN]: move the VAs in [OLD, OLD+LEN) to NEW (RETH, AtomicETH)",
	replay.KindPSNBase: "'qpn=QPN ±N' as in the mapping file, or QPN,±N: shift the PSNs of the requests to QPN and of their responses by N",
}

func runReplay(args []string, stdout, stderr io.Writer) int {
	var f replayFlags
	fs := flag.NewFlagSet("ibpeer replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.out, "w", "", "write the frames to capture `FILE` (- for standard output)")
	fs.StringVar(&f.format, "F", "", "capture format of -w: pcap or pcapng (default: the input's)")
	fs.StringVar(&f.to, "to", "", "send the RoCEv2 datagrams to `HOST[:PORT]` through a UDP wire")
	fs.StringVar(&f.iface, "i", "", "send whole Ethernet frames out of interface `IFACE` (AF_PACKET)")
	fs.StringVar(&f.from, "from", "", "local `ADDR[:PORT]` of the UDP wire (default: a loopback address beside --to; port 4791 with --compare, else any)")
	fs.Var(&f.offload, "udp-offload", "with --to or --compare: "+device.UDPOffloadUsage)
	fs.StringVar(&f.filter, "Y", "", "replay only the frames matching this display `FILTER`")
	fs.BoolVar(&f.conn, "conn", false, "with -Y: replay whole connections in which any frame matches")
	fs.IntVar(&f.count, "c", 0, "read only the first `N` frames of FILE")
	fs.StringVar(&f.mapFile, "map", "", "read rewrite rules from `FILE` (see above)")
	f.rules = map[string]*listFlag{}
	for _, k := range ruleKinds {
		l := &listFlag{}
		f.rules[k] = l
		fs.Var(l, k, ruleHelp[k]+" (repeatable)")
	}
	fs.BoolVar(&f.fixCRC, "fix-crc", false, "recompute every ICRC/VCRC, even those the capture had wrong (default: keep them as wrong as they were)")
	fs.BoolVar(&f.fixCRC, "fixcsum", false, "same as --fix-crc (tcprewrite's name)")
	fs.BoolVar(&f.reverse, "reverse", false, "apply the inverse of the rules: undo an earlier rewrite with the same --map")
	fs.Float64Var(&f.speed, "speed", 0, "pace as captured, X times as fast [-x]")
	fs.Float64Var(&f.speed, "x", 0, "same as --speed")
	fs.Float64Var(&f.pps, "pps", 0, "send `N` packets per second [-p]")
	fs.Float64Var(&f.pps, "p", 0, "same as --pps")
	fs.Float64Var(&f.mbps, "mbps", 0, "send `N` megabits per second (frame bytes) [-M]")
	fs.Float64Var(&f.mbps, "M", 0, "same as --mbps")
	fs.BoolVar(&f.top, "top", false, "send as fast as possible, in batches; lifts the rate cap [-t]")
	fs.BoolVar(&f.top, "t", false, "same as --top")
	fs.IntVar(&f.loop, "loop", 1, "play the frames `N` times [-l]")
	fs.IntVar(&f.loop, "l", 1, "same as --loop")
	fs.Float64Var(&f.capPPS, "cap-pps", replay.DefaultCapPPS, "safety cap in packets per second (0: none); --top ignores it")
	fs.Float64Var(&f.capMbps, "cap-mbps", replay.DefaultCapMbps, "safety cap in megabits per second (0: none); --top ignores it")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow a --to target or -i interface that is not loopback")
	fs.BoolVar(&f.quiet, "q", false, "print no summary")
	fs.BoolVar(&f.compare, "compare", false, "play the requester half of one RC connection against --to and compare the responses")
	fs.BoolVar(&f.payload, "payload", false, "with --compare: compare READ data and atomic original values too, and read the WRITEs' span back afterwards")
	fs.BoolVar(&f.strictACK, "strict-acks", false, "with --compare: a captured ACK the peer coalesced into a later one is a difference too")
	fs.StringVar(&f.imageOut, "image", "", "write the responder's region of the --conv connection as the capture shows it (WRITE data, what READs and atomics found) to `FILE`, to seed a peer for --compare --payload; alone, it is all that is done")
	fs.StringVar(&f.imageMask, "image-mask", "", "with --image: write one byte per region byte to `FILE`, 1 where the capture shows it, 0 where it never does (bytes no message wrote or read), to compare only what the capture shows")
	fs.StringVar(&f.setup, "setup", "perftest", "with --compare: how to learn the peer's QPN, R_Key, VA: perftest, pingpong (TCP exchanges), cm (perftest -R's RDMA CM) or manual (--peer-*); not given: perftest, else pingpong when the peer does not answer perftest's first message")
	fs.StringVar(&f.oob, "oob", "", "with --compare: `HOST:PORT` of the TCP set-up exchange (default: --to's host, port 18515); with --setup cm, :PORT of the RDMA CM service")
	fs.Uint64Var(&f.peerQPN, "peer-qpn", 0, "with --setup manual: the peer's QPN")
	fs.Uint64Var(&f.peerPSN, "peer-psn", 0, "with --setup manual: the peer's first PSN")
	fs.Uint64Var(&f.peerRKey, "peer-rkey", 0, "with --setup manual: the R_Key of the peer's region")
	fs.Uint64Var(&f.peerVA, "peer-va", 0, "with --setup manual: the VA of the peer's region")
	fs.Uint64Var(&f.localQPN, "local-qpn", 0, "with --compare: the QPN to announce (default: the captured requester's)")
	fs.Uint64Var(&f.localPSN, "local-psn", 0, "with --compare: the first PSN to announce (default: the captured requester's)")
	fs.IntVar(&f.convNo, "conv", 0, "with --compare: the conversation to play, as ibdump -z conv,qp numbers them (default: the first RC one; with --setup cm, the first that is not perftest -R's set-up QP)")
	fs.StringVar(&f.side, "side", "", "with --compare: the requester, a (A→B) or b (B→A) (default: whoever sent the first request)")
	fs.DurationVar(&f.timeout, "timeout", time.Second, "with --compare: how long to wait for a due response")
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, replayUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "Run 'ibpeer replay -h' for usage.")
		return exitUsage
	}
	fs.Visit(func(fl *flag.Flag) { f.setupGiven = f.setupGiven || fl.Name == "setup" })
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "ibpeer replay: %s\n", fmt.Sprintf(format, a...))
		fmt.Fprintln(stderr, "Run 'ibpeer replay -h' for usage.")
		return exitUsage
	}
	if fs.NArg() != 1 {
		if fs.NArg() == 0 {
			return bad("no capture: give FILE")
		}
		return bad("unexpected argument %q", fs.Arg(1))
	}
	cfg, err := f.config(fs.Arg(0))
	if err != nil {
		return bad("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	info := stdout
	if f.out == "-" {
		info = stderr
	}
	if err := replaycmd.Run(ctx, *cfg, info); err != nil {
		if !errors.Is(err, replaycmd.ErrReported) {
			fmt.Fprintf(stderr, "ibpeer replay: %v\n", err)
		}
		return exitError
	}
	return exitOK
}

// config checks the flags, with errors that name the flag.
func (f *replayFlags) config(path string) (*replaycmd.Config, error) {
	j := &replaycmd.Config{Path: path, Rules: &replay.Rules{FixCRC: f.fixCRC}, MaxFrames: f.count, WholeConnections: f.conn,
		Out: f.out, Iface: f.iface, To: f.to, Quiet: f.quiet, ImageOut: f.imageOut, ImageMask: f.imageMask, Compare: f.compare, SetupGiven: f.setupGiven,
		OOB: f.oob, PeerQPN: f.peerQPN, PeerPSN: f.peerPSN, PeerRKey: f.peerRKey, PeerVA: f.peerVA, LocalQPN: f.localQPN,
		LocalPSN: f.localPSN, Conv: f.convNo, Side: f.side, Payload: f.payload, StrictACKs: f.strictACK, Timeout: f.timeout, UDPOffload: f.offload}
	dests := 0
	for _, d := range []string{f.out, f.to, f.iface} {
		if d != "" {
			dests++
		}
	}
	switch {
	case dests == 0 && f.imageOut == "":
		return nil, errors.New("no destination: give -w FILE, --to HOST or -i IFACE (or only --image FILE)")
	case dests > 1:
		return nil, errors.New("-w, --to and -i exclude each other")
	case f.compare && f.to == "":
		return nil, errors.New("--compare needs --to HOST, the live peer")
	}
	switch strings.ToLower(f.format) {
	case "":
	case "pcap":
		j.Format, j.HasFormat = capture.FormatPcap, true
	case "pcapng":
		j.Format, j.HasFormat = capture.FormatPcapNG, true
	default:
		return nil, fmt.Errorf("-F %q: want pcap or pcapng", f.format)
	}
	if f.filter != "" {
		flt, err := dfilter.Compile(f.filter)
		if err != nil {
			return nil, fmt.Errorf("-Y: %w", err)
		}
		j.Filter = flt
	} else if f.conn {
		return nil, errors.New("--conn needs -Y FILTER")
	}
	if f.mapFile != "" {
		if err := replay.LoadRules(f.mapFile, j.Rules); err != nil {
			return nil, fmt.Errorf("--map: %w", err)
		}
	}
	for _, k := range ruleKinds {
		for _, v := range *f.rules[k] {
			if err := j.Rules.Add(k, v); err != nil {
				return nil, fmt.Errorf("--%w", err)
			}
		}
	}
	if f.reverse {
		inv, err := j.Rules.Inverse()
		if err != nil {
			return nil, fmt.Errorf("--reverse: %w", err)
		}
		j.Rules = inv
	}
	paced := 0
	for _, on := range []bool{f.speed != 0, f.pps != 0, f.mbps != 0, f.top} {
		if on {
			paced++
		}
	}
	switch {
	case paced > 1:
		return nil, errors.New("--speed, --pps, --mbps and --top exclude each other")
	case f.speed < 0 || f.pps < 0 || f.mbps < 0 || f.capPPS < 0 || f.capMbps < 0:
		return nil, errors.New("rates must not be negative")
	case f.loop < 1:
		return nil, fmt.Errorf("--loop %d: want 1 or more", f.loop)
	case f.count < 0:
		return nil, fmt.Errorf("-c %d: want 0 (all) or more", f.count)
	case f.out != "" && paced > 0:
		return nil, errors.New("-w writes a file at once: --speed, --pps, --mbps and --top pace sending only")
	}
	j.Pace = replay.PaceOptions{Speed: f.speed, PPS: f.pps, Mbps: f.mbps, Top: f.top, Loop: f.loop,
		CapPPS: f.capPPS, CapMbps: f.capMbps}
	if f.to != "" {
		t, err := parseHostPort(f.to, 0)
		if err != nil {
			return nil, fmt.Errorf("--to %q: %w", f.to, err)
		}
		if err := replay.CheckTarget(t.Addr(), f.allowRemote); err != nil {
			return nil, fmt.Errorf("--to: %w", err)
		}
		if t.Port() == 0 {
			t = netip.AddrPortFrom(t.Addr(), layers.RoCEv2Port)
		}
		j.Target = t
		port := uint16(0)
		if f.compare {
			port = layers.RoCEv2Port // responses come to port 4791
		}
		if f.from != "" {
			if j.Local, err = parseHostPort(f.from, port); err != nil {
				return nil, fmt.Errorf("--from %q: %w", f.from, err)
			}
		} else {
			j.Local = netip.AddrPortFrom(besideLoopback(t.Addr()), port)
		}
	}
	if f.iface != "" {
		if err := replay.CheckInterface(f.iface, f.allowRemote); err != nil {
			return nil, fmt.Errorf("-i: %w", err)
		}
	}
	if f.compare {
		switch f.setup {
		case "perftest", "pingpong", "manual", "cm":
		case "perftest-cm":
			f.setup = "cm"
		default:
			return nil, fmt.Errorf("--setup %q: want perftest, pingpong, cm or manual", f.setup)
		}
		if f.setup == "cm" {
			if f.localQPN != 0 || f.localPSN != 0 {
				return nil, errors.New("--setup cm: RDMA CM picks the QPN and first PSN of the QP it connects; leave out --local-qpn and --local-psn")
			}
			port, err := cmPort(f.oob, j.Target.Addr())
			if err != nil {
				return nil, err
			}
			j.CMPort = port
		}
		if f.peerQPN > 0xFFFFFF || f.localQPN > 0xFFFFFF || f.peerPSN > 0xFFFFFF || f.localPSN > 0xFFFFFF || f.peerRKey > 0xFFFFFFFF {
			return nil, errors.New("--peer-qpn, --peer-psn, --local-qpn and --local-psn take 24 bits, --peer-rkey 32")
		}
		if f.setup == "manual" && f.peerQPN == 0 {
			return nil, errors.New("--setup manual needs --peer-qpn (and --peer-rkey, --peer-va for RDMA and atomics)")
		}
		if f.side != "" && f.side != "a" && f.side != "b" {
			return nil, fmt.Errorf("--side %q: want a or b", f.side)
		}
		if !j.Rules.Empty() {
			return nil, errors.New("--compare remaps QPNs, PSNs, R_Keys and VAs itself: leave out the rewrite rules")
		}
	}
	j.Setup = f.setup
	return j, nil
}

// parseHostPort parses HOST or HOST:PORT ([v6] or [v6]:PORT); a host name
// is looked up.
func parseHostPort(s string, defPort uint16) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a.Unmap(), defPort), nil
	}
	host, port := s, defPort
	if h, p, err := net.SplitHostPort(s); err == nil {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("port %q", p)
		}
		host, port = h, uint16(v)
	}
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, fmt.Errorf("unknown host %q", host)
	}
	a, err := netip.ParseAddr(addrs[0])
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a.Unmap(), port), nil
}

// besideLoopback picks a local address for a wire that talks to t: another
// loopback address for a loopback target (so both can own port 4791), else
// the unspecified address.
func besideLoopback(t netip.Addr) netip.Addr {
	switch {
	case t.Is4() && t.IsLoopback():
		if t == netip.MustParseAddr("127.0.0.2") {
			return netip.MustParseAddr("127.0.0.1")
		}
		return netip.MustParseAddr("127.0.0.2")
	case t.IsLoopback():
		return netip.IPv6Loopback()
	case t.Is4():
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}

// cmPort is the port of --setup cm's RDMA CM service (perftest's -p):
// --oob's, as :PORT or with --to's host (the CM runs over the same UDP
// wire), else 18515.
func cmPort(oob string, target netip.Addr) (int, error) {
	if oob == "" {
		return setup.DefaultPort, nil
	}
	if p, ok := strings.CutPrefix(oob, ":"); ok {
		v, err := strconv.ParseUint(p, 10, 16)
		if err != nil || v == 0 {
			return 0, fmt.Errorf("--oob %q: want :PORT or HOST:PORT", oob)
		}
		return int(v), nil
	}
	ap, err := parseHostPort(oob, setup.DefaultPort)
	if err != nil {
		return 0, fmt.Errorf("--oob %q: %w", oob, err)
	}
	if ap.Addr() != target {
		return 0, fmt.Errorf("--oob %v: with --setup cm the RDMA CM runs on --to's address %v; give :PORT", ap.Addr(), target)
	}
	return int(ap.Port()), nil
}
