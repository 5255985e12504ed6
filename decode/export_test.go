package decode

// GateFails reports whether p lacks what f's group needs (the gate
// SkipAbsentGroup tests), for tests that check the gate's promise.
func GateFails(p *Packet, f *Field) bool { return f.gate != gateNone && !p.passes(f.gate) }
