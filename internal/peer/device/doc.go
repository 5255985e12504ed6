// Package device opens the endpoint device every ibpeer program talks to a
// peer through, and holds what those programs share about it.
//
// Open wraps endpoint.NewDevice with drop diagnostics: the device's drop
// handler feeds a reporter that says on stderr, at most once per cause and
// second, which packets of a peer were dropped and why, so that a
// misconfigured set-up shows itself instead of stalling. OpenCM adds the
// RDMA connection manager on the same device for the programs that
// connect by RDMA CM. A program that records its traffic (--pcap) puts a
// PcapWire between the socket and the device; it rebuilds the IP and UDP
// headers a socket hides with gopacket's serializers. ActiveMTU is the
// port MTU rxe would give the address's interface (layers.RXEPortMTU),
// the default of the programs that behave as rxe does. RateLog is for the
// other lines a flood could multiply (refused connections): one line per
// kind and second, the rest counted.
package device
