//go:build !linux

package capture

import (
	"errors"
	"github.com/ibwire/ibwire/layers"
	"time"

	"golang.org/x/net/bpf"
)

var errNoLive = errors.New("capture: live capture needs Linux AF_PACKET sockets")

// LiveSource captures frames from a network interface; only Linux has one.
type LiveSource struct{}

// OpenLive fails: live capture is implemented for Linux only.
func OpenLive(iface string, snaplen int, filter []bpf.RawInstruction) (*LiveSource, error) {
	return nil, errNoLive
}

// Name returns "".
func (s *LiveSource) Name() string { return "" }

// LinkType returns layers.LinkTypeEthernet.
func (s *LiveSource) LinkType() layers.LinkType { return layers.LinkTypeEthernet }

// SetPromiscuous fails.
func (s *LiveSource) SetPromiscuous(on bool) error { return errNoLive }

// Stats fails.
func (s *LiveSource) Stats() (Stats, error) { return Stats{}, errNoLive }

// Close does nothing.
func (s *LiveSource) Close() error { return nil }

// SetReadDeadline fails.
func (s *LiveSource) SetReadDeadline(t time.Time) error { return errNoLive }

// Next fails.
func (s *LiveSource) Next() (Packet, error) { return Packet{}, errNoLive }

// NextInto fails.
func (s *LiveSource) NextInto(p *Packet) error { return errNoLive }
