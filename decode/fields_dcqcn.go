package decode

import "math"

// dcqcnFields are ibwire.analysis.dcqcn.*: what the rate analysis says of
// a packet once a capture shows congestion (analysis_dcqcn.go). The
// findings' own flags, ibwire.analysis.dcqcn.no_reaction and .victim, are
// made with the other findings'.
func dcqcnFields() []*Field {
	dq := func(p *Packet) *DCQCNPacket {
		if d := p.Analysis.DCQCN; d != nil {
			return d
		}
		return &noDCQCN
	}
	return []*Field{
		uintField("ibwire.analysis.dcqcn.rate", "Sending rate since the direction's previous packet (bit/s)", FTUint64, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(math.Round(dq(p).Rate)), dq(p).Rate > 0
		}),
		{Name: "ibwire.analysis.dcqcn.cnp_spacing", Title: "Time since the previous CNP to this QP", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			v.D = dq(p).CNPSpacing
			return dq(p).CNPSpacing > 0
		}},
		{Name: "ibwire.analysis.dcqcn.reaction_time", Title: "Time from the CNP to the first slower gap, which this packet ends", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			v.D = dq(p).Reaction
			return dq(p).CNPFrame != 0
		}},
		uintField("ibwire.analysis.dcqcn.cnp_frame", "The CNP the sender slowed down for", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(dq(p).CNPFrame), dq(p).CNPFrame != 0
		}),
	}
}

// noDCQCN reads as no value, for a packet the rate analysis did not see.
var noDCQCN DCQCNPacket
