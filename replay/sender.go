package replay

import (
	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/capture"
)

// Sender is where replayed frames go: a capture file, a UDP socket, an
// interface. Send sends frames in order and returns how many it sent; a
// frame a sender cannot carry (an ARP frame for a UDP target) is skipped,
// counted by the sender, and still counts as handled. Close flushes.
type Sender interface {
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
func NewFileSender(path string, format capture.Format, lt capture.LinkType, nanos bool) (*FileSender, error) {
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
		p := capture.Packet{Data: f.Data, LinkType: f.LinkType, Interface: f.Interface,
			Info: gopacket.CaptureInfo{Timestamp: f.Time, CaptureLength: len(f.Data), Length: max(f.Length, len(f.Data))}}
		if err := s.w.WritePacket(p); err != nil {
			return i, err
		}
	}
	return len(frames), nil
}

// Close flushes and closes the file.
func (s *FileSender) Close() error { return s.w.Close() }
