package decode

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// The -V tree shape of the management classes, as tshark 4.0 draws it:
// the bit masks, value names, labels, subtrees and reserved items of the
// SMP, RMPP, SA and PerfMgt fields. They are applied by name over the
// field lists (fields_smp.go, fields_sa.go ...), which say how each value
// is found; this file says how the tree shows it.

// mgmtMasks are tshark 4.0's bitmasks (tshark -G fields) of the management
// fields that have one.
var mgmtMasks = map[string]uint64{
	"infiniband.smpdirected.d":                                0x8000,
	"infiniband.sminfo.priority":                              0xf0,
	"infiniband.sminfo.smstate":                               0x0f,
	"infiniband.switchinfo.lifetimevalue":                     0xf8,
	"infiniband.switchinfo.portstatechange":                   0x04,
	"infiniband.switchinfo.optimizedsltovlmappingprogramming": 0x03,
	"infiniband.switchinfo.inboundenforcementcap":             0x80,
	"infiniband.switchinfo.outboundenforcementcap":            0x40,
	"infiniband.switchinfo.filterrawinboundcap":               0x20,
	"infiniband.switchinfo.filterrawoutboundcap":              0x10,
	"infiniband.switchinfo.enhancedportzero":                  0x08,
	"infiniband.portinfo.linkspeedsupported":                  0xf0,
	"infiniband.portinfo.portstate":                           0x0f,
	"infiniband.portinfo.portphysicalstate":                   0xf0,
	"infiniband.portinfo.linkdowndefaultstate":                0x0f,
	"infiniband.portinfo.m_keyprotectbits":                    0xc0,
	"infiniband.portinfo.lmc":                                 0x07,
	"infiniband.portinfo.linkspeedactive":                     0xf0,
	"infiniband.portinfo.linkspeedenabled":                    0x0f,
	"infiniband.portinfo.neighbormtu":                         0xf0,
	"infiniband.portinfo.mastersmsl":                          0x0f,
	"infiniband.portinfo.vlcap":                               0xf0,
	"infiniband.portinfo.inittype":                            0x0f,
	"infiniband.portinfo.inittypereply":                       0xf0,
	"infiniband.portinfo.mtucap":                              0x0f,
	"infiniband.portinfo.vlstallcount":                        0xe0,
	"infiniband.portinfo.hoqlife":                             0x1f,
	"infiniband.portinfo.operationalvls":                      0xf0,
	"infiniband.portinfo.partitionenforcementinbound":         0x08,
	"infiniband.portinfo.partitionenforcementoutbound":        0x04,
	"infiniband.portinfo.filterrawinbound":                    0x02,
	"infiniband.portinfo.filterrawoutbound":                   0x01,
	"infiniband.portinfo.clientreregister":                    0x80,
	"infiniband.portinfo.subnettimeout":                       0x1f,
	"infiniband.portinfo.resptimevalue":                       0x1f,
	"infiniband.portinfo.localphyerrors":                      0xf0,
	"infiniband.portinfo.overrunerrors":                       0x0f,
	"infiniband.p_keytable.membershiptype":                    0x80,
	"infiniband.p_keytable.p_keybase":                         0x7fff,
	"infiniband.sltovlmappingtable.sltovlhighbits":            0xf0,
	"infiniband.sltovlmappingtable.sltovllowbits":             0x0f,
	"infiniband.vlarbitrationtable.vl":                        0x0f,
	"infiniband.randomforwardingtable.valid":                  0x80,
	"infiniband.randomforwardingtable.lmc":                    0x70,
	"infiniband.ledinfo.ledmask":                              0x80,
	"infiniband.linkspeedwidthpairstable.speedtwofive":        0x80,
	"infiniband.linkspeedwidthpairstable.speedfive":           0x80,
	"infiniband.linkspeedwidthpairstable.speedten":            0x80,
	"infiniband.rmpp.rresptime":                               0xf0,
	"infiniband.rmpp.rmppflags":                               0x0f,
	"infiniband.sa.blocknum_ninebit":                          0x1ff,
	"infiniband.sa.position":                                  0xf0,
	"infiniband.pathrecord.rawtraffic":                        0x80,
	"infiniband.pathrecord.flowlabel":                         0xfffff,
	"infiniband.pathrecord.reversible":                        0x80,
	"infiniband.pathrecord.numbpath":                          0x7f,
	"infiniband.pathrecord.sl":                                0x0f,
	"infiniband.pathrecord.mtuselector":                       0xc0,
	"infiniband.pathrecord.mtu":                               0x3f,
	"infiniband.pathrecord.rateselector":                      0xc0,
	"infiniband.pathrecord.rate":                              0x3f,
	"infiniband.pathrecord.packetlifetimeselector":            0xc0,
	"infiniband.pathrecord.packetlifetime":                    0x3f,
	"infiniband.mcmemberrecord.mtuselector":                   0xc0,
	"infiniband.mcmemberrecord.mtu":                           0x3f,
	"infiniband.mcmemberrecord.rateselector":                  0xc0,
	"infiniband.mcmemberrecord.rate":                          0x3f,
	"infiniband.mcmemberrecord.packetlifetimeselector":        0xc0,
	"infiniband.mcmemberrecord.packetlifetime":                0x3f,
	"infiniband.mcmemberrecord.sl":                            0xf0,
	"infiniband.mcmemberrecord.flowlabel":                     0xfffff,
	"infiniband.mcmemberrecord.scope":                         0xf0,
	"infiniband.mcmemberrecord.joinstate":                     0x0f,
	"infiniband.mcmemberrecord.proxyjoin":                     0x80,
	// SA records, Notice, traps, ClassPortInfo.
	"infiniband.informinfo.resptimevalue":               0x1f,
	"infiniband.multipathrecord.rawtraffic":             0x80,
	"infiniband.multipathrecord.flowlabel":              0xfffff,
	"infiniband.multipathrecord.reversible":             0x80,
	"infiniband.multipathrecord.numbpath":               0x7f,
	"infiniband.multipathrecord.sl":                     0xf,
	"infiniband.multipathrecord.mtuselector":            0xc0,
	"infiniband.multipathrecord.mtu":                    0x3f,
	"infiniband.multipathrecord.rateselector":           0xc0,
	"infiniband.multipathrecord.rate":                   0x3f,
	"infiniband.multipathrecord.packetlifetimeselector": 0xc0,
	"infiniband.multipathrecord.packetlifetime":         0x3f,
	"infiniband.multipathrecord.independenceselector":   0xc0,
	"infiniband.multipathrecord.gidscope":               0x3f,
	"infiniband.classportinfo.capabilitymask2":          0xffffffe0,
	"infiniband.classportinfo.resptimevalue":            0x1f,
	"infiniband.classportinfo.redirectsl":               0xf0,
	"infiniband.classportinfo.redirectfl":               0xfffff,
	"infiniband.classportinfo.trapsl":                   0xf0,
	"infiniband.classportinfo.trapfl":                   0xfffff,
	"infiniband.notice.isgeneric":                       0x80,
	"infiniband.notice.type":                            0x7f,
	"infiniband.notice.noticetoggle":                    0x80,
	"infiniband.notice.noticecount":                     0x7fff,
	"infiniband.trap.wait_for_repath":                   0x80,
	"infiniband.trap.otherlocalchanges":                 0x1,
	"infiniband.trap.linkspeecenabledchange":            0x4,
	"infiniband.trap.linkwidthenabledchange":            0x2,
	"infiniband.trap.nodedescriptionchange":             0x1,
	"infiniband.trap.drnotice":                          0x80,
	"infiniband.trap.drpathtruncated":                   0x40,
	"infiniband.trap.drhopcount":                        0x3f,
	"infiniband.trap.sl":                                0xf0,
}

// portInfoNamed are the PortInfo fields whose line tshark 4.0 ends with the
// value's name (layers.PortInfoNames), by the name's table.
var portInfoNamed = map[string]string{
	"infiniband.portinfo.diagcode": "DiagCode", "infiniband.portinfo.linkwidthenabled": "LinkWidthEnabled",
	"infiniband.portinfo.linkwidthsupported": "LinkWidthSupported", "infiniband.portinfo.linkwidthactive": "LinkWidthActive",
	"infiniband.portinfo.linkspeedsupported": "LinkSpeedSupported", "infiniband.portinfo.portstate": "PortState",
	"infiniband.portinfo.portphysicalstate": "PortPhysicalState", "infiniband.portinfo.linkdowndefaultstate": "LinkDownDefaultState",
	"infiniband.portinfo.linkspeedactive": "LinkSpeedActive", "infiniband.portinfo.linkspeedenabled": "LinkSpeedEnabled",
	"infiniband.portinfo.neighbormtu": "NeighborMTU", "infiniband.portinfo.vlcap": "VLCap",
	"infiniband.portinfo.mtucap": "MTUCap", "infiniband.portinfo.operationalvls": "OperationalVLs",
}

// tableEntries are the fields tshark 4.0 shows once per table entry, each
// line ending in "(i)", or "(i+1)" where it numbers from one; fields of one
// entry share a row and are shown entry by entry.
var tableEntries = map[string]struct {
	row  uint8
	from int
}{
	"infiniband.switchinfo.guid":                   {1, 0},
	"infiniband.p_keytable.membershiptype":         {2, 0},
	"infiniband.p_keytable.p_keybase":              {2, 1},
	"infiniband.sltovlmappingtable.sltovlhighbits": {3, 0},
	"infiniband.sltovlmappingtable.sltovllowbits":  {3, 1},
	"infiniband.vlarbitrationtable.vl":             {4, 0},
	"infiniband.vlarbitrationtable.weight":         {4, 0},
	"infiniband.linearforwardingtable.port":        {5, 0},
	"infiniband.randomforwardingtable.lid":         {6, 0},
	"infiniband.randomforwardingtable.valid":       {6, 0},
	"infiniband.randomforwardingtable.lmc":         {6, 0},
	"infiniband.randomforwardingtable.port":        {6, 0},
	"infiniband.multicastforwardingtable.portmask": {7, 0},
}

// serviceDataTitles end the lines of a ServiceRecord's ServiceData items:
// 16 bytes of 8-bit, 16-bit, 32-bit and 64-bit elements.
var serviceDataTitles = []string{"(ServiceData 8.1, 8.16)", "(ServiceData 16.1, 16.8)",
	"(ServiceData 32.1, 32.4)", "(ServiceData 64.1, 64.2)"}

// smpAttributeTrees are the attributes whose fields tshark 4.0 nests in a
// subtree titled with the attribute's name, inside "Attribute (X)", by the
// prefix of their fields' names.
var smpAttributeTrees = []struct {
	prefix string
	attr   layers.SMPAttribute
}{
	{"infiniband.sminfo", layers.SMPAttrSMInfo},
	{"infiniband.sltovlmappingtable", layers.SMPAttrSLtoVLMappingTable},
	{"infiniband.vlarbitrationtable", layers.SMPAttrVLArbitrationTable},
	{"infiniband.linearforwardingtable", layers.SMPAttrLinearFDB},
	{"infiniband.randomforwardingtable", layers.SMPAttrRandomFDB},
	{"infiniband.multicastforwardingtable", layers.SMPAttrMulticastFDB},
	{"infiniband.linkspeedwidthpairstable", layers.SMPAttrLinkSpeedWidthPairsTable},
	{"infiniband.vendordiag", layers.SMPAttrVendorDiag},
	{"infiniband.ledinfo", layers.SMPAttrLedInfo},
}

// mgmtTreeShape applies the tree's shape to the MAD fields fs and returns
// them with the tree-only items inserted at their places.
func mgmtTreeShape(fs []*Field) []*Field {
	byName := map[string]*Field{}
	masks := make(map[string]uint64, len(mgmtMasks)+len(layers.PortInfoCapabilities))
	for n, m := range mgmtMasks {
		masks[n] = m
	}
	for _, c := range layers.PortInfoCapabilities {
		masks["infiniband.portinfo.capabilitymask."+c.Name] = 1 << c.Bit
	}
	for _, f := range fs {
		if _, dup := byName[f.Name]; !dup {
			byName[f.Name] = f
		}
		if m, ok := masks[f.Name]; ok {
			f.shapeOf().mask = m
		}
		if table, ok := portInfoNamed[f.Name]; ok {
			names := layers.PortInfoNames[table]
			f.shapeOf().suffix = func(buf []byte, v *Value, _ int) []byte {
				s, ok := names.Names[uint16(v.U)]
				if !ok || v.U > 0xFFFF {
					s = names.Unknown
				}
				return append(append(buf, ", "...), s...)
			}
		}
		if e, ok := tableEntries[f.Name]; ok {
			from := e.from
			f.shapeOf().row = e.row
			f.shapeOf().suffix = func(buf []byte, _ *Value, occ int) []byte {
				buf = append(buf, '(')
				buf = strconv.AppendInt(buf, int64(occ+from), 10)
				return append(buf, ')')
			}
		}
	}
	// A ServiceRecord's ServiceData: four items, each titled with the
	// element sizes it holds.
	if f := byName["infiniband.linkrecord.servicedata"]; f != nil {
		f.shapeOf().row = 8
		f.shapeOf().suffix = func(buf []byte, _ *Value, occ int) []byte {
			if occ >= len(serviceDataTitles) {
				return buf
			}
			return append(buf, serviceDataTitles[occ]...)
		}
	}
	smpHeaderLabel := func(title string, has func(p *Packet) bool) func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
		return func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
			if !has(p) {
				return buf, false
			}
			return p.Headers.MAD.AppendInfo(append(buf, title...)), true
		}
	}
	byName[smpLIDNode].shapeOf().label = smpHeaderLabel("SMP (LID Routed) ", isSMPLID)
	byName[smpDirectedNode].shapeOf().label = smpHeaderLabel("SMP (Directed Route) ", isSMPDirected)
	byName[cmNode].shapeOf().label = func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
		if isSA(p) {
			// An SA MAD's Notice: its data item is the Notice itself,
			// titled with the trap's description (noticeTreeItems).
			if n, ok := packetNotice(p); ok {
				return layers.TrapNumber(n.TrapNumberDeviceID).AppendDescription(buf), true
			}
		}
		a, _, ok := smpAttr(p)
		if !ok {
			if _, ok := saSMPDataItem(p); ok {
				// An SA record's SMP attribute: tshark titles the item
				// with the attribute's name (SMInfo, LinearForwardingTable).
				r, rec, _ := saAttr(p)
				for _, a := range saSubtreeAttrs {
					if _, ok := saSMPBody(r, rec, a); ok {
						return append(buf, a.String()...), true
					}
				}
			}
			return buf, false // a CM message: appendProtocolTitle names it
		}
		buf = append(buf, "Attribute ("...)
		return append(append(buf, a.String()...), ')'), true
	}
	byName["infiniband.rmpp"].shapeOf().label = func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
		return append(buf, p.Headers.MAD.SA.RMPP.Type.WiresharkTitle()...), true
	}
	for name, names := range map[string]map[uint8]string{
		"infiniband.rmpp.rmppflags": layers.RMPPFlagNames, "infiniband.rmpp.rmppstatus": layers.RMPPStatusNames,
	} {
		f := byName[name]
		f.Names = func(u uint64) (string, bool) {
			s, ok := names[uint8(u)]
			return s, ok && u <= 0xFF
		}
		f.shapeOf().unknownNamed = true
	}
	byName["infiniband.portinfo.capabilitymask"].shapeOf().opens = true
	block := byName["infiniband.p_keytable.p_keytableblock"]
	block.shapeOf().opens = true
	block.shapeOf().label = func(buf []byte, _ *Packet, _ *Value) ([]byte, bool) { return append(buf, "P_KeyTable"...), true }
	byName["infiniband.p_keytable.membershiptype"].parent = block.Name
	byName["infiniband.p_keytable.p_keybase"].parent = block.Name

	lid := func(p *Packet) *layers.SMP { return &p.Headers.MAD.SMP }
	inserts := map[string][]*Field{ // tree-only items, before the field named
		"infiniband.smpdirected.drslid": {reservedItem(smpLIDNode, func(p *Packet) []byte {
			if !isSMPLID(p) {
				return nil
			}
			return lid(p).Reserved1
		})},
		"infiniband.smpdirected.initialpath": {reservedItem(smpLIDNode, func(p *Packet) []byte {
			if !isSMPLID(p) {
				return nil
			}
			return lid(p).Reserved2
		})},
		"infiniband.smplid.smpdata": {reservedItem(smpDirectedNode, func(p *Packet) []byte {
			if !isSMPDirected(p) {
				return nil
			}
			return p.Headers.MAD.SMPDirected.Reserved
		})},
	}
	for _, t := range smpAttributeTrees {
		first := ""
		for _, f := range fs {
			if under(f.Name, t.prefix) {
				first = f.Name
				break
			}
		}
		attr, title := t.attr, t.attr.String()
		inserts[first] = append(inserts[first], &Field{Name: t.prefix, Title: title, Type: FTNone, parent: cmNode,
			get: func(p *Packet, _ *Value) bool { a, _, ok := smpAttr(p); return ok && a == attr },
			shape: &treeShape{treeOnly: true, opens: true,
				label: func(buf []byte, _ *Packet, _ *Value) ([]byte, bool) { return append(buf, title...), true }}})
	}
	saTreeShape(fs, byName, inserts)
	classPortInfoTreeShape(fs, inserts)
	// A Notice is an SMP's data: its items come before what follows the
	// data (a LID-routed SMP's reserved bytes, a directed-route SMP's
	// paths), as they do on the wire and in tshark's tree.
	var notice []*Field
	for _, f := range fs {
		if inNoticeTree(f.Name) {
			notice = append(notice, f)
		}
	}
	out := make([]*Field, 0, len(fs)+len(inserts)+4)
	for _, f := range fs {
		if inNoticeTree(f.Name) {
			continue
		}
		if f.Name == noticeFollower {
			out = append(out, notice...)
		}
		out = append(out, inserts[f.Name]...)
		out = append(out, f)
	}
	return out
}

// noticeFollower is the first field after an SMP's data whose tree-only
// items come before it too (the LID-routed SMP's second reserved item).
const noticeFollower = "infiniband.smpdirected.initialpath"

// inNoticeTree reports the Notice's items and fields (fields_notice.go).
func inNoticeTree(name string) bool {
	return name == noticeNode || name == trapNode || under(name, noticeNode) || under(name, trapNode)
}

// saAttributeNode names the tree-only "Attribute (X)" item of SA packets.
const saAttributeNode = "infiniband.sa.attribute"

// saHeaderFields are the SA header's own fields; every other field under
// the SA header is a record's, which tshark shows under "Attribute (X)".
var saHeaderFields = map[string]bool{
	"infiniband.sa.smkey": true, "infiniband.sa.attributeoffset": true, "infiniband.sa.componentmask": true,
	"infiniband.sa.subnetadmindata": true,
}

// saTreeShape gives the SA packet tshark 4.0's tree: its title, the
// header's reserved bytes, and the attribute under "Attribute (X)" (a
// PathRecord and an MCMemberRecord in a subtree titled with the record's
// name, MCMemberRecord's GIDs before it; an SMP attribute a record wraps
// under the record's RID).
func saTreeShape(fs []*Field, byName map[string]*Field, inserts map[string][]*Field) {
	S := func(p *Packet) *layers.SA { return &p.Headers.MAD.SA }
	byName[saNode].shapeOf().label = func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
		return p.Headers.MAD.AppendInfo(append(buf, "SA "...)), true
	}
	inserts["infiniband.sa.componentmask"] = append(inserts["infiniband.sa.componentmask"],
		reservedItem(saNode, func(p *Packet) []byte {
			if !isSA(p) {
				return nil
			}
			return S(p).ReservedBytes()
		}))
	// Whatever sat under the SA header or could (a Notice, an SMP
	// attribute a record wraps, the data item tshark adds for some) sits
	// under the attribute.
	for _, f := range fs {
		switch {
		case f.parent == saNode && !saHeaderFields[f.Name]:
			f.parent = saAttributeNode
		case f.alsoParent == saNode:
			f.alsoParent = saAttributeNode
		case f.parent == cmNode && f.alsoParent == "", f.Name == cmNode:
			f.alsoParent = saAttributeNode
		}
	}
	record := func(a layers.SAAttribute, n int) func(p *Packet) bool {
		return func(p *Packet) bool {
			return isSA(p) && S(p).AttributeID == a && len(S(p).Data) >= n
		}
	}
	isPR := record(layers.SAAttrPathRecord, layers.PathRecordLength)
	isMC := record(layers.SAAttrMCMemberRecord, layers.MCMemberRecordLength)
	node := func(name, parent string, has func(p *Packet) bool, label func(buf []byte, p *Packet) []byte) *Field {
		return &Field{Name: name, Type: FTNone, parent: parent,
			get: func(p *Packet, _ *Value) bool { return has(p) },
			shape: &treeShape{treeOnly: true, opens: true,
				label: func(buf []byte, p *Packet, _ *Value) ([]byte, bool) { return label(buf, p), true }}}
	}
	title := func(s string) func(buf []byte, _ *Packet) []byte {
		return func(buf []byte, _ *Packet) []byte { return append(buf, s...) }
	}
	// The attribute item opens before the first record field the registry
	// has (the PathRecord's).
	first := ""
	for _, f := range fs {
		if f.parent == saAttributeNode {
			first = f.Name
			break
		}
	}
	inserts[first] = append(inserts[first], node(saAttributeNode, saNode,
		func(p *Packet) bool { _, _, ok := saAttr(p); return ok },
		func(buf []byte, p *Packet) []byte {
			buf = append(buf, "Attribute ("...)
			return append(append(buf, S(p).AttributeID.String()...), ')')
		}))
	// A record's reserved bytes (layers' SAAttribute.ReservedSpans, i-th),
	// each where tshark shows it: before the field named before, or after
	// the one named after.
	wrapsSMP := []layers.SAAttribute{layers.SAAttrNodeRecord, layers.SAAttrPortInfoRecord,
		layers.SAAttrSLtoVLMappingTableRecord, layers.SAAttrSwitchInfoRecord, layers.SAAttrLinearFDBRecord,
		layers.SAAttrRandomFDBRecord, layers.SAAttrMulticastFDBRecord, layers.SAAttrSMInfoRecord,
		layers.SAAttrPKeyTableRecord, layers.SAAttrVLArbitrationTableRecord, layers.SAAttrGUIDInfoRecord}
	type place struct {
		attrs         []layers.SAAttribute
		i             int
		before, after string
		parent        string
	}
	places := []place{
		{attrs: wrapsSMP, before: cmNode, parent: saAttributeNode}, // between the RID and the SMP attribute
		{attrs: []layers.SAAttribute{layers.SAAttrInformInfoRecord}, after: "infiniband.informinforecord.enum", parent: saAttributeNode},
		{attrs: []layers.SAAttribute{layers.SAAttrInformInfo}, after: "infiniband.informinfo.lidrangeend", parent: "infiniband.informinfo"},
		{attrs: []layers.SAAttribute{layers.SAAttrInformInfo}, i: 1, after: "infiniband.informinfo.resptimevalue", parent: "infiniband.informinfo"},
		{attrs: []layers.SAAttribute{layers.SAAttrInformInfoRecord}, i: 1, after: "infiniband.informinfo.lidrangeend", parent: "infiniband.informinfo"},
		{attrs: []layers.SAAttribute{layers.SAAttrInformInfoRecord}, i: 2, after: "infiniband.informinfo.resptimevalue", parent: "infiniband.informinfo"},
		{attrs: []layers.SAAttribute{layers.SAAttrTraceRecord}, after: "infiniband.tracerecord.idgeneration", parent: "infiniband.tracerecord"},
		{attrs: []layers.SAAttribute{layers.SAAttrMultiPathRecord}, after: "infiniband.multipathrecord.packetlifetime", parent: "infiniband.multipathrecord"},
		{attrs: []layers.SAAttribute{layers.SAAttrMultiPathRecord}, i: 1, after: "infiniband.multipathrecord.dgidcount", parent: "infiniband.multipathrecord"},
	}
	for _, pl := range places {
		key := pl.before
		if pl.after != "" {
			key = ""
			for j, f := range fs[:len(fs)-1] {
				if f.Name == pl.after {
					key = fs[j+1].Name
					break
				}
			}
		}
		if key == "" {
			continue
		}
		attrs, i := pl.attrs, pl.i
		inserts[key] = append(inserts[key], reservedItem(pl.parent, func(p *Packet) []byte {
			a, rec, ok := saAttr(p)
			if !ok || !slices.Contains(attrs, a) {
				return nil
			}
			spans := a.ReservedSpans()
			if i >= len(spans) || spans[i].Offset+spans[i].Size > len(rec) {
				return nil
			}
			return rec[spans[i].Offset : spans[i].Offset+spans[i].Size]
		}))
	}
	// The records tshark shows in a subtree of their name, under the RID:
	// the subtree opens at the first field it holds (a field named start,
	// or the first named under it).
	for _, r := range []struct {
		start, name, title string
		attrs              []layers.SAAttribute
	}{
		{"infiniband.informinfo.", "infiniband.informinfo", "InformInfo",
			[]layers.SAAttribute{layers.SAAttrInformInfo, layers.SAAttrInformInfoRecord}},
		{"infiniband.linkrecord.toport", "infiniband.linkrecord", "LinkRecord", []layers.SAAttribute{layers.SAAttrLinkRecord}},
		// tshark files a ServiceRecord's fields under linkrecord.
		{"infiniband.linkrecord.servicelease", "infiniband.linkrecord", "ServiceRecord",
			[]layers.SAAttribute{layers.SAAttrServiceRecord}},
		{"infiniband.tracerecord.", "infiniband.tracerecord", "TraceRecord", []layers.SAAttribute{layers.SAAttrTraceRecord}},
		{"infiniband.multipathrecord.", "infiniband.multipathrecord", "MultiPathRecord",
			[]layers.SAAttribute{layers.SAAttrMultiPathRecord}},
		{"infiniband.serviceassociationrecord.", "infiniband.serviceassociationrecord", "ServiceAssociationRecord",
			[]layers.SAAttribute{layers.SAAttrServiceAssociationRecord}},
	} {
		start := ""
		for _, f := range fs {
			if f.Name == r.start || strings.HasSuffix(r.start, ".") && strings.HasPrefix(f.Name, r.start) {
				start = f.Name
				break
			}
		}
		if start == "" {
			continue
		}
		attrs := r.attrs
		inserts[start] = append(inserts[start], node(r.name, saAttributeNode, func(p *Packet) bool {
			a, _, ok := saAttr(p)
			return ok && slices.Contains(attrs, a)
		}, title(r.title)))
	}
	if _, ok := byName["infiniband.pathrecord.dgid"]; ok {
		inserts["infiniband.pathrecord.dgid"] = append(inserts["infiniband.pathrecord.dgid"],
			node("infiniband.pathrecord", saAttributeNode, isPR, title("PathRecord")),
			reservedItem("infiniband.pathrecord", func(p *Packet) []byte {
				if !isPR(p) {
					return nil
				}
				return layers.PathRecordServiceIDBytes(S(p).Data)
			}))
	}
	if _, ok := byName["infiniband.mcmemberrecord.q_key"]; ok {
		inserts["infiniband.mcmemberrecord.q_key"] = append(inserts["infiniband.mcmemberrecord.q_key"],
			node("infiniband.mcmemberrecord", saAttributeNode, isMC, title("MCMemberRecord")))
	}
}
