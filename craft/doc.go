// Package craft makes RDMA conversations, right or deliberately wrong, as
// captured frames with correct ICRCs and VCRCs and a list of the findings an
// analyzer should make about them.
//
// # Model
//
// A Config is a QP context: the two Endpoints of a queue pair (MACs, IP
// addresses, GIDs, LIDs, QPNs, first PSNs), the encapsulation (RoCEv2 over
// IPv4 or IPv6, RoCEv1, native IB with or without GRH, bare or in ERF
// records), the path MTU, P_Key, Q_Key, UDP source port, traffic class and
// the clock: start time, the time a frame takes to send (Step) and the
// one-way delay. Zero fields take rxe-like defaults.
//
// A Builder turns one Packet — a layers.BTH with its extended headers
// filled in, and a payload — into a frame: gopacket serializes gopacket's
// Ethernet, IPv4, IPv6 and UDP and our LRH, GRH, ERF, BTH and extended
// headers, then layers.FinishFrame fills the ICRC (and VCRC) in a pass over
// the finished frame. That is the way to write any single packet by its
// field values (the scapy known-answer vectors are rebuilt that way).
//
// A Conn runs whole conversations. Run posts Ops (SEND, with immediate or
// invalidate, RDMA WRITE with or without immediate, READ, COMPARE_SWAP,
// FETCH_ADD; SENDs on UD and UC too) and plays them through a small,
// deterministic discrete-event model of both ends that follows Linux rxe:
// segmentation at the MTU, AckReq on the last packet of a message and on
// every 66th packet, ACKs only for AckReq (the AckPolicy changes both), READ
// requests consuming one PSN per response packet, MSNs, one NAK PSN
// sequence error per gap with silent drops after it, go-back-N, the local
// ACK timeout, RNR NAK and its timer, duplicate requests re-ACKed, READs
// re-read and atomics replayed. Connect, Reject, Disconnect and
// ResolveService add the CM exchanges (REQ/REP/RTU, REJ, DREQ/DREP,
// SIDR_REQ/SIDR_REP) as UD SENDs between the two QP1s with Q_Key
// 0x80010000.
//
// # Faults
//
// Faults are declared, not random: frames lost before the capture point
// (by request packet, by transmission number, or with a seeded
// probability), injected NAKs of any code and RNR NAKs, ECN CE marks and
// CNPs, and Corrupt entries that break chosen frames (bad ICRC, bad VCRC,
// truncated, wrong pad count, bad opcode sequence, RETH length mismatch,
// unknown opcode). The model reacts as rxe would: a receiver drops a frame
// with a bad CRC, a responder NAKs an invalid request. Every run is
// deterministic: same Config, ops and faults, same bytes.
//
// # Congestion
//
// Congestion models DCQCN's loop on one flow: a switch marks its packets
// CE while it outpaces a bottleneck, the receiver answers with CNPs paced
// to one per interval, and the sender's reaction point cuts its rate by
// α/2 and recovers by fast recovery, additive and hyper increase on its
// timer and byte counter, each taking effect after a reaction delay. A
// victim flow beside it can slow down without a mark of its own.
// CongestionResult keeps the model's numbers (CE frames, CNP times and
// spacing, each cut's rates and the first frame at the new rate) as the
// known answers of the corpus's dcqcn_* files.
//
// # Output
//
// The Conn's Trace holds the Frames (data, timestamp, pcap link type and
// what craft put in each) and the Findings: PSN gaps, retransmissions and
// what caused them, ACK timeouts, NAKs and the requests they answer, RNR
// NAKs, CNPs, ECN and FECN marks, duplicates and every corruption, named
// as ibwire's analysis fields. craft writes no files: package capture does.
//
// MultiPoint places a trace's frames at several capture points along its
// path, each with its own clock offset, drift and capture drops, the lost
// frames (Trace.Lost) lost on chosen segments between them, and says where
// each loss and drop happened: the answers package correlate must find.
package craft
