package correlate

import (
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// flowID is a flow's addresses and destination QP as plain bytes, a map
// key that hashes fast.
type flowID struct {
	src, dst   [16]byte
	slid, dlid uint16
	qp         uint32
}

// hosts is a flow's source and destination, address and LID.
type hosts struct {
	src, dst   [16]byte
	slid, dlid uint16
}

func (id flowID) hosts() hosts { return hosts{id.src, id.dst, id.slid, id.dlid} }

func (h hosts) reverse() hosts { return hosts{h.dst, h.src, h.dlid, h.slid} }

// Address families of a sighting.
const (
	familyLID uint8 = iota
	familyIPv4
	familyIPv6
)

func familyOf(a netip.Addr) uint8 {
	switch {
	case a.Is4():
		return familyIPv4
	case a.IsValid():
		return familyIPv6
	}
	return familyLID
}

// flowKey is the flow of s as decode names flows.
func (s *sighting) flowKey() decode.FlowKey {
	addr := func(b [16]byte) netip.Addr {
		switch s.family {
		case familyIPv4:
			return netip.AddrFrom16(b).Unmap()
		case familyIPv6:
			return netip.AddrFrom16(b)
		}
		return netip.Addr{}
	}
	return decode.FlowKey{
		Src:    decode.Endpoint{Addr: addr(s.flow.src), LID: s.flow.slid},
		Dst:    decode.Endpoint{Addr: addr(s.flow.dst), LID: s.flow.dlid},
		DestQP: s.flow.qp,
	}
}

// identity is what stays the same of a packet from sender to receiver,
// with its flow numbered by the matcher.
type identity struct {
	flow   int32
	psn    uint32
	icrc   uint32
	opcode uint8
	// icrcKnown is false for a packet the capture cut (a snapshot length
	// shorter than the frame): its ICRC is not in the file, so it matches
	// a copy of its flow, PSN and opcode whatever that copy's ICRC.
	icrcKnown bool
}

// matches reports whether a and b can be the same transmission.
func (a identity) matches(b identity) bool {
	return a.flow == b.flow && a.psn == b.psn && a.opcode == b.opcode &&
		(a.icrc == b.icrc || !a.icrcKnown || !b.icrcKnown)
}

// sighting is one transport packet read at one point.
type sighting struct {
	flow flowID
	// family is the addresses' kind (familyLID, familyIPv4, familyIPv6),
	// which flowID's 16 bytes do not say.
	family uint8
	psn    uint32
	icrc   uint32
	opcode uint8
	// icrcKnown: the capture holds the ICRC (the frame was not cut).
	icrcKnown bool
	// marked: the packet carries a congestion mark (IP ECN CE, or the
	// BTH's FECN where there is no IP header).
	marked bool
	// received, for a response, is the last PSN it says the responder
	// received: an ACK's or a READ response's own, the one before a NAK's.
	received    uint32
	hasReceived bool
	raw         int64 // capture time, ns since the epoch, as the point's clock read it
	frame       int
	// other marks a frame that is no transport packet, yielded only when
	// frames are kept for a merged capture; data, length and linkType are
	// set only then.
	other    bool
	data     []byte
	length   int
	linkType layers.LinkType
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
	// keep yields every frame, transport or not, with a copy of its bytes
	// appended to arena (for a merged capture).
	keep  bool
	arena *[]byte
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
		if s.keep {
			*s.arena = append(*s.arena, s.in.Data...)
			a := *s.arena
			out.data = a[len(a)-len(s.in.Data):]
			out.length, out.linkType = s.in.Length, s.in.LinkType
			out.raw, out.frame, out.other = s.in.Time.UnixNano(), s.in.Number, true
		}
		pkt := s.dec.Decode(s.in)
		// A frame cut by the capture's snapshot length still has its
		// headers: it is matched without its ICRC, not lost.
		cut := pkt.Cut()
		if pkt.Err != nil && !cut && s.report != nil {
			s.report.Errors++
			if s.report.FirstError == "" {
				s.report.FirstError = fmt.Sprintf("%s: packet %d: %v", s.path, s.in.Number, pkt.Err)
			}
		}
		bth := pkt.BTH()
		if bth == nil || (pkt.Err != nil && !cut) || (!cut && len(bth.Trailer.Contents) < layers.ICRCLength) {
			if s.keep {
				return nil
			}
			continue
		}
		out.other = false
		src, dst := pkt.Endpoints()
		out.family = familyOf(src.Addr)
		out.flow = flowID{src: src.Addr.As16(), dst: dst.Addr.As16(), slid: src.LID, dlid: dst.LID, qp: bth.DestQP}
		out.psn, out.opcode = uint32(bth.PSN), uint8(bth.Opcode)
		out.icrc, out.icrcKnown = 0, !cut
		if !cut {
			out.icrc = bth.Trailer.ICRC
		}
		out.received, out.hasReceived = receivedPSN(bth)
		out.marked = congestionMarked(pkt)
		out.raw = s.in.Time.UnixNano()
		out.frame = s.in.Number
		if s.report != nil {
			s.report.RoCE++
		}
		return nil
	}
}

func (s *source) close() { s.r.Close() }

// congestionMarked reports a congestion mark: IP ECN CE, or the BTH's FECN
// where there is no IP header (native InfiniBand).
func congestionMarked(pkt *decode.Packet) bool {
	if ecn, ok := pkt.ECN(); ok {
		return ecn == decode.ECNCE
	}
	return pkt.BTH().FECN
}

// receivedPSN reads what a response says the responder received: an ACK,
// an atomic ACK or a READ response the request with its PSN (and all before
// it), a NAK or RNR NAK everything before its PSN.
func receivedPSN(bth *layers.BTH) (uint32, bool) {
	info := bth.Opcode.Info()
	if !info.Response || info.Service == layers.ServiceCNP {
		return 0, false
	}
	if info.Has(layers.HdrAETH) && !bth.AETH.Syndrome.IsAck() {
		return uint32(bth.PSN.Add(-1)), true
	}
	return uint32(bth.PSN), true
}
