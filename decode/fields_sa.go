package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// saNode is the item tshark 4.0 titles "SA Packet (Subnet Administration)"
// but registers as infiniband.sa.drdlid. It occurs two or three times in an
// SA MAD: the whole MAD, the "Attribute (X)" item over the 200 data bytes,
// and, for the records tshark heads with their name (PathRecord,
// MCMemberRecord, ServiceRecord, InformInfo ...), the record's item, after
// its RID (saRecordItem).
const saNode = "infiniband.sa.drdlid"

func isSA(p *Packet) bool {
	return p.has&hasMAD != 0 && p.Headers.MAD.MgmtClass == layers.MgmtClassSubnAdm && p.Headers.MAD.SA.Contents != nil
}

// saFields are the SA header fields, the PathRecord's and the
// MCMemberRecord's, in tshark's tree order.
func saFields() []*Field {
	S := func(p *Packet) *layers.SA { return &p.Headers.MAD.SA }
	isPR := func(p *Packet) bool {
		return isSA(p) && S(p).AttributeID == layers.SAAttrPathRecord && len(S(p).Data) >= layers.PathRecordLength
	}
	node := nodeField(saNode, "SA Packet (Subnet Administration)", func(p *Packet) ([]byte, bool) {
		if !isSA(p) {
			return nil, false
		}
		return madBytes(p)
	})
	isMC := func(p *Packet) bool {
		return isSA(p) && S(p).AttributeID == layers.SAAttrMCMemberRecord && len(S(p).Data) >= layers.MCMemberRecordLength
	}
	// tshark adds the item for the whole MAD, then the "Attribute (X)" item
	// over the 200 data bytes, then, for the records its dissector heads
	// with their name, that record's item (saRecordItem).
	node.nth = func(p *Packet, i int, v *Value) bool {
		if !isSA(p) {
			return false
		}
		switch i {
		case 1:
			v.B = S(p).Data
		case 2:
			r, ok := saRecordItem[S(p).AttributeID]
			if !ok || len(S(p).Data) < layers.SADataLength {
				return false
			}
			v.B = saDataBytes(p, r.offset, r.length)
		default:
			return false
		}
		return true
	}
	// The header's fields sit under the node by parent, as their names do
	// not say so: the tree nests them, and a packet without SA skips them
	// all at once.
	sa := func(name, title string, t FieldType, get func(s *layers.SA) uint64) *Field {
		f := uintField(name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !isSA(p) {
				return 0, false
			}
			return get(S(p)), true
		})
		f.parent = saNode
		return f
	}
	mc := func(name, title string, t FieldType, get func(r *layers.MCMemberRecord) uint64) *Field {
		f := uintField("infiniband.mcmemberrecord."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !isMC(p) {
				return 0, false
			}
			r := layers.DecodeMCMemberRecord(S(p).Data)
			return get(&r), true
		})
		f.parent = saNode
		return f
	}
	mgid := func(name, title string, get func(r *layers.MCMemberRecord) []byte) *Field {
		f := bytesField("infiniband.mcmemberrecord."+name, title, FTIPv6, func(p *Packet) ([]byte, bool) {
			if !isMC(p) {
				return nil, false
			}
			r := layers.DecodeMCMemberRecord(S(p).Data)
			return get(&r), true
		})
		f.parent = saNode
		return f
	}
	// tshark 4.0 registers the field but never adds it: its attribute
	// dissector claims every attribute, known or not.
	adminData := bytesField("infiniband.sa.subnetadmindata", "Subnet Admin Data", FTBytes, func(p *Packet) ([]byte, bool) {
		return nil, false
	})
	adminData.parent = saNode
	pr := func(name, title string, t FieldType, get func(r *layers.PathRecord) uint64) *Field {
		f := uintField("infiniband.pathrecord."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !isPR(p) {
				return 0, false
			}
			r := layers.DecodePathRecord(S(p).Data)
			return get(&r), true
		})
		f.parent = saNode
		return f
	}
	gid := func(name, title string, get func(r *layers.PathRecord) []byte) *Field {
		f := bytesField("infiniband.pathrecord."+name, title, FTIPv6, func(p *Packet) ([]byte, bool) {
			if !isPR(p) {
				return nil, false
			}
			r := layers.DecodePathRecord(S(p).Data)
			return get(&r), true
		})
		f.parent = saNode
		return f
	}
	R := func(p *Packet) *layers.RMPPHeader { return &S(p).RMPP }
	rmppOf := func(types ...layers.RMPPType) func(p *Packet) bool {
		return func(p *Packet) bool {
			if !isSA(p) {
				return false
			}
			for _, t := range types {
				if R(p).Type == t {
					return true
				}
			}
			return false
		}
	}
	always := func(p *Packet) bool { return isSA(p) }
	// tshark names Data1 and Data2 after what they hold in a DATA
	// segment (segment number, payload length) and an ACK (segment
	// number, new window last); the other types keep the plain names.
	data, ack, plain := rmppOf(layers.RMPPTypeData), rmppOf(layers.RMPPTypeAck),
		rmppDataPlain
	dataOrAck := rmppOf(layers.RMPPTypeData, layers.RMPPTypeAck)
	rmpp := func(name, title string, t FieldType, has func(p *Packet) bool, get func(r *layers.RMPPHeader) uint64) *Field {
		return uintField("infiniband.rmpp."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !has(p) {
				return 0, false
			}
			return get(R(p)), true
		})
	}
	return []*Field{
		// The RMPP header opens the SA body; tshark titles its version
		// "RMPP Type" too, and splits the third byte into nibbles where
		// the IBTA has RRespTime (5 bits) and RMPPFlags (3).
		nodeField("infiniband.rmpp", "RMPP (Reliable Multi-Packet Transaction Protocol)", func(p *Packet) ([]byte, bool) {
			if !isSA(p) || len(S(p).Contents) < 12 {
				return nil, false
			}
			return S(p).Contents[:12], true
		}),
		rmpp("rmppversion", "RMPP Type", FTUint8, always, func(r *layers.RMPPHeader) uint64 { return uint64(r.Version) }),
		rmpp("rmpptype", "RMPP Type", FTUint8, always, func(r *layers.RMPPHeader) uint64 { return uint64(r.Type) }),
		rmpp("rresptime", "R Resp Time", FTUint8, always, func(r *layers.RMPPHeader) uint64 { return uint64(r.RRespTime >> 1) }),
		rmpp("rmppflags", "RMPP Flags", FTUint8, always, func(r *layers.RMPPHeader) uint64 { return uint64(r.RRespTime&1)<<3 | uint64(r.Flags) }),
		rmpp("rmppstatus", "RMPP Status", FTUint8, always, func(r *layers.RMPPHeader) uint64 { return uint64(r.Status) }),
		rmpp("data1", "RMPP Data 1", FTUint32, plain, func(r *layers.RMPPHeader) uint64 { return uint64(r.Data1) }),
		rmpp("data2", "RMPP Data 2", FTUint32, plain, func(r *layers.RMPPHeader) uint64 { return uint64(r.Data2) }),
		rmpp("segmentnumber", "Segment Number", FTUint32, dataOrAck, func(r *layers.RMPPHeader) uint64 { return uint64(r.SegmentNumber()) }),
		rmpp("payloadlength", "Payload Length", FTUint32, data, func(r *layers.RMPPHeader) uint64 { return uint64(r.PayloadLength()) }),
		// A DATA segment's bytes after the RMPP header: the SA header and data.
		bytesField("infiniband.rmpp.transferreddata", "Transferred Data", FTBytes, func(p *Packet) ([]byte, bool) {
			if !data(p) || len(S(p).Contents) <= 12 {
				return nil, false
			}
			return S(p).Contents[12:], true
		}),
		rmpp("newwindowlast", "New Window Last", FTUint32, ack, func(r *layers.RMPPHeader) uint64 { return uint64(r.NewWindowLast()) }),
		bytesField("infiniband.rmpp.extendederrordata", "Optional Extended Error Data", FTBytes, stopAbortErrorData),
		node,
		sa("infiniband.sa.smkey", "SM_Key (Verification Key)", FTUint64, func(s *layers.SA) uint64 { return s.SMKey }),
		sa("infiniband.sa.attributeoffset", "Attribute Offset", FTUint16, func(s *layers.SA) uint64 { return uint64(s.AttributeOffset) }),
		sa("infiniband.sa.componentmask", "Component Mask", FTUint64, func(s *layers.SA) uint64 { return s.ComponentMask }),
		adminData,
		gid("dgid", "DGID", func(r *layers.PathRecord) []byte { return r.DGID }),
		gid("sgid", "SGID", func(r *layers.PathRecord) []byte { return r.SGID }),
		pr("dlid", "DLID", FTUint16, func(r *layers.PathRecord) uint64 { return uint64(r.DLID) }),
		pr("slid", "SLID", FTUint16, func(r *layers.PathRecord) uint64 { return uint64(r.SLID) }),
		pr("rawtraffic", "RawTraffic", FTUint8, func(r *layers.PathRecord) uint64 { return b2u(r.RawTraffic) }),
		pr("flowlabel", "FlowLabel", FTUint24, func(r *layers.PathRecord) uint64 { return uint64(r.FlowLabel) }),
		pr("hoplimit", "HopLimit", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.HopLimit) }),
		pr("tclass", "TClass", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.TClass) }),
		pr("reversible", "Reversible", FTUint8, func(r *layers.PathRecord) uint64 { return b2u(r.Reversible) }),
		pr("numbpath", "NumbPath", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.NumbPath) }),
		pr("p_key", "P_Key", FTUint16, func(r *layers.PathRecord) uint64 { return uint64(r.PKey) }),
		pr("sl", "SL", FTUint16, func(r *layers.PathRecord) uint64 { return uint64(r.SL) }),
		pr("mtuselector", "MTUSelector", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.MTUSelector) }),
		pr("mtu", "MTU", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.MTU) }),
		pr("rateselector", "RateSelector", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.RateSelector) }),
		pr("rate", "Rate", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.Rate) }),
		pr("packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.PacketLifeTimeSelector) }),
		pr("packetlifetime", "PacketLifeTime", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.PacketLifeTime) }),
		pr("preference", "Preference", FTUint8, func(r *layers.PathRecord) uint64 { return uint64(r.Preference) }),

		mgid("mgid", "MGID", func(r *layers.MCMemberRecord) []byte { return r.MGID }),
		mgid("portgid", "PortGID", func(r *layers.MCMemberRecord) []byte { return r.PortGID }),
		mc("q_key", "Q_Key", FTUint32, func(r *layers.MCMemberRecord) uint64 { return uint64(r.QKey) }),
		mc("mlid", "MLID", FTUint16, func(r *layers.MCMemberRecord) uint64 { return uint64(r.MLID) }),
		mc("mtuselector", "MTUSelector", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.MTUSelector) }),
		mc("mtu", "MTU", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.MTU) }),
		mc("tclass", "TClass", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.TClass) }),
		mc("p_key", "P_Key", FTUint16, func(r *layers.MCMemberRecord) uint64 { return uint64(r.PKey) }),
		mc("rateselector", "RateSelector", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.RateSelector) }),
		mc("rate", "Rate", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.Rate) }),
		mc("packetlifetimeselector", "PacketLifeTimeSelector", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.PacketLifeTimeSelector) }),
		mc("packetlifetime", "PacketLifeTime", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.PacketLifeTime) }),
		mc("sl", "SL", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.SL) }),
		mc("flowlabel", "FlowLabel", FTUint24, func(r *layers.MCMemberRecord) uint64 { return uint64(r.FlowLabel) }),
		mc("hoplimit", "HopLimit", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.HopLimit) }),
		mc("scope", "Scope", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.Scope) }),
		mc("joinstate", "JoinState", FTUint8, func(r *layers.MCMemberRecord) uint64 { return uint64(r.JoinState) }),
		mc("proxyjoin", "ProxyJoin", FTUint8, func(r *layers.MCMemberRecord) uint64 { return b2u(r.ProxyJoin) }),
	}
}
