package craft

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Conn crafts the conversation of one queue pair: work requests run through
// a small deterministic model of both ends (rxe's requester, responder and
// completer rules) and come out as captured frames with known findings.
// Each call appends to the Conn's trace and advances its clock.
type Conn struct {
	b     *Builder
	cfg   *Config
	now   time.Duration // offset from Start of the next frame
	trace Trace

	psn    layers.PSN // the requester's next PSN
	msn    uint32     // the responder's MSN
	failed error      // set once the QP is in the error state

	gsiPSN [2]layers.PSN // PSNs of the two QP1s, for CM
	cm     cmState
}

// New returns a Conn for cfg.
func New(cfg Config) (*Conn, error) {
	b, err := NewBuilder(cfg)
	if err != nil {
		return nil, err
	}
	return &Conn{b: b, cfg: &b.cfg, psn: b.cfg.Requester.PSN}, nil
}

// Config returns the Conn's configuration with its defaults filled in.
func (c *Conn) Config() Config { return *c.cfg }

// Builder returns the Conn's frame builder.
func (c *Conn) Builder() *Builder { return c.b }

// Trace returns the frames and findings so far.
func (c *Conn) Trace() Trace { return c.trace }

// Expect adds a finding the caller put into the frames so far, by the
// frames' numbers (from 1): one craft's model does not make itself, such as
// traffic that breaks what the CM negotiated. Its Detail says why (the
// manifest's findings table needs one).
func (c *Conn) Expect(f Finding) error {
	if f.Frame < 1 || f.Frame > len(c.trace.Frames) || f.Ref < 0 || f.Ref > len(c.trace.Frames) || f.Detail == "" {
		return fmt.Errorf("craft: finding %v: the trace has %d frames", f, len(c.trace.Frames))
	}
	c.trace.Findings = append(c.trace.Findings, f)
	sortFindings(c.trace.Findings)
	return nil
}

// Frames returns the frames so far.
func (c *Conn) Frames() []Frame { return c.trace.Frames }

// Now returns the time the next frame will have.
func (c *Conn) Now() time.Time { return c.cfg.Start.Add(c.now) }

// Wait moves the clock forward by d.
func (c *Conn) Wait(d time.Duration) { c.now += d }

// NextPSN returns the PSN the requester sends next.
func (c *Conn) NextPSN() layers.PSN { return c.psn }

// Err returns why the QP is in the error state, or nil.
func (c *Conn) Err() error { return c.failed }

// Packet appends one frame made from p at the clock, then advances the
// clock by Step. Nothing else changes: it is the way to write any packet,
// right or wrong, by its field values.
func (c *Conn) Packet(p Packet) error {
	f, err := c.b.Build(p, c.Now())
	if err != nil {
		return err
	}
	c.trace.Frames = append(c.trace.Frames, f)
	c.now += c.cfg.Step
	return nil
}

// Run posts ops, runs the conversation with faults f and appends its
// frames. It fails when the ops or faults are invalid or the QP is already
// in the error state; an error NAK during the run puts the QP in the error
// state (Err says so) without failing the run.
func (c *Conn) Run(ops []Op, f Faults) error {
	if c.failed != nil {
		return fmt.Errorf("craft: QP in the error state: %w", c.failed)
	}
	if len(ops) == 0 {
		return errors.New("craft: no ops to run")
	}
	if err := c.checkFaults(ops, f); err != nil {
		return err
	}
	// Corruptions name frames of the output, which exists only once the run
	// does; each is resolved on a run that has the ones before it (the
	// frames before a corrupted one do not depend on it).
	pending := append([]Corrupt(nil), f.Corrupt...)
	sort.SliceStable(pending, func(i, j int) bool {
		return pending[i].Frame != 0 && (pending[j].Frame == 0 || pending[i].Frame < pending[j].Frame)
	})
	resolved := make(map[txKey]CorruptKind)
	for _, cr := range pending {
		s, err := c.simulate(ops, &f, resolved)
		if err != nil {
			return err
		}
		key, err := s.pick(cr, resolved)
		if err != nil {
			return err
		}
		resolved[key] = cr.Kind
	}
	s, err := c.simulate(ops, &f, resolved)
	if err != nil {
		return err
	}
	tr := s.output()
	c.trace.Append(tr)
	if n := len(tr.Frames); n > 0 {
		c.now = tr.Frames[n-1].Time.Sub(c.cfg.Start) + c.cfg.Step
	}
	c.psn = s.base.Add(s.total)
	c.msn = s.msn
	if s.qpErr || s.respErr {
		c.failed = fmt.Errorf("%s", s.errWhy)
	}
	return nil
}

// checkFaults validates faults against the ops of a run.
func (c *Conn) checkFaults(ops []Op, f Faults) error {
	var errs []error
	rc := c.cfg.Service == layers.ServiceRC
	if (len(f.NAKs) > 0 || len(f.RNRs) > 0) && !rc {
		errs = append(errs, fmt.Errorf("NAKs and RNR NAKs need RC, not %v", c.cfg.Service))
	}
	for _, n := range f.NAKs {
		if n.Packet < 1 {
			errs = append(errs, fmt.Errorf("NAK packet %d: packets count from 1", n.Packet))
		}
		if n.Code > 31 {
			errs = append(errs, fmt.Errorf("NAK code %d does not fit 5 bits", n.Code))
		}
	}
	for _, r := range f.RNRs {
		if r.Packet < 1 || r.Times < 0 || r.Timer > 31 {
			errs = append(errs, fmt.Errorf("RNR %+v: packet from 1, times ≥ 0, timer 0-31", r))
		}
	}
	if f.Loss.Prob < 0 || f.Loss.Prob >= 1 || f.CE.Prob < 0 || f.CE.Prob > 1 {
		errs = append(errs, errors.New("loss probability must be in [0, 1), CE probability in [0, 1]"))
	}
	if f.Loss.Every == 1 {
		errs = append(errs, errors.New("losing every request transmission never ends"))
	}
	if f.Loss.Every < 0 || f.CNPEvery < 0 || f.CE.Every < 0 {
		errs = append(errs, errors.New("negative Every"))
	}
	for _, cr := range f.Corrupt {
		if cr.Kind == NoCorruption || int(cr.Kind) >= len(corruptNames) || cr.Frame < 0 {
			errs = append(errs, fmt.Errorf("corruption %+v", cr))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("craft: faults: %w", err)
	}
	return nil
}

// pick finds the transmission that corruption cr applies to in a run's output.
func (s *sim) pick(cr Corrupt, taken map[txKey]CorruptKind) (txKey, error) {
	recs := s.sorted()
	if cr.Frame > 0 {
		if cr.Frame > len(recs) {
			return txKey{}, fmt.Errorf("craft: corrupt frame %d: the run has %d frames", cr.Frame, len(recs))
		}
		r := recs[cr.Frame-1]
		if err := cr.Kind.applies(s.cfg.Encap, r.side, &r.tx.bth); err != nil {
			return txKey{}, fmt.Errorf("craft: corrupt frame %d: %w", cr.Frame, err)
		}
		if _, dup := taken[txKey{r.side, r.k}]; dup {
			return txKey{}, fmt.Errorf("craft: frame %d corrupted twice", cr.Frame)
		}
		return txKey{r.side, r.k}, nil
	}
	for _, r := range recs {
		if _, dup := taken[txKey{r.side, r.k}]; !dup && cr.Kind.auto(s.cfg.Encap, r.side, &r.tx.bth, len(r.tx.payload)) {
			return txKey{r.side, r.k}, nil
		}
	}
	return txKey{}, fmt.Errorf("craft: no frame of the run can take corruption %v: it needs %s", cr.Kind, cr.Kind.needs())
}
