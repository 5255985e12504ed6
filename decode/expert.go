package decode

import (
	"strconv"

	"github.com/ibwire/ibwire/layers"
)

// Severity ranks a finding as Wireshark's expert information does.
type Severity uint8

// Severities, least severe first.
const (
	SevNone Severity = iota
	SevChat
	SevNote
	SevWarn
	SevError
)

var severityNames = [...]string{"", "Chat", "Note", "Warning", "Error"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "Severity(" + strconv.Itoa(int(s)) + ")"
}

// ParseSeverity reads a severity as tshark's -z expert,LEVEL names it
// (error, warn, note, chat; the String forms are accepted too).
func ParseSeverity(s string) (Severity, bool) {
	switch s {
	case "error", "Error":
		return SevError, true
	case "warn", "warning", "Warning":
		return SevWarn, true
	case "note", "Note":
		return SevNote, true
	case "chat", "Chat", "":
		return SevChat, true
	}
	return SevNone, false
}

// FindingKind is one kind of expert finding. Its Name is the ibwire.analysis
// field that marks the frame (ibwire.analysis.psn_gap ...).
type FindingKind uint8

// Finding kinds. The names follow pcaps/MANIFEST.md and tcp.analysis.
const (
	FindNone               FindingKind = iota
	FindPSNGap                         // PSNs skipped: packets lost before the capture point
	FindRetransmission                 // a PSN sent again
	FindOutOfOrder                     // a PSN behind the highest, not a retransmission
	FindDuplicate                      // a response to a request the responder had already executed
	FindAckTimeout                     // a retransmission with no NAK to explain it: the local ACK timer expired
	FindNAK                            // a NAK (Sub is the NAK code)
	FindRNRNAK                         // a receiver-not-ready NAK
	FindCNP                            // a congestion notification packet
	FindECNCE                          // IP ECN Congestion Experienced
	FindFECN                           // BTH FECN set
	FindICRCBad                        // the ICRC does not verify
	FindVCRCBad                        // the VCRC does not verify
	FindTruncated                      // the frame ends early
	FindMalformed                      // a header field is impossible
	FindBadOpcodeSequence              // MIDDLE/LAST without FIRST, or a message cut by another
	FindRETHLengthMismatch             // a WRITE or READ moved other than its RETH length
	FindUnknownOpcode                  // an opcode the IBTA does not define
	FindUnanswered                     // a request with no response at the end of the capture
	FindCreditsExhausted               // an ACK that advertises no receive credits
	FindCMConnect                      // a CM connection established (REQ/REP/RTU)
	FindCMDisconnect                   // a CM connection ended (DREQ/DREP)
	FindCMReject                       // a CM REQ rejected
	FindOOBExchange                    // an out-of-band TCP exchange named the QPs
	FindCMReadsExceeded                // more READ/atomic requests outstanding than the CM REP allows
	FindCMRetryExceeded                // a PSN retried more often than the CM REQ's Retry Count
	FindCMRNRRetryExceeded             // more RNR retries of a PSN than the CM RNR Retry Count
	FindCMMTUExceeded                  // a payload larger than the CM REQ's path MTU
	FindCMPathMismatch                 // a P_Key, traffic class, flow label or SL other than the CM REQ's path (Sub: CMPath*)
	FindCMMRA                          // a CM MRA: the receiver of a REQ or REP asks for more time
	FindCMMRAIgnored                   // a REQ or REP sent again before the MRA's service timeout
	FindCMDREQUnanswered               // a CM DREQ without a DREP
	FindNVMeError                      // an NVMe-oF completion with an error status
	FindNVMeNoCompletion               // an NVMe-oF command with no completion at the end of the capture
	FindRPCError                       // an RPC reply other than accepted with SUCCESS
	FindRPCNoReply                     // an RPC call with no reply at the end of the capture
	FindISCSIError                     // an iSCSI response that says its request failed (SCSI status, login status)
	FindISCSINoResponse                // an iSCSI request with no response at the end of the capture
	FindSMB2Error                      // an SMB2 response over SMB Direct with an NT status of error severity
	FindSMB2NoResponse                 // an SMB2 request over SMB Direct with no response at the end of the capture
	FindULPMalformed                   // an upper-layer message (NVMe-oF capsule, RPC-over-RDMA) that does not decode (Sub: ULPField*)
	FindPFCSentWhilePaused             // a RoCE packet sent on a priority its link partner had paused
	FindPFCInFlight                    // the same within a frame time of the pause: maybe already on the wire
	FindPFCStorm                       // a priority paused more than the storm threshold of a window
	FindDCQCNNoReaction                // a CNP after which the sender sent on at its old rate
	FindDCQCNVictim                    // a flow slowed to under half its rate with no congestion mark or CNP of its own
	FindGSORun                         // a bad ICRC that is a UDP GSO run captured before segmentation (Packet.GSORun)
	numFindingKinds
)

type kindInfo struct {
	name     string
	severity Severity
	group    string
	summary  string
}

// findingKinds describes every kind; Wireshark's expert groups name the group.
var findingKinds = [numFindingKinds]kindInfo{
	FindNone:               {"", SevNone, "", ""},
	FindPSNGap:             {"psn_gap", SevWarn, "Sequence", "PSN gap: packets lost before the capture point"},
	FindRetransmission:     {"retransmission", SevNote, "Sequence", "Retransmission"},
	FindOutOfOrder:         {"out_of_order", SevWarn, "Sequence", "Out-of-order packet"},
	FindDuplicate:          {"duplicate", SevNote, "Sequence", "Response to a duplicate request"},
	FindAckTimeout:         {"ack_timeout", SevWarn, "Sequence", "Local ACK timeout (implied): resent with no NAK"},
	FindNAK:                {"nak", SevWarn, "Response", "NAK"},
	FindRNRNAK:             {"rnr_nak", SevWarn, "Response", "RNR NAK: receiver not ready"},
	FindCNP:                {"cnp", SevNote, "Protocol", "Congestion notification (CNP)"},
	FindECNCE:              {"ecn_ce", SevNote, "Protocol", "ECN Congestion Experienced"},
	FindFECN:               {"fecn", SevNote, "Protocol", "BTH FECN set"},
	FindICRCBad:            {"icrc_bad", SevError, "Checksum", "ICRC mismatch"},
	FindVCRCBad:            {"vcrc_bad", SevError, "Checksum", "VCRC mismatch"},
	FindTruncated:          {"truncated", SevError, "Malformed", "Truncated packet"},
	FindMalformed:          {"malformed", SevError, "Malformed", "Malformed packet"},
	FindBadOpcodeSequence:  {"bad_opcode_sequence", SevError, "Protocol", "Opcode out of sequence"},
	FindRETHLengthMismatch: {"reth_length_mismatch", SevError, "Reassemble", "RETH length differs from the bytes moved"},
	FindUnknownOpcode:      {"unknown_opcode", SevError, "Protocol", "Unknown opcode"},
	FindUnanswered:         {"unanswered", SevWarn, "Sequence", "Request unanswered at the end of the capture"},
	FindCreditsExhausted:   {"credits_exhausted", SevNote, "Sequence", "ACK with no receive credits"},
	FindCMConnect:          {"cm_connect", SevChat, "Sequence", "CM connection established"},
	FindCMDisconnect:       {"cm_disconnect", SevChat, "Sequence", "CM disconnection"},
	FindCMReject:           {"cm_reject", SevNote, "Sequence", "CM connection rejected"},
	FindOOBExchange:        {"oob_exchange", SevChat, "Sequence", "Out-of-band QP exchange (TCP)"},
	FindCMReadsExceeded:    {"cm.reads_exceeded", SevWarn, "Protocol", "More READ/atomic requests outstanding than CM negotiated"},
	FindCMRetryExceeded:    {"cm.retry_exceeded", SevWarn, "Sequence", "PSN retried more often than the CM Retry Count"},
	FindCMRNRRetryExceeded: {"cm.rnr_retry_exceeded", SevWarn, "Sequence", "RNR retries beyond the CM RNR Retry Count"},
	FindCMMTUExceeded:      {"cm.mtu_exceeded", SevWarn, "Protocol", "Payload larger than the CM path MTU"},
	FindCMPathMismatch:     {"cm.path_mismatch", SevWarn, "Protocol", "Header differs from the CM path"},
	FindCMMRA:              {"cm.mra", SevNote, "Sequence", "CM MRA: more time asked"},
	FindCMMRAIgnored:       {"cm.mra_ignored", SevWarn, "Sequence", "CM message sent again before the MRA's service timeout"},
	FindCMDREQUnanswered:   {"cm.dreq_unanswered", SevWarn, "Sequence", "CM DREQ without DREP"},
	FindNVMeError:          {"nvme_error", SevWarn, "Response", "NVMe-oF command completed with an error status"},
	FindNVMeNoCompletion:   {"nvme_no_completion", SevWarn, "Sequence", "NVMe-oF command with no completion at the end of the capture"},
	FindRPCError:           {"rpc_error", SevWarn, "Response", "RPC call denied or not executed"},
	FindRPCNoReply:         {"rpc_no_reply", SevWarn, "Sequence", "RPC call with no reply at the end of the capture"},
	FindISCSIError:         {"iscsi_error", SevWarn, "Response", "iSCSI request failed (SCSI status, login or task status)"},
	FindISCSINoResponse:    {"iscsi_no_response", SevWarn, "Sequence", "iSCSI request with no response at the end of the capture"},
	FindSMB2Error:          {"smb2_error", SevWarn, "Response", "SMB2 request failed (NT status of error severity)"},
	FindSMB2NoResponse:     {"smb2_no_response", SevWarn, "Sequence", "SMB2 request with no response at the end of the capture"},
	FindULPMalformed:       {"ulp_malformed", SevError, "Malformed", "Malformed upper-layer message"},
	FindPFCSentWhilePaused: {"pfc.sent_while_paused", SevWarn, "Protocol", "RoCE packet sent on a priority its link partner had paused (PFC)"},
	FindPFCInFlight:        {"pfc.in_flight", SevNote, "Protocol", "RoCE packet within a frame time of a PFC pause (in flight, or seen first by the capture point)"},
	FindPFCStorm:           {"pfc.storm", SevWarn, "Protocol", "PFC pause storm: a priority paused beyond the threshold of a window"},
	FindDCQCNNoReaction:    {"dcqcn.no_reaction", SevNote, "Protocol", "CNP with no rate cut after it: DCQCN off for the sender's priority?"},
	FindDCQCNVictim:        {"dcqcn.victim", SevWarn, "Protocol", "Flow slowed with no congestion mark or CNP of its own: a victim of a congested neighbour"},
	FindGSORun:             {"gso_run", SevWarn, "Checksum", "UDP GSO run captured before segmentation (a capture on loopback): capture with ibpeer --udp-offload=off to see each packet"},
}

// Name is the kind's ibwire.analysis field suffix ("psn_gap").
func (k FindingKind) Name() string { return findingKinds[k%numFindingKinds].name }

// Severity is the kind's usual severity (a NAK other than PSN Sequence
// Error is an Error: it ends the QP).
func (k FindingKind) Severity() Severity { return findingKinds[k%numFindingKinds].severity }

// Group is the Wireshark expert group ("Sequence", "Checksum" ...).
func (k FindingKind) Group() string { return findingKinds[k%numFindingKinds].group }

func (k FindingKind) String() string { return k.Name() }

// FindingKinds lists every kind, in order.
func FindingKinds() []FindingKind {
	ks := make([]FindingKind, 0, numFindingKinds-1)
	for k := FindPSNGap; k < numFindingKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// Finding is one expert finding: what, where, how bad.
type Finding struct {
	Kind     FindingKind
	Sub      uint8 // the NAK code for FindNAK, the RNR timer code for FindRNRNAK
	Severity Severity
	Frame    uint32 // the frame the finding is about
	Ref      uint32 // a related frame (the request a NAK answers, the frame resent ...); 0 when none was captured
	Conv     uint32 // the conversation, 0 when none
	PSN      layers.PSN
	Count    uint32 // PSNs missing for FindPSNGap
}

// Summary is the one-line text -z expert groups findings by.
func (f *Finding) Summary() string {
	switch f.Kind {
	case FindNAK:
		return "NAK " + layers.NAKCode(f.Sub).String()
	case FindRNRNAK:
		return "RNR NAK, timer " + layers.RNRTimerCode(f.Sub).String()
	case FindCMReject:
		if reason, by := cmRejOfSub(f.Sub); reason != 0 {
			return "CM connection rejected: " + reason.String() + " (by the " + cmRejBy[by].RejByName() + " side)"
		}
	case FindULPMalformed:
		if int(f.Sub) < len(ulpFieldProblems) && f.Sub != 0 {
			return "Malformed " + ulpFieldProblems[f.Sub]
		}
	case FindCMPathMismatch:
		if int(f.Sub) < len(cmPathNames) && f.Sub != 0 {
			return cmPathNames[f.Sub] + " differs from the CM path"
		}
	}
	return findingKinds[f.Kind%numFindingKinds].summary
}

// ULP fields a FindULPMalformed names (its Sub).
const (
	ULPFieldNone               uint8 = iota
	ULPFieldNVMeSQE                  // a command capsule shorter than its SQE
	ULPFieldNVMeCQE                  // a response capsule shorter than its CQE
	ULPFieldRPCRDMAHdr               // an RPC-over-RDMA transport header that ends early or is impossible
	ULPFieldRPCMsg                   // an RPC message (call or reply header) that ends early or is impossible
	ULPFieldSMBDirect                // an SMB Direct message shorter than its header, or whose data lies outside it
	ULPFieldISERHdr                  // an iSER header that ends early or has an unknown opcode
	ULPFieldISCSIBHS                 // an iSCSI PDU shorter than its Basic Header Segment
	ULPFieldSMBDirectFragments       // an SMB2 message in more SMB Direct Data Transfers than a sender makes
	ULPFieldISCSIData                // an iSCSI PDU whose AHS or data segment runs past its SEND
)

// ulpFieldProblems says, for each ULPField*, the layer, the field and what
// is wrong with it, as -z expert prints it.
var ulpFieldProblems = [...]string{
	ULPFieldNVMeSQE:            "nvme-rdma command capsule: nvme.cmd (SQE) needs 64 bytes, the SEND carries fewer",
	ULPFieldNVMeCQE:            "nvme-rdma response capsule: nvme.cqe (CQE) needs 16 bytes, the SEND carries fewer",
	ULPFieldRPCRDMAHdr:         "RPC-over-RDMA: rpcordma header (chunk lists) ends early or holds an impossible count",
	ULPFieldRPCMsg:             "RPC-over-RDMA: rpc message header ends early or is impossible",
	ULPFieldSMBDirect:          "SMB Direct: smb_direct message ends before its header, or its data offset or length points outside it",
	ULPFieldSMBDirectFragments: "SMB Direct: smb_direct.remaining_length keeps an SMB2 message going over more than 1024 Data Transfers",
	ULPFieldISCSIData:          "iSER: iscsi.ahs or iscsi.datasegmentlength runs past the SEND that carries the PDU",
	ULPFieldISERHdr:            "iSER: iser header (28 bytes) ends early or has an unknown opcode",
	ULPFieldISCSIBHS:           "iSER: iscsi PDU needs its 48-byte Basic Header Segment, the SEND carries fewer",
}

// numSubs bounds Finding.Sub: 5-bit NAK codes and RNR timers, and a
// REJ's reason (6 bits) with the side that sent it (cmRejSub).
const numSubs = 128

// ExpertRow groups the findings of one kind (and sub-code): an exact count
// and the first few frames.
type ExpertRow struct {
	Kind     FindingKind
	Sub      uint8
	Severity Severity
	Group    string
	Summary  string
	Count    uint64
	Frames   []uint32 // at most Expert.MaxFrames, in the order found
}

// Expert collects findings with bounded memory: counts stay exact, and each
// row keeps at most MaxFrames example frames.
type Expert struct {
	// MaxFrames is how many frames a row keeps (default 20).
	MaxFrames int
	rows      []*ExpertRow
	index     [numFindingKinds][numSubs]int32 // 1 + position in rows
}

// Add counts f.
func (e *Expert) Add(f *Finding) {
	sub := f.Sub % numSubs
	i := e.index[f.Kind%numFindingKinds][sub]
	if i == 0 {
		maxFrames := e.MaxFrames
		if maxFrames <= 0 {
			maxFrames = 20
		}
		e.rows = append(e.rows, &ExpertRow{Kind: f.Kind, Sub: f.Sub, Severity: f.Severity, Group: f.Kind.Group(),
			Summary: f.Summary(), Frames: make([]uint32, 0, maxFrames)})
		i = int32(len(e.rows))
		e.index[f.Kind%numFindingKinds][sub] = i
	}
	r := e.rows[i-1]
	r.Count++
	if len(r.Frames) < cap(r.Frames) {
		r.Frames = append(r.Frames, f.Frame)
	}
}

// Rows returns the rows, most severe first, then in order of kind.
func (e *Expert) Rows() []ExpertRow {
	out := make([]ExpertRow, 0, len(e.rows))
	for s := SevError; s >= SevChat; s-- {
		for k := FindingKind(0); k < numFindingKinds; k++ {
			for sub := range numSubs {
				if i := e.index[k][sub]; i > 0 && e.rows[i-1].Severity == s {
					out = append(out, *e.rows[i-1])
				}
			}
		}
	}
	return out
}

// Count returns the number of findings of kind k.
func (e *Expert) Count(k FindingKind) uint64 {
	var n uint64
	for _, i := range e.index[k%numFindingKinds] {
		if i > 0 {
			n += e.rows[i-1].Count
		}
	}
	return n
}

// Max returns the highest severity collected.
func (e *Expert) Max() Severity {
	m := SevNone
	for _, r := range e.rows {
		m = max(m, r.Severity)
	}
	return m
}
