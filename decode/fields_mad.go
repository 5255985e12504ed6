package decode

import "github.com/ibwire/ibwire/layers"

// madFields are Wireshark's infiniband.mad.* fields for the common MAD header.
func madFields() []*Field {
	mad := func(p *Packet) bool { return p.has&hasMAD != 0 }
	M := func(p *Packet) *layers.MAD { return &p.Headers.MAD }
	fs := append([]*Field{
		nodeField("infiniband.mad", "MAD (Management Datagram) Common Header", madBytes),
		uintField("infiniband.mad.baseversion", "Base Version", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).BaseVersion), mad(p) }),
		uintField("infiniband.mad.mgmtclass", "Management Class", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).MgmtClass), mad(p) }),
		uintField("infiniband.mad.classversion", "Class Version", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).ClassVersion), mad(p) }),
		withNames(uintField("infiniband.mad.method", "Method", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).Method), mad(p) }),
			madMethodName, nil),
		uintField("infiniband.mad.status", "Status", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).Status), mad(p) }),
		uintField("infiniband.mad.classspecific", "Class Specific", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).ClassSpecific), mad(p) }),
		uintField("infiniband.mad.transactionid", "Transaction ID", FTUint64, BaseHex, func(p *Packet) (uint64, bool) { return M(p).TransactionID, mad(p) }),
		uintField("infiniband.mad.attributeid", "Attribute ID", FTUint16, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).AttributeID), mad(p) }),
		reservedItem("infiniband.mad", func(p *Packet) []byte { return M(p).ReservedBytes() }),
		uintField("infiniband.mad.attributemodifier", "Attribute Modifier", FTUint32, BaseHex, func(p *Packet) (uint64, bool) { return uint64(M(p).AttributeModifier), mad(p) }),
		bytesField("infiniband.mad.data", "MAD Data Payload", FTBytes, func(p *Packet) ([]byte, bool) {
			d := M(p).Payload
			return d[:min(len(d), layers.MADDataLength)], mad(p) && len(d) > 0
		}),
	}, smpHeaderFields()...)
	cm := cmFields()
	smpDataOccurrences(cm)
	saSMPAttributes(cm)
	// The SA group goes before the SMP attribute fields so that an SA
	// record's RID comes before the SMP attribute it wraps in -V and JSON.
	fs = append(append(fs, saFields()...), saRecordFields()...)
	fs = append(append(fs, cm...), smpBodyFields()...)
	// A Notice follows the SA header in an SA MAD and ends an SMP's data,
	// so its fields come after the SA's.
	fs = append(fs, noticeFields()...)
	fs = append(append(fs, perfMgtFields()...), classPortInfoFields()...)
	return mgmtTreeShape(fs)
}

// madBytes is the whole MAD, header and data, as tshark's infiniband.mad
// item covers it.
func madBytes(p *Packet) ([]byte, bool) {
	if p.has&hasMAD == 0 {
		return nil, false
	}
	m := &p.Headers.MAD
	n := min(len(m.Payload), layers.MADDataLength)
	// The header's slice ends at its 24 bytes; the data's runs to the end
	// of the frame, which says where the MAD starts in it.
	start := cap(p.Data) - cap(m.Payload) - layers.MADHeaderLength
	if start < 0 || start+layers.MADHeaderLength+n > len(p.Data) {
		return m.Contents, true
	}
	return p.Data[start : start+layers.MADHeaderLength+n], true
}

// madMethodName names a method as tshark's tree does: "Send()", "GetResp()".
func madMethodName(u uint64) (string, bool) {
	name, ok := layers.MADMethodName(layers.MADMethod(u))
	return name, ok && u <= 0xFF
}
