package decode

import (
	"bytes"

	"github.com/ibwire/ibwire/layers"
)

// The SA records past PathRecord and MCMemberRecord, as tshark 4.0 shows
// them: the record identifiers (infiniband.sa.lid, .portnum, .blocknum_* ...),
// InformInfo and InformInfoRecord, LinkRecord (whose fields tshark also
// uses for a ServiceRecord's), TraceRecord, MultiPathRecord and
// ServiceAssociationRecord. Records that wrap an SMP attribute (NodeRecord,
// PortInfoRecord, SMInfoRecord ...) show it with the SMP attribute fields
// (infiniband.nodeinfo.*, portinfo.* ...): smpAttrData finds it for them.
//
// tshark dissects the first record of the data only: a GetTableResp of
// several records shows the first, so every field here has one occurrence
// (the ServiceRecord's ServiceData and the MultiPathRecord's GIDs aside,
// which repeat within the record).

// saAttr returns the attribute of an SA packet and its first record.
func saAttr(p *Packet) (layers.SAAttribute, []byte, bool) {
	if !isSA(p) {
		return 0, nil, false
	}
	s := &p.Headers.MAD.SA
	return s.AttributeID, s.Data, len(s.Data) == layers.SADataLength
}

// smpAttrData returns attribute a's 64 bytes: an SMP's data when the SMP
// carries a, or the part of an SA record that holds a (NodeRecord's
// NodeInfo ...).
func smpAttrData(p *Packet, a layers.SMPAttribute) (layers.SMPData, bool) {
	if got, d, ok := smpAttr(p); ok {
		return d, got == a
	}
	if r, rec, ok := saAttr(p); ok {
		return saSMPBody(r, rec, a)
	}
	return nil, false
}

// saSMPBody returns the SMP attribute a that a record rec of attribute r
// wraps.
func saSMPBody(r layers.SAAttribute, rec []byte, a layers.SMPAttribute) (layers.SMPData, bool) {
	if d, ok := r.SMPBody(rec, a); ok {
		return d, true
	}
	// tshark dissects a LinkSpeedWidthPairsTableRecord's table from the
	// record's first byte, with no RID before it.
	if r == layers.SAAttrLinkSpeedWidthPairsTableRecord && a == layers.SMPAttrLinkSpeedWidthPairsTable {
		return layers.SMPData(rec[:layers.SMPDataLength:layers.SMPDataLength]), true
	}
	return nil, false
}

// saSMPAttributes lets renderers walk the SMP attribute fields of an SA
// record that wraps one: they sit under the SMP data item (cmNode), which
// such a record only has for some attributes (saSMPDataItem).
func saSMPAttributes(fs []*Field) {
	for _, f := range fs {
		if f.Name == cmNode {
			f.fieldsWithout = func(p *Packet) bool {
				a, _, ok := saAttr(p)
				return ok && (a.SMPBodies() || a == layers.SAAttrLinkSpeedWidthPairsTableRecord)
			}
		}
	}
}

// saSubtreeAttrs are the SMP attributes whose tshark dissector opens a
// subtree of its own with the SMP data item (infiniband.smplid.smpdata).
var saSubtreeAttrs = []layers.SMPAttribute{layers.SMPAttrSMInfo, layers.SMPAttrSLtoVLMappingTable,
	layers.SMPAttrVLArbitrationTable, layers.SMPAttrLinearFDB, layers.SMPAttrRandomFDB,
	layers.SMPAttrMulticastFDB, layers.SMPAttrLinkSpeedWidthPairsTable}

// saSMPDataItem is the SMP data item tshark adds in an SA record that wraps
// one of saSubtreeAttrs (SMInfoRecord, the forwarding and mapping table
// records ...): 64 bytes, once.
func saSMPDataItem(p *Packet) ([]byte, bool) {
	r, rec, ok := saAttr(p)
	if !ok {
		return nil, false
	}
	for _, a := range saSubtreeAttrs {
		if d, ok := saSMPBody(r, rec, a); ok {
			return d, true
		}
	}
	return nil, false
}

// saRecordItem is the extent of the item tshark titles with the record's
// name (infiniband.sa.drdlid's third occurrence) in the SA data: it starts
// after the RID and spans what tshark's dissector says, which for a
// ServiceRecord is the whole record's size from there, 4 bytes past the MAD.
var saRecordItem = map[layers.SAAttribute]struct{ offset, length int }{
	layers.SAAttrInformInfo:       {0, layers.InformInfoLength},
	layers.SAAttrInformInfoRecord: {layers.InformInfoRecordRIDLength, layers.InformInfoLength},
	layers.SAAttrLinkRecord:       {layers.LinkRecordRIDLength, 3}, // ToPort and ToLID
	layers.SAAttrServiceRecord:    {layers.ServiceRecordRIDLength, layers.ServiceRecordLength},
	layers.SAAttrPathRecord:       {0, layers.PathRecordLength},
	// tshark sizes the MCMemberRecord's item as a PathRecord's.
	layers.SAAttrMCMemberRecord:           {layers.MCMemberRecordRIDLength, layers.PathRecordLength},
	layers.SAAttrTraceRecord:              {0, layers.TraceRecordLength},
	layers.SAAttrMultiPathRecord:          {0, layers.SADataLength},
	layers.SAAttrServiceAssociationRecord: {0, layers.ServiceAssociationRecordLength},
}

// saDataBytes returns n bytes from offset off of the SA data, read from the
// frame so they may run past the MAD as tshark's items do (the MAD data's
// slice runs to the end of the frame, which says where the MAD sits in it);
// clipped to the frame.
func saDataBytes(p *Packet, off, n int) []byte {
	m := &p.Headers.MAD
	start := cap(p.Data) - cap(m.Payload) + layers.SADataOffset + off
	if start < 0 || start > len(p.Data) {
		d := m.SA.Data
		return d[min(off, len(d)):min(off+n, len(d))]
	}
	return p.Data[start:min(start+n, len(p.Data))]
}

// saRecordFields are the fields of the SA records, in tshark's tree order.
func saRecordFields() []*Field {
	u := func(name, title string, t FieldType, has func(a layers.SAAttribute) bool, get func(a layers.SAAttribute, rec []byte) uint64) *Field {
		f := uintField(name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			a, rec, ok := saAttr(p)
			if !ok || !has(a) {
				return 0, false
			}
			return get(a, rec), true
		})
		f.parent = saNode
		return f
	}
	b := func(name, title string, t FieldType, has func(a layers.SAAttribute) bool, get func(a layers.SAAttribute, rec []byte) []byte) *Field {
		f := bytesField(name, title, t, func(p *Packet) ([]byte, bool) {
			a, rec, ok := saAttr(p)
			if !ok || !has(a) {
				return nil, false
			}
			return get(a, rec), true
		})
		f.parent = saNode
		return f
	}
	is := func(as ...layers.SAAttribute) func(a layers.SAAttribute) bool {
		return func(a layers.SAAttribute) bool {
			for _, x := range as {
				if a == x {
					return true
				}
			}
			return false
		}
	}
	rid := func(name, title string, t FieldType, has func(a layers.SAAttribute) bool, get func(r layers.TableRID) uint64) *Field {
		return u("infiniband.sa."+name, title, t, has, func(a layers.SAAttribute, rec []byte) uint64 {
			r, _ := a.DecodeTableRID(rec)
			return get(r)
		})
	}
	type R = layers.TableRID
	withLID := is(layers.SAAttrNodeRecord, layers.SAAttrSLtoVLMappingTableRecord, layers.SAAttrSwitchInfoRecord,
		layers.SAAttrLinearFDBRecord, layers.SAAttrRandomFDBRecord, layers.SAAttrMulticastFDBRecord,
		layers.SAAttrSMInfoRecord, layers.SAAttrPKeyTableRecord, layers.SAAttrVLArbitrationTableRecord,
		layers.SAAttrGUIDInfoRecord)

	informInfo := func(a layers.SAAttribute, rec []byte) layers.InformInfo {
		if a == layers.SAAttrInformInfoRecord {
			rec = rec[layers.InformInfoRecordRIDLength:]
		}
		return layers.DecodeInformInfo(rec)
	}
	isII := is(layers.SAAttrInformInfo, layers.SAAttrInformInfoRecord)
	ii := func(name, title string, t FieldType, get func(i *layers.InformInfo) uint64) *Field {
		return u("infiniband.informinfo."+name, title, t, isII, func(a layers.SAAttribute, rec []byte) uint64 {
			i := informInfo(a, rec)
			return get(&i)
		})
	}
	isIIR := is(layers.SAAttrInformInfoRecord)

	isLink := is(layers.SAAttrLinkRecord)
	link := func(name, title string, t FieldType, get func(l *layers.LinkRecord) uint64) *Field {
		return u("infiniband.linkrecord."+name, title, t, isLink, func(_ layers.SAAttribute, rec []byte) uint64 {
			l := layers.DecodeLinkRecord(rec)
			return get(&l)
		})
	}
	// tshark registers the ServiceRecord's fields under linkrecord.
	isSvc := is(layers.SAAttrServiceRecord)
	svc := func(name, title string, t FieldType, get func(s *layers.ServiceRecord) uint64) *Field {
		return u("infiniband.linkrecord."+name, title, t, isSvc, func(_ layers.SAAttribute, rec []byte) uint64 {
			s := layers.DecodeServiceRecord(rec)
			return get(&s)
		})
	}
	svcB := func(name, title string, t FieldType, get func(s *layers.ServiceRecord) []byte) *Field {
		return b("infiniband.linkrecord."+name, title, t, isSvc, func(_ layers.SAAttribute, rec []byte) []byte {
			s := layers.DecodeServiceRecord(rec)
			return get(&s)
		})
	}
	// ServiceData shows as four 16-byte items: 8-, 16-, 32- and 64-bit words.
	serviceData := svcB("servicedata", "ServiceData", FTBytes, func(s *layers.ServiceRecord) []byte { return s.ServiceData[:16] })
	serviceData.nth = func(p *Packet, i int, v *Value) bool {
		a, rec, ok := saAttr(p)
		if !ok || a != layers.SAAttrServiceRecord || i >= 4 {
			return false
		}
		s := layers.DecodeServiceRecord(rec)
		v.B = s.ServiceData[16*i : 16*(i+1)]
		return true
	}

	isTrace := is(layers.SAAttrTraceRecord)
	trace := func(name, title string, t FieldType, get func(r *layers.TraceRecord) uint64) *Field {
		return u("infiniband.tracerecord."+name, title, t, isTrace, func(_ layers.SAAttribute, rec []byte) uint64 {
			r := layers.DecodeTraceRecord(rec)
			return get(&r)
		})
	}

	isMP := is(layers.SAAttrMultiPathRecord)
	mp := func(name, title string, t FieldType, get func(r *layers.MultiPathRecord) uint64) *Field {
		return u("infiniband.multipathrecord."+name, title, t, isMP, func(_ layers.SAAttribute, rec []byte) uint64 {
			r := layers.DecodeMultiPathRecord(rec)
			return get(&r)
		})
	}
	// The SGIDs then the DGIDs, one occurrence each.
	sdgid := b("infiniband.multipathrecord.sdgid", "SDGID", FTIPv6, isMP, func(_ layers.SAAttribute, rec []byte) []byte {
		r := layers.DecodeMultiPathRecord(rec)
		g, _ := r.GID(0)
		return g
	})
	sdgid.nth = func(p *Packet, i int, v *Value) bool {
		a, rec, ok := saAttr(p)
		if !ok || a != layers.SAAttrMultiPathRecord {
			return false
		}
		r := layers.DecodeMultiPathRecord(rec)
		g, ok := r.GID(i)
		v.B = g
		return ok
	}

	isSAR := is(layers.SAAttrServiceAssociationRecord)
	sarName := &Field{Name: "infiniband.serviceassociationrecord.servicename", Title: "ServiceName", Type: FTString, parent: saNode,
		get: func(p *Packet, v *Value) bool {
			a, rec, ok := saAttr(p)
			if !ok || !isSAR(a) {
				return false
			}
			// tshark's string ends at the first NUL of the 64 bytes.
			n := layers.DecodeServiceAssociationRecord(rec).ServiceName
			if i := bytes.IndexByte(n, 0); i >= 0 {
				n = n[:i]
			}
			v.S = string(n)
			return true
		}}

	return []*Field{
		rid("lid", "LID", FTUint16, withLID, func(r R) uint64 { return uint64(r.LID) }),
		rid("endportlid", "EndportLID", FTUint16, is(layers.SAAttrPortInfoRecord), func(r R) uint64 { return uint64(r.LID) }),
		rid("portnum", "PortNum", FTUint8, is(layers.SAAttrPortInfoRecord, layers.SAAttrPKeyTableRecord), func(r R) uint64 { return uint64(r.PortNum) }),
		rid("inputportnum", "InputPortNum", FTUint8, is(layers.SAAttrSLtoVLMappingTableRecord), func(r R) uint64 { return uint64(r.InputPortNum) }),
		rid("outputportnum", "OutputPortNum", FTUint8, is(layers.SAAttrSLtoVLMappingTableRecord, layers.SAAttrVLArbitrationTableRecord),
			func(r R) uint64 { return uint64(r.OutputPortNum) }),
		rid("blocknum_eightbit", "BlockNum_EightBit", FTUint8, is(layers.SAAttrVLArbitrationTableRecord, layers.SAAttrGUIDInfoRecord),
			func(r R) uint64 { return uint64(r.BlockNum) }),
		rid("blocknum_ninebit", "BlockNum_NineBit", FTUint16, is(layers.SAAttrMulticastFDBRecord), func(r R) uint64 { return uint64(r.BlockNum) }),
		rid("blocknum_sixteenbit", "BlockNum_SixteenBit", FTUint16, is(layers.SAAttrLinearFDBRecord, layers.SAAttrRandomFDBRecord, layers.SAAttrPKeyTableRecord),
			func(r R) uint64 { return uint64(r.BlockNum) }),
		rid("position", "Position", FTUint8, is(layers.SAAttrMulticastFDBRecord), func(r R) uint64 { return uint64(r.Position) }),

		b("infiniband.informinforecord.subscribergid", "SubscriberGID", FTIPv6, isIIR, func(_ layers.SAAttribute, rec []byte) []byte {
			return layers.DecodeInformInfoRecord(rec).SubscriberGID
		}),
		u("infiniband.informinforecord.enum", "Enum", FTUint16, isIIR, func(_ layers.SAAttribute, rec []byte) uint64 {
			return uint64(layers.DecodeInformInfoRecord(rec).Enum)
		}),
		b("infiniband.informinfo.gid", "GID", FTIPv6, isII, func(a layers.SAAttribute, rec []byte) []byte { return informInfo(a, rec).GID }),
		ii("lidrangebegin", "LIDRangeBegin", FTUint16, func(i *layers.InformInfo) uint64 { return uint64(i.LIDRangeBegin) }),
		ii("lidrangeend", "LIDRangeEnd", FTUint16, func(i *layers.InformInfo) uint64 { return uint64(i.LIDRangeEnd) }),
		ii("isgeneric", "IsGeneric", FTUint8, func(i *layers.InformInfo) uint64 { return uint64(i.IsGeneric) }),
		ii("subscribe", "Subscribe", FTUint8, func(i *layers.InformInfo) uint64 { return uint64(i.Subscribe) }),
		ii("type", "Type", FTUint16, func(i *layers.InformInfo) uint64 { return uint64(i.Type) }),
		ii("trapnumberdeviceid", "TrapNumberDeviceID", FTUint16, func(i *layers.InformInfo) uint64 { return uint64(i.TrapNumberDeviceID) }),
		ii("qpn", "QPN", FTUint24, func(i *layers.InformInfo) uint64 { return uint64(i.QPN) }),
		ii("resptimevalue", "RespTimeValue", FTUint8, func(i *layers.InformInfo) uint64 { return uint64(i.RespTimeValue) }),
		ii("producertypevendorid", "ProducerTypeVendorID", FTUint24, func(i *layers.InformInfo) uint64 { return uint64(i.ProducerTypeVendorID) }),

		link("fromlid", "FromLID", FTUint16, func(l *layers.LinkRecord) uint64 { return uint64(l.FromLID) }),
		link("fromport", "FromPort", FTUint8, func(l *layers.LinkRecord) uint64 { return uint64(l.FromPort) }),
		link("toport", "ToPort", FTUint8, func(l *layers.LinkRecord) uint64 { return uint64(l.ToPort) }),
		link("tolid", "ToLID", FTUint16, func(l *layers.LinkRecord) uint64 { return uint64(l.ToLID) }),

		svc("serviceid", "ServiceID", FTUint64, func(s *layers.ServiceRecord) uint64 { return uint64(s.ServiceID) }),
		svcB("servicegid", "ServiceGID", FTIPv6, func(s *layers.ServiceRecord) []byte { return s.ServiceGID }),
		svc("servicep_key", "ServiceP_Key", FTUint16, func(s *layers.ServiceRecord) uint64 { return uint64(s.ServicePKey) }),
		svc("servicelease", "ServiceLease", FTUint32, func(s *layers.ServiceRecord) uint64 { return uint64(s.ServiceLease) }),
		svcB("servicekey", "ServiceKey", FTBytes, func(s *layers.ServiceRecord) []byte { return s.ServiceKey }),
		svcB("servicename", "ServiceName", FTBytes, func(s *layers.ServiceRecord) []byte { return s.ServiceName }),
		serviceData,

		trace("gidprefix", "GidPrefix", FTUint64, func(r *layers.TraceRecord) uint64 { return r.GIDPrefix }),
		trace("idgeneration", "IDGeneration", FTUint16, func(r *layers.TraceRecord) uint64 { return uint64(r.IDGeneration) }),
		trace("nodetype", "NodeType", FTUint8, func(r *layers.TraceRecord) uint64 { return uint64(r.NodeType) }),
		trace("nodeid", "NodeID", FTUint64, func(r *layers.TraceRecord) uint64 { return r.NodeID }),
		trace("chassisid", "ChassisID", FTUint64, func(r *layers.TraceRecord) uint64 { return r.ChassisID }),
		trace("entryportid", "EntryPortID", FTUint64, func(r *layers.TraceRecord) uint64 { return r.EntryPortID }),
		trace("exitportid", "ExitPortID", FTUint64, func(r *layers.TraceRecord) uint64 { return r.ExitPortID }),
		trace("entryport", "EntryPort", FTUint8, func(r *layers.TraceRecord) uint64 { return uint64(r.EntryPort) }),
		trace("exitport", "ExitPort", FTUint8, func(r *layers.TraceRecord) uint64 { return uint64(r.ExitPort) }),

		mp("rawtraffic", "RawTraffic", FTUint8, func(r *layers.MultiPathRecord) uint64 { return b2u(r.RawTraffic) }),
		mp("flowlabel", "FlowLabel", FTUint24, func(r *layers.MultiPathRecord) uint64 { return uint64(r.FlowLabel) }),
		mp("hoplimit", "HopLimit", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.HopLimit) }),
		mp("tclass", "TClass", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.TClass) }),
		mp("reversible", "Reversible", FTUint8, func(r *layers.MultiPathRecord) uint64 { return b2u(r.Reversible) }),
		mp("numbpath", "NumbPath", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.NumbPath) }),
		mp("p_key", "P_Key", FTUint16, func(r *layers.MultiPathRecord) uint64 { return uint64(r.PKey) }),
		mp("sl", "SL", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.SL) }),
		mp("mtuselector", "MTUSelector", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.MTUSelector) }),
		mp("mtu", "MTU", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.MTU) }),
		mp("rateselector", "RateSelector", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.RateSelector) }),
		mp("rate", "Rate", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.Rate) }),
		mp("packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.PacketLifeTimeSelector) }),
		mp("packetlifetime", "PacketLifeTime", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.PacketLifeTime) }),
		mp("independenceselector", "IndependenceSelector", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.IndependenceSelector) }),
		mp("gidscope", "GIDScope", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.GIDScope) }),
		mp("sgidcount", "SGIDCount", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.SGIDCount) }),
		mp("dgidcount", "DGIDCount", FTUint8, func(r *layers.MultiPathRecord) uint64 { return uint64(r.DGIDCount) }),
		sdgid,

		b("infiniband.serviceassociationrecord.servicekey", "ServiceKey", FTBytes, isSAR, func(_ layers.SAAttribute, rec []byte) []byte {
			return layers.DecodeServiceAssociationRecord(rec).ServiceKey
		}),
		sarName,
	}
}
