package capture

import (
	"fmt"
	"net"
)

// Interface is a network interface a live capture can open, for -D.
type Interface struct {
	Index int
	Name  string
	Flags net.Flags
	Addrs []string // addresses in CIDR notation
}

// Interfaces lists the system's network interfaces in index order.
func Interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	out := make([]Interface, 0, len(ifs))
	for _, ifi := range ifs {
		it := Interface{Index: ifi.Index, Name: ifi.Name, Flags: ifi.Flags}
		if addrs, err := ifi.Addrs(); err == nil { // an interface without addresses is still listed
			for _, a := range addrs {
				it.Addrs = append(it.Addrs, a.String())
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// Stats are a live capture's counters since it opened.
type Stats struct {
	Received uint64 // packets the filter accepted, including those dropped
	Dropped  uint64 // packets the kernel dropped because the socket buffer was full
}
