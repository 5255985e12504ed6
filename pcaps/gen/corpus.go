package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// file is one capture of the corpus.
type file struct {
	name  string // file name, ".pcap" included
	title string // what it shows, one line
	encap craft.Encap
	trace craft.Trace
	notes []string // extra manifest lines
}

// spec builds one file.
type spec struct {
	name, title string
	build       func() (craft.Encap, craft.Trace, []string, error)
}

// encapFile turns an encapsulation name into a file-name part.
func encapFile(e craft.Encap) string { return strings.ReplaceAll(e.String(), "-", "_") }

// specs lists the corpus, in manifest order.
func specs() []spec {
	var s []spec
	for _, e := range craft.Encaps() {
		s = append(s, spec{"opcodes_" + encapFile(e), fmt.Sprintf("every opcode of the layers table once, %v", e), opcodes(e)})
	}
	for _, e := range craft.Encaps() {
		if e == craft.ERFGRH {
			continue
		}
		s = append(s, spec{"conv_" + encapFile(e), fmt.Sprintf("CM connect, every RC operation, CM disconnect, %v", e), mixed(e)})
	}
	s = append(s,
		spec{"rc_send", "RC SEND: ONLY, FIRST/MIDDLE/LAST, with immediate, with invalidate, pad 0-3; ACK per message", rcSend},
		spec{"rc_write", "RC RDMA WRITE: ONLY, FIRST/MIDDLE/LAST, with immediate (ONLY and LAST); ACK per message", rcWrite},
		spec{"rc_read", "RC RDMA READ: one-packet, three-packet and zero-length READs and their responses", rcRead},
		spec{"rc_atomic", "RC COMPARE_SWAP and FETCH_ADD with their ATOMIC ACKNOWLEDGEs", rcAtomic},
		spec{"rc_ack_coalescing", "one 70-packet RDMA WRITE at MTU 256: rxe asks for an ACK on the 66th packet and the last, the responder ACKs only those", rcAckCoalescing},
		spec{"rc_mtu_segmentation", "a 4500-byte RDMA WRITE at each path MTU, 256 to 4096, one QP each", rcMTUs},
		spec{"rc_psn_wrap", "an RDMA WRITE and a SEND whose PSNs wrap from 0xFFFFFD through 0", rcPSNWrap},
		spec{"rc_loss_gobackn", "packet 3 of an 8-packet RDMA WRITE lost: NAK PSN sequence error, go-back-N from it", rcLossGoBackN},
		spec{"rc_loss_random", "5% seeded random loss on both sides of WRITEs, a READ and a SEND: NAKs, timeouts, duplicates", rcLossRandom},
		spec{"rc_tail_loss_timeout", "the last packet of a SEND lost: nothing follows, the local ACK timer (67 ms) expires and the requester resends", rcTailLoss},
		spec{"rc_ack_loss_duplicate", "the ACK of a WRITE lost: after the timeout the responder sees a duplicate and ACKs it again", rcAckLoss},
		spec{"rc_read_response_loss", "the second of four READ responses lost: the requester asks again for the rest with a shorter READ", rcReadLoss},
		spec{"rc_atomic_replay", "the ATOMIC ACK of a FETCH_ADD lost: the retried request gets the saved result, not a second add", rcAtomicReplay},
		spec{"rc_nak_codes", "a NAK of every code, one QP each: PSN sequence error (then go-back-N), invalid request, remote access error, remote operational error, invalid RD request (each of those ends its QP)", rcNAKCodes},
		spec{"rc_rnr_retry", "the first SEND refused twice with RNR NAK (timer code 1, 10 µs) and resent; the packets in flight draw a NAK PSN sequence error", rcRNR},
		spec{"rc_cnp_ecn", "RoCEv2 congestion: every 4th request marked ECN CE and answered by a CNP (opcode 0x81, BECN), ECT(0) elsewhere", rcCNP},
		spec{"ib_fecn_cnp", "native IB congestion: every 4th request has FECN set and is answered by a CNP (opcode 0x80, BECN)", ibCNP},
		spec{"cm_reject", "a CM REQ rejected with REJ (invalid service ID)", cmReject},
		spec{"cm_native_service", "native IB: a CM connection to a service ID outside the IP CM range (so its private data is the consumer's, not an IP CM header), flow label 0x12345, then disconnected", cmNativeService},
		spec{"cm_sidr_ud", "SIDR_REQ/SIDR_REP resolving a UD service, then UD SENDs to the QPN and Q_Key it gave", cmSIDR},
		spec{"ud_send", "UD SEND ONLY and with immediate (DETH Q_Key 0x11111111); the third packet lost", udSend},
		spec{"uc_send_write", "UC SEND and RDMA WRITE, no ACKs; a lost MIDDLE packet makes the responder drop that message", ucSendWrite},
		spec{"mgmt_smp_sa_perf", "native IB management MADs: LID-routed SMPs (NodeInfo, PortInfo, SMInfo, NodeDescription), a directed-route SubnGet(NodeInfo) and its response, SA PathRecord and PerfMgt PortCounters requests and responses, a PortCountersExtended response, a SubnGetResp of every other SMP attribute tshark dissects (SwitchInfo ... LedInfo), then an SA SubnAdmSet(MCMemberRecord) and its response, and a SubnAdmGetTableResp(PathRecord) sent as one RMPP DATA segment; the bodies are byte sequences, so every field has a distinct value", mgmtMADs},
		spec{"mgmt_traps_classportinfo", "native IB traps and ClassPortInfo: a LID-routed SubnTrap(Notice) to QP0 for every trap number tshark details (64-69, 128-131, 144, 145, 256-259), a SubnTrapRepress, an SA SubnAdmReport(Notice) and its ReportResp, and Get/GetResp(ClassPortInfo) in PerfMgt and SA, then two vendor notices (IsGeneric 0, VendorID 0x0002c9): DeviceID 0x1003, and DeviceID 0x0080, which tshark reads as trap 128; DataDetails and ClassPortInfo bodies are byte sequences, so every field has a distinct value", mgmtNotice},
		spec{"mgmt_sa_records", "native IB subnet administration: a request and its response carrying every SA record tshark dissects (NodeRecord ... ServiceAssociationRecord, InformInfo), then SubnAdmGetTableResps of 2 PortInfoRecords, 3 SMInfoRecords and 4 LinkRecords; the bodies are byte sequences, so every field has a distinct value", saRecordMADs},
		spec{"ib_raw_eoib", "native IB that is not IBA transport, or whose payload tshark takes for another protocol: raw packets (RWH with IPv4, ARP, an unknown EtherType; raw IPv6), IPoIB-framed UD and RC SEND payloads, Mellanox EoIB on UD (a whole Ethernet frame, a segment), an SA RMPP ABORT and STOP with extended error data", rawIB},
		spec{"pfc_pause", "RoCEv2 on priority 3 (DSCP 26) paused by PFC from the responder's port: refreshed before it expires, resumed by a zero-quanta frame, RoCE packets sent on the paused priority, an 802.3x PAUSE, then a 2 ms pause storm", pfcPauses},
		spec{"broken_bad_icrc", "a SEND with a flipped payload bit and its old ICRC: the responder drops it and NAKs the next packet; go-back-N", broken(craft.RoCEv2, craft.BadICRC)},
		spec{"broken_bad_vcrc", "native IB: a SEND whose VCRC has a flipped bit: dropped on the link, NAK, go-back-N", broken(craft.IB, craft.BadVCRC)},
		spec{"broken_truncated", "a SEND cut 6 bytes short (its ICRC missing, the IP and UDP lengths say more): dropped, NAK, go-back-N", broken(craft.RoCEv2, craft.Truncated)},
		spec{"broken_wrong_pad", "an ACK with PadCnt 3 and nothing after its AETH (decodes as malformed), and a SEND whose PadCnt says 2 for 3 pad bytes", brokenWrongPad},
		spec{"broken_bad_sequence", "a SEND ONLY turned into SEND LAST with no FIRST: NAK invalid request", broken(craft.RoCEv2, craft.BadSequence)},
		spec{"broken_reth_mismatch", "an RDMA WRITE whose RETH says 4 bytes more than it carries: NAK invalid request at its LAST packet", broken(craft.RoCEv2, craft.RETHMismatch)},
		spec{"broken_unknown_opcode", "a request whose opcode became 0x18, which the IBTA does not define: NAK invalid request", broken(craft.RoCEv2, craft.UnknownOpcode)},
		spec{"broken_erf", "ERF-wrapped native IB with a bad ICRC, a bad VCRC and a truncated packet", brokenERF},
	)
	for i, name := range multipointNames {
		s = append(s, spec{"multipoint_" + name, fmt.Sprintf("point %s of one RC conversation (WRITEs, SENDs, READs, every 9th transmission lost) captured at three points with their own clocks, losses on chosen segments and capture drops (multipoint.go)", name), multipoint(i)})
	}
	// DCQCN under three timer settings: dcqcn.go.
	s = append(s, dcqcnSpecs()...)
	// A capture per finding of ibdump --doctor: doctor.go.
	s = append(s, doctorSpecs()...)
	// The CM contract checks, one capture per finding: cm_contract.go.
	s = append(s, cmContractSpecs()...)
	return append(append(s, smbDirectSpecs()...), ulpSpecs()...)
}

// conn returns a Conn for cfg and the error of the build so far.
func newConn(cfg craft.Config) *craft.Conn {
	c, err := craft.New(cfg)
	if err != nil {
		panic(err) // the corpus configs are valid
	}
	return c
}

// opcodes makes one packet of every opcode the layers table knows, with a
// payload of 13 to 16 bytes (pad 3 to 0) where the opcode carries one.
func opcodes(e craft.Encap) func() (craft.Encap, craft.Trace, []string, error) {
	return func() (craft.Encap, craft.Trace, []string, error) {
		c := newConn(craft.Config{Encap: e})
		for i, op := range layers.KnownOpcodes() {
			if err := c.Packet(craft.Sample(op, layers.PSN(0x100+i), 13+i%4)); err != nil {
				return e, craft.Trace{}, nil, err
			}
		}
		return e, c.Trace(), []string{"Frame i carries the i-th opcode of layers.KnownOpcodes() in numeric order, PSN 0x100+i-1; extended headers hold craft.Sample's values."}, nil
	}
}

// allOps is one of every RC work request.
func allOps() []craft.Op {
	return []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(100, 0x10)},
		{Kind: craft.OpWrite, Data: craft.Pattern(2000, 0x20), VA: 0x7f0000010000, RKey: 0x1001},
		{Kind: craft.OpRead, Data: craft.Pattern(1500, 0x30), VA: 0x7f0000020000, RKey: 0x1002},
		{Kind: craft.OpCompareSwap, VA: 0x7f0000030000, RKey: 0x1003, Compare: 5, SwapAdd: 9, Orig: 5},
		{Kind: craft.OpFetchAdd, VA: 0x7f0000030008, RKey: 0x1003, SwapAdd: 1, Orig: 41},
		{Kind: craft.OpSendImm, Data: craft.Pattern(10, 0x40), Imm: 0x01020304},
		{Kind: craft.OpWriteImm, Data: craft.Pattern(30, 0x50), VA: 0x7f0000040000, RKey: 0x1004, Imm: 0x05060708},
		{Kind: craft.OpSendInv, Data: craft.Pattern(16, 0x60), InvRKey: 0x1004},
	}
}

func mixed(e craft.Encap) func() (craft.Encap, craft.Trace, []string, error) {
	return func() (craft.Encap, craft.Trace, []string, error) {
		c := newConn(craft.Config{Encap: e})
		err := firstErr(c.Connect(craft.CMOptions{}), c.Run(allOps(), craft.Faults{}), c.Disconnect())
		return e, c.Trace(), nil, err
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// run makes one RoCEv2 conversation of ops with faults under cfg.
func run(cfg craft.Config, ops []craft.Op, f craft.Faults) (craft.Encap, craft.Trace, []string, error) {
	c := newConn(cfg)
	err := c.Run(ops, f)
	var notes []string
	if c.Err() != nil {
		notes = append(notes, fmt.Sprintf("The QP ends in the error state: %v.", c.Err()))
	}
	return cfg.Encap, c.Trace(), notes, err
}

func rcSend() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(64, 0)},
		{Kind: craft.OpSend, Data: craft.Pattern(2500, 1)},
		{Kind: craft.OpSendImm, Data: craft.Pattern(13, 2), Imm: 0xDEADBEEF},
		{Kind: craft.OpSendImm, Data: craft.Pattern(1030, 3), Imm: 0xCAFEF00D, SE: true},
		{Kind: craft.OpSendInv, Data: craft.Pattern(22, 4), InvRKey: 0xABCD},
		{Kind: craft.OpSendInv, Data: craft.Pattern(1025, 5), InvRKey: 0xABCE},
		{Kind: craft.OpSend, Data: craft.Pattern(15, 6)},
	}, craft.Faults{})
}

func rcWrite() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(32, 0), VA: 0x7f0000001000, RKey: 0x1234},
		{Kind: craft.OpWrite, Data: craft.Pattern(2600, 1), VA: 0x7f0000002000, RKey: 0x1234},
		{Kind: craft.OpWriteImm, Data: craft.Pattern(8, 2), VA: 0x7f0000003000, RKey: 0x5678, Imm: 0x01020304, SE: true},
		{Kind: craft.OpWriteImm, Data: craft.Pattern(2049, 3), VA: 0x7f0000004000, RKey: 0x5678, Imm: 0x05060708},
		{Kind: craft.OpWrite, Data: nil, VA: 0x7f0000005000, RKey: 0x1234},
	}, craft.Faults{})
}

func rcRead() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpRead, Data: craft.Pattern(24, 0), VA: 0x7f0000100000, RKey: 0xCAFE0001},
		{Kind: craft.OpRead, Data: craft.Pattern(3000, 1), VA: 0x7f0000200000, RKey: 0xCAFE0001},
		{Kind: craft.OpRead, Data: nil, VA: 0x7f0000300000, RKey: 0xCAFE0001},
	}, craft.Faults{})
}

func rcAtomic() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpCompareSwap, VA: 0x7f0000010008, RKey: 0xC0FFEE, Compare: 0x2222222222222222, SwapAdd: 0x1111111111111111, Orig: 0x2222222222222222},
		{Kind: craft.OpFetchAdd, VA: 0x7f0000010010, RKey: 0xC0FFEE, SwapAdd: 1, Orig: 100},
		{Kind: craft.OpFetchAdd, VA: 0x7f0000010010, RKey: 0xC0FFEE, SwapAdd: 1, Orig: 101},
		{Kind: craft.OpCompareSwap, VA: 0x7f0000010008, RKey: 0xC0FFEE, Compare: 7, SwapAdd: 8, Orig: 0x1111111111111111},
	}, craft.Faults{})
}

func rcAckCoalescing() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{MTU: 256}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(70*256, 0), VA: 0x7f0000400000, RKey: 0x77},
	}, craft.Faults{})
}

func rcMTUs() (craft.Encap, craft.Trace, []string, error) {
	var tr craft.Trace
	start := craft.DefaultStart
	for i, mtu := range []int{256, 512, 1024, 2048, 4096} {
		req, resp := craft.DefaultRequester, craft.DefaultResponder
		req.QPN, resp.QPN = 0x100+uint32(i), 0x200+uint32(i)
		c := newConn(craft.Config{MTU: mtu, Requester: req, Responder: resp, Start: start})
		if err := c.Run([]craft.Op{{Kind: craft.OpWrite, Data: craft.Pattern(4500, byte(i)), VA: 0x7f0000500000, RKey: 0x99}}, craft.Faults{}); err != nil {
			return 0, tr, nil, err
		}
		tr.Append(c.Trace())
		start = c.Now().Add(100 * time.Microsecond)
	}
	return craft.RoCEv2, tr, []string{"QPs 0x000100-0x000104 write to 0x000200-0x000204 at MTU 256, 512, 1024, 2048 and 4096."}, nil
}

func rcPSNWrap() (craft.Encap, craft.Trace, []string, error) {
	req := craft.DefaultRequester
	req.PSN = 0xFFFFFD
	return run(craft.Config{MTU: 256, Requester: req}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(1200, 0), VA: 0x7f0000600000, RKey: 0x42},
		{Kind: craft.OpSend, Data: craft.Pattern(40, 1)},
	}, craft.Faults{})
}

func rcLossGoBackN() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{MTU: 256}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(2048, 0), VA: 0x7f0000700000, RKey: 0x43},
		{Kind: craft.OpSend, Data: craft.Pattern(64, 1)},
	}, craft.Faults{Loss: craft.Loss{Packets: []int{3}}})
}

func rcLossRandom() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{MTU: 256}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(6000, 0), VA: 0x7f0000800000, RKey: 0x44},
		{Kind: craft.OpRead, Data: craft.Pattern(2000, 1), VA: 0x7f0000900000, RKey: 0x45},
		{Kind: craft.OpWrite, Data: craft.Pattern(3000, 2), VA: 0x7f0000a00000, RKey: 0x44},
		{Kind: craft.OpSend, Data: craft.Pattern(200, 3)},
	}, craft.Faults{Seed: 29, Loss: craft.Loss{Prob: 0.05}})
}

func rcTailLoss() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(3000, 0)}},
		craft.Faults{Loss: craft.Loss{Packets: []int{3}}})
}

func rcAckLoss() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(1500, 0), VA: 0x7f0000b00000, RKey: 0x46},
	}, craft.Faults{Loss: craft.Loss{Responses: []int{1}}})
}

func rcReadLoss() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpRead, Data: craft.Pattern(4000, 0), VA: 0x7f0000c00000, RKey: 0x47},
	}, craft.Faults{Loss: craft.Loss{Responses: []int{2}}})
}

func rcAtomicReplay() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpFetchAdd, VA: 0x7f0000d00000, RKey: 0x48, SwapAdd: 10, Orig: 32},
	}, craft.Faults{Loss: craft.Loss{Responses: []int{1}}})
}

func rcNAKCodes() (craft.Encap, craft.Trace, []string, error) {
	var tr craft.Trace
	var notes []string
	start := craft.DefaultStart
	for code := layers.NAKPSNSequenceError; code <= layers.NAKInvalidRDRequest; code++ {
		req, resp := craft.DefaultRequester, craft.DefaultResponder
		req.QPN, resp.QPN = 0x300+uint32(code), 0x400+uint32(code)
		c := newConn(craft.Config{Requester: req, Responder: resp, Start: start})
		ops := []craft.Op{
			{Kind: craft.OpSend, Data: craft.Pattern(32, 0)},
			{Kind: craft.OpWrite, Data: craft.Pattern(64, 1), VA: 0x7f0000e00000, RKey: 0x49},
			{Kind: craft.OpSend, Data: craft.Pattern(32, 2)},
		}
		if err := c.Run(ops, craft.Faults{NAKs: []craft.NAK{{Packet: 2, Code: code}}}); err != nil {
			return 0, tr, nil, err
		}
		notes = append(notes, fmt.Sprintf("QP 0x%06x → 0x%06x: the WRITE (request packet 2) is answered with NAK %v.", req.QPN, resp.QPN, code))
		if c.Err() != nil {
			notes = append(notes, fmt.Sprintf("QP 0x%06x ends in the error state: %v.", req.QPN, c.Err()))
		}
		tr.Append(c.Trace())
		start = c.Now().Add(100 * time.Microsecond)
	}
	return craft.RoCEv2, tr, notes, nil
}

func rcRNR() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(64, 0)},
		{Kind: craft.OpSend, Data: craft.Pattern(64, 1)},
		{Kind: craft.OpSend, Data: craft.Pattern(64, 2)},
	}, craft.Faults{RNRs: []craft.RNR{{Packet: 1, Times: 2, Timer: 1}}})
}

func rcCNP() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{MTU: 512}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(4096, 0), VA: 0x7f0000f00000, RKey: 0x4a},
		{Kind: craft.OpSend, Data: craft.Pattern(100, 1)},
	}, craft.Faults{CNPEvery: 4})
}

func ibCNP() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{Encap: craft.IB, MTU: 512}, []craft.Op{
		{Kind: craft.OpWrite, Data: craft.Pattern(4096, 0), VA: 0x7f0000f00000, RKey: 0x4a},
		{Kind: craft.OpSend, Data: craft.Pattern(100, 1)},
	}, craft.Faults{CNPEvery: 4})
}

func cmReject() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	err := c.Reject(craft.CMOptions{ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, 9999)}, layers.RejInvalidServiceID)
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmNativeService() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{Encap: craft.IB, FlowLabel: 0x12345, SL: 3})
	err := firstErr(c.Connect(craft.CMOptions{ServiceID: 0x0002c90300001234, PrivateData: []byte("ibwire consumer data")}),
		c.Disconnect())
	return craft.IB, c.Trace(), nil, err
}

func cmSIDR() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{Service: layers.ServiceUD})
	err := firstErr(c.ResolveService(craft.CMOptions{}), c.Run([]craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(64, 0)},
		{Kind: craft.OpSendImm, Data: craft.Pattern(21, 1), Imm: 0x0badf00d},
	}, craft.Faults{}))
	return craft.RoCEv2, c.Trace(), nil, err
}

func udSend() (craft.Encap, craft.Trace, []string, error) {
	var ops []craft.Op
	for i := 0; i < 6; i++ {
		k := craft.OpSend
		if i%2 == 1 {
			k = craft.OpSendImm
		}
		ops = append(ops, craft.Op{Kind: k, Data: craft.Pattern(40+i, byte(i)), Imm: 0x1000 + uint32(i)})
	}
	return run(craft.Config{Service: layers.ServiceUD}, ops, craft.Faults{Loss: craft.Loss{Packets: []int{3}}})
}

func ucSendWrite() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{Service: layers.ServiceUC, MTU: 256}, []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(600, 0)},
		{Kind: craft.OpWrite, Data: craft.Pattern(700, 1), VA: 0x7f0001000000, RKey: 0x4b},
		{Kind: craft.OpSendImm, Data: craft.Pattern(100, 2), Imm: 7},
		{Kind: craft.OpWriteImm, Data: craft.Pattern(300, 3), VA: 0x7f0001001000, RKey: 0x4b, Imm: 8},
	}, craft.Faults{Loss: craft.Loss{Packets: []int{5}}})
}

// brokenOps are the ops the broken files carry: something for every
// corruption to apply to.
func brokenOps() []craft.Op {
	return []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(40, 0)},
		{Kind: craft.OpWrite, Data: craft.Pattern(1500, 1), VA: 0x7f0002000000, RKey: 0x4c},
		{Kind: craft.OpSend, Data: craft.Pattern(13, 2)},
	}
}

func broken(e craft.Encap, k craft.CorruptKind) func() (craft.Encap, craft.Trace, []string, error) {
	return func() (craft.Encap, craft.Trace, []string, error) {
		frame := 0
		if k == craft.RETHMismatch {
			frame = 2 // the WRITE FIRST
		}
		return run(craft.Config{Encap: e}, brokenOps(), craft.Faults{Corrupt: []craft.Corrupt{{Frame: frame, Kind: k}}})
	}
}

func brokenWrongPad() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{}, []craft.Op{
		{Kind: craft.OpSend, Data: craft.Pattern(40, 0)},
		{Kind: craft.OpSend, Data: craft.Pattern(13, 1)},
	}, craft.Faults{Corrupt: []craft.Corrupt{{Kind: craft.WrongPad}, {Frame: 2, Kind: craft.WrongPad}}})
}

func brokenERF() (craft.Encap, craft.Trace, []string, error) {
	return run(craft.Config{Encap: craft.ERF}, brokenOps(), craft.Faults{Corrupt: []craft.Corrupt{
		{Frame: 1, Kind: craft.BadICRC}, {Frame: 3, Kind: craft.BadVCRC}, {Frame: 4, Kind: craft.Truncated}}})
}

// mgmtMADs is native IB subnet management and performance traffic, the MAD
// classes a RoCE capture rarely holds: LID-routed SMPs (NodeInfo, PortInfo,
// SMInfo, NodeDescription) to QP0, a directed-route SubnGet(NodeInfo) and
// its response with their paths, an SA SubnAdmGet(PathRecord) and its
// response, a PerfGet(PortCounters) and its response and a
// PerfGetResp(PortCountersExtended) to QP1, a SubnGetResp of each other
// SMP attribute tshark dissects, then an SA MCMemberRecord join and its
// response. Each body
// is laid out at its IBTA offsets with every byte distinct from zero where
// the field allows, so a field read at the wrong offset shows.
func mgmtMADs() (craft.Encap, craft.Trace, []string, error) {
	mt := newMADTrace()
	send, seq := mt.send, seqBytes
	smp := func(method layers.MADMethod, a layers.SMPAttribute, mod uint32, data []byte) *layers.MAD {
		m := layers.NewMAD(layers.MgmtClassSubnLID, method, uint16(a), 0x1000+uint64(a))
		m.AttributeModifier = mod
		m.SMP.MKey = 0x0102030405060708
		m.SMP.Data = data
		return m
	}
	nodeDesc := make([]byte, layers.SMPDataLength)
	copy(nodeDesc, "ibwire-sw01 HCA-1")
	send(craft.Requester, 0, smp(layers.MethodGet, layers.SMPAttrNodeInfo, 0, nil), "SubnGet(NodeInfo)")
	send(craft.Responder, 0, smp(layers.MethodGetResp, layers.SMPAttrNodeInfo, 0, seq(layers.SMPDataLength, 0x11)), "SubnGetResp(NodeInfo)")
	send(craft.Requester, 0, smp(layers.MethodGet, layers.SMPAttrPortInfo, 1, nil), "SubnGet(PortInfo) port 1")
	send(craft.Responder, 0, smp(layers.MethodGetResp, layers.SMPAttrPortInfo, 1, seq(layers.SMPDataLength, 0x81)), "SubnGetResp(PortInfo) port 1")
	send(craft.Responder, 0, smp(layers.MethodGetResp, layers.SMPAttrSMInfo, 0, seq(layers.SMPDataLength, 0x21)), "SubnGetResp(SMInfo)")
	send(craft.Responder, 0, smp(layers.MethodGetResp, layers.SMPAttrNodeDescription, 0, nodeDesc), "SubnGetResp(NodeDescription)")
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodGet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassSubnDirected, method, uint16(layers.SMPAttrNodeInfo), 0x2000)
		m.Status = layers.DirectedRouteStatus(i == 1, 0)
		m.ClassSpecific = layers.DirectedRouteClassSpecific(uint8(1+i), 2)
		m.SMPDirected.MKey, m.SMPDirected.DrSLID, m.SMPDirected.DrDLID = 0x1122334455667788, 0xFFFF, 0xFFFF
		m.SMPDirected.Data = seq(layers.SMPDataLength, 0x41)
		m.SMPDirected.InitialPath = []byte{0, 3, 7}
		m.SMPDirected.ReturnPath = []byte{0, 1, 5}
		send(from, 0, m, "directed-route "+[]string{"SubnGet", "SubnGetResp"}[i]+"(NodeInfo), 2 hops")
	}
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodGet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassSubnAdm, method, uint16(layers.SAAttrPathRecord), 0x3000)
		m.SA.SMKey, m.SA.AttributeOffset, m.SA.ComponentMask = 0x0000000000000001, 8, 0x340c
		m.SA.Data = make([]byte, layers.SADataLength)
		copy(m.SA.Data, seq(layers.PathRecordLength, 0x31+byte(i)))
		send(from, 1, m, "SA "+[]string{"SubnAdmGet", "SubnAdmGetResp"}[i]+"(PathRecord)")
	}
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodGet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassPerf, method, uint16(layers.PerfAttrPortCounters), 0x4000)
		m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
		copy(m.PerfMgt.Data, seq(layers.PortCountersLength, 0x51+byte(i)))
		send(from, 1, m, "PerfMgt "+[]string{"PerfGet", "PerfGetResp"}[i]+"(PortCounters)")
	}
	m := layers.NewMAD(layers.MgmtClassPerf, layers.MethodGetResp, uint16(layers.PerfAttrPortCountersExtended), 0x4001)
	m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
	copy(m.PerfMgt.Data, seq(layers.PortCountersExtendedLength, 0x61))
	send(craft.Responder, 1, m, "PerfMgt PerfGetResp(PortCountersExtended)")
	for _, a := range []layers.SMPAttribute{layers.SMPAttrSwitchInfo, layers.SMPAttrGUIDInfo, layers.SMPAttrPKeyTable,
		layers.SMPAttrSLtoVLMappingTable, layers.SMPAttrVLArbitrationTable, layers.SMPAttrLinearFDB,
		layers.SMPAttrRandomFDB, layers.SMPAttrMulticastFDB, layers.SMPAttrLinkSpeedWidthPairsTable,
		layers.SMPAttrVendorDiag, layers.SMPAttrLedInfo} {
		send(craft.Responder, 0, smp(layers.MethodGetResp, a, 0, seq(layers.SMPDataLength, 0x81)), "SubnGetResp("+a.String()+")")
	}
	for i, from := range []craft.Side{craft.Requester, craft.Responder} {
		method := []layers.MADMethod{layers.MethodSet, layers.MethodGetResp}[i]
		m := layers.NewMAD(layers.MgmtClassSubnAdm, method, uint16(layers.SAAttrMCMemberRecord), 0x3001)
		m.SA.ComponentMask = 0x130c7
		m.SA.Data = make([]byte, layers.SADataLength)
		copy(m.SA.Data, seq(layers.MCMemberRecordLength, 0x91+byte(i)))
		send(from, 1, m, "SA "+[]string{"SubnAdmSet", "SubnAdmGetResp"}[i]+"(MCMemberRecord)")
	}
	m = layers.NewMAD(layers.MgmtClassSubnAdm, layers.MethodGetTableResp, uint16(layers.SAAttrPathRecord), 0x3002)
	m.SA.RMPP = layers.RMPPHeader{Version: 1, Type: layers.RMPPTypeData, RRespTime: 0x15,
		Flags: layers.RMPPFlagActive | layers.RMPPFlagFirst | layers.RMPPFlagLast, Data1: 1, Data2: 20 + layers.PathRecordLength}
	m.SA.AttributeOffset = layers.PathRecordLength / 8
	m.SA.Data = make([]byte, layers.SADataLength)
	copy(m.SA.Data, seq(layers.PathRecordLength, 0x11))
	send(craft.Responder, 1, m, "SA SubnAdmGetTableResp(PathRecord), one RMPP DATA segment")
	return mt.result()
}
