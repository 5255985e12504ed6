// Package endpoint is a userspace RoCEv2 transport: it takes part in RDMA
// conversations the way Linux's soft-RoCE driver rdma_rxe does, over plain
// UDP (or any Wire), without a kernel module.
//
// # Model
//
// The API follows libibverbs, in Go shapes:
//
//   - A Device runs over one Wire (the UDP socket wire, the AF_PACKET wire or
//     endpoint/wiretest's in-memory pair). Its GID is the wire's address, an
//     IPv4 address as ::ffff:a.b.c.d. One goroutine reads batches from the
//     wire, drops what rxe drops before a QP sees it (short packets, wrong
//     destination address, TVer ≠ 0, unknown QPN, bad ICRC) and hands each
//     packet to its QP.
//   - A PD (protection domain) holds memory regions and QPs. An MR is a Go
//     byte slice with access rights (local write, remote read, remote write,
//     remote atomic) and unpredictable lkey and rkey (ChaCha8 seeded from
//     crypto/rand). Its virtual address is the slice's memory address, as
//     ibv_reg_mr uses the buffer pointer.
//   - A CQ collects WCs (work completions, named and numbered as
//     ibv_wc_status); Poll never blocks, Notify and Wait wake a consumer.
//   - A QP (RC, UC or UD) goes through the verbs state machine RESET, INIT,
//     RTR, RTS, SQD, SQE, ERR with Modify, whose attribute mask must hold
//     exactly the required and optional attributes of each transition;
//     Connect does the usual RESET → INIT → RTR → RTS in one call from what
//     an out-of-band exchange delivers. PostSend takes SEND (with immediate
//     or invalidate), RDMA WRITE (with immediate), RDMA READ, CMP_SWAP and
//     FETCH_ADD with scatter/gather lists; PostRecv and SRQ.PostRecv supply
//     receive buffers.
//
// # Protocol
//
// Every header is built and parsed by package layers (BTH and extended
// headers, the opcode table, PSN arithmetic); the wire fills and checks the
// ICRC. Behaviour follows rxe as ENDPOINT.md §1 describes it:
//
//   - Requester: segmentation at the path MTU (FIRST/MIDDLE exactly one MTU),
//     the A bit on the last packet of a message and on every 66th packet
//     without one, at most 128 PSNs beyond the oldest unacknowledged one, at
//     most max_rd_atomic (rounded up to a power of two) READ/atomic requests
//     outstanding, a READ consuming one PSN per response packet. The local
//     ACK timeout is 4.096 µs × 2^timeout (0 disables it); it is armed when a
//     packet asks for a response and not already running, re-armed on
//     progress. A timeout or a PSN-sequence NAK goes back to the oldest
//     unacknowledged PSN (go-back-N; a partly answered READ asks for the
//     rest), using up one of retry_cnt; while one retry runs only a timeout
//     starts another. An RNR NAK waits for the NAK's timer (layers'
//     IBTA table), using up one of rnr_retry. 7 means unlimited for both.
//     Exhaustion completes RETRY_EXC_ERR or RNR_RETRY_EXC_ERR; a NAK
//     invalid request, remote access or remote operational error completes
//     REM_INV_REQ_ERR, REM_ACCESS_ERR or REM_OP_ERR; then the QP goes to ERR
//     and every other WR completes WR_FLUSH_ERR. The UDP source port is
//     rxe's: 0xC000 | fold of the flow label, or of the two QPNs' product.
//   - Responder: a PSN ahead of the expected one gets exactly one
//     PSN-sequence NAK (with the expected PSN) and silence until the gap
//     fills; a PSN behind is a duplicate: SEND/WRITE are re-ACKed with the
//     PSN of the newest SEND or WRITE packet accepted (never a READ's or an
//     atomic's: rxe's completer would take that ACK for their completion,
//     without data), READs re-executed from memory within the original
//     request's span, atomics replayed from the responder resources (a ring
//     of max_dest_rd_atomic entries recycled without checking, as rxe).
//     Then the opcode sequence, the QP's access rights, resources (a SEND
//     without a receive WR gets an RNR NAK with min_rnr_timer), lengths
//     against the MTU, rkey, range and access of the MR, and 8-byte
//     alignment of atomics are checked in rxe's order; a violation gets
//     NAK invalid request or remote access error and moves the QP to ERR
//     (UC drops instead). ACKs go out for packets with the A bit, coalesced
//     per burst of received packets (an ACK covers every PSN up to its
//     own), with credits 0x1F and the MSN. UD checks the Q_Key (0x80010000
//     on the GSI QP) and writes a 40-byte GRH in front of the payload.
//     P_Keys must be in the default partition.
//
// # Connection management
//
// CM (cm.go) is RDMA CM's wire protocol over the device's GSI QP (QP1), as
// Linux's ib_cm speaks it for librdmacm: Connect sends a REQ (with the
// IP-CM header of RDMA CM's port spaces in its private data) and answers
// the REP with an RTU; Listen and CMConn.Accept answer a REQ with a REP
// and wait for the RTU; REJ (reason 8 when nobody listens on the service
// ID), MRA, DREQ and DREP; SIDR_REQ and SIDR_REP for UD services. REQ,
// REP and DREQ are sent again every CM response timeout (4.3 s, 15 times,
// as ib_cm; a REP as often and as far apart as its REQ asks); a repeated
// REQ gets an MRA or the REP again, a repeated REP the RTU, a repeated
// DREQ the DREP. The passive connections between REQ and RTU are bounded
// (CMConfig.MaxPending): a REQ beyond gets REJ "no resources", or the
// place of the oldest of an address holding more. As on the wire between
// two rxe hosts, the Starting PSN of a REQ or REP is the PSN its sender
// expects: each side sends from the PSN of the other's message. MsgConn
// carries a set-up exchange as SENDs over a connected QP (perftest -R).
//
// # Concurrency and time
//
// One goroutine owns each QP's protocol state. PostSend, PostRecv, Modify
// and the device's receive loop hand it work through channels. Timers use
// the time package, so tests run inside testing/synctest bubbles on virtual
// time. The steady-state packet path allocates nothing: receive buffers,
// transmit buffers and work-request slots are recycled, and headers are
// serialized straight into the transmit buffer.
//
// A remote peer's RDMA WRITE lands in an MR from the responder QP's
// goroutine; the application learns of it through the protocol (a SEND,
// an immediate, a flag it polls). Between two devices in one process over
// kernel sockets the race detector cannot see that ordering; QP.Query on
// the responder's QP, a round trip through its goroutine, makes the edge
// explicit.
//
// Remote atomics run with sync/atomic on the aligned native-endian word,
// so they are atomic against each other and against local code that uses
// MR.AddUint64, MR.CompareAndSwapUint64 and MR.LoadUint64 on the same word.
//
// # Differences from rxe
//
// Timers are not rounded to jiffies. The RNR timer code 25 waits 61.44 ms as
// the IBTA table says (rxe's table has 61.41 ms). A UD receive buffer's GRH
// holds the IPv4 header as the wire reports it: Identification and TTL are
// not visible to a UDP socket and are 0. A SEND too large for its receive
// buffer completes that receive with LOC_LEN_ERR.
package endpoint
