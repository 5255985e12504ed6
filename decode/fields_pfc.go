package decode

// pfcFields are ibwire.analysis.pfc.*: the priority a RoCE packet travels
// on (shown in captures with pause frames, after the first), and what the pause timeline found (the findings' own flags,
// ibwire.analysis.pfc.sent_while_paused, .in_flight and .storm, are made
// with the other findings').
func pfcFields() []*Field {
	flag := func(name, title string, f PFCFlags) *Field {
		return boolField(name, title, func(p *Packet) (bool, bool) { return true, p.Analysis.PFC&f != 0 })
	}
	return []*Field{
		uintField("ibwire.analysis.pfc.priority", "PFC priority (VLAN PCP, else DSCP/8)", FTUint8, BaseDec, func(p *Packet) (uint64, bool) {
			prio, _, ok := p.Priority()
			return uint64(prio), ok && p.Analysis.PFC&PFCPriority != 0
		}),
		{Name: "ibwire.analysis.pfc.priority_source", Title: "Where the priority comes from", Type: FTString, get: func(p *Packet, v *Value) bool {
			_, src, ok := p.Priority()
			v.S = src.String()
			return ok && p.Analysis.PFC&PFCPriority != 0
		}},
		flag("ibwire.analysis.pfc.start", "This pause frame starts a pause", PFCStart),
		flag("ibwire.analysis.pfc.refresh", "This pause frame extends a pause in effect", PFCRefresh),
		flag("ibwire.analysis.pfc.resume", "This pause frame ends a pause in effect", PFCResume),
		{Name: "ibwire.analysis.pfc.paused_for", Title: "How long the priority had been paused", Type: FTRelTime, get: func(p *Packet, v *Value) bool {
			v.D = p.Analysis.PFCPausedFor
			return p.Analysis.Has(FindPFCSentWhilePaused) || p.Analysis.Has(FindPFCInFlight)
		}},
	}
}
