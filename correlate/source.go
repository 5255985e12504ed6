package correlate

import (
	"errors"
	"fmt"
	"io"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// identity is what stays the same of a packet from sender to receiver.
type identity struct {
	flow   decode.FlowKey
	psn    uint32
	opcode uint8
	icrc   uint32
}

// sighting is one transport packet read at one point.
type sighting struct {
	id    identity
	raw   int64 // capture time, ns since the epoch, as the point's clock read it
	frame int
}

// source reads one point's capture and yields its transport packets.
type source struct {
	point  int
	name   string
	path   string
	r      *capture.Reader
	dec    *decode.Decoder
	in     capture.Packet
	report *PointReport
}

func openSource(point int, p Point, opts decode.Options, report *PointReport) (*source, error) {
	r, err := capture.Open(p.Path)
	if err != nil {
		return nil, fmt.Errorf("point %s: %w", p.Name, err)
	}
	opts.SkipCRC = true
	return &source{point: point, name: p.Name, path: p.Path, r: r, dec: decode.NewDecoder(opts), report: report}, nil
}

// next returns the next transport packet, or io.EOF. A frame that does not
// decode is counted and skipped; a damaged file ends the point's capture
// with an error naming the file and packet.
func (s *source) next(out *sighting) error {
	for {
		if err := s.r.NextInto(&s.in); err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("point %s: %w", s.name, err)
		}
		if s.report != nil {
			s.report.Frames++
		}
		pkt := s.dec.Decode(s.in)
		if pkt.Err != nil && s.report != nil {
			s.report.Errors++
			if s.report.FirstError == "" {
				s.report.FirstError = fmt.Sprintf("%s: packet %d: %v", s.path, s.in.Number, pkt.Err)
			}
		}
		bth := pkt.BTH()
		if bth == nil || pkt.Err != nil || len(bth.Trailer.Contents) < 4 {
			continue
		}
		src, dst := pkt.Endpoints()
		out.id = identity{
			flow:   decode.FlowKey{Src: src, Dst: dst, DestQP: bth.DestQP},
			psn:    uint32(bth.PSN),
			opcode: uint8(bth.Opcode),
			icrc:   bth.Trailer.ICRC,
		}
		out.raw = s.in.Time.UnixNano()
		out.frame = s.in.Number
		if s.report != nil {
			s.report.RoCE++
		}
		return nil
	}
}

func (s *source) close() { s.r.Close() }
