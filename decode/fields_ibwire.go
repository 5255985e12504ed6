package decode

// ibwireFields are ibwire's own fields, for what Wireshark does not show.
func ibwireFields() []*Field {
	bth := func(p *Packet) bool { return p.has&hasBTH != 0 }
	return []*Field{
		protoField("ibwire", "ibwire analysis", func(p *Packet) bool { return bth(p) || p.Err != nil }),
		{Name: "ibwire.encap", Title: "Encapsulation", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.Encapsulation.String()
			return bth(p)
		}},
		{Name: "ibwire.icrc.status", Title: "ICRC status", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.ICRC.String()
			return bth(p) && p.Err == nil
		}},
		uintField("ibwire.icrc.computed", "ICRC computed (wire order)", FTUint32, BaseHex, func(p *Packet) (uint64, bool) {
			c := p.ICRCComputed
			return uint64(c>>24 | c>>8&0xFF00 | c<<8&0xFF0000 | c<<24), bth(p) && p.Err == nil
		}),
		{Name: "ibwire.vcrc.status", Title: "VCRC status", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.VCRC.String()
			return p.has&hasLRH != 0 && p.Err == nil
		}},
		{Name: "ibwire.opcode", Title: "Opcode name (IBTA)", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.Headers.BTH.Opcode.String()
			return bth(p)
		}},
		{Name: "ibwire.service", Title: "Transport service", Type: FTString, get: func(p *Packet, v *Value) bool {
			v.S = p.Headers.BTH.Info().Service.String()
			return bth(p)
		}},
		uintField("ibwire.payload.len", "Payload length (pad excluded)", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			return uint64(len(p.Headers.BTH.PacketPayload())), bth(p)
		}),
		bytesField("ibwire.payload", "Payload", FTBytes, func(p *Packet) ([]byte, bool) {
			b := p.Headers.BTH.PacketPayload()
			return b, bth(p) && len(b) > 0
		}),
		boolField("ibwire.fecn", "FECN", func(p *Packet) (bool, bool) { return p.Headers.BTH.FECN, bth(p) }),
		boolField("ibwire.becn", "BECN", func(p *Packet) (bool, bool) { return p.Headers.BTH.BECN, bth(p) }),
		{Name: "ibwire.malformed", Title: "Malformed packet", Type: FTString, get: func(p *Packet, v *Value) bool {
			if p.Err == nil {
				return false
			}
			v.S = p.Err.Error()
			return true
		}},
	}
}
