package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// PacketAnalysis is what the Analyzer learned about one packet: the values
// of the ibwire.analysis.* fields. The Decoder zeroes it for every frame;
// Analyzer.Analyze fills it.
type PacketAnalysis struct {
	// Conv is the conversation (1, 2, ... in order of appearance), 0 when
	// the packet belongs to none; Dir is 1 for A→B, 2 for B→A.
	Conv uint32
	Dir  uint8
	// Cause says why a retransmission was sent (RetransNAK ...).
	Cause RetransCause
	// CMCount is, at a CM contract finding, the requests outstanding or
	// the retries that broke it.
	CMCount uint8
	// CMPath has bit 1<<CMPath* set for each path attribute that differs
	// from the CM REQ's (FindCMPathMismatch).
	CMPath uint8
	// Findings has bit k set for each FindingKind k found at this frame
	// (64 bits: the kinds outgrew 32 with the PFC findings).
	Findings uint64
	// Info flags say which of the values below are set.
	Info     InfoFlags
	Severity Severity

	ExpectedPSN        layers.PSN // the PSN the request stream expected
	GapPSNs            uint32     // PSNs missing before this one
	RetransmittedFrame uint32     // the frame this one repeats (0: its first transmission was not captured)
	RequestFrame       uint32     // for a response: the request it answers
	ResponseFrame      uint32     // for a request: its first response (-2 only)
	LastResponseFrame  uint32     // for a request: its last response (-2 only)
	RefFrame           uint32     // the frame a finding refers to (CNP trigger, duplicate request ...)
	MessageFrame       uint32     // the first frame of the message this packet completes
	MessageSize        uint32     // bytes of the message this packet completes
	Op                 OpClass    // the request kind a latency belongs to
	AckRTT             time.Duration
	Latency            time.Duration // request to response, on the response that completes it
	Elapsed            time.Duration // for ack_timeout: since the previous transmission
	// CM is the contract of the connection when the CM set it up, nil
	// otherwise (on a REJ, only its RejBy is set).
	CM *CMContract
	// NVMe is what the packet carries of NVMe-oF, nil when nothing
	// (nvme.go); it points into the Analyzer, valid until the next packet.
	NVMe *NVMePacket
	// RPCRDMA is what the packet carries of RPC over RDMA, nil when
	// nothing (rpcrdma.go); it points into the Analyzer like NVMe.
	RPCRDMA *RPCRDMAPacket
	// SMBDirect is what the packet carries of SMB Direct, nil when
	// nothing (smbdirect.go); it points into the Analyzer like NVMe.
	SMBDirect *SMBDirectPacket
	// ISER is what the packet carries of iSER, nil when nothing
	// (iser.go); it points into the Analyzer like NVMe.
	ISER *ISERPacket
	// PFC says what a pause frame did; PFCPausedFor, for a RoCE packet sent
	// on a paused priority, how long the pause had lasted.
	PFC          PFCFlags
	PFCPausedFor time.Duration
	// DCQCN is what the rate analysis says of the packet, nil when it does
	// not run (analysis_dcqcn.go); it points into the Analyzer, valid until
	// the next packet.
	DCQCN *DCQCNPacket
}

// InfoFlags say which PacketAnalysis values hold.
type InfoFlags uint16

// Analysis value flags.
const (
	InfoExpected InfoFlags = 1 << iota
	InfoAckRTT
	InfoLatency
	InfoMessage
	InfoRequest  // RequestFrame
	InfoResponse // ResponseFrame (second pass)
	InfoRef
	InfoRetransmittedFrame
	InfoRequestPacket  // the packet is a request
	InfoResponsePacket // the packet is a response
	InfoMessageStart   // the packet starts a message (FIRST/ONLY, READ response FIRST/ONLY)
	InfoNewData        // its payload was not carried before (not a resent copy)
	// InfoNVMeCM marks a CM REQ, REP or REJ of an NVMe-oF connection (IP-CM
	// service port 4420): its private data is NVMe-oF's (fields_nvme_cm.go).
	InfoNVMeCM
)

// Has reports whether finding k was made at this frame.
func (a *PacketAnalysis) Has(k FindingKind) bool { return a.Findings&(1<<k) != 0 }

// RetransCause is why a requester sent PSNs again.
type RetransCause uint8

// Retransmission causes.
const (
	CauseNone       RetransCause = iota
	CauseNAK                     // a NAK PSN Sequence Error: go-back-N
	CauseRNR                     // an RNR NAK
	CauseTimeout                 // no NAK seen: the local ACK timer expired
	CauseReadLoss                // READ responses were lost: the READ asked again
	CauseDupRequest              // a response sent again for a duplicate request
)

var causeNames = [...]string{"", "NAK", "RNR NAK", "ACK timeout", "READ responses lost", "duplicate request"}

func (c RetransCause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "?"
}

// OpClass groups requests for latency statistics and op counts.
type OpClass uint8

// Request classes.
const (
	OpClassNone OpClass = iota
	OpClassSend
	OpClassWrite
	OpClassRead
	OpClassCompareSwap
	OpClassFetchAdd
	OpClassAtomicWrite
	OpClassFlush
	NumOpClasses
)

var opClassNames = [...]string{"", "SEND", "RDMA_WRITE", "RDMA_READ", "COMPARE_SWAP", "FETCH_ADD", "ATOMIC_WRITE", "FLUSH"}

func (o OpClass) String() string {
	if int(o) < len(opClassNames) {
		return opClassNames[o]
	}
	return "?"
}

// opClassOf classifies a request operation.
func opClassOf(op layers.Operation) OpClass { return opClasses[op] }

// opClasses is opClassOf's table, by operation (every uint8: no bounds
// check); the other operations are OpClassNone.
var opClasses = [256]OpClass{
	layers.OpSend:            OpClassSend,
	layers.OpRDMAWrite:       OpClassWrite,
	layers.OpRDMAReadRequest: OpClassRead,
	layers.OpCompareSwap:     OpClassCompareSwap,
	layers.OpFetchAdd:        OpClassFetchAdd,
	layers.OpAtomicWrite:     OpClassAtomicWrite,
	layers.OpFlush:           OpClassFlush,
}

// Detach gives a the records it shares with the Analyzer as copies of its
// own (NVMe, RPCRDMA, SMBDirect, ISER, DCQCN point into the Analyzer,
// which reuses them for the next packet), so that the packet can be shown
// after later packets are analysed. Nearly every packet has none of them.
func (a *PacketAnalysis) Detach() {
	if a.NVMe != nil {
		a.NVMe = a.NVMe.Clone()
	}
	if a.RPCRDMA != nil {
		a.RPCRDMA = a.RPCRDMA.Clone()
	}
	if a.SMBDirect != nil {
		a.SMBDirect = a.SMBDirect.Clone()
	}
	if a.ISER != nil {
		a.ISER = a.ISER.Clone()
	}
	if d := a.DCQCN; d != nil {
		c := *d
		a.DCQCN = &c
	}
}
