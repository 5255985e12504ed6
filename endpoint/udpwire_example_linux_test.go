//go:build linux

package endpoint_test

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/ibwire/ibwire/endpoint"
)

// Two UDP wires on the two loopback addresses, as two peers on one machine
// use them: one RC SEND Only packet moves, its ICRC filled by the sender and
// checked by the receiver.
func ExampleListenUDP() {
	// Peers take port 4791 (layers.RoCEv2Port) on each address; port 0
	// lets this example run beside them.
	a, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.2:0"))
	if err != nil {
		panic(err)
	}
	defer b.Close()

	pkt := make([]byte, 12+8+4) // BTH, 8 bytes of payload, ICRC
	pkt[0] = 0x04               // RC SEND Only
	binary.BigEndian.PutUint16(pkt[2:], 0xFFFF)
	binary.BigEndian.PutUint32(pkt[4:], 0x11) // destination QP
	copy(pkt[12:], "ibwire!\n")
	if _, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), TrafficClass: 0x02, Payload: pkt}}); err != nil {
		panic(err)
	}

	in := []endpoint.Datagram{{Payload: make([]byte, 0, endpoint.MaxDatagram)}}
	n, err := b.ReadBatch(in)
	if err != nil {
		panic(err)
	}
	dg := in[:n][0]
	fmt.Printf("%v -> %v, %d bytes, ECN %d, ICRC %v\n", dg.Src.Addr(), dg.Dst.Addr(), len(dg.Payload), dg.TrafficClass&3, dg.ICRC)
	// Output: 127.0.0.1 -> 127.0.0.2, 24 bytes, ECN 2, ICRC good
}
