package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/setup"
)

// The set-ups compare mode connects to a live peer with, the client side
// of each tool's: ManualSetup for values known already, TCPSetup for
// ibv_rc_pingpong's exchange (with ibpeer serve's region message after it)
// and perftest's TCP exchange, CMSetup for perftest -R's, whose QP RDMA
// CM connects. TCPSetup and CMSetup run perftest's closing steps on
// Close, sending the report SetReport gave, which the server prints.

// ManualSetup announces nothing: the peer's values are known already
// (ibpeer replay takes them from flags).
type ManualSetup struct{ Remote Dest }

// Exchange returns Remote.
func (m ManualSetup) Exchange(context.Context, Dest) (Dest, error) {
	return m.Remote, nil
}

// TCPSetup runs the client side of ibv_rc_pingpong's exchange (followed by
// ibpeer serve's region message) or perftest's TCP exchange with package
// setup's codecs, and perftest's closing steps on Close.
type TCPSetup struct {
	// Kind is "pingpong" or "perftest".
	Kind string
	// Addr is the peer's set-up address, HOST:PORT.
	Addr string
	// GID is the player's, announced.
	GID [16]byte
	// MTUs are the path MTUs at which the plan's messages segment as
	// captured (Plan.MTURange): a peer at another is refused with the fix.
	MTUs MTURange
	// RegionLen is the bytes of the peer's region the requests touch
	// (Plan.RegionLen): ibpeer serve's region must hold them.
	RegionLen uint64
	// Fallback: the set-up was not chosen, so a peer that does not answer
	// perftest's version message within SetupFallbackWait gets ibpeer
	// serve's exchange (pingpong) on a new connection; FellBack says it
	// did.
	Fallback bool

	fellBack bool
	conn     net.Conn
	pt       *setup.PerftestConn
	local    setup.PerftestDest
	report   setup.PerftestBWReport // sent on Close
}

// SetReport sets the bandwidth report the closing steps send, which a
// perftest server prints as its own.
func (s *TCPSetup) SetReport(r setup.PerftestBWReport) { s.report = r }

// FellBack says whether a peer not told which set-up it runs was taken for
// ibpeer serve (Fallback).
func (s *TCPSetup) FellBack() bool { return s.fellBack }

// Exchange runs the opening steps.
func (s *TCPSetup) Exchange(ctx context.Context, local Dest) (Dest, error) {
	conn, err := s.dial(ctx)
	if err != nil {
		return Dest{}, err
	}
	if s.Kind == "pingpong" {
		return s.pingpong(conn, local)
	}
	s.pt = setup.NewPerftestConn(conn, false)
	if s.Fallback {
		conn.SetDeadline(time.Now().Add(SetupFallbackWait))
	}
	if _, err := s.pt.ExchangeVersions(setup.PerftestVersion); err != nil {
		if !s.Fallback || !peerSaidNothing(err) {
			return Dest{}, err
		}
		// Not a perftest server: ibpeer serve waits for the pingpong
		// message and says nothing to perftest's.
		conn.Close()
		s.pt, s.Kind, s.fellBack = nil, "pingpong", true
		if conn, err = s.dial(ctx); err != nil {
			return Dest{}, err
		}
		d, err := s.pingpong(conn, local)
		if err != nil {
			err = fmt.Errorf("the peer did not answer perftest's first message within %v, and ibpeer serve's exchange (--setup pingpong) failed: %w", SetupFallbackWait, err)
		}
		return d, err
	}
	s.deadline(ctx)
	mtu, err := negotiateCaptureMTU(s.pt, s.MTUs)
	if err != nil {
		return Dest{}, err
	}
	s.local = setup.PerftestDest{OutReads: 1, QPN: local.QPN, PSN: local.PSN, GID: s.GID}
	var r setup.PerftestDest
	for range 3 { // handshakes #1 (addresses), #2 and #3 (after RTR)
		if r, err = s.pt.Handshake(s.local); err != nil {
			return Dest{}, err
		}
	}
	peer := perftestPeer(r)
	peer.MTU = mtu.Bytes()
	return peer, nil
}

// SetupFallbackWait is how long a peer has to answer perftest's version
// message before a TCPSetup with Fallback takes it for ibpeer serve. A
// perftest server answers at once.
const SetupFallbackWait = time.Second

// peerSaidNothing reports a set-up step that failed because the peer said
// nothing back: it timed out, or hung up before answering in full.
func peerSaidNothing(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// dial connects the set-up exchange, bounded by ctx's deadline.
func (s *TCPSetup) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	s.deadline(ctx)
	return conn, nil
}

func (s *TCPSetup) deadline(ctx context.Context) {
	dl, _ := ctx.Deadline()
	s.conn.SetDeadline(dl)
}

// pingpong runs ibv_rc_pingpong's exchange and reads ibpeer serve's region
// message after it.
func (s *TCPSetup) pingpong(conn net.Conn, local Dest) (Dest, error) {
	r, err := setup.PingpongClient(conn, setup.PingpongDest{QPN: local.QPN, PSN: local.PSN, GID: s.GID})
	if err != nil {
		return Dest{}, err
	}
	d := Dest{LID: r.LID, QPN: r.QPN, PSN: layers.PSN(r.PSN), GID: netip.AddrFrom16(r.GID).Unmap()}
	reg, ok, err := setup.ReadServeRegion(conn)
	if err != nil || !ok {
		return d, err
	}
	if !s.MTUs.has(reg.MTU) {
		return d, fmt.Errorf("the peer's QPs use path MTU %d%s: start ibpeer serve with --mtu %d", reg.MTU, s.MTUs.refusal(), s.MTUs.nearest(reg.MTU))
	}
	d.MTU = reg.MTU
	if reg.Size < s.RegionLen {
		return d, fmt.Errorf("the peer's region has %d bytes, the captured requests touch %d: start ibpeer serve with --mr-size %d or more", reg.Size, s.RegionLen, s.RegionLen)
	}
	d.RKey, d.VA = reg.RKey, reg.VA
	return d, nil
}

// MTURange is the path MTUs at which a plan's messages segment as
// captured, Min to Max.
type MTURange struct{ Min, Max int }

// MTURange is the plan's (MTUMin to MTUMax).
func (p *Plan) MTURange() MTURange { return MTURange{p.MTUMin, p.MTUMax} }

func (r MTURange) has(mtu int) bool { return r.Min <= mtu && mtu <= r.Max }

// nearest is the MTU of the range closest to mtu: the one to ask a peer
// at mtu for.
func (r MTURange) nearest(mtu int) int { return min(max(mtu, r.Min), r.Max) }

// refusal says, after a peer's MTU, what the capture needs.
func (r MTURange) refusal() string {
	if r.Min == r.Max {
		return fmt.Sprintf(", the capture %d", r.Min)
	}
	return fmt.Sprintf("; the captured messages segment the same only at path MTUs %d to %d", r.Min, r.Max)
}

// negotiateCaptureMTU runs the rest of perftest's opening exchange as a
// client, after the versions (buffer sizes, MTU), proposing the largest MTU at which the
// captured messages segment as captured, and refuses a peer that settles
// on one below the range: perftest takes the smaller MTU, and the peer's
// QP would drop the capture's full-size packets (or split its READ
// responses differently).
func negotiateCaptureMTU(p *setup.PerftestConn, mtus MTURange) (layers.PathMTU, error) {
	proposed, _ := layers.PathMTUOf(mtus.Max) // a plan's MTUs are IB MTUs
	o, err := p.Negotiate(setup.PerftestParams{CycleBuffer: setup.PerftestCycleBuffer, CacheLine: setup.PerftestCacheLine, MTU: proposed})
	if err != nil {
		return 0, err
	}
	if err := mtus.checkPerftestPeer(o.MTU.Bytes()); err != nil {
		return 0, err
	}
	return o.MTU, nil
}

// checkPerftestPeer refuses a perftest peer's active MTU outside the
// range, with the -m that fixes it.
func (r MTURange) checkPerftestPeer(mtu int) error {
	if r.has(mtu) {
		return nil
	}
	refusal := r.refusal()
	if r.Min == r.Max {
		refusal = fmt.Sprintf(", the capture's path MTU %d", r.Min)
	}
	return fmt.Errorf("the peer's active MTU is %d%s: give the peer -m %d", mtu, refusal, r.nearest(mtu))
}

// perftestPeer is what a peer's perftest QP message announces, as the
// responder compare mode plays against.
func perftestPeer(r setup.PerftestDest) Dest {
	return Dest{LID: r.LID, QPN: r.QPN, PSN: layers.PSN(r.PSN), RKey: r.RKey, VA: r.VAddr,
		GID: netip.AddrFrom16(r.GID).Unmap(), OutReads: int(r.OutReads)}
}

// Close ends a perftest session as a client does (end-of-test handshake,
// reports, closing handshake, done) so the server finishes cleanly; the
// report is the play's (setReport), which the server prints; errors
// there change nothing about the comparison and are ignored.
func (s *TCPSetup) Close() error {
	if s.conn == nil {
		return nil
	}
	if s.pt != nil {
		s.conn.SetDeadline(time.Now().Add(2 * time.Second))
		if err := s.pt.Finish(s.local, s.report, nil); err == nil {
			s.pt.ExchangeDone()
		}
	}
	return s.conn.Close()
}

// CMSetup is the client side of perftest -R (ib_write_bw -R, ibpeer
// perftest … -R), run with exchange.PerftestCM.
// A device on the wire the requests go out on (SplitWire gives it every
// datagram that is not for the data QP) connects the set-up QP by RDMA CM,
// runs the version, buffer-size and MTU messages and the binary
// pingpong_dest exchange as SENDs on it, and connects a data QP of its own
// by RDMA CM. That QP never sends: its QPN and first PSN are what the
// played requests carry (Assigned), and the responses to it go to the
// player. Close ends the session as perftest's client does: the end-of-test
// handshake, the reports, the closing handshake, the data QP's DREQ, and
// the wait for the server's DREQ of the set-up QP.
type CMSetup struct {
	Server netip.Addr
	Port   int      // the RDMA CM port (perftest's -p)
	MTUs   MTURange // the path MTUs at which the captured messages segment as captured
	// RdAtom says READs or atomics are to come (the plan's, or a
	// read-back's): the data QP asks for responder resources.
	RdAtom bool
	// Split is the wire the requests go out on; Dev is a device on its
	// Rest, which gets every datagram not for the data QP.
	Split *SplitWire
	Dev   *endpoint.Device
	// Limit bounds the whole exchange (default exchange.SetupTimeout):
	// with nobody answering, RDMA CM would retry its REQ for minutes.
	Limit time.Duration

	cmx      *exchange.PerftestCM
	p        *setup.PerftestConn
	qp       *endpoint.QP
	local    setup.PerftestDest
	assigned Dest
	ready    bool                   // the exchange went through: Close runs the closing steps
	report   setup.PerftestBWReport // the play's, sent on Close
}

// SetReport sets the bandwidth report the closing steps send, which the
// perftest server prints as its own.
func (s *CMSetup) SetReport(r setup.PerftestBWReport) { s.report = r }

// cmCloseTimeout bounds CMSetup.Close's steps.
const cmCloseTimeout = 5 * time.Second

// cmConfig is the client side of perftest -R's connections.
func (s *CMSetup) cmConfig() exchange.PerftestCMConfig {
	mtu, _ := layers.PathMTUOf(s.MTUs.Max) // a plan's MTUs are IB MTUs
	return exchange.PerftestCMConfig{Server: s.Server, Port: s.Port, MTU: mtu}
}

// Exchange runs the opening steps, bounded by Limit.
func (s *CMSetup) Exchange(ctx context.Context, _ Dest) (Dest, error) {
	limit := s.Limit
	if limit <= 0 {
		limit = exchange.SetupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	d, err := s.exchange(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return d, fmt.Errorf("perftest -R set-up with %v port %d not done within %v: %w", s.Server, s.Port, limit, err)
	}
	return d, err
}

func (s *CMSetup) exchange(ctx context.Context) (Dest, error) {
	cmx, err := exchange.DialPerftestCM(ctx, s.Dev, s.cmConfig(), io.Discard)
	if err != nil {
		return Dest{}, err
	}
	s.cmx = cmx
	stop := context.AfterFunc(ctx, func() { cmx.Msg().Close() })
	defer stop()
	s.p = setup.NewPerftestConnRDMACM(cmx.Msg(), false)
	if _, err := s.p.ExchangeVersions(setup.PerftestVersion); err != nil {
		return Dest{}, err
	}
	mtu, err := negotiateCaptureMTU(s.p, s.MTUs)
	if err != nil {
		return Dest{}, err
	}
	if err := s.p.ExchangeEmptyDest(); err != nil {
		return Dest{}, err
	}
	pd := s.Dev.AllocPD()
	cq := s.Dev.CreateCQ(16)
	if s.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: 1, MaxRecvWR: 1}); err != nil {
		return Dest{}, err
	}
	// From here on the peer's responses to the data QP are the player's.
	s.Split.Divert(s.qp.QPN())
	outReads, resources := 1, uint8(0)
	if s.RdAtom {
		outReads, resources = setup.PerftestOutReads, setup.PerftestOutReads
	}
	if err := cmx.ConnectData(ctx, s.qp, mtu, resources); err != nil {
		return Dest{}, err
	}
	if err := s.p.ExchangeEmptyDest(); err != nil {
		return Dest{}, err
	}
	a, err := s.qp.Query()
	if err != nil {
		return Dest{}, err
	}
	s.local = setup.PerftestDest{OutReads: uint16(outReads), QPN: s.qp.QPN(), PSN: a.SQPSN, GID: s.Dev.GID()}
	s.assigned = Dest{QPN: s.qp.QPN(), PSN: a.SQPSN}
	var r setup.PerftestDest
	for range 3 { // handshakes #1 (the QP messages), #2 and #3
		if r, err = s.p.Handshake(s.local); err != nil {
			return Dest{}, err
		}
	}
	if r.QPN != a.DestQPN {
		return Dest{}, fmt.Errorf("the peer's QP message names QPN 0x%06x, its RDMA CM connection 0x%06x", r.QPN, a.DestQPN)
	}
	s.ready = true
	d := perftestPeer(r)
	d.MTU = mtu.Bytes()
	return d, nil
}

// Assigned is the data QP's QPN and first PSN, which RDMA CM chose.
func (s *CMSetup) Assigned() Dest { return s.assigned }

// Close ends the perftest -R session and frees the device's QPs; errors
// in the closing steps change nothing about the comparison and are
// ignored, but the server gets its DREQ whatever happened before.
func (s *CMSetup) Close() error {
	if s.cmx == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmCloseTimeout)
	defer cancel()
	done := false
	if s.ready {
		s.cmx.Msg().SetDeadline(time.Now().Add(cmCloseTimeout))
		err := s.p.Finish(s.local, s.report, nil)
		done = err == nil
	}
	var err error
	if done {
		err = s.cmx.Disconnect(ctx)
	} else {
		// The session broke off: end both connections here rather than
		// wait for a server that is waiting for us.
		err = s.cmx.Abort(ctx)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	s.cmx.Close()
	if s.qp != nil {
		s.qp.Destroy()
	}
	return err
}
