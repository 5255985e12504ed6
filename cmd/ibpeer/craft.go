package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/internal/peer/craftcmd"
	"github.com/ibwire/ibwire/layers"
)

const craftUsage = `usage: ibpeer craft [flags] -w FILE

Writes one crafted RDMA conversation between a requester and a responder QP:
the work requests of --op, segmented at --mtu, with the ACKs, NAKs, READ
responses and retransmissions Linux rxe would send, every ICRC and VCRC
correct unless --broken says otherwise. Timestamps start at
2024-01-01T00:00:00Z; the same flags always give the same bytes.

Examples:
  ibpeer craft --op write --size 65536 --mtu 1024 --loss 0.02 --encap rocev2-ipv6 -w out.pcap
  ibpeer craft --op read --size 8192 --cm -w read.pcap
  ibpeer craft --op send --iters 4 --rnr 2 --nak 1@3 -w naks.pcap
  ibpeer craft --op ud-send --size 512 --encap erf -F pcapng -w ud.pcapng
  ibpeer craft --op write --broken bad-icrc --broken truncated@4 -v -w broken.pcap
  ibpeer craft --op read --size 64 --iters 4 --max-rd-atomic 4 --cm --cm-rep-responder-resources 2 -w reads.pcap
  ibpeer craft --op send --cm --cm-mra 14@1ms --cm-no-drep -v -w mra.pcap

The --cm-* flags set what the CM REQ and REP negotiate (need --cm); the
traffic can then break it: more READs in flight (--max-rd-atomic), more
RNR retries (--rnr), a larger packet (--mtu), other path values (--pkey);
ibdump reports each as ibwire.analysis.cm.*.

Flags:
`

// craftFlags are the parsed flags of ibpeer craft.
type craftFlags struct {
	op, encap, service, format, out string
	size, iters, mtu, cnpEvery      int
	rnr                             int
	rnrTimer                        uint
	qpn, destQPN, psn, pkey         uint64
	loss, ecnCE                     float64
	seed                            uint64
	cm, verbose                     bool
	naks, broken                    listFlag
	maxRdAtomic                     int
	lostResponses                   listFlag
	// The CM's values: set is the --cm-* flags given (by name without
	// "cm-"), so 0 can be asked for.
	cmSet                                map[string]bool
	cmReqRR, cmReqID, cmRepRR, cmRepID   uint
	cmRetry, cmRNRRetry, cmRepRNRRetry   uint
	cmMTU, cmPKey, cmTClass, cmFlowLabel uint64
	cmSL                                 uint
	cmMRA, cmReject                      string
	cmNoDREP                             bool
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func runCraft(args []string, stdout, stderr io.Writer) int {
	var f craftFlags
	fs := flag.NewFlagSet("ibpeer craft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.op, "op", "write", "work request: send, send-imm, send-inv, write, write-imm, read, cmp-swap, fetch-add, ud-send, ud-send-imm")
	fs.IntVar(&f.size, "size", 4096, "bytes per work request (SEND/WRITE payload, READ length; ignored by atomics)")
	fs.IntVar(&f.iters, "iters", 1, "number of work requests, pipelined")
	fs.IntVar(&f.mtu, "mtu", craft.DefaultMTU, "path MTU: 256, 512, 1024, 2048 or 4096")
	fs.Uint64Var(&f.qpn, "qpn", uint64(craft.DefaultRequester.QPN), "requester QPN (0x... for hex)")
	fs.Uint64Var(&f.destQPN, "dest-qpn", uint64(craft.DefaultResponder.QPN), "responder QPN")
	fs.Uint64Var(&f.psn, "psn", uint64(craft.DefaultRequester.PSN), "first PSN of the requester")
	fs.Uint64Var(&f.pkey, "pkey", craft.DefaultPKey, "P_Key")
	fs.StringVar(&f.encap, "encap", "rocev2", "encapsulation: rocev2, rocev2-ipv6, rocev1, ib (LINKTYPE_INFINIBAND, no GRH), ib-grh, erf, erf-grh (LINKTYPE_ERF)")
	fs.StringVar(&f.service, "service", "", "transport: rc or uc (default rc; ud-send ops use ud)")
	fs.Float64Var(&f.loss, "loss", 0, "probability that a frame of either side is lost before the capture point, [0,1)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of --loss and --ecn-ce")
	fs.Var(&f.naks, "nak", "CODE@N: the responder answers request packet N (from 1) with NAK CODE: 0-31 or psn-seq, invalid-request, remote-access, remote-op, invalid-rd (repeatable)")
	fs.IntVar(&f.rnr, "rnr", 0, "the responder refuses the first request packet N times with an RNR NAK")
	fs.UintVar(&f.rnrTimer, "rnr-timer", 1, "RNR NAK timer code, 0-31 (1 = 10 µs, 0 = 655 ms)")
	fs.IntVar(&f.cnpEvery, "cnp-every", 0, "mark every Nth request ECN CE (FECN on RoCEv1 and IB) and answer it with a CNP")
	fs.Float64Var(&f.ecnCE, "ecn-ce", 0, "probability that a request is marked ECN CE, without a CNP")
	fs.BoolVar(&f.cm, "cm", false, "prefix a CM REQ/REP/RTU exchange and suffix DREQ/DREP (UD: SIDR_REQ/SIDR_REP)")
	fs.IntVar(&f.maxRdAtomic, "max-rd-atomic", 0, "READ/atomic requests the requester keeps outstanding (default 16); the CM REQ/REP offer as many unless --cm-* says otherwise")
	fs.Var(&f.lostResponses, "lose-response", "N: the responder's Nth transmission (ACK, READ response) is lost, so the requester times out and retries (repeatable)")
	fs.UintVar(&f.cmReqRR, "cm-responder-resources", 0, "CM REQ Responder Resources (default: --max-rd-atomic)")
	fs.UintVar(&f.cmReqID, "cm-initiator-depth", 0, "CM REQ Initiator Depth (default: --max-rd-atomic)")
	fs.UintVar(&f.cmRepRR, "cm-rep-responder-resources", 0, "CM REP Responder Resources: READ/atomic requests the requester may have outstanding (default: --max-rd-atomic)")
	fs.UintVar(&f.cmRepID, "cm-rep-initiator-depth", 0, "CM REP Initiator Depth: READ/atomic requests the responder may have outstanding (default: --max-rd-atomic)")
	fs.UintVar(&f.cmRetry, "cm-retry-count", 7, "CM REQ Retry Count, 0-7: retries of a PSN after a timeout or NAK, both sides")
	fs.UintVar(&f.cmRNRRetry, "cm-rnr-retry", 7, "CM REQ RNR Retry Count, 0-7 (7: for ever): binds the responder's sender")
	fs.UintVar(&f.cmRepRNRRetry, "cm-rep-rnr-retry", 7, "CM REP RNR Retry Count, 0-7 (7: for ever): binds the requester, so --rnr N above it breaks it")
	fs.Uint64Var(&f.cmMTU, "cm-mtu", 0, "CM REQ path MTU in bytes (default --mtu); below --mtu, the packets break it")
	fs.Uint64Var(&f.cmPKey, "cm-pkey", 0, "CM REQ P_Key (default --pkey)")
	fs.Uint64Var(&f.cmTClass, "cm-tclass", 0, "CM REQ path traffic class (default 0, what the packets carry)")
	fs.Uint64Var(&f.cmFlowLabel, "cm-flow-label", 0, "CM REQ path flow label, 20 bits (default 0)")
	fs.UintVar(&f.cmSL, "cm-sl", 0, "CM REQ path SL, 0-15 (default 0)")
	fs.StringVar(&f.cmMRA, "cm-mra", "", "TIMEOUT[@RESEND]: the responder answers the REQ with an MRA of service timeout TIMEOUT (0-31: 4.096 µs × 2^TIMEOUT); RESEND (a duration) makes the requester send the REQ again that long after it")
	fs.StringVar(&f.cmReject, "cm-reject", "", "REASON[@requester]: reject the connection with a REJ of REASON (a number, e.g. 8 invalid service ID, 28 consumer defined): from the responder, of the REQ; @requester: from the requester, of the REP; no traffic follows")
	fs.BoolVar(&f.cmNoDREP, "cm-no-drep", false, "end with a DREQ no DREP answers")
	fs.Var(&f.broken, "broken", "KIND[@FRAME]: break a frame on purpose: bad-icrc, bad-vcrc, truncated, wrong-pad, bad-sequence, reth-mismatch, unknown-opcode; FRAME counts from 1 in the file; without it, the first frame of the conversation the kind applies to (repeatable)")
	fs.StringVar(&f.out, "w", "", "write the capture to `FILE` (- for standard output)")
	fs.StringVar(&f.format, "F", "pcap", "capture format: pcap or pcapng")
	fs.BoolVar(&f.verbose, "v", false, "list the frames and the expected findings (on standard error when -w is -)")
	// flag prints its own message for a bad flag; a pointer to the help
	// follows it, the help itself only when asked for.
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, craftUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return exitOK
		}
		fmt.Fprintln(stderr, "Run 'ibpeer craft -h' for usage.")
		return exitUsage
	}
	bad := func(format string, a ...any) int {
		msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "craft: ", "")
		fmt.Fprintf(stderr, "ibpeer craft: %s\n", msg)
		fmt.Fprintln(stderr, "Run 'ibpeer craft -h' for usage.")
		return exitUsage
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	f.cmSet = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) {
		if name, ok := strings.CutPrefix(fl.Name, "cm-"); ok {
			f.cmSet[name] = true
		}
	})
	if f.out == "" {
		return bad("no output: give -w FILE")
	}
	cfg, err := f.config()
	if err != nil {
		return bad("%v", err)
	}
	info := stdout
	if f.out == "-" {
		info = stderr
	}
	if err := craftcmd.Run(context.Background(), cfg, info); err != nil {
		var inv *craftcmd.InvalidError
		if errors.As(err, &inv) {
			return bad("%v", err)
		}
		fmt.Fprintf(stderr, "ibpeer craft: %v\n", err)
		return exitError
	}
	return exitOK
}

// config turns the flags into a craft run, with errors that name the flag.
func (f *craftFlags) config() (craftcmd.Config, error) {
	j := craftcmd.Config{CM: f.cm, Out: f.out, Verbose: f.verbose}
	encap, err := craft.ParseEncap(f.encap)
	if err != nil {
		return j, fmt.Errorf("--encap: %w", err)
	}
	switch strings.ToLower(f.format) {
	case "pcap":
		j.Format = capture.FormatPcap
	case "pcapng":
		j.Format = capture.FormatPcapNG
	default:
		return j, fmt.Errorf("-F %q: want pcap or pcapng", f.format)
	}
	op := strings.ToLower(f.op)
	service := layers.ServiceRC
	if strings.HasPrefix(op, "ud-") {
		service, op = layers.ServiceUD, strings.TrimPrefix(op, "ud-")
	}
	kind, err := craft.ParseOpKind(op)
	if err != nil {
		return j, fmt.Errorf("--op: %w", err)
	}
	switch strings.ToLower(f.service) {
	case "":
	case "rc":
		if service == layers.ServiceUD {
			return j, fmt.Errorf("--service rc with --op %s", f.op)
		}
	case "uc":
		if service == layers.ServiceUD {
			return j, fmt.Errorf("--service uc with --op %s", f.op)
		}
		service = layers.ServiceUC
	case "ud":
		service = layers.ServiceUD
	default:
		return j, fmt.Errorf("--service %q: want rc or uc", f.service)
	}
	switch {
	case f.mtu != 256 && f.mtu != 512 && f.mtu != 1024 && f.mtu != 2048 && f.mtu != 4096:
		return j, fmt.Errorf("--mtu %d: want 256, 512, 1024, 2048 or 4096", f.mtu)
	case f.size < 0 || f.size > 1<<30:
		return j, fmt.Errorf("--size %d: want 0 to 1 GiB", f.size)
	case f.iters < 1 || f.iters > 1<<20:
		return j, fmt.Errorf("--iters %d: want 1 to 1048576", f.iters)
	case f.qpn == 0 || f.qpn > 0xFFFFFF || f.destQPN == 0 || f.destQPN > 0xFFFFFF:
		return j, fmt.Errorf("--qpn/--dest-qpn: want 1 to 0xFFFFFF")
	case f.psn > 0xFFFFFF:
		return j, fmt.Errorf("--psn 0x%x does not fit 24 bits", f.psn)
	case f.pkey == 0 || f.pkey > 0xFFFF:
		return j, fmt.Errorf("--pkey 0x%x: want 1 to 0xFFFF", f.pkey)
	case f.loss < 0 || f.loss >= 1:
		return j, fmt.Errorf("--loss %v: want a probability in [0, 1)", f.loss)
	case f.ecnCE < 0 || f.ecnCE > 1:
		return j, fmt.Errorf("--ecn-ce %v: want a probability in [0, 1]", f.ecnCE)
	case f.rnr < 0 || f.cnpEvery < 0:
		return j, fmt.Errorf("--rnr and --cnp-every count from 0")
	case f.rnrTimer > 31:
		return j, fmt.Errorf("--rnr-timer %d: want 0 to 31", f.rnrTimer)
	}
	req, resp := craft.DefaultRequester, craft.DefaultResponder
	req.QPN, resp.QPN, req.PSN = uint32(f.qpn), uint32(f.destQPN), layers.PSN(f.psn)
	j.Craft = craft.Config{Encap: encap, Service: service, Requester: req, Responder: resp, MTU: f.mtu, PKey: uint16(f.pkey)}
	if _, err := craft.New(j.Craft); err != nil {
		return j, err
	}
	for i := 0; i < f.iters; i++ {
		o := craft.Op{Kind: kind, VA: 0x7f0000000000 + uint64(i)*uint64((f.size+4095)&^4095+4096), RKey: 0x1234,
			Imm: uint32(i + 1), InvRKey: 0x5678}
		switch kind {
		case craft.OpCompareSwap:
			o.Compare, o.SwapAdd, o.Orig = uint64(i), uint64(i+1), uint64(i)
		case craft.OpFetchAdd:
			o.SwapAdd, o.Orig = 1, uint64(i)
		default:
			o.Data = craft.Pattern(f.size, byte(i))
		}
		j.Ops = append(j.Ops, o)
	}
	j.Faults = craft.Faults{Seed: f.seed, Loss: craft.Loss{Prob: f.loss}, CNPEvery: f.cnpEvery, CE: craft.CEMarks{Prob: f.ecnCE}}
	for _, s := range f.naks {
		n, err := parseNAK(s)
		if err != nil {
			return j, fmt.Errorf("--nak %q: %w", s, err)
		}
		j.Faults.NAKs = append(j.Faults.NAKs, n)
	}
	if f.rnr > 0 {
		j.Faults.RNRs = []craft.RNR{{Packet: 1, Times: f.rnr, Timer: layers.RNRTimerCode(f.rnrTimer)}}
	}
	for _, s := range f.broken {
		c, err := parseBroken(s)
		if err != nil {
			return j, fmt.Errorf("--broken %q: %w", s, err)
		}
		j.Faults.Corrupt = append(j.Faults.Corrupt, c)
	}
	for _, s := range f.lostResponses {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return j, fmt.Errorf("--lose-response %q: want a number from 1", s)
		}
		j.Faults.Loss.Responses = append(j.Faults.Loss.Responses, n)
	}
	if f.maxRdAtomic < 0 || f.maxRdAtomic > 255 {
		return j, fmt.Errorf("--max-rd-atomic %d: want 0 to 255", f.maxRdAtomic)
	}
	j.Craft.MaxRdAtomic = f.maxRdAtomic
	if err := f.cmConfig(&j); err != nil {
		return j, err
	}
	return j, nil
}

// cmConfig reads the --cm-* flags into j's CM options.
func (f *craftFlags) cmConfig(j *craftcmd.Config) error {
	if len(f.cmSet) == 0 {
		return nil
	}
	if !f.cm {
		return errors.New("the --cm-* flags need --cm")
	}
	k := &j.CMOptions.Contract
	u8 := func(name string, v, limit uint, dst **uint8) error {
		if !f.cmSet[name] {
			return nil
		}
		if v > limit {
			return fmt.Errorf("--cm-%s %d: want 0 to %d", name, v, limit)
		}
		*dst = new(uint8(v))
		return nil
	}
	if err := errors.Join(u8("responder-resources", f.cmReqRR, 255, &k.REQResponderResources),
		u8("initiator-depth", f.cmReqID, 255, &k.REQInitiatorDepth),
		u8("rep-responder-resources", f.cmRepRR, 255, &k.REPResponderResources),
		u8("rep-initiator-depth", f.cmRepID, 255, &k.REPInitiatorDepth),
		u8("retry-count", f.cmRetry, 7, &k.RetryCount), u8("rnr-retry", f.cmRNRRetry, 7, &k.RNRRetryCount),
		u8("rep-rnr-retry", f.cmRepRNRRetry, 7, &k.REPRNRRetryCount), u8("sl", f.cmSL, 15, &k.SL)); err != nil {
		return err
	}
	if f.cmSet["mtu"] {
		if _, err := layers.ParsePathMTU(int(f.cmMTU)); err != nil {
			return fmt.Errorf("--cm-mtu: %w", err)
		}
		k.PathMTU = int(f.cmMTU)
	}
	if f.cmSet["pkey"] {
		if f.cmPKey == 0 || f.cmPKey > 0xFFFF {
			return fmt.Errorf("--cm-pkey 0x%x: want 1 to 0xFFFF", f.cmPKey)
		}
		k.PKey = new(uint16(f.cmPKey))
	}
	if f.cmSet["tclass"] {
		if f.cmTClass > 0xFF {
			return fmt.Errorf("--cm-tclass 0x%x: want 0 to 0xFF", f.cmTClass)
		}
		k.TrafficClass = new(uint8(f.cmTClass))
	}
	if f.cmSet["flow-label"] {
		if f.cmFlowLabel > 0xFFFFF {
			return fmt.Errorf("--cm-flow-label 0x%x does not fit 20 bits", f.cmFlowLabel)
		}
		k.FlowLabel = new(uint32(f.cmFlowLabel))
	}
	if f.cmMRA != "" {
		timeout, resend, hasResend := strings.Cut(f.cmMRA, "@")
		t, err := strconv.ParseUint(timeout, 10, 8)
		if err != nil || t > 31 {
			return fmt.Errorf("--cm-mra %q: want a service timeout 0-31", f.cmMRA)
		}
		m := &craft.CMMRA{ServiceTimeout: uint8(t)}
		if hasResend {
			if m.Resend, err = time.ParseDuration(resend); err != nil || m.Resend <= 0 {
				return fmt.Errorf("--cm-mra %q: want a positive duration after @", f.cmMRA)
			}
		}
		j.CMOptions.MRA = m
	}
	if f.cmReject != "" {
		reason, by, hasBy := strings.Cut(f.cmReject, "@")
		r, err := strconv.ParseUint(reason, 10, 16)
		if err != nil || r == 0 {
			return fmt.Errorf("--cm-reject %q: want a reason number from 1", f.cmReject)
		}
		switch {
		case !hasBy || by == "responder":
		case by == "requester":
			j.CMOptions.RequesterRejects = true
		default:
			return fmt.Errorf("--cm-reject %q: want @requester or @responder", f.cmReject)
		}
		j.Reject = new(layers.CMRejectReason(r))
	}
	j.NoDREP = f.cmNoDREP
	return nil
}

var nakNames = map[string]layers.NAKCode{
	"psn-seq": layers.NAKPSNSequenceError, "invalid-request": layers.NAKInvalidRequest,
	"remote-access": layers.NAKRemoteAccessError, "remote-op": layers.NAKRemoteOperationalError,
	"invalid-rd": layers.NAKInvalidRDRequest,
}

// parseNAK parses CODE@N.
func parseNAK(s string) (craft.NAK, error) {
	code, at, ok := strings.Cut(s, "@")
	if !ok {
		return craft.NAK{}, errors.New("want CODE@N")
	}
	n, err := strconv.Atoi(at)
	if err != nil || n < 1 {
		return craft.NAK{}, fmt.Errorf("packet %q: want a number from 1", at)
	}
	c, ok := nakNames[strings.ToLower(code)]
	if !ok {
		v, err := strconv.ParseUint(code, 0, 8)
		if err != nil || v > 31 {
			return craft.NAK{}, fmt.Errorf("code %q: want 0-31 or psn-seq, invalid-request, remote-access, remote-op, invalid-rd", code)
		}
		c = layers.NAKCode(v)
	}
	return craft.NAK{Packet: n, Code: c}, nil
}

// parseBroken parses KIND[@FRAME].
func parseBroken(s string) (craft.Corrupt, error) {
	kind, at, has := strings.Cut(s, "@")
	k, err := craft.ParseCorruptKind(kind)
	if err != nil {
		return craft.Corrupt{}, err
	}
	c := craft.Corrupt{Kind: k}
	if has {
		if c.Frame, err = strconv.Atoi(at); err != nil || c.Frame < 1 {
			return craft.Corrupt{}, fmt.Errorf("frame %q: want a number from 1", at)
		}
	}
	return c, nil
}
