// Package replay sends captured RDMA conversations again: selected,
// rewritten, paced, and, in compare mode, checked against a live peer.
//
// tcpreplay and tcprewrite know nothing of RDMA: after they change an
// address every ICRC is wrong, and every QPN, PSN and R_Key still points at
// the machine the capture came from. replay knows the InfiniBand transport.
//
// # Selecting
//
// Load reads a capture into memory and runs decode's Analyzer over it once,
// so that every frame knows its conversation, its direction and, for a
// response, which request stream its PSN counts in. LoadOptions.Select is a
// display filter (the cmd compiles -Y with dfilter); with WholeConnections
// a conversation is kept whole when any of its frames matches.
//
// # Rewriting
//
// Rules map old values to new ones: MACs, IPv4/IPv6 addresses and GIDs,
// UDP/TCP ports, LIDs, QPNs, R_Keys, ranges of virtual addresses, and PSN
// bases per request stream. A Rewriter patches exactly the bytes of the
// fields it changes, then updates what covers them: the IPv4 header
// checksum and nonzero UDP/TCP checksums incrementally (RFC 1624), the ICRC
// and VCRC with layers' code. A CRC keeps its fault: a good ICRC is
// recomputed, a deliberately bad one stays bad by the same XOR, so a
// rewrite followed by Rules.Inverse gives back the original bytes (Rules.
// FixCRC recomputes them all instead). The set-up messages follow the same
// rules — CM REQ/REP/SIDR on QP1 (QPNs, starting PSNs, path LIDs and GIDs,
// RDMA CM's IP addresses) and the TCP exchanges of ibv_*_pingpong and
// perftest (QPN, PSN, R_Key, VA, GID in text) — so a rewritten capture still
// pairs its connections by them. QP0 and QP1 keep their numbers.
// ParseRules reads the mapping file:
//
//	mac  52:54:00:00:00:0b -> 02:00:00:00:00:01
//	ip   192.168.77.11 -> 127.0.0.1      # also GID ::ffff:192.168.77.11
//	gid  fe80::1 -> fe80::2
//	port 49152 -> 50000
//	lid  1 -> 7
//	qpn  0x11 -> 0x22
//	rkey 0x1234 -> 0x5678
//	va   0x7f0000000000 -> 0x1000 len 0x100000
//	psn-base qpn=0x11 +1000              # requests to QP 0x11 and their responses
//
// # Sending
//
// A Sender takes frames: FileSender writes a capture (offline rewrite),
// WireSender hands RoCEv2 datagrams to an endpoint.Wire (the endpoint's UDP
// socket fills the ICRC for the headers the kernel writes), and
// PacketSender writes whole Ethernet frames out of an interface through
// AF_PACKET. Play spaces the frames as captured (optionally sped up), at a
// fixed packet or bit rate, or not at all, under a safety cap (sleeping
// until 1.2 ms before each send, then yielding in a loop), and reports the
// achieved rate and the pacing error's percentiles. CheckTarget and
// CheckInterface keep sending on loopback unless told otherwise.
//
// # Comparing
//
// NewPlan cuts one captured RC connection into its requester's first
// transmissions and the responses the capture saw. Compare plays the plan
// against a live Peer (WirePeer: through an endpoint.Wire), after a Setup
// step that learns the peer's QPN, PSN, R_Key and VA, rewriting the
// requests to them. It sends a request only once the peer has answered as
// far as the capture had (in PSNs and in responses other than plain ACKs),
// then compares the peer's responses with the captured ones — opcodes, PSNs
// relative to the first request, AETH syndromes and MSNs, lengths, and
// optionally READ data and atomic original values — and reports the
// differences as a diff with frame numbers. A captured ACK the peer covered
// with a later one (coalescing) is no difference unless StrictACKs; the
// ACKs the peer did send must each match a captured one, and a peer that
// had not answered as far as the capture when a wait ran out (Result.
// Stalls) differs. With Payload, the span the plan's WRITEs cover is read
// back after the play (Result.Readback).
// The plan keeps one captured answer per PSN (the first, whichever copy of
// a resent request the analyzer paired it with), since the player sends
// each request once. Plan.MTUMin and MTUMax bound the peer path MTUs at
// which every played message segments as captured: a capture of
// single-packet messages fits any MTU from the largest packet up. An RNR
// NAK from the peer makes the player send the request again after the
// NAK's timer, as a requester does (Result.RNRNaks, Resent; WriteRNR
// says so first), unless the capture has RNR NAKs of its own.
// A Setup that picks the player's QPN and first PSN itself (RDMA CM
// connects a QP of the player's own) is an AssigningSetup; SplitWire lets
// such a set-up's endpoint.Device share the player's wire, taking every
// datagram not for the data QP; a side that falls behind drops, and
// counts, what arrives for it rather than stalling the other (Result.
// Dropped reports the player's).
// Plan.Image is the responder's region as the capture shows it, to seed a
// live peer with so that the payload comparison can pass. A region wider
// than 256 MiB (VAs far apart, or a malformed RETH) is not built:
// Plan.RegionErr says so, Image returns nil and the read-back fails with
// that error.
package replay
