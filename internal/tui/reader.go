package tui

import (
	"github.com/ibwire/ibwire/decode"
)

// reader decodes frames on demand from the spool for the rows on screen
// and the detail view. It belongs to the UI goroutine.
type reader struct {
	m   *Model
	dec *decode.Decoder
	buf []byte
}

func newReader(m *Model) *reader {
	return &reader{m: m, dec: decode.NewDecoder(m.options)}
}

// each decodes frames from..to (1-based, inclusive) and calls fn with each;
// the packet is valid only during the call. The analysis fields come from
// the index (whole for packets with findings, the conversation otherwise).
func (r *reader) each(from, to int, fn func(p *decode.Packet)) error {
	// Start one frame early when possible so that the first packet's delta
	// time is right.
	lead := max(from-1, 1)
	start, end, first, ok := r.m.span(lead, to)
	if !ok {
		return errBadSpool
	}
	var err error
	if r.buf, err = readSpan(r.m.file, start, end, r.buf); err != nil {
		return err
	}
	t0 := r.m.firstTime()
	return parseRecords(r.buf, first, func(in decode.Input) bool {
		if in.Number > to {
			return false
		}
		if in.Number < lead {
			return true
		}
		p := r.dec.Decode(in)
		if in.Number < from {
			return true
		}
		p.RelTime = in.Time.Sub(t0)
		p.Analysis, _ = r.m.analysisOf(in.Number)
		fn(p)
		return true
	})
}

// packet decodes one frame; the packet is valid until the next call.
func (r *reader) packet(frame int) (*decode.Packet, error) {
	var out *decode.Packet
	err := r.each(frame, frame, func(p *decode.Packet) { out = p })
	if err == nil && out == nil {
		err = errBadSpool
	}
	return out, err
}
