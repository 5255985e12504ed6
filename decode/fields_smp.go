package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// Wireshark's subnet management fields: the LID-routed and directed-route
// SMP headers (infiniband.smplid.*, infiniband.smpdirected.*) and the
// attribute bodies it dissects (SMInfo, NodeInfo, PortInfo), with tshark
// 4.0's names, types, masks and bases. Values come from what layers already
// decoded; a field costs nothing until it is asked for.

const (
	smpLIDNode      = "infiniband.smplid"
	smpDirectedNode = "infiniband.smpdirected"
)

func isSMPLID(p *Packet) bool {
	return p.has&hasMAD != 0 && p.Headers.MAD.MgmtClass == layers.MgmtClassSubnLID && p.Headers.MAD.SMP.Contents != nil
}

func isSMPDirected(p *Packet) bool {
	return p.has&hasMAD != 0 && p.Headers.MAD.MgmtClass == layers.MgmtClassSubnDirected && p.Headers.MAD.SMPDirected.Contents != nil
}

// smpAttr returns the SMP's attribute and its 64 data bytes, whichever
// routing the SMP uses.
func smpAttr(p *Packet) (layers.SMPAttribute, layers.SMPData, bool) {
	switch {
	case isSMPLID(p):
		s := &p.Headers.MAD.SMP
		return s.AttributeID, s.Data, len(s.Data) == 64
	case isSMPDirected(p):
		s := &p.Headers.MAD.SMPDirected
		return s.AttributeID, s.Data, len(s.Data) == 64
	}
	return 0, nil, false
}

// smpHeaderFields are the two SMP headers up to their data, in tshark's
// tree order: they come before the data item (infiniband.smplid.smpdata,
// which CM shares) in the registry.
func smpHeaderFields() []*Field {
	D := func(p *Packet) *layers.SMPDirected { return &p.Headers.MAD.SMPDirected }
	dr := func(name, title string, t FieldType, get func(p *Packet) uint64) *Field {
		return uintField(name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			if !isSMPDirected(p) {
				return 0, false
			}
			return get(p), true
		})
	}
	mkey := uintField("infiniband.smplid.mkey", "M_Key", FTUint64, BaseHex, func(p *Packet) (uint64, bool) {
		switch {
		case isSMPLID(p):
			return p.Headers.MAD.SMP.MKey, true
		case isSMPDirected(p):
			return D(p).MKey, true
		}
		return 0, false
	})
	// Both headers show their M_Key with this one field; in the tree it
	// sits under whichever header the packet has.
	mkey.outside, mkey.parent = true, smpDirectedNode
	return []*Field{
		nodeField(smpLIDNode, "Subnet Management Packet (LID Routed)", func(p *Packet) ([]byte, bool) {
			if !isSMPLID(p) {
				return nil, false
			}
			return madBytes(p)
		}),
		nodeField(smpDirectedNode, "Subnet Management Packet (Directed Route)", func(p *Packet) ([]byte, bool) {
			if !isSMPDirected(p) {
				return nil, false
			}
			return madBytes(p)
		}),
		// Wireshark reads the D bit as one byte under the mask 0x8000, so
		// it is always 0; the bit itself shows in Status.
		dr("infiniband.smpdirected.d", "D (Direction Bit)", FTUint64, func(p *Packet) uint64 { return 0 }),
		dr("infiniband.smpdirected.smpstatus", "Status", FTUint16, func(p *Packet) uint64 { return uint64(p.Headers.MAD.Status) }),
		dr("infiniband.smpdirected.hoppointer", "Hop Pointer", FTUint8, func(p *Packet) uint64 { return uint64(D(p).HopPointer()) }),
		dr("infiniband.smpdirected.hopcount", "Hop Count", FTUint8, func(p *Packet) uint64 { return uint64(D(p).HopCount()) }),
		mkey,
		dr("infiniband.smpdirected.drslid", "DrSLID", FTUint16, func(p *Packet) uint64 { return uint64(D(p).DrSLID) }),
		dr("infiniband.smpdirected.drdlid", "DrDLID", FTUint16, func(p *Packet) uint64 { return uint64(D(p).DrDLID) }),
	}
}

// smpDataOccurrences makes the data item CM registered
// (infiniband.smplid.smpdata) give every occurrence tshark 4.0 shows:
//
//   - an SMP: its 64 data bytes as the "Attribute (X)" item, then again as
//     the attribute's own subtree for the attributes smpAttrDissected
//     names, or, for a Notice, its 64 bytes and its DataDetails;
//   - an SA Notice (a SubnAdmReport): the Notice and its DataDetails;
//   - an SA record that wraps an SMP attribute with a subtree of its own:
//     its 64 bytes, once (saSMPDataItem);
//   - a CM message: the node CM registered, once.
func smpDataOccurrences(fs []*Field) {
	for _, f := range fs {
		if f.Name != cmNode {
			continue
		}
		cm := f.get
		f.outside, f.parent = true, smpDirectedNode
		f.get = func(p *Packet, v *Value) bool { return smpDataItem(p, 0, v, cm) }
		f.second = nil
		f.nth = func(p *Packet, i int, v *Value) bool { return smpDataItem(p, i, v, cm) }
	}
}

// smpDataItem gives occurrence i of infiniband.smplid.smpdata
// (smpDataOccurrences); cm is CM's own getter for the item.
func smpDataItem(p *Packet, i int, v *Value, cm getter) bool {
	var items [3][]byte
	n := 0
	if notice, details, ok := noticeAndDetails(p); ok {
		if !isSA(p) {
			_, d, _ := smpAttr(p)
			items[n], n = d, n+1
		}
		items[n], items[n+1], n = notice, details, n+2
	} else if a, d, ok := smpAttr(p); ok {
		items[n], n = d, n+1
		if smpAttrDissected(a) {
			items[n], n = d, n+1
		}
	} else if d, ok := saSMPDataItem(p); ok {
		items[n], n = d, n+1
	} else {
		return i == 0 && cm(p, v)
	}
	if i >= n {
		return false
	}
	v.B = items[i]
	return true
}

// smpAttrDissected reports the attributes whose tshark 4.0 dissector adds
// the data item a second time, as its own subtree (NodeDescription,
// NodeInfo, SwitchInfo, GUIDInfo, PortInfo and P_KeyTable do not), as
// tshark shows on the corpus's mgmt_smp_sa_perf.pcap.
func smpAttrDissected(a layers.SMPAttribute) bool {
	switch a {
	case layers.SMPAttrSMInfo, layers.SMPAttrSLtoVLMappingTable, layers.SMPAttrVLArbitrationTable,
		layers.SMPAttrLinearFDB, layers.SMPAttrRandomFDB, layers.SMPAttrMulticastFDB,
		layers.SMPAttrLinkSpeedWidthPairsTable, layers.SMPAttrVendorDiag, layers.SMPAttrLedInfo:
		return true
	}
	return false
}

// smpBodyFields are the attribute fields, under the data item, then the
// directed-route paths that follow it.
func smpBodyFields() []*Field {
	attr := func(a layers.SMPAttribute) smpAttrGetter {
		return func(p *Packet) (layers.SMPData, bool) { return smpAttrData(p, a) }
	}
	smInfo, nodeInfo, portInfo := attr(layers.SMPAttrSMInfo), attr(layers.SMPAttrNodeInfo), attr(layers.SMPAttrPortInfo)
	u := func(has smpAttrGetter, name, title string, t FieldType, get func(d layers.SMPData) uint64) *Field {
		f := uintField(name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			d, ok := has(p)
			if !ok {
				return 0, false
			}
			return get(d), true
		})
		f.parent = cmNode
		return f
	}
	si := func(name, title string, t FieldType, get func(s layers.SMInfo) uint64) *Field {
		return u(smInfo, "infiniband.sminfo."+name, title, t, func(d layers.SMPData) uint64 { return get(d.SMInfo()) })
	}
	ni := func(name, title string, t FieldType, get func(n layers.NodeInfo) uint64) *Field {
		return u(nodeInfo, "infiniband.nodeinfo."+name, title, t, func(d layers.SMPData) uint64 { return get(d.NodeInfo()) })
	}
	pi := func(name, title string, t FieldType, get func(n layers.PortInfo) uint64) *Field {
		return u(portInfo, "infiniband.portinfo."+name, title, t, func(d layers.SMPData) uint64 { return get(d.PortInfo()) })
	}
	fs := []*Field{
		si("guid", "GUID", FTUint64, func(s layers.SMInfo) uint64 { return s.GUID }),
		si("sm_key", "SM_Key", FTUint64, func(s layers.SMInfo) uint64 { return s.SMKey }),
		si("actcount", "ActCount", FTUint32, func(s layers.SMInfo) uint64 { return uint64(s.ActCount) }),
		si("priority", "Priority", FTUint8, func(s layers.SMInfo) uint64 { return uint64(s.Priority) }),
		si("smstate", "SMState", FTUint8, func(s layers.SMInfo) uint64 { return uint64(s.SMState) }),

		ni("baseversion", "BaseVersion", FTUint8, func(n layers.NodeInfo) uint64 { return uint64(n.BaseVersion) }),
		ni("classversion", "ClassVersion", FTUint8, func(n layers.NodeInfo) uint64 { return uint64(n.ClassVersion) }),
		ni("nodetype", "NodeType", FTUint8, func(n layers.NodeInfo) uint64 { return uint64(n.NodeType) }),
		ni("numports", "NumPorts", FTUint8, func(n layers.NodeInfo) uint64 { return uint64(n.NumPorts) }),
		ni("systemimageguid", "SystemImageGUID", FTUint64, func(n layers.NodeInfo) uint64 { return n.SystemImageGUID }),
		ni("nodeguid", "NodeGUID", FTUint64, func(n layers.NodeInfo) uint64 { return n.NodeGUID }),
		ni("portguid", "PortGUID", FTUint64, func(n layers.NodeInfo) uint64 { return n.PortGUID }),
		ni("partitioncap", "PartitionCap", FTUint16, func(n layers.NodeInfo) uint64 { return uint64(n.PartitionCap) }),
		ni("deviceid", "DeviceID", FTUint16, func(n layers.NodeInfo) uint64 { return uint64(n.DeviceID) }),
		ni("revision", "Revision", FTUint32, func(n layers.NodeInfo) uint64 { return uint64(n.Revision) }),
		ni("localportnum", "LocalPortNum", FTUint8, func(n layers.NodeInfo) uint64 { return uint64(n.LocalPortNum) }),
		ni("vendorid", "VendorID", FTUint24, func(n layers.NodeInfo) uint64 { return uint64(n.VendorID) }),

		pi("m_key", "M_Key", FTUint64, func(n layers.PortInfo) uint64 { return n.MKey }),
		pi("guid", "GidPrefix", FTUint64, func(n layers.PortInfo) uint64 { return n.GIDPrefix }),
		pi("lid", "LID", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.LID) }),
		pi("mastersmlid", "MasterSMLID", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.MasterSMLID) }),
		pi("capabilitymask", "CapabilityMask", FTUint32, func(n layers.PortInfo) uint64 { return uint64(n.CapabilityMask) }),
	}
	for _, c := range layers.PortInfoCapabilities {
		bit := c.Bit
		fs = append(fs, pi("capabilitymask."+c.Name, c.Title, FTUint32, func(n layers.PortInfo) uint64 { return uint64(n.CapabilityMask>>bit) & 1 }))
	}
	pe := func(n layers.PortInfo, bit uint) uint64 { return uint64(n.PartitionEnforcement>>bit) & 1 }
	fs = append(fs,
		pi("diagcode", "DiagCode", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.DiagCode) }),
		pi("m_keyleaseperiod", "M_KeyLeasePeriod", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.MKeyLeasePeriod) }),
		pi("localportnum", "LocalPortNum", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LocalPortNum) }),
		pi("linkwidthenabled", "LinkWidthEnabled", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkWidthEnabled) }),
		pi("linkwidthsupported", "LinkWidthSupported", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkWidthSupported) }),
		pi("linkwidthactive", "LinkWidthActive", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkWidthActive) }),
		pi("linkspeedsupported", "LinkSpeedSupported", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkSpeedSupported) }),
		pi("portstate", "PortState", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.PortState) }),
		pi("portphysicalstate", "PortPhysicalState", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.PortPhysicalState) }),
		pi("linkdowndefaultstate", "LinkDownDefaultState", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkDownDefaultState) }),
		pi("m_keyprotectbits", "M_KeyProtectBits", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.MKeyProtectBits) }),
		pi("lmc", "LMC", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LMC) }),
		pi("linkspeedactive", "LinkSpeedActive", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkSpeedActive) }),
		pi("linkspeedenabled", "LinkSpeedEnabled", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LinkSpeedEnabled) }),
		pi("neighbormtu", "NeighborMTU", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.NeighborMTU) }),
		pi("mastersmsl", "MasterSMSL", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.MasterSMSL) }),
		pi("vlcap", "VLCap", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.VLCap) }),
		pi("inittype", "InitType", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.InitType) }),
		pi("vlhighlimit", "VLHighLimit", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.VLHighLimit) }),
		pi("vlarbitrationhighcap", "VLArbitrationHighCap", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.VLArbitrationHighCap) }),
		pi("vlarbitrationlowcap", "VLArbitrationLowCap", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.VLArbitrationLowCap) }),
		pi("inittypereply", "InitTypeReply", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.InitTypeReply) }),
		pi("mtucap", "MTUCap", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.MTUCap) }),
		pi("vlstallcount", "VLStallCount", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.VLStallCount) }),
		pi("hoqlife", "HOQLife", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.HOQLife) }),
		pi("operationalvls", "OperationalVLs", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.OperationalVLs) }),
		pi("partitionenforcementinbound", "PartitionEnforcementInbound", FTUint8, func(n layers.PortInfo) uint64 { return pe(n, 3) }),
		pi("partitionenforcementoutbound", "PartitionEnforcementOutbound", FTUint8, func(n layers.PortInfo) uint64 { return pe(n, 2) }),
		pi("filterrawinbound", "FilterRawInbound", FTUint8, func(n layers.PortInfo) uint64 { return pe(n, 1) }),
		pi("filterrawoutbound", "FilterRawOutbound", FTUint8, func(n layers.PortInfo) uint64 { return pe(n, 0) }),
		pi("m_keyviolations", "M_KeyViolations", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.MKeyViolations) }),
		pi("p_keyviolations", "P_KeyViolations", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.PKeyViolations) }),
		pi("q_keyviolations", "Q_KeyViolations", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.QKeyViolations) }),
		pi("guidcap", "GUIDCap", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.GUIDCap) }),
		pi("clientreregister", "ClientReregister", FTUint8, func(n layers.PortInfo) uint64 { return b2u(n.ClientReregister) }),
		pi("subnettimeout", "SubnetTimeOut", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.SubnetTimeOut) }),
		pi("resptimevalue", "RespTimeValue", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.RespTimeValue) }),
		pi("localphyerrors", "LocalPhyErrors", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.LocalPhyErrors) }),
		pi("overrunerrors", "OverrunErrors", FTUint8, func(n layers.PortInfo) uint64 { return uint64(n.OverrunErrors) }),
		pi("maxcredithint", "MaxCreditHint", FTUint16, func(n layers.PortInfo) uint64 { return uint64(n.MaxCreditHint) }),
		pi("linkroundtriplatency", "LinkRoundTripLatency", FTUint24, func(n layers.PortInfo) uint64 { return uint64(n.LinkRoundTripLatency) }),
	)
	fs = append(fs, smpTableFields(attr, u)...)
	D := func(p *Packet) *layers.SMPDirected { return &p.Headers.MAD.SMPDirected }
	path := func(name, title string, get func(p *Packet) []byte) *Field {
		return bytesField(name, title, FTBytes, func(p *Packet) ([]byte, bool) {
			if !isSMPDirected(p) {
				return nil, false
			}
			return get(p), true
		})
	}
	return append(fs,
		path("infiniband.smpdirected.initialpath", "Initial Path", func(p *Packet) []byte { return D(p).InitialPath }),
		path("infiniband.smpdirected.returnpath", "Return Path", func(p *Packet) []byte { return D(p).ReturnPath }),
	)
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

type smpAttrGetter = func(p *Packet) (layers.SMPData, bool)

// smpTableFields are the fields of SwitchInfo, NodeDescription, LedInfo,
// VendorDiag, LinkSpeedWidthPairsTable and the table attributes, whose
// fields tshark shows once per entry (every occurrence, in entry order).
func smpTableFields(attr func(layers.SMPAttribute) smpAttrGetter,
	u func(has smpAttrGetter, name, title string, t FieldType, get func(d layers.SMPData) uint64) *Field) []*Field {
	// rep is a field with n occurrences, entry i giving occurrence i.
	rep := func(a layers.SMPAttribute, n int, name, title string, t FieldType, get func(d layers.SMPData, i int) uint64) *Field {
		has := attr(a)
		f := u(has, name, title, t, func(d layers.SMPData) uint64 { return get(d, 0) })
		f.nth = func(p *Packet, i int, v *Value) bool {
			d, ok := has(p)
			if !ok || i >= n {
				return false
			}
			v.U = get(d, i)
			return true
		}
		return f
	}
	b := func(a layers.SMPAttribute, name, title string, get func(d layers.SMPData) []byte) *Field {
		has := attr(a)
		f := bytesField(name, title, FTBytes, func(p *Packet) ([]byte, bool) {
			d, ok := has(p)
			if !ok {
				return nil, false
			}
			return get(d), true
		})
		f.parent = cmNode
		return f
	}
	sw := func(name, title string, t FieldType, get func(s layers.SwitchInfo) uint64) *Field {
		return u(attr(layers.SMPAttrSwitchInfo), "infiniband.switchinfo."+name, title, t, func(d layers.SMPData) uint64 { return get(d.SwitchInfo()) })
	}
	type SW = layers.SwitchInfo
	nodeDesc := attr(layers.SMPAttrNodeDescription)
	nodeString := &Field{Name: "infiniband.nodedescription.nodestring", Title: "NodeString", Type: FTString, parent: cmNode,
		get: func(p *Packet, v *Value) bool {
			d, ok := nodeDesc(p)
			if ok {
				v.S = d.NodeDescription()
			}
			return ok
		}}
	lswp := func(name, title string) *Field {
		return u(attr(layers.SMPAttrLinkSpeedWidthPairsTable), "infiniband.linkspeedwidthpairstable."+name, title, FTUint8,
			func(d layers.SMPData) uint64 { return uint64(d.LinkSpeedWidthPairs().SpeedFlags >> 7) })
	}
	return []*Field{
		nodeString,
		sw("linearfdbcap", "LinearFDBCap", FTUint16, func(s SW) uint64 { return uint64(s.LinearFDBCap) }),
		sw("randomfdbcap", "RandomFDBCap", FTUint16, func(s SW) uint64 { return uint64(s.RandomFDBCap) }),
		sw("multicastfdbcap", "MulticastFDBCap", FTUint16, func(s SW) uint64 { return uint64(s.MulticastFDBCap) }),
		sw("linearfdbtop", "LinearFDBTop", FTUint16, func(s SW) uint64 { return uint64(s.LinearFDBTop) }),
		sw("defaultport", "DefaultPort", FTUint8, func(s SW) uint64 { return uint64(s.DefaultPort) }),
		sw("defaultmulticastprimaryport", "DefaultMulticastPrimaryPort", FTUint8, func(s SW) uint64 { return uint64(s.DefaultMulticastPrimaryPort) }),
		sw("defaultmulticastnotprimaryport", "DefaultMulticastNotPrimaryPort", FTUint8, func(s SW) uint64 { return uint64(s.DefaultMulticastNotPrimaryPort) }),
		sw("lifetimevalue", "LifeTimeValue", FTUint8, func(s SW) uint64 { return uint64(s.LifeTimeValue) }),
		sw("portstatechange", "PortStateChange", FTUint8, func(s SW) uint64 { return b2u(s.PortStateChange) }),
		sw("optimizedsltovlmappingprogramming", "OptimizedSLtoVLMappingProgramming", FTUint8, func(s SW) uint64 { return uint64(s.OptimizedSLtoVLMappingProgramming) }),
		sw("lidsperport", "LIDsPerPort", FTUint16, func(s SW) uint64 { return uint64(s.LIDsPerPort) }),
		sw("partitionenforcementcap", "PartitionEnforcementCap", FTUint16, func(s SW) uint64 { return uint64(s.PartitionEnforcementCap) }),
		sw("inboundenforcementcap", "InboundEnforcementCap", FTUint8, func(s SW) uint64 { return b2u(s.InboundEnforcementCap) }),
		sw("outboundenforcementcap", "OutboundEnforcementCap", FTUint8, func(s SW) uint64 { return b2u(s.OutboundEnforcementCap) }),
		sw("filterrawinboundcap", "FilterRawInboundCap", FTUint8, func(s SW) uint64 { return b2u(s.FilterRawInboundCap) }),
		sw("filterrawoutboundcap", "FilterRawOutboundCap", FTUint8, func(s SW) uint64 { return b2u(s.FilterRawOutboundCap) }),
		sw("enhancedportzero", "EnhancedPortZero", FTUint8, func(s SW) uint64 { return b2u(s.EnhancedPortZero) }),
		// tshark shows GUIDInfo's GUIDs with SwitchInfo's GUID field.
		rep(layers.SMPAttrGUIDInfo, layers.GUIDBlockEntries, "infiniband.switchinfo.guid", "GUID", FTUint64,
			func(d layers.SMPData, i int) uint64 { return d.GUID(i) }),
		b(layers.SMPAttrPKeyTable, "infiniband.p_keytable.p_keytableblock", "P_KeyTableBlock", func(d layers.SMPData) []byte { return d }),
		rep(layers.SMPAttrPKeyTable, layers.PKeyBlockEntries, "infiniband.p_keytable.membershiptype", "MembershipType", FTUint8,
			func(d layers.SMPData, i int) uint64 { full, _ := d.PKey(i); return b2u(full) }),
		rep(layers.SMPAttrPKeyTable, layers.PKeyBlockEntries, "infiniband.p_keytable.p_keybase", "P_KeyBase", FTUint16,
			func(d layers.SMPData, i int) uint64 { _, base := d.PKey(i); return uint64(base) }),
		rep(layers.SMPAttrSLtoVLMappingTable, layers.SLtoVLEntries/2, "infiniband.sltovlmappingtable.sltovlhighbits", "SL(x)toVL", FTUint8,
			func(d layers.SMPData, i int) uint64 { return uint64(d.SLtoVL(2 * i)) }),
		rep(layers.SMPAttrSLtoVLMappingTable, layers.SLtoVLEntries/2, "infiniband.sltovlmappingtable.sltovllowbits", "SL(x)toVL", FTUint8,
			func(d layers.SMPData, i int) uint64 { return uint64(d.SLtoVL(2*i + 1)) }),
		rep(layers.SMPAttrVLArbitrationTable, layers.VLArbEntries, "infiniband.vlarbitrationtable.vl", "VL", FTUint8,
			func(d layers.SMPData, i int) uint64 { vl, _ := d.VLArb(i); return uint64(vl) }),
		rep(layers.SMPAttrVLArbitrationTable, layers.VLArbEntries, "infiniband.vlarbitrationtable.weight", "Weight", FTUint8,
			func(d layers.SMPData, i int) uint64 { _, w := d.VLArb(i); return uint64(w) }),
		rep(layers.SMPAttrLinearFDB, layers.LinearFDBEntries, "infiniband.linearforwardingtable.port", "Port", FTUint8,
			func(d layers.SMPData, i int) uint64 { return uint64(d.LinearFDBPort(i)) }),
		rep(layers.SMPAttrRandomFDB, layers.RandomFDBEntries, "infiniband.randomforwardingtable.lid", "LID", FTUint16,
			func(d layers.SMPData, i int) uint64 { return uint64(d.RandomFDB(i).LID) }),
		rep(layers.SMPAttrRandomFDB, layers.RandomFDBEntries, "infiniband.randomforwardingtable.valid", "Valid", FTUint8,
			func(d layers.SMPData, i int) uint64 { return b2u(d.RandomFDB(i).Valid) }),
		rep(layers.SMPAttrRandomFDB, layers.RandomFDBEntries, "infiniband.randomforwardingtable.lmc", "LMC", FTUint8,
			func(d layers.SMPData, i int) uint64 { return uint64(d.RandomFDB(i).LMC) }),
		rep(layers.SMPAttrRandomFDB, layers.RandomFDBEntries, "infiniband.randomforwardingtable.port", "Port", FTUint8,
			func(d layers.SMPData, i int) uint64 { return uint64(d.RandomFDB(i).Port) }),
		// tshark 4.0 shows the first 16 of a block's 32 port masks.
		rep(layers.SMPAttrMulticastFDB, layers.MulticastFDBEntries/2, "infiniband.multicastforwardingtable.portmask", "PortMask", FTUint16,
			func(d layers.SMPData, i int) uint64 { return uint64(d.MulticastFDBPortMask(i)) }),
		u(attr(layers.SMPAttrLinkSpeedWidthPairsTable), "infiniband.linkspeedwidthpairstable.numtables", "NumTables", FTUint8,
			func(d layers.SMPData) uint64 { return uint64(d.LinkSpeedWidthPairs().NumTables) }),
		b(layers.SMPAttrLinkSpeedWidthPairsTable, "infiniband.linkspeedwidthpairstable.portmask", "PortMask",
			func(d layers.SMPData) []byte { return d.LinkSpeedWidthPairs().PortMask }),
		// tshark 4.0 reads all three speeds from the same bit of the byte
		// after the port mask.
		lswp("speedtwofive", "Speed 2.5 Gbps"), lswp("speedfive", "Speed 5 Gbps"), lswp("speedten", "Speed 10 Gbps"),
		u(attr(layers.SMPAttrVendorDiag), "infiniband.vendordiag.nextindex", "NextIndex", FTUint16,
			func(d layers.SMPData) uint64 { n, _ := d.VendorDiag(); return uint64(n) }),
		b(layers.SMPAttrVendorDiag, "infiniband.vendordiag.diagdata", "DiagData", func(d layers.SMPData) []byte { _, b := d.VendorDiag(); return b }),
		u(attr(layers.SMPAttrLedInfo), "infiniband.ledinfo.ledmask", "LedMask", FTUint8, func(d layers.SMPData) uint64 { return b2u(d.LedMask()) }),
	}
}
