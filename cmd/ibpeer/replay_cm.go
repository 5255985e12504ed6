package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
	"github.com/ibwire/ibwire/setup"
)

// cmSetup is compare mode's --setup cm: the client side of perftest -R
// (ib_write_bw -R, ibpeer perftest … -R), run with perftest_cm.go's code.
// A device on the wire the requests go out on (SplitWire gives it every
// datagram that is not for the data QP) connects the set-up QP by RDMA CM,
// runs the version, buffer-size and MTU messages and the binary
// pingpong_dest exchange as SENDs on it, and connects a data QP of its own
// by RDMA CM. That QP never sends: its QPN and first PSN are what the
// played requests carry (Assigned), and the responses to it go to the
// player. Close ends the session as perftest's client does: the end-of-test
// handshake, the reports, the closing handshake, the data QP's DREQ, and
// the wait for the server's DREQ of the set-up QP.
type cmSetup struct {
	server netip.Addr
	port   int
	mtus   mtuRange // the path MTUs at which the captured messages segment as captured
	rdAtom bool     // READs or atomics to come (the plan's, --payload's read-back): ask for responder resources
	split  *replay.SplitWire
	dev    *endpoint.Device
	// limit bounds the whole exchange (default exchange.SetupTimeout): with nobody
	// answering, RDMA CM would retry its REQ for minutes.
	limit time.Duration

	cmx      *exchange.PerftestCM
	p        *setup.PerftestConn
	qp       *endpoint.QP
	local    setup.PerftestDest
	assigned replay.Dest
	ready    bool                   // the exchange went through: Close runs the closing steps
	report   setup.PerftestBWReport // the play's, sent on Close
}

func (s *cmSetup) setReport(r setup.PerftestBWReport) { s.report = r }

// cmSetupTimeout bounds Close's steps.
const cmSetupTimeout = 5 * time.Second

// cmConfig is the client side of perftest -R's connections.
func (s *cmSetup) cmConfig() exchange.PerftestCMConfig {
	mtu, _ := layers.PathMTUOf(s.mtus.max) // a plan's MTUs are IB MTUs
	return exchange.PerftestCMConfig{Server: s.server, Port: s.port, MTU: mtu}
}

func (s *cmSetup) Exchange(ctx context.Context, _ replay.Dest) (replay.Dest, error) {
	limit := s.limit
	if limit <= 0 {
		limit = exchange.SetupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	d, err := s.exchange(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return d, fmt.Errorf("perftest -R set-up with %v port %d not done within %v: %w", s.server, s.port, limit, err)
	}
	return d, err
}

func (s *cmSetup) exchange(ctx context.Context) (replay.Dest, error) {
	cmx, err := exchange.DialPerftestCM(ctx, s.dev, s.cmConfig(), io.Discard)
	if err != nil {
		return replay.Dest{}, err
	}
	s.cmx = cmx
	stop := context.AfterFunc(ctx, func() { cmx.Msg().Close() })
	defer stop()
	s.p = setup.NewPerftestConnRDMACM(cmx.Msg(), false)
	if _, err := s.p.ExchangeVersions(setup.PerftestVersion); err != nil {
		return replay.Dest{}, err
	}
	mtu, err := negotiateCaptureMTU(s.p, s.mtus)
	if err != nil {
		return replay.Dest{}, err
	}
	if err := s.p.ExchangeEmptyDest(); err != nil {
		return replay.Dest{}, err
	}
	pd := s.dev.AllocPD()
	cq := s.dev.CreateCQ(16)
	if s.qp, err = pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: cq, RecvCQ: cq, MaxSendWR: 1, MaxRecvWR: 1}); err != nil {
		return replay.Dest{}, err
	}
	// From here on the peer's responses to the data QP are the player's.
	s.split.Divert(s.qp.QPN())
	outReads, resources := 1, uint8(0)
	if s.rdAtom {
		outReads, resources = exchange.PerftestOutReads, exchange.PerftestOutReads
	}
	if err := cmx.ConnectData(ctx, s.qp, mtu, resources); err != nil {
		return replay.Dest{}, err
	}
	if err := s.p.ExchangeEmptyDest(); err != nil {
		return replay.Dest{}, err
	}
	a, err := s.qp.Query()
	if err != nil {
		return replay.Dest{}, err
	}
	s.local = setup.PerftestDest{OutReads: uint16(outReads), QPN: s.qp.QPN(), PSN: a.SQPSN, GID: s.dev.GID()}
	s.assigned = replay.Dest{QPN: s.qp.QPN(), PSN: a.SQPSN}
	var r setup.PerftestDest
	for range 3 { // handshakes #1 (the QP messages), #2 and #3
		if r, err = s.p.Handshake(s.local); err != nil {
			return replay.Dest{}, err
		}
	}
	if r.QPN != a.DestQPN {
		return replay.Dest{}, fmt.Errorf("the peer's QP message names QPN 0x%06x, its RDMA CM connection 0x%06x", r.QPN, a.DestQPN)
	}
	s.ready = true
	d := perftestPeer(r)
	d.MTU = mtu.Bytes()
	return d, nil
}

// Assigned is the data QP's QPN and first PSN, which RDMA CM chose.
func (s *cmSetup) Assigned() replay.Dest { return s.assigned }

// Close ends the perftest -R session and frees the device's QPs; errors
// in the closing steps change nothing about the comparison and are
// ignored, but the server gets its DREQ whatever happened before.
func (s *cmSetup) Close() error {
	if s.cmx == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmSetupTimeout)
	defer cancel()
	done := false
	if s.ready {
		s.cmx.Msg().SetDeadline(time.Now().Add(cmSetupTimeout))
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
