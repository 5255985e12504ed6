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
// Compare mode asks a live peer to answer what the capture's requester sent
// and checks that it answers as the captured responder did. NewPlan cuts
// one captured RC connection into the requester's first transmissions and,
// for each PSN, the first answer the capture saw (the player sends each
// request once, so a resent copy's answer is not expected twice). The plan
// also says at which path MTUs its messages segment as captured (MTUMin to
// MTUMax: single-packet messages fit any MTU from the largest packet up)
// and, as Image, what the responder's region held, so a peer can be seeded
// with it; a region wider than 256 MiB is not built (RegionErr).
//
// A Setup connects the player to the peer: it learns the peer's QPN, PSN,
// R_Key and VA, and the requests are rewritten to them. TCPSetup runs
// perftest's TCP exchange or ibv_rc_pingpong's followed by ibpeer serve's
// region message, CMSetup perftest -R's over RDMA CM, and ManualSetup
// takes values known already; the first two refuse a peer whose MTU the
// plan's MTURange does not hold, and send perftest's closing steps on
// Close. A set-up that
// connects a QP of the player's own through RDMA CM (an AssigningSetup)
// shares the player's wire through SplitWire, which hands the data QP's
// datagrams to the player and everything else to the set-up's device; a
// view that falls behind drops and counts what arrives for it rather than
// stalling the other.
//
// Compare then plays the plan through a Peer (WirePeer runs it over an
// endpoint.Wire). It sends a request only once the peer has answered as
// far as the capture had, and compares each answer with the captured one:
// opcode, PSN relative to the first request, AETH syndrome and MSN, length,
// and on request READ data and atomic original values. The differences
// come back as a diff that names the request frame each answer belongs to.
// ACKs are compared as a requester sees them: a captured ACK the peer
// covered with a later one is coalescing, not a difference (unless
// StrictACKs), while every ACK the peer did send must match a captured one,
// and a peer that stops answering before the capture did is a stall. A
// peer that runs out of receive buffers answers with RNR NAKs: the player
// waits the NAK's timer and sends the request again, as a requester does,
// and the report says so before any diff, since the cure is on the peer's
// side. With Payload the span the plan's WRITEs cover is read back after
// the play and compared with what the capture wrote.
package replay
