//go:build !linux

package replay

import "errors"

// PacketSender writes frames out of an interface; only Linux has one.
type PacketSender struct{}

// OpenPacketSender fails: AF_PACKET is Linux's.
func OpenPacketSender(iface string) (*PacketSender, error) {
	return nil, errors.New("sending out of an interface needs Linux (AF_PACKET)")
}

// Accepts takes nothing.
func (s *PacketSender) Accepts(*Frame) bool { return false }

// Send sends nothing.
func (s *PacketSender) Send([]Frame) (int, error) { return 0, errors.New("no AF_PACKET") }

// Close does nothing.
func (s *PacketSender) Close() error { return nil }
