package replay

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// Sender is where replayed frames go: a capture file, a UDP socket, an
// interface. Send sends frames in order and returns how many it sent; a
// frame a sender cannot carry (an ARP frame for a UDP target) is skipped,
// counted by the sender, and still counts as handled. Close flushes.
type Sender interface {
	// Accepts reports whether the sender can carry f at all.
	Accepts(f *Frame) bool
	Send(frames []Frame) (int, error)
	Close() error
}

// FileSender writes frames to a capture file: the offline rewrite of
// tcprewrite. Frames keep their captured timestamps.
type FileSender struct {
	w *capture.Writer
}

// NewFileSender creates path (- for standard output) as a pcap or pcapng
// file whose first link type is lt.
func NewFileSender(path string, format capture.Format, lt layers.LinkType, nanos bool) (*FileSender, error) {
	w, err := capture.Create(path, format, lt, nanos)
	if err != nil {
		return nil, err
	}
	return &FileSender{w: w}, nil
}

// Send writes frames.
func (s *FileSender) Send(frames []Frame) (int, error) {
	for i := range frames {
		f := &frames[i]
		p := f.Packet
		p.Length = max(p.Length, len(p.Data))
		if err := s.w.WritePacket(p); err != nil {
			return i, err
		}
	}
	return len(frames), nil
}

// Close flushes and closes the file.
func (s *FileSender) Close() error { return s.w.Close() }

// Accepts takes every frame: a capture file holds anything.
func (s *FileSender) Accepts(*Frame) bool { return true }

// WireSender sends the RoCEv2 frames' datagrams (BTH through ICRC) through
// an endpoint.Wire to one destination. The wire fills every ICRC for the IP
// and UDP headers it really sends, so a replay to a new address verifies at
// the receiver without any rewrite rule; the captured traffic class and hop
// limit go along. Close closes the wire.
type WireSender struct {
	wire endpoint.Wire
	dst  netip.AddrPort
	dgs  []endpoint.Datagram
	bufs [][]byte
}

// NewWireSender returns a sender to dst (port 0 means 4791) through w.
func NewWireSender(w endpoint.Wire, dst netip.AddrPort) *WireSender {
	if dst.Port() == 0 {
		dst = netip.AddrPortFrom(dst.Addr(), layers.RoCEv2Port)
	}
	return &WireSender{wire: w, dst: dst}
}

// Accepts takes RoCEv2 frames whose datagram fits the wire.
func (s *WireSender) Accepts(f *Frame) bool {
	return f.RoCEv2 && f.PayloadEnd-f.PayloadStart <= endpoint.MaxDatagram
}

// Send copies the datagrams (the wire writes the ICRC into them) and sends
// them with as few WriteBatch calls as the wire's batch size allows.
func (s *WireSender) Send(frames []Frame) (int, error) {
	for len(s.dgs) < len(frames) {
		s.bufs = append(s.bufs, make([]byte, 0, endpoint.MaxDatagram))
		s.dgs = append(s.dgs, endpoint.Datagram{})
	}
	src := s.wire.LocalAddr()
	for i := range frames {
		f := &frames[i]
		s.bufs[i] = append(s.bufs[i][:0], f.Datagram()...)
		s.dgs[i] = endpoint.Datagram{Src: src, Dst: s.dst, TrafficClass: f.TrafficClass, HopLimit: f.HopLimit, Payload: s.bufs[i]}
	}
	sent := 0
	for sent < len(frames) {
		n, err := s.wire.WriteBatch(s.dgs[sent:len(frames)])
		sent += n
		if err != nil {
			return sent, err
		}
		if n == 0 {
			return sent, errors.New("wire sent nothing")
		}
	}
	return sent, nil
}

// Close closes the wire.
func (s *WireSender) Close() error { return s.wire.Close() }

// CheckTarget refuses a destination that is not a loopback address unless
// allowRemote: a replay is traffic someone else's QP never asked for.
func CheckTarget(a netip.Addr, allowRemote bool) error {
	if allowRemote || a.Unmap().IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address: sending elsewhere needs --allow-remote", a)
}

// CheckInterface refuses an interface that is not a loopback device unless
// allowRemote.
func CheckInterface(name string, allowRemote bool) error {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return fmt.Errorf("interface %s: %w", name, err)
	}
	if allowRemote || ifi.Flags&net.FlagLoopback != 0 {
		return nil
	}
	return fmt.Errorf("interface %s is not a loopback device: sending out of it needs --allow-remote", name)
}
