package device

import (
	"flag"
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/endpoint"
)

// UDPOffload is ibpeer's --udp-offload: whether a UDP wire may hand the
// kernel runs of segments (endpoint.WithUDPOffload). The zero value is
// auto, the wire's default: segmentation offload on loopback wires.
type UDPOffload bool

// OffloadOff sends one datagram per message.
const OffloadOff UDPOffload = true

// UDPOffloadUsage is the --udp-offload help, the same in every subcommand.
const UDPOffloadUsage = "UDP segmentation offload of the RoCEv2 socket, `MODE`: auto (on for loopback addresses, where the kernel segments a run of packets sent as one) or off (one datagram per packet). " +
	"A capture on lo (ibdump -i lo, tcpdump -i lo) is taken before segmentation, so with auto it sees a run as one large datagram; " +
	"turn it off to watch the traffic packet by packet"

// UDPOffloadFlag defines --udp-offload on fs.
func UDPOffloadFlag(fs *flag.FlagSet) *UDPOffload {
	o := new(UDPOffload)
	fs.Var(o, "udp-offload", UDPOffloadUsage)
	return o
}

func (o *UDPOffload) String() string {
	if o != nil && *o == OffloadOff {
		return "off"
	}
	return "auto"
}

// Set parses auto or off.
func (o *UDPOffload) Set(s string) error {
	switch s {
	case "auto":
		*o = false
	case "off":
		*o = OffloadOff
	default:
		return fmt.Errorf("%q is not auto or off", s)
	}
	return nil
}

// Options returns the wire options that carry o.
func (o UDPOffload) Options() []endpoint.UDPOption {
	if o == OffloadOff {
		return []endpoint.UDPOption{endpoint.WithUDPOffload(false)}
	}
	return nil
}

// ListenUDP opens a UDP wire on addr as endpoint.ListenUDP does, with
// offload o.
func (o UDPOffload) ListenUDP(addr netip.AddrPort) (*endpoint.UDPWire, error) {
	return endpoint.ListenUDP(addr, o.Options()...)
}

// Get returns o, for flag.Getter.
func (o *UDPOffload) Get() any { return *o }
