package endpoint

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Errors returned by the verbs API. Compare with errors.Is; the wrapping
// message says which object and value were at fault.
var (
	ErrDeviceClosed      = errors.New("endpoint: device closed")
	ErrInvalidTransition = errors.New("endpoint: invalid QP state transition")
	ErrInvalidAttr       = errors.New("endpoint: invalid QP attribute")
	ErrInvalidState      = errors.New("endpoint: operation not allowed in this QP state")
	ErrQueueFull         = errors.New("endpoint: work queue full")
	ErrInvalidWR         = errors.New("endpoint: invalid work request")
	ErrInvalidKey        = errors.New("endpoint: invalid lkey")
	ErrInvalidMR         = errors.New("endpoint: invalid memory region")
	ErrQPDestroyed       = errors.New("endpoint: QP destroyed")
)

// Access is a set of memory-region (and QP) access rights, as
// ibv_access_flags.
type Access uint8

// Access rights. Remote write and remote atomic imply local write, as
// verbs requires.
const (
	AccessLocalWrite   Access = 1 << iota // the HCA may write the region on behalf of a local WR (RECV, READ, atomic results)
	AccessRemoteWrite                     // a peer may RDMA WRITE into it
	AccessRemoteRead                      // a peer may RDMA READ it
	AccessRemoteAtomic                    // a peer may run CMP_SWAP / FETCH_ADD on it
)

func (a Access) String() string {
	if a == 0 {
		return "none"
	}
	var parts []string
	for i, name := range []string{"LOCAL_WRITE", "REMOTE_WRITE", "REMOTE_READ", "REMOTE_ATOMIC"} {
		if a&(1<<i) != 0 {
			parts = append(parts, name)
		}
	}
	return strings.Join(parts, "|")
}

// QPType is the transport service of a QP.
type QPType uint8

// QP types.
const (
	RC QPType = iota + 1 // reliable connection
	UC                   // unreliable connection
	UD                   // unreliable datagram
)

func (t QPType) String() string {
	switch t {
	case RC:
		return "RC"
	case UC:
		return "UC"
	case UD:
		return "UD"
	}
	return fmt.Sprintf("QPType(%d)", uint8(t))
}

// QPState is a QP's state in the verbs state machine (IBTA Vol 1 §10.3.1).
type QPState uint8

// QP states, numbered as enum ibv_qp_state.
const (
	StateReset QPState = iota
	StateInit
	StateRTR
	StateRTS
	StateSQD
	StateSQE
	StateErr
)

var stateNames = [...]string{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"}

func (s QPState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("QPState(%d)", uint8(s))
}

// Status is a work completion's status, numbered and named as enum
// ibv_wc_status.
type Status uint8

// Completion statuses.
const (
	StatusSuccess        Status = 0
	StatusLocLenErr      Status = 1  // a receive buffer was too small, or a send too long
	StatusLocQPOpErr     Status = 2  // the WR is not valid for the QP
	StatusLocProtErr     Status = 4  // an SGE's lkey, range or access right is wrong
	StatusWRFlushErr     Status = 5  // the QP went to ERR before the WR ran
	StatusBadRespErr     Status = 7  // the responder answered with something unexpected
	StatusLocAccessErr   Status = 8  // a local protection error on the responder's side
	StatusRemInvReqErr   Status = 9  // NAK invalid request
	StatusRemAccessErr   Status = 10 // NAK remote access error
	StatusRemOpErr       Status = 11 // NAK remote operational error
	StatusRetryExcErr    Status = 12 // retry_cnt transport retries exhausted
	StatusRNRRetryExcErr Status = 13 // rnr_retry RNR retries exhausted
	StatusGeneralErr     Status = 21
)

var statusNames = map[Status]string{
	StatusSuccess: "SUCCESS", StatusLocLenErr: "LOC_LEN_ERR", StatusLocQPOpErr: "LOC_QP_OP_ERR",
	StatusLocProtErr: "LOC_PROT_ERR", StatusWRFlushErr: "WR_FLUSH_ERR", StatusBadRespErr: "BAD_RESP_ERR",
	StatusLocAccessErr: "LOC_ACCESS_ERR", StatusRemInvReqErr: "REM_INV_REQ_ERR",
	StatusRemAccessErr: "REM_ACCESS_ERR", StatusRemOpErr: "REM_OP_ERR", StatusRetryExcErr: "RETRY_EXC_ERR",
	StatusRNRRetryExcErr: "RNR_RETRY_EXC_ERR", StatusGeneralErr: "GENERAL_ERR",
}

// String returns the verbs name without its IBV_WC_ prefix ("RETRY_EXC_ERR").
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// WROpcode is what a send work request does.
type WROpcode uint8

// Send work request opcodes.
const (
	WRSend WROpcode = iota
	WRSendWithImm
	WRSendWithInv
	WRWrite
	WRWriteWithImm
	WRRead
	WRCompareSwap
	WRFetchAdd
)

var wrNames = [...]string{"SEND", "SEND_WITH_IMM", "SEND_WITH_INV", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD"}

func (o WROpcode) String() string {
	if int(o) < len(wrNames) {
		return wrNames[o]
	}
	return fmt.Sprintf("WROpcode(%d)", uint8(o))
}

// WCOpcode says what a completed work request did.
type WCOpcode uint8

// Completion opcodes.
const (
	WCSend WCOpcode = iota
	WCWrite
	WCRead
	WCCompareSwap
	WCFetchAdd
	WCRecv
	WCRecvWithImm // an incoming RDMA WRITE with immediate consumed a receive
)

var wcNames = [...]string{"SEND", "RDMA_WRITE", "RDMA_READ", "COMP_SWAP", "FETCH_ADD", "RECV", "RECV_RDMA_WITH_IMM"}

func (o WCOpcode) String() string {
	if int(o) < len(wcNames) {
		return wcNames[o]
	}
	return fmt.Sprintf("WCOpcode(%d)", uint8(o))
}

// SGE is one scatter/gather element: Length bytes at virtual address Addr
// of the memory region whose local key is LKey (MR.SGE builds one).
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// UDDest addresses a UD send: the remote address (its GID), QPN and Q_Key.
// A QKey with the top bit set means "use the QP's own Q_Key", as verbs says.
type UDDest struct {
	Addr     netip.Addr
	QPN      uint32
	QKey     uint32
	HopLimit uint8
}

// SendWR is a send work request (ibv_send_wr).
type SendWR struct {
	ID uint64
	Op WROpcode
	// SGL is the local memory: gathered for SEND/WRITE/atomic operands,
	// scattered for READ responses and atomic results (one 8-byte SGE).
	SGL []SGE
	// Unsignaled suppresses the completion of a successful WR (errors are
	// always reported), like leaving out IBV_SEND_SIGNALED.
	Unsignaled bool
	// Solicited sets the SE bit on the last packet of a SEND or WRITE
	// with immediate.
	Solicited bool
	// Imm is the immediate data of SEND/WRITE with immediate.
	Imm uint32
	// InvalidateRKey is the R_Key a SEND with invalidate asks the
	// responder to invalidate.
	InvalidateRKey uint32
	// RemoteAddr and RKey locate the remote memory of WRITE, READ and the
	// atomics.
	RemoteAddr uint64
	RKey       uint32
	// CompareAdd is the compare value of CMP_SWAP and the addend of
	// FETCH_ADD; Swap is CMP_SWAP's new value.
	CompareAdd uint64
	Swap       uint64
	// Dest addresses a UD send.
	Dest UDDest
}

// RecvWR is a receive work request (ibv_recv_wr).
type RecvWR struct {
	ID  uint64
	SGL []SGE
}

// WC is a work completion (ibv_wc).
type WC struct {
	ID      uint64
	Status  Status
	Op      WCOpcode
	QPN     uint32
	ByteLen uint32 // bytes received (receive completions, READ) or sent
	// Imm is valid when WithImm; InvalidatedRKey when WithInv.
	Imm             uint32
	WithImm         bool
	WithInv         bool
	InvalidatedRKey uint32
	// SrcQP is the sender's QPN of a UD receive; a UD receive buffer starts
	// with the 40-byte GRH (verbs' IBV_WC_GRH is always set on RoCE).
	SrcQP uint32
	// Vendor holds a short reason for an error status.
	Vendor string
}

// String prints the completion for logs.
func (wc WC) String() string {
	s := fmt.Sprintf("wr %d %s %s len %d", wc.ID, wc.Op, wc.Status, wc.ByteLen)
	if wc.Vendor != "" {
		s += " (" + wc.Vendor + ")"
	}
	return s
}
