package device

import (
	"net"
	"net/netip"

	"github.com/ibwire/ibwire/layers"
)

// ActiveMTU is the path MTU in bytes a port on addr's interface would
// have, found as rxe finds its active MTU (layers.RXEPortMTU: 1500 gives
// 1024, loopback 4096). The interface is the one holding addr, or else one
// whose subnet holds it (127.0.0.2 on lo). An address on no interface
// gives 1024.
func ActiveMTU(addr netip.Addr) int {
	ifs, err := net.Interfaces()
	if err != nil {
		return 1024
	}
	var nets []ifaceNet
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			p, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(p.IP)
			if !ok {
				continue
			}
			ones, _ := p.Mask.Size()
			nets = append(nets, ifaceNet{netip.PrefixFrom(ip.Unmap(), ones), ifi.MTU})
		}
	}
	return activeMTUOn(addr, nets)
}

// ifaceNet is one address of an interface, with the interface's MTU.
type ifaceNet struct {
	prefix netip.Prefix // the address and its subnet
	mtu    int
}

// activeMTUOn is ActiveMTU over a given list of interface addresses: the
// interface holding addr wins, else the first whose subnet holds it.
func activeMTUOn(addr netip.Addr, nets []ifaceNet) int {
	addr = addr.Unmap()
	found := 0 // the MTU of an interface whose prefix holds addr (127.0.0.2 on lo)
	for _, n := range nets {
		switch {
		case n.prefix.Addr() == addr:
			return ibMTUBelow(n.mtu)
		case found == 0 && n.prefix.Contains(addr):
			found = n.mtu
		}
	}
	if found > 0 {
		return ibMTUBelow(found)
	}
	return 1024
}

// ibMTUBelow is the active MTU rxe gives a port on a netdev of this MTU, in
// bytes; 256 where the kernel would find none (ibpeer still needs one).
func ibMTUBelow(netdev int) int {
	if m, ok := layers.RXEPortMTU(netdev); ok {
		return m.Bytes()
	}
	return layers.MTU256.Bytes()
}
