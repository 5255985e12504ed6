package decode

import "github.com/ibwire/ibwire/layers"

// reservedNth gives occurrence i of infiniband.reserved, under which
// tshark 4.0 files the reserved bytes of every header it dissects, in wire
// order: the BTH's byte 4 (occurrence 0, the field's own getter), the
// DETH's byte 4, the MAD header's Reserved, then those of the CM message
// (layers.CM.ReservedBytes), of the SA MAD (the SA header's bytes 22-23,
// then those of the first record: SAAttribute.ReservedSpans), of an SMP
// or of PerfMgt's counters (smpPerfReserved).
func reservedNth(p *Packet, i int, v *Value) bool {
	if p.has&hasBTH == 0 {
		if i == 0 && p.has&hasRWH != 0 {
			v.B = p.Headers.RWH.Contents[0:2]
			return true
		}
		return false
	}
	if i == 0 { // the field's own getter, asked of every packet: the BTH's byte
		v.B = p.Headers.BTH.Contents[4:5]
		return true
	}
	// At most: BTH, DETH, MAD, an RMPP STOP's or ABORT's two words, the SA
	// header's and three of a record (InformInfoRecord): 9; or BTH, DETH,
	// MAD, the PerfMgt header's and a PortCounters' three: 7.
	var occ [16][]byte
	n := 0
	b := &p.Headers.BTH
	occ[n], n = b.Contents[4:5], n+1
	if b.HasETH(layers.HdrDETH) {
		if d := b.DETH.Contents; len(d) == layers.HdrDETH.Size() {
			occ[n], n = d[4:5], n+1
		}
	}
	if r, ok := ethOverIBReserved(p); ok {
		occ[n], n = r, n+1
	}
	if p.has&hasMAD != 0 {
		m := &p.Headers.MAD
		occ[n], n = m.ReservedBytes(), n+1
		if d1, d2, ok := stopAbortReserved(p); ok {
			occ[n], occ[n+1], n = d1, d2, n+2
		}
		if m.MgmtClass == layers.MgmtClassCM && m.CM.Contents != nil {
			for j := 0; n < len(occ); j++ {
				r := m.CM.ReservedBytes(j)
				if r == nil {
					break
				}
				occ[n], n = r, n+1
			}
		}
		if m.MgmtClass == layers.MgmtClassSubnAdm && m.SA.Contents != nil {
			s := &m.SA
			occ[n], n = s.Contents[layers.SAReservedOffset:layers.SAReservedOffset+2], n+1
			if len(s.Data) == layers.SADataLength {
				// tshark takes a PathRecord's first 8 bytes for reserved;
				// IBTA 1.2.1 made them the ServiceID.
				if s.AttributeID == layers.SAAttrPathRecord {
					occ[n], n = s.Data[:8], n+1
				}
				for _, r := range s.AttributeID.ReservedSpans() {
					occ[n], n = s.Data[r.Offset:r.Offset+r.Size], n+1
				}
			}
		}
		n = smpPerfReserved(p, occ[:], n)
	}
	if i >= n {
		return false
	}
	v.B = occ[i]
	return true
}

// smpPerfReserved adds to occ from n the reserved bytes tshark 4.0 files
// for an SMP (a LID-routed one's 32 bytes before its data and 128 after, a
// directed-route one's 28) or a PerfMgt PortCounters or
// PortCountersExtended MAD (the 40 bytes before the counters, then the
// counters' own), and returns the new count.
func smpPerfReserved(p *Packet, occ [][]byte, n int) int {
	m := &p.Headers.MAD
	add := func(b []byte) {
		if b != nil && n < len(occ) {
			occ[n], n = b, n+1
		}
	}
	switch m.MgmtClass {
	case layers.MgmtClassSubnLID:
		add(m.SMP.Reserved1)
		add(m.SMP.Reserved2)
	case layers.MgmtClassSubnDirected:
		add(m.SMPDirected.Reserved)
	case layers.MgmtClassPerf:
		pm := &m.PerfMgt
		ext := pm.AttributeID == layers.PerfAttrPortCountersExtended
		if pm.AttributeID != layers.PerfAttrPortCounters && !ext {
			break
		}
		add(pm.Reserved)
		for i := 0; ; i++ {
			r := layers.PortCountersReservedBytes(pm.Data, ext, i)
			if r == nil {
				break
			}
			add(r)
		}
	}
	return n
}

// reservedItem is a tree-only infiniband.reserved item at its place in a
// header: Wireshark shows each reserved field where it lies.
func reservedItem(parent string, get func(p *Packet) []byte) *Field {
	return &Field{Name: "infiniband.reserved", Title: "Reserved", Type: FTBytes, parent: parent, shape: &treeShape{treeOnly: true},
		get: func(p *Packet, v *Value) bool {
			v.B = get(p)
			return v.B != nil
		}}
}
