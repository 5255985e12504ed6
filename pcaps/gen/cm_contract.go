package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// The CM contract captures: a connection whose REQ/REP negotiate a limit
// and traffic that breaks it, one finding each (decode/analysis_cm.go).
// The generator marks the frames that break the contract: it knows which
// it made to.

func cmContractSpecs() []spec {
	return []spec{
		{"cm_contract_reads", "REP Responder Resources 2, then four one-packet RDMA READs posted at once: the third and fourth are outstanding beyond it", cmContractReads},
		{"cm_contract_retries", "REQ Retry Count 1, then a SEND whose ACK is lost twice: the second retry of its PSN breaks it", cmContractRetries},
		{"cm_contract_rnr", "REP RNR Retry Count 1, then a SEND refused three times with RNR NAK: the second and third RNR retries break it", cmContractRNR},
		{"cm_contract_mtu", "REQ path MTU 1024, then a 3000-byte RDMA WRITE sent as one packet (the QP was set to 4096)", cmContractMTU},
		{"cm_contract_path", "REQ path P_Key 0x8001 and traffic class 0x28 (DSCP 10), traffic at P_Key 0xFFFF and DSCP 0: the P_Key of both sides, the active side's traffic class", cmContractPath},
		{"cm_contract_path_ib", "native IB with GRH: REQ path SL 5 and flow label 0x54321, traffic at SL 0 and flow label 0x12345", cmContractPathIB},
		{"cm_mra", "the REQ answered by an MRA (service timeout 14: 67 ms), the REQ sent again 1 ms later regardless, then REP/RTU", cmMRA},
		{"cm_dreq_unanswered", "a CM connection, one SEND, then a DREQ no DREP answers", cmDREQUnanswered},
		{"cm_reject_rep", "the requester (active side) rejects the REP with REJ (reason 28, consumer defined)", cmRejectREP},
	}
}

// cmFrames finds the REQ and REP of a trace (the last of each: a REQ sent
// again binds).
func cmFrames(tr craft.Trace) (req, rep int) {
	for i, f := range tr.Frames {
		switch {
		case strings.HasPrefix(f.Info.Note, "CM REQ"):
			req = i + 1
		case f.Info.Note == "CM REP":
			rep = i + 1
		}
	}
	return req, rep
}

// expectAt adds finding kind at every frame of tr that match picks, the
// ref frame ref.
func expectAt(c *craft.Conn, kind craft.FindingKind, ref int, detail string, match func(n int, f craft.Frame) bool) error {
	for i, f := range c.Frames() {
		if match(i+1, f) {
			if err := c.Expect(craft.Finding{Frame: i + 1, Kind: kind, Ref: ref, Detail: detail}); err != nil {
				return err
			}
		}
	}
	return nil
}

// dataFrame reports a frame of the RC connection (not CM on QP1).
func dataFrame(f craft.Frame) bool { return f.Info.DestQP != 1 }

func cmContractReads() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{MaxRdAtomic: 4})
	var ops []craft.Op
	for i := range 4 {
		ops = append(ops, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(64, byte(i)), VA: 0x7f0000100000 + uint64(i)*64, RKey: 0x77})
	}
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{REPResponderResources: new(uint8(2))}}),
		c.Run(ops, craft.Faults{})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	_, rep := cmFrames(c.Trace())
	reads := 0
	err := expectAt(c, craft.FindingCMReadsExceeded, rep, "more READs outstanding than the REP's 2", func(_ int, f craft.Frame) bool {
		if f.Info.Opcode != 0x0C || f.Info.From != craft.Requester {
			return false
		}
		reads++
		return reads > 2
	})
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmContractRetries() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{RetryCount: new(uint8(1))}}),
		c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 1)}}, craft.Faults{Loss: craft.Loss{Responses: []int{1, 2}}})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	req, _ := cmFrames(c.Trace())
	sends := 0
	err := expectAt(c, craft.FindingCMRetryExceeded, req, "retry 2 of the PSN", func(_ int, f craft.Frame) bool {
		if f.Info.Opcode != 0x04 || f.Info.From != craft.Requester {
			return false
		}
		sends++
		return sends == 3
	})
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmContractRNR() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{REPRNRRetryCount: new(uint8(1))}}),
		c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 1)}},
			craft.Faults{RNRs: []craft.RNR{{Packet: 1, Times: 3, Timer: 1}}})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	_, rep := cmFrames(c.Trace())
	sends := 0
	err := expectAt(c, craft.FindingCMRNRRetryExceeded, rep, "RNR retry beyond the REP's 1", func(_ int, f craft.Frame) bool {
		if f.Info.Opcode != 0x04 || f.Info.From != craft.Requester {
			return false
		}
		sends++
		return sends > 2
	})
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmContractMTU() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{MTU: 4096})
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{PathMTU: 1024}}),
		c.Run([]craft.Op{{Kind: craft.OpWrite, Data: craft.Pattern(3000, 2), VA: 0x7f0000200000, RKey: 0x78}}, craft.Faults{})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	req, _ := cmFrames(c.Trace())
	err := expectAt(c, craft.FindingCMMTUExceeded, req, "3000 bytes", func(_ int, f craft.Frame) bool {
		return f.Info.Opcode == 0x0A
	})
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmContractPath() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{PKey: new(uint16(0x8001)), TrafficClass: new(uint8(0x28))}}),
		c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 3)}}, craft.Faults{})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	req, _ := cmFrames(c.Trace())
	err := expectAt(c, craft.FindingCMPathMismatch, req, "P_Key (and, from the requester, traffic class)",
		func(_ int, f craft.Frame) bool { return dataFrame(f) })
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmContractPathIB() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{Encap: craft.IBGRH, FlowLabel: 0x12345})
	if err := firstErr(c.Connect(craft.CMOptions{Contract: craft.CMContract{SL: new(uint8(5)), FlowLabel: new(uint32(0x54321))}}),
		c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 4)}}, craft.Faults{})); err != nil {
		return 0, craft.Trace{}, nil, err
	}
	req, _ := cmFrames(c.Trace())
	err := expectAt(c, craft.FindingCMPathMismatch, req, "SL and flow label",
		func(_ int, f craft.Frame) bool { return dataFrame(f) })
	return craft.IBGRH, c.Trace(), nil, err
}

func cmMRA() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	err := firstErr(c.Connect(craft.CMOptions{MRA: &craft.CMMRA{ServiceTimeout: 14, Resend: time.Millisecond}}),
		c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 5)}}, craft.Faults{}), c.Disconnect())
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmDREQUnanswered() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	err := firstErr(c.Connect(craft.CMOptions{}), c.Run([]craft.Op{{Kind: craft.OpSend, Data: craft.Pattern(64, 6)}}, craft.Faults{}),
		c.DisconnectUnanswered(0))
	return craft.RoCEv2, c.Trace(), nil, err
}

func cmRejectREP() (craft.Encap, craft.Trace, []string, error) {
	c := newConn(craft.Config{})
	err := c.Reject(craft.CMOptions{RequesterRejects: true}, layers.RejConsumerDefined)
	return craft.RoCEv2, c.Trace(), []string{fmt.Sprintf("REJ reason %v, sent by the active side", layers.RejConsumerDefined)}, err
}
