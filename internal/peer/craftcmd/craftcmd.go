// Package craftcmd is ibpeer craft: it crafts one RDMA conversation with
// package craft and writes it to a capture file.
//
// A Config is what the command line decided, already checked: craft's
// Config (encapsulation, service, the two QPs, MTU), the work requests,
// the faults and whether RDMA CM frames frame the conversation (with the
// values its REQ and REP negotiate, an MRA, a REJ instead of a connection,
// a DREQ left unanswered). Run
// crafts the frames (the CM exchange first when asked, then the work
// requests with their responses and the faults, then the DREQ/DREP),
// lists them and the findings they should give when Verbose, and writes
// them. Frame numbers in the faults count in the file, as the user sees
// them; Run shifts them past the CM frames before handing them to craft.
// Errors of the conversation itself (a fault that cannot apply, a size the
// MTU cannot carry) are *InvalidError: the command line asked for
// something that cannot be; others are I/O.
package craftcmd

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// Config is one run of ibpeer craft.
type Config struct {
	Craft  craft.Config
	Ops    []craft.Op
	Faults craft.Faults // Corrupt frames count in the file, CM frames included
	CM     bool         // CM REQ/REP/RTU before and DREQ/DREP after (UD: SIDR_REQ/SIDR_REP)
	// CMOptions are the REQ/REP values, the MRA and the REJ's side.
	CMOptions craft.CMOptions
	// Reject, when set, makes the connection a rejected one: REQ and REJ
	// (REQ, REP and REJ when CMOptions.RequesterRejects); no traffic.
	Reject *layers.CMRejectReason
	// NoDREP leaves the DREQ unanswered.
	NoDREP bool
	Format capture.Format
	Out    string // the file to write, "-" for standard output
	// Verbose lists the frames and the expected findings on Run's writer.
	Verbose bool
}

// InvalidError is a conversation that cannot be crafted as configured.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Run crafts the conversation and writes it to cfg.Out; the listing of
// Verbose goes to w.
func Run(_ context.Context, cfg Config, w io.Writer) error {
	tr, err := Trace(cfg)
	if err != nil {
		return &InvalidError{err}
	}
	if cfg.Verbose {
		for i, fr := range tr.Frames {
			fmt.Fprintf(w, "%4d %s %-9v %v\n", i+1, fr.Time.Format("15:04:05.000000"), fr.Info.From, fr.Info)
		}
		for _, fd := range tr.Findings {
			fmt.Fprintln(w, fd)
		}
	}
	return write(cfg.Out, cfg.Format, tr.Frames)
}

// Trace crafts the conversation.
func Trace(cfg Config) (craft.Trace, error) {
	c, err := craft.New(cfg.Craft)
	if err != nil {
		return craft.Trace{}, err
	}
	ud := cfg.Craft.Service == layers.ServiceUD
	if cfg.Reject != nil {
		if err := c.Reject(cfg.CMOptions, *cfg.Reject); err != nil {
			return craft.Trace{}, err
		}
		return c.Trace(), nil
	}
	if cfg.CM {
		if ud {
			err = c.ResolveService(cfg.CMOptions)
		} else {
			err = c.Connect(cfg.CMOptions)
		}
		if err != nil {
			return craft.Trace{}, err
		}
	}
	// --broken counts frames in the file; Run counts them in its own output.
	f := cfg.Faults
	f.Corrupt = append([]craft.Corrupt(nil), f.Corrupt...)
	for i := range f.Corrupt {
		if f.Corrupt[i].Frame == 0 {
			continue
		}
		if f.Corrupt[i].Frame <= len(c.Frames()) {
			return craft.Trace{}, fmt.Errorf("--broken %v@%d: frame %d is a CM frame; break a frame of the conversation after it",
				f.Corrupt[i].Kind, f.Corrupt[i].Frame, f.Corrupt[i].Frame)
		}
		f.Corrupt[i].Frame -= len(c.Frames())
	}
	if err := c.Run(cfg.Ops, f); err != nil {
		return craft.Trace{}, err
	}
	if cfg.CM && !ud {
		disconnect := c.Disconnect
		if cfg.NoDREP {
			disconnect = func() error { return c.DisconnectUnanswered(0) }
		}
		if err := disconnect(); err != nil {
			return craft.Trace{}, err
		}
	}
	return c.Trace(), nil
}

// write stores frames in a capture file.
func write(path string, format capture.Format, frames []craft.Frame) error {
	if len(frames) == 0 {
		return errors.New("no frames to write")
	}
	w, err := capture.Create(path, format, layers.LinkType(frames[0].LinkType), true)
	if err != nil {
		return err
	}
	for _, f := range frames {
		p := capture.Packet{Data: f.Data, LinkType: layers.LinkType(f.LinkType),
			Time: f.Time, Length: len(f.Data)}
		if err := w.WritePacket(p); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
