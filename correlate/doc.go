// Package correlate lines up several captures of the same RDMA traffic,
// taken at different points of its path, and says where each packet was seen,
// where it was lost and how long each hop took.
//
// A RoCE or InfiniBand packet keeps its identity from sender to receiver:
// the direction of its connection (source and destination address, and the
// destination QP), its PSN, its opcode and its ICRC. The ICRC covers every
// byte a switch or router may not change, so it stands for the payload too,
// while the headers outside it (VLAN tags added or stripped, TTL, DSCP, ECN,
// rewritten MACs) may differ between points without breaking the match.
// A point that captured with a snapshot length shorter than its frames has
// their headers but not their ICRCs: its packets match on the rest of the
// identity, taking the ICRC of a whole copy seen elsewhere.
// Retransmissions carry the same identity as the original; each copy seen at
// one point is matched to the copy nearest in time at the others, so the nth
// transmission of a PSN pairs with the nth wherever both were seen.
//
// Run reads each capture once, never seeking. It holds the first packets
// of each capture in memory (the head, a fixed number of packets) and
// matches them a first time with a coarse alignment of the clocks (the
// median time difference of the packets both heads hold), to estimate each
// point's clock against the first point's the way NTP does: for the packets
// that cross from the first point to another, the smallest time difference
// bounds the offset from above; for those crossing back, the largest bounds
// it from below; the offset is the middle of the two bounds and the
// uncertainty half their distance. The midpoints of successive time slices,
// fitted by least squares, give the drift. It then matches the heads again
// on the corrected clocks, and the rest of the captures after them, and
// attributes each packet; when the captures outlast their heads, the clocks
// are estimated again as the matching goes, from every packet so far, and
// the report gives the estimate from all of them. Memory is the heads, the
// matching window's packets and a PSN history per flow, whatever the
// captures' length.
//
// Attribution follows the path of each direction, whose point order comes
// from the corrected delays (for a flow that starts after the heads, from
// its first transmissions, which wait for it). A packet missing at a point upstream of one that
// saw it passed that point: the capture dropped it. A packet missing at every
// point downstream of the last that saw it was lost on the segment after that
// point if the sender retransmitted it, or if it was a copy sent after a
// response had said the responder received its PSN (a go-back-N copy behind
// an ACK, which nothing resends: its absence downstream is a loss, as for a
// packet never resent); otherwise the receiver had it and the downstream
// captures dropped it. A retransmission of a packet that every
// point saw, starting a go-back-N burst, says the packet was lost after the
// last point, unless a response of the other direction said the responder
// had received it (an ACK, a READ response, the PSN before a NAK's: the
// request was sent again for another reason) or a loss already located in
// the burst explains it (the sender resends from its oldest unacknowledged
// packet); a retransmitted PSN that no point saw before was lost between
// the sender and the first point. Go-back-N's repeats of packets that arrived
// are not losses.
//
// The captures may be taken on a switch's mirror port: GRE with ERSPAN type
// I, II or III around a mirrored frame decodes to that frame (package
// layers), which then matches like any other.
package correlate
