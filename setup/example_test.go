package setup_test

import (
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/setup"
)

// The message ibv_rc_pingpong's client sent in pcaps/rxe/rc_pingpong.pcap.
func ExampleParsePingpongDest() {
	d, err := setup.ParsePingpongDest([]byte("0000:000011:6bbcca:00000000000000000000ffffc0a84d0b\x00"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("QPN %#x PSN %d GID %v\n", d.QPN, d.PSN, netip.AddrFrom16(d.GID).Unmap())
	// Output: QPN 0x11 PSN 7060682 GID 192.168.77.11
}

func ExamplePerftestDest_Marshal() {
	d := setup.PerftestDest{OutReads: 1, QPN: 0x11, PSN: 0x318da6, RKey: 0x2f1, VAddr: 0x556ef83fa000,
		GID: netip.MustParseAddr("192.168.77.11").As16()}
	fmt.Println(d)
	// Output: 0000:0001:000011:318da6:000002f1:0000556ef83fa000:00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:4d:0b:00000000:
}
