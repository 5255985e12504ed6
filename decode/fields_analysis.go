package decode

import (
	"slices"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// analysisFields are the ibwire.analysis.* fields: what the Analyzer found
// about each packet, in the manner of tcp.analysis.*. They are set only when
// an Analyzer ran over the packets (ibdump always runs one when a filter,
// column or statistic needs it).
func analysisFields() []*Field {
	an := func(p *Packet) *PacketAnalysis { return &p.Analysis }
	has := func(k FindingKind) func(p *Packet) (bool, bool) {
		return func(p *Packet) (bool, bool) { return true, an(p).Has(k) }
	}
	// hasInfo is called directly, not through a returned closure: a closure
	// made per call would be allocated for every field of every packet.
	hasInfo := func(p *Packet, i InfoFlags) bool { return p.Analysis.Info&i != 0 }
	info := func(i InfoFlags) func(p *Packet) bool { return func(p *Packet) bool { return hasInfo(p, i) } }
	frameField := func(name, title string, i InfoFlags, get func(a *PacketAnalysis) uint32) *Field {
		return uintField(name, title, FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(get(an(p))), hasInfo(p, i) && get(an(p)) != 0
		})
	}
	timeField := func(name, title string, ok func(p *Packet) bool, get func(a *PacketAnalysis) Value) *Field {
		return &Field{Name: name, Title: title, Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			*v = get(an(p))
			return ok(p)
		}}
	}
	head := []*Field{
		protoField("ibwire.analysis", "RDMA analysis", func(p *Packet) bool { return an(p).Conv != 0 || an(p).Findings != 0 }),
		uintField("ibwire.analysis.conv_id", "Conversation index", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(an(p).Conv), an(p).Conv != 0
		}),
		withNames(uintField("ibwire.analysis.direction", "Direction", FTUint8, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(an(p).Dir), an(p).Dir != 0
		}), func(u uint64) (string, bool) {
			switch u {
			case 1:
				return "A>B", true
			case 2:
				return "B>A", true
			}
			return "", false
		}, func(s string) (uint64, bool) {
			switch strings.ToUpper(s) {
			case "A>B", "AB":
				return 1, true
			case "B>A", "BA":
				return 2, true
			}
			return 0, false
		}),
		uintField("ibwire.analysis.expected_psn", "Expected PSN", FTUint24, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(an(p).ExpectedPSN), hasInfo(p, InfoExpected)
		}),
	}
	// What a finding found: a packet without one has none of these.
	event := gatedFields(gateEvent,
		uintField("ibwire.analysis.psn_gap", "PSNs missing before this packet (lost before the capture point)", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(an(p).GapPSNs), an(p).Has(FindPSNGap)
		}),
		boolField("ibwire.analysis.retransmission", "This packet is a retransmission", has(FindRetransmission)),
		frameField("ibwire.analysis.retransmitted_frame", "Frame of the previous transmission", InfoRetransmittedFrame, func(a *PacketAnalysis) uint32 { return a.RetransmittedFrame }),
		&Field{Name: "ibwire.analysis.retransmission_cause", Title: "Why it was sent again", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = an(p).Cause.String()
			return an(p).Has(FindRetransmission) && an(p).Cause != CauseNone
		}},
		boolField("ibwire.analysis.go_back_n", "Go-back-N after a NAK PSN Sequence Error", func(p *Packet) (bool, bool) {
			return true, an(p).Has(FindRetransmission) && an(p).Cause == CauseNAK
		}),
		timeField("ibwire.analysis.resent_after", "Time since the previous transmission (implied ACK timeout)",
			func(p *Packet) bool { return an(p).Has(FindAckTimeout) && an(p).Elapsed > 0 },
			func(a *PacketAnalysis) Value { return Value{D: a.Elapsed} }),
		withNames(uintField("ibwire.analysis.nak", "NAK", FTUint8, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(p.Headers.BTH.AETH.Syndrome.NAKCode()), an(p).Has(FindNAK)
		}), func(u uint64) (string, bool) { return layers.NAKCode(u).Key(), u < 5 }, func(s string) (uint64, bool) {
			for c := layers.NAKCode(0); c < 5; c++ {
				if c.Key() == s {
					return uint64(c), true
				}
			}
			return 0, false
		}),
		timeField("ibwire.analysis.rnr_timer", "RNR NAK timer", func(p *Packet) bool { return an(p).Has(FindRNRNAK) },
			func(a *PacketAnalysis) Value { return Value{} }),
	)
	// What the pairing of requests and responses found: a packet it did
	// not pair has none of these.
	pairing := gatedFields(gatePairing,
		frameField("ibwire.analysis.request_frame", "Request this packet answers", InfoRequest, func(a *PacketAnalysis) uint32 { return a.RequestFrame }),
		frameField("ibwire.analysis.response_frame", "First response to this request", InfoResponse, func(a *PacketAnalysis) uint32 { return a.ResponseFrame }),
		frameField("ibwire.analysis.last_response_frame", "Last response to this request", InfoResponse, func(a *PacketAnalysis) uint32 { return a.LastResponseFrame }),
		frameField("ibwire.analysis.ref_frame", "Frame this finding refers to", InfoRef, func(a *PacketAnalysis) uint32 { return a.RefFrame }),
		timeField("ibwire.analysis.ack_rtt", "Time since the request this acknowledges", info(InfoAckRTT),
			func(a *PacketAnalysis) Value { return Value{D: a.AckRTT} }),
		timeField("ibwire.analysis.latency", "Request to response latency", info(InfoLatency),
			func(a *PacketAnalysis) Value { return Value{D: a.Latency} }),
		timeField("ibwire.analysis.read_latency", "READ request to last response", func(p *Packet) bool {
			return hasInfo(p, InfoLatency) && an(p).Op == OpClassRead
		}, func(a *PacketAnalysis) Value { return Value{D: a.Latency} }),
		&Field{Name: "ibwire.analysis.latency_op", Title: "Operation of the request answered", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = an(p).Op.String()
			return hasInfo(p, InfoLatency)
		}},
	)
	message := []*Field{
		uintField("ibwire.analysis.message_size", "Size of the message this packet completes", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(an(p).MessageSize), hasInfo(p, InfoMessage)
		}),
		frameField("ibwire.analysis.message_frame", "First frame of the message", InfoMessage, func(a *PacketAnalysis) uint32 { return a.MessageFrame }),
		{Name: "ibwire.analysis.severity", Title: "Most severe finding", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = an(p).Severity.String()
			return an(p).Severity != SevNone
		}},
	}
	fs := slices.Concat(head, event, pairing, message)
	// The RNR timer comes from the packet itself.
	for _, f := range fs {
		if f.Name == "ibwire.analysis.rnr_timer" {
			f.get = func(p *Packet, v *Value) bool {
				v.D = p.Headers.BTH.AETH.Syndrome.RNRTimer()
				return an(p).Has(FindRNRNAK)
			}
		}
	}
	return fs
}

// findingFlagFields are the flags of every finding but those
// analysisFields shows with more (PSN gap, retransmission, NAK), each named
// after its kind: ibwire.analysis.rnr_nak, ibwire.analysis.cm.mra ...
func findingFlagFields() []*Field {
	var fs []*Field
	for _, k := range FindingKinds() {
		switch k {
		case FindPSNGap, FindRetransmission, FindNAK:
			continue
		}
		fs = append(fs, boolField("ibwire.analysis."+k.Name(), findingKinds[k].summary, func(p *Packet) (bool, bool) {
			return true, p.Analysis.Has(k)
		}))
	}
	return fs
}

// cmContractFields are ibwire.analysis.cm.*: on each packet of a connection
// the CM set up, what its REQ and REP negotiated (for the packet's sender
// where the sides differ); at a finding, what broke it. The flags of the
// findings themselves (ibwire.analysis.cm.reads_exceeded ...) are named
// after their kinds.
func cmContractFields() []*Field {
	cm := func(p *Packet) *CMContract { return p.Analysis.CM }
	// contract reads a value of the sender's side; a REJ's CM has no sides.
	contract := func(name, title string, t FieldType, base Base, get func(k *CMContract, side uint8) uint64) *Field {
		return uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			k := cm(p)
			if k == nil || k.REQFrame == 0 || p.Analysis.Dir == 0 {
				return 0, false
			}
			return get(k, p.Analysis.Dir-1), true
		})
	}
	count := func(name, title string, kinds ...FindingKind) *Field {
		return uintField(name, title, FTUint8, BaseDec, func(p *Packet) (uint64, bool) {
			for _, k := range kinds {
				if p.Analysis.Has(k) {
					return uint64(p.Analysis.CMCount), true
				}
			}
			return 0, false
		})
	}
	return []*Field{
		contract("ibwire.analysis.cm.req_frame", "CM REQ of the connection", FTUint32, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.REQFrame) }),
		contract("ibwire.analysis.cm.rep_frame", "CM REP of the connection", FTUint32, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.REPFrame) }),
		contract("ibwire.analysis.cm.max_outstanding_reads", "READ/atomic requests the sender may have outstanding (CM REP)", FTUint8, BaseDec,
			func(k *CMContract, x uint8) uint64 { return uint64(k.MaxReads[x]) }),
		contract("ibwire.analysis.cm.retry_count", "Retry Count (CM REQ)", FTUint8, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.RetryCount) }),
		contract("ibwire.analysis.cm.rnr_retry_count", "RNR Retry Count of the sender (7: for ever)", FTUint8, BaseDec,
			func(k *CMContract, x uint8) uint64 { return uint64(k.RNRRetryCount[x]) }),
		contract("ibwire.analysis.cm.path_mtu", "Path MTU (CM REQ)", FTUint32, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.PathMTU) }),
		contract("ibwire.analysis.cm.pkey", "Partition Key (CM REQ)", FTUint16, BaseHex,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.PKey) }),
		contract("ibwire.analysis.cm.traffic_class", "Traffic Class (CM REQ primary path)", FTUint8, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.TrafficClass) }),
		contract("ibwire.analysis.cm.flow_label", "Flow Label (CM REQ primary path)", FTUint32, BaseHex,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.FlowLabel) }),
		contract("ibwire.analysis.cm.sl", "SL (CM REQ primary path)", FTUint8, BaseDec,
			func(k *CMContract, _ uint8) uint64 { return uint64(k.SL) }),
		count("ibwire.analysis.cm.outstanding_reads", "READ/atomic requests outstanding with this one", FindCMReadsExceeded),
		count("ibwire.analysis.cm.retries", "Retries of this PSN", FindCMRetryExceeded, FindCMRNRRetryExceeded),
		uintField("ibwire.analysis.cm.ref_frame", "CM message this finding refers to", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			an := &p.Analysis
			if f := an.CMRef(); f != 0 {
				return uint64(f), true
			}
			if an.Findings&cmMessageFindings != 0 && an.RefFrame != 0 {
				return uint64(an.RefFrame), true
			}
			return 0, false
		}),
		{Name: "ibwire.analysis.cm.rej_reason", Title: "Why the CM REJ rejected", Type: FTString, get: func(p *Packet, v *Value) bool {
			if !p.Analysis.Has(FindCMReject) || !p.HasMAD() {
				return false
			}
			v.S = p.Headers.MAD.CM.REJ.Reason.String()
			return true
		}},
		{Name: "ibwire.analysis.cm.rej_by", Title: "Side that sent the CM REJ", Type: FTString, get: func(p *Packet, v *Value) bool {
			k := cm(p)
			if k == nil || k.RejBy == 0 || !p.Analysis.Has(FindCMReject) {
				return false
			}
			v.S = k.RejByName()
			return true
		}},
		{Name: "ibwire.analysis.cm.mra_timeout", Title: "Time the CM MRA asks for (service timeout)", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			if !p.Analysis.Has(FindCMMRA) || !p.HasMAD() {
				return false
			}
			v.D = layers.CMTimeout(p.Headers.MAD.CM.MRA.ServiceTimeout)
			return true
		}},
	}
}
