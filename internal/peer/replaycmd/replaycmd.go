// Package replaycmd is ibpeer replay: it sends a capture again, selected,
// rewritten and paced, or plays one connection's requests against a live
// peer and compares the answers.
//
// Run loads the capture with package replay (the frames Config.Filter
// selects), then either writes the Region image the capture shows
// (ImageOut), writes the rewritten frames to a file (Out), or sends them
// through a UDP wire to Target or out of an interface, paced; or, with
// Compare, cuts a plan of the conversation (for perftest -R captures the
// data QP, not the set-up QP), connects with the peer through the set-up
// Config.Setup names (replay's TCPSetup, CMSetup or ManualSetup), plays
// and writes compare mode's report. A perftest peer gets the play's
// bandwidth report at the end, which it prints as its own.
package replaycmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/device"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
	"github.com/ibwire/ibwire/setup"
)

// Config is a checked ibpeer replay: the capture, what to select and
// rewrite, where it goes and how fast, or, with Compare, the live peer and
// how to set up with it.
type Config struct {
	UDPOffload       device.UDPOffload // --udp-offload: off sends one datagram per packet on a loopback wire too
	Path             string            // the capture
	MaxFrames        int               // read only the first N frames (0: all)
	Filter           *dfilter.Filter
	WholeConnections bool // with Filter: whole connections in which any frame matches
	Rules            *replay.Rules

	Out       string // write the frames to this capture file ("-": stdout)
	Format    capture.Format
	HasFormat bool // Format was chosen; else the input's
	Iface     string
	To        string         // --to as given
	Target    netip.AddrPort // --to, resolved
	Local     netip.AddrPort // the UDP wire's address
	Pace      replay.PaceOptions
	Quiet     bool
	ImageOut  string // write the responder's region to this file
	ImageMask string // with ImageOut: write 1 for each region byte the capture shows, 0 for the others, to this file

	Compare                            bool
	Setup                              string // perftest, pingpong, cm or manual
	SetupGiven                         bool   // Setup was chosen; else perftest falls back to pingpong
	OOB                                string // the TCP set-up's HOST:PORT
	CMPort                             int    // Setup cm: the RDMA CM service's port
	PeerQPN, PeerPSN, PeerRKey, PeerVA uint64 // Setup manual
	LocalQPN, LocalPSN                 uint64
	Conv                               int    // the conversation to play (0: the first RC one)
	Side                               string // "", "a" or "b"
	Payload, StrictACKs                bool
	Timeout                            time.Duration
}

// job is a run under way.
type job struct{ Config }

// ErrReported is a failure already told on the run's writer: the peer
// answered differently, or the run was interrupted.
var ErrReported = errors.New("reported")

// exit statuses of a run, before Run turns them into errors
const (
	statusOK     = 0
	statusFailed = 1
)

// Run does the replay; its summary, or compare mode's report, goes to
// info. It returns ErrReported when that report already says why it
// failed.
func Run(ctx context.Context, cfg Config, info io.Writer) error {
	j := &job{cfg}
	code, err := j.run(ctx, info)
	if err != nil {
		return err
	}
	if code != statusOK {
		return ErrReported
	}
	return nil
}

// run does the replay and returns the exit status.
func (j *job) run(ctx context.Context, info io.Writer) (int, error) {
	opts := replay.LoadOptions{Decode: decode.Options{}, MaxFrames: j.MaxFrames,
		WholeConnections: j.WholeConnections}
	if j.Filter != nil {
		opts.Select = j.Filter.Match
	}
	c, err := replay.Load(j.Path, opts)
	if err != nil {
		return statusFailed, err
	}
	if j.Compare {
		return j.compare(ctx, c, info)
	}
	if j.ImageOut != "" {
		plan, err := j.plan(c)
		if err != nil {
			return statusFailed, err
		}
		if err := writeImage(plan, j.ImageOut, j.ImageMask); err != nil {
			return statusFailed, err
		}
		if !j.Quiet {
			fmt.Fprintf(info, "Wrote the %d-byte region of conversation %d's responder (va 0x%x) to %s\n",
				plan.RegionLen, plan.Conv, plan.Responder.VA, j.ImageOut)
		}
		if j.Out == "" && j.To == "" && j.Iface == "" {
			return statusOK, nil
		}
	}
	st, err := c.Rewrite(j.Rules, c.Decode)
	if err != nil {
		return statusFailed, err
	}
	if j.Out != "" {
		format := c.Format
		if j.HasFormat {
			format = j.Format
		}
		if err := c.WriteFile(j.Out, format); err != nil {
			return statusFailed, err
		}
		if !j.Quiet {
			fmt.Fprintf(info, "Wrote %d of %d frames to %s: %d rewritten, %d ICRCs and %d VCRCs recomputed\n",
				c.Selected(), len(c.Frames), j.Out, st.Changed, st.ICRCs, st.VCRCs)
			j.rewriteNotes(info, st)
		}
		return statusOK, nil
	}
	var s replay.Sender
	dest := j.Iface
	if j.Iface != "" {
		ps, err := replay.OpenPacketSender(j.Iface)
		if err != nil {
			return statusFailed, err
		}
		s = ps
	} else {
		w, err := j.UDPOffload.ListenUDP(j.Local)
		if err != nil {
			return statusFailed, fmt.Errorf("UDP wire on %v: %w", j.Local, err)
		}
		s = replay.NewWireSender(w, j.Target)
		dest = j.Target.String()
	}
	sum, err := replay.Play(ctx, c, s, j.Pace)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if !j.Quiet {
		fmt.Fprintf(info, "Replayed %s to %s\n", j.Path, dest)
		if st.Changed > 0 {
			fmt.Fprintf(info, "Rewrote %d frames (%d ICRCs, %d VCRCs recomputed)\n", st.Changed, st.ICRCs, st.VCRCs)
		}
		j.rewriteNotes(info, st)
		sum.Write(info)
	}
	if errors.Is(err, context.Canceled) {
		return statusFailed, nil
	}
	if err != nil {
		return statusFailed, err
	}
	return statusOK, nil
}

func (j *job) rewriteNotes(w io.Writer, st replay.RewriteStats) {
	if st.NoPSNSpace > 0 {
		fmt.Fprintf(w, "Note: %d responses belong to no paired connection; psn-base left their PSNs alone\n", st.NoPSNSpace)
	}
	if st.Undecodable > 0 && !j.Rules.Empty() {
		fmt.Fprintf(w, "Note: %d damaged frames were rewritten only up to the damage\n", st.Undecodable)
	}
}

// plan cuts the conversation --conv/--side name into a compare plan.
func (j *job) plan(c *replay.Capture) (*replay.Plan, error) {
	side := uint8(0)
	switch j.Side {
	case "a":
		side = 1
	case "b":
		side = 2
	}
	conv := uint32(j.Conv)
	if conv == 0 && j.Compare && j.Setup == "cm" {
		conv = perftestDataConv(c)
	}
	return replay.NewPlan(c, conv, side)
}

// compare runs compare mode.
func (j *job) compare(ctx context.Context, c *replay.Capture, info io.Writer) (int, error) {
	plan, err := j.plan(c)
	if err != nil {
		return statusFailed, err
	}
	if j.ImageOut != "" {
		if err := writeImage(plan, j.ImageOut, j.ImageMask); err != nil {
			return statusFailed, err
		}
	}
	w, err := j.UDPOffload.ListenUDP(j.Local)
	if err != nil {
		return statusFailed, fmt.Errorf("UDP wire on %v: %w", j.Local, err)
	}
	var how replay.Setup
	var peer *replay.WirePeer
	switch j.Setup {
	case "cm":
		// The CM, the set-up QP and the player share the wire: the
		// datagrams for the data QP go to the player, the rest to a device.
		split := replay.NewSplitWire(w)
		peer = replay.NewWirePeer(split.Diverted(), j.Target)
		dev := endpoint.NewDevice(split.Rest())
		defer dev.Close()
		cs := &replay.CMSetup{Server: j.Target.Addr(), Port: j.CMPort, MTUs: plan.MTURange(), RdAtom: hasReadsOrAtomics(plan) || j.Payload, Split: split, Dev: dev}
		defer cs.Close()
		how = cs
	case "manual":
		peer = replay.NewWirePeer(w, j.Target)
		how = replay.ManualSetup{Remote: replay.Dest{QPN: uint32(j.PeerQPN), PSN: layers.PSN(j.PeerPSN), RKey: uint32(j.PeerRKey), VA: j.PeerVA}}
	default:
		peer = replay.NewWirePeer(w, j.Target)
		oob := j.OOB
		if oob == "" {
			oob = net.JoinHostPort(j.Target.Addr().String(), strconv.Itoa(setup.DefaultPort))
		}
		ts := &replay.TCPSetup{Kind: j.Setup, Addr: oob, GID: w.LocalAddr().Addr().As16(), MTUs: plan.MTURange(), RegionLen: plan.RegionLen,
			Fallback: !j.SetupGiven}
		defer ts.Close()
		how = ts
	}
	defer peer.Close()
	local := replay.Dest{QPN: uint32(j.LocalQPN), PSN: layers.PSN(j.LocalPSN)}
	if j.LocalQPN != 0 && j.LocalPSN == 0 {
		local.PSN = plan.Requester.PSN
	}
	setupName := j.Setup
	res, err := replay.Compare(ctx, plan, how, peer, replay.CompareOptions{Local: local, Payload: j.Payload, StrictACKs: j.StrictACKs, Timeout: j.Timeout})
	if err != nil {
		return statusFailed, err
	}
	if r, ok := how.(reporter); ok {
		r.SetReport(playReport(res))
	}
	if ts, ok := how.(*replay.TCPSetup); ok && ts.FellBack() {
		setupName = "pingpong"
		fmt.Fprintf(info, "compare: the peer did not answer perftest's set-up within %v; it answered ibpeer serve's (--setup pingpong)\n", replay.SetupFallbackWait)
	}
	res.WriteRNR(info, rnrFix[setupName])
	res.WriteDiff(info, j.Target.String())
	res.WriteSummary(info)
	if res.Differ() {
		return statusFailed, nil
	}
	return statusOK, nil
}

// rnrFix says, for each --setup, how to give the peer more receive
// buffers when it answered RNR NAK.
var rnrFix = map[string]string{
	"pingpong": "start ibpeer serve with more --recv",
	"perftest": "give the perftest server a deeper receive queue (ib_send_bw's -r)",
	"cm":       "give the perftest server a deeper receive queue (ib_send_bw's -r)",
	"manual":   "post more receive buffers on the peer's QP",
}

// reporter is a perftest set-up, whose closing steps send the client's
// bandwidth report, which the server prints as its own.
type reporter interface {
	SetReport(setup.PerftestBWReport)
}

// playReport is the report of a play as a perftest client's: the
// messages played, their size (the mean, for a capture of mixed sizes),
// and the average rate from the first request to the last response, in
// MB/s as perftest's default. There is no peak (0, as perftest -N prints).
func playReport(res *replay.Result) setup.PerftestBWReport {
	n, bytes := res.Plan.Messages()
	if n == 0 {
		return setup.PerftestBWReport{}
	}
	size := bytes / uint64(n)
	avg, rate := perf.BWFigures(size, uint64(n), res.Elapsed.Seconds(), true)
	return setup.PerftestBWReport{Size: size, Iterations: uint64(n), BWAverage: avg, MsgRate: rate}
}

// writeImage writes the responder's region as the capture shows it
// (--image) and, given maskPath, which of its bytes the capture shows
// (--image-mask), or says why the capture's requests span too much memory.
func writeImage(plan *replay.Plan, path, maskPath string) error {
	if err := plan.RegionErr(); err != nil {
		return fmt.Errorf("--image: %w", err)
	}
	img, shown := plan.ImageShown()
	if err := os.WriteFile(path, img, 0o644); err != nil {
		return err
	}
	if maskPath == "" {
		return nil
	}
	mask := make([]byte, len(shown))
	for i, s := range shown {
		if s {
			mask[i] = 1
		}
	}
	return os.WriteFile(maskPath, mask, 0o644)
}

// hasReadsOrAtomics reports whether a plan sends RDMA READs or atomics,
// for which the peer must grant responder resources.
func hasReadsOrAtomics(p *replay.Plan) bool {
	for _, st := range p.Steps {
		if !st.Request {
			continue
		}
		if st.Frame.Opcode.Info().Operation.TakesResponderResource() {
			return true
		}
	}
	return false
}

// perftestDataConv picks the conversation --setup cm plays by default in a
// perftest -R capture: the first RC conversation with requests that is not
// perftest's set-up QP. perftest -R connects the set-up QP by RDMA CM
// first, runs its exchange as SENDs both ways on it, then connects the
// data QP to the same service between the same two ports; a conversation
// so followed is the set-up QP. 0 (NewPlan's default) when no
// conversation qualifies.
func perftestDataConv(c *replay.Capture) uint32 {
	setupQP := func(i int) bool {
		cv := &c.Convs[i]
		if cv.PairedBy != decode.PairedCM || cv.Dir[0].Messages == 0 || cv.Dir[1].Messages == 0 {
			return false
		}
		for j := i + 1; j < len(c.Convs); j++ {
			d := &c.Convs[j]
			if d.Service == layers.ServiceRC && d.PairedBy == decode.PairedCM && d.ServiceID == cv.ServiceID &&
				d.A == cv.A && d.B == cv.B && d.Start > cv.Start {
				return true
			}
		}
		return false
	}
	seen := map[uint32]bool{}
	for _, f := range c.Frames {
		if !f.Selected || f.Conv == 0 || !f.IB || seen[f.Conv] || !f.Opcode.Info().IsRequest() {
			continue
		}
		seen[f.Conv] = true
		if c.Convs[f.Conv-1].Service == layers.ServiceRC && !setupQP(int(f.Conv-1)) {
			return f.Conv
		}
	}
	return 0
}
