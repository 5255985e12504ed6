package replay

import (
	"fmt"
	"net"
	"syscall"

	"github.com/ibwire/ibwire/layers"
)

// PacketSender writes whole Ethernet frames out of one interface through an
// AF_PACKET socket (root or CAP_NET_RAW): RoCEv1 and ARP go too, and every
// header is sent as rewritten, the ICRC as the rewrite left it.
type PacketSender struct {
	fd    int
	name  string
	limit int // the largest frame the interface takes
}

// OpenPacketSender opens an AF_PACKET socket that sends on iface. Its
// protocol is 0, so it receives nothing.
func OpenPacketSender(iface string) (*PacketSender, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", iface, err)
	}
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("interface %s: AF_PACKET socket: %w", iface, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("interface %s: bind: %w", iface, err)
	}
	return &PacketSender{fd: fd, name: iface, limit: ifi.MTU + 14 + 4}, nil
}

// Accepts takes Ethernet frames the interface's MTU allows.
func (s *PacketSender) Accepts(f *Frame) bool {
	return f.LinkType == layers.LinkTypeEthernet && len(f.Data) <= s.limit && len(f.Data) >= 14
}

// Send writes each frame with one system call.
func (s *PacketSender) Send(frames []Frame) (int, error) {
	for i := range frames {
		for {
			_, err := syscall.Write(s.fd, frames[i].Data)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.ENOBUFS || err == syscall.EAGAIN {
				// The device queue is full: give it a moment, as tcpreplay does.
				syscall.Select(0, nil, nil, nil, &syscall.Timeval{Usec: 100})
				continue
			}
			if err != nil {
				return i, fmt.Errorf("interface %s: frame %d: %w", s.name, frames[i].Number, err)
			}
			break
		}
	}
	return len(frames), nil
}

// Close closes the socket.
func (s *PacketSender) Close() error { return syscall.Close(s.fd) }
