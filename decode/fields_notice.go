package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// Wireshark's Notice fields (infiniband.notice.*) and the DataDetails of
// the traps it dissects (infiniband.trap.*), with tshark 4.0's names, types
// and bases. tshark 4.0 dissects a Notice wherever the attribute is 0x0002
// in a LID-routed or directed-route SMP or an SA MAD, whatever the method
// (SubnTrap and SubnTrapRepress, SubnAdmReport and its response, but a
// SubnGet(Notice) too); layers decodes it, and which fields a trap has.

// packetNotice returns the Notice p carries where tshark 4.0 dissects one.
func packetNotice(p *Packet) (layers.Notice, bool) {
	if p.has&hasMAD == 0 {
		return layers.Notice{}, false
	}
	m := &p.Headers.MAD
	switch {
	case m.MgmtClass == layers.MgmtClassSubnLID && m.SMP.Contents != nil:
		return m.SMP.Notice()
	case m.MgmtClass == layers.MgmtClassSubnDirected && m.SMPDirected.Contents != nil:
		return m.SMPDirected.Notice()
	case m.MgmtClass == layers.MgmtClassSubnAdm && m.SA.Contents != nil:
		return m.SA.Notice()
	}
	return layers.Notice{}, false
}

// noticeAndDetails returns the Notice's own 64 bytes and its 54
// DataDetails bytes: tshark adds each as an infiniband.smplid.smpdata item
// (the notice's subtree and the "Trap N DataDetails" subtree).
func noticeAndDetails(p *Packet) (notice, details []byte, ok bool) {
	n, ok := packetNotice(p)
	if !ok {
		return nil, nil, false
	}
	m := &p.Headers.MAD
	switch m.MgmtClass {
	case layers.MgmtClassSubnLID:
		notice = m.SMP.Data
	case layers.MgmtClassSubnDirected:
		notice = m.SMPDirected.Data
	default:
		notice = m.SA.Data
	}
	return notice[:layers.NoticeLength], n.DataDetails, true
}

// The -V tree's items over a Notice's fields, which tshark 4.0 adds as
// more infiniband.smplid.smpdata items (noticeAndDetails): the Notice,
// titled with its trap's description, and its DataDetails, titled "Trap N
// DataDetails", holding the trap's fields. They are tree-only: -e and -Y
// see those items as smpdata's occurrences. In an SA MAD the smpdata item
// itself is the Notice (mgmtTreeShape titles it), and noticeNode is absent.
const (
	noticeNode = "infiniband.notice"
	trapNode   = "infiniband.trap"
)

// inNotice places a Notice field in the tree: under the Notice item, which
// sits under the SMP's data item or the SA's attribute, whichever the
// packet has (outside: present without either name's header).
func inNotice(f *Field) *Field {
	f.parent, f.alsoParent, f.outside = noticeNode, saNode, true
	return f
}

// noticeTreeItems are the tree-only Notice and DataDetails items.
func noticeTreeItems() (notice, details *Field) {
	trap := func(p *Packet) (layers.TrapNumber, bool) {
		n, ok := packetNotice(p)
		return layers.TrapNumber(n.TrapNumberDeviceID), ok
	}
	notice = &Field{Name: noticeNode, Type: FTNone, parent: cmNode,
		get: func(p *Packet, _ *Value) bool { _, ok := trap(p); return ok && !isSA(p) },
		shape: &treeShape{treeOnly: true, opens: true, label: func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
			t, _ := trap(p)
			return t.AppendDescription(buf), true
		}}}
	details = &Field{Name: trapNode, Type: FTNone, parent: noticeNode,
		get: func(p *Packet, _ *Value) bool { _, ok := trap(p); return ok },
		shape: &treeShape{treeOnly: true, opens: true, label: func(buf []byte, p *Packet, _ *Value) ([]byte, bool) {
			t, _ := trap(p)
			return t.AppendDetailsTitle(buf), true
		}}}
	return notice, details
}

func noticeFields() []*Field {
	notice := func(name, title string, t FieldType, get func(n *layers.Notice) uint64) *Field {
		f := uintField("infiniband.notice."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			n, ok := packetNotice(p)
			return get(&n), ok
		})
		return inNotice(f)
	}
	details := bytesField("infiniband.notice.datadetails", "DataDetails", FTBytes, func(p *Packet) ([]byte, bool) {
		n, ok := packetNotice(p)
		return n.DataDetails, ok
	})
	inNotice(details)
	trap := func(has layers.TrapField) func(p *Packet) (layers.TrapDetails, bool) {
		return func(p *Packet) (layers.TrapDetails, bool) {
			n, ok := packetNotice(p)
			if !ok {
				return layers.TrapDetails{}, false
			}
			// tshark 4.0 reads a vendor notice's DataDetails by its
			// DeviceID as a generic one's by its trap number.
			d := n.DetailsAs(layers.TrapNumber(n.TrapNumberDeviceID))
			return d, d.Fields&has != 0
		}
	}
	u := func(name, title string, t FieldType, has layers.TrapField, get func(d *layers.TrapDetails) uint64) *Field {
		of := trap(has)
		f := uintField("infiniband.trap."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			d, ok := of(p)
			return get(&d), ok
		})
		inNotice(f).parent = trapNode
		return f
	}
	b := func(name, title string, t FieldType, has layers.TrapField, get func(d *layers.TrapDetails) []byte) *Field {
		of := trap(has)
		f := bytesField("infiniband.trap."+name, title, t, func(p *Packet) ([]byte, bool) {
			d, ok := of(p)
			return get(&d), ok
		})
		inNotice(f).parent = trapNode
		return f
	}
	// tshark 4.0 registers trap 259's DataValid and SWLIDADDR as IPv6
	// addresses but they are 2 bytes: reading DataValid it reports the
	// packet malformed and shows nothing of trap 259's details. The names
	// stay for -Y and -G; they never have a value an IPv6 field could show
	// (layers.TrapDetails has them).
	never := func(name, title string) *Field {
		f := bytesField("infiniband.trap."+name, title, FTIPv6, func(p *Packet) ([]byte, bool) { return nil, false })
		inNotice(f).parent = trapNode
		return f
	}
	type D = layers.TrapDetails
	type N = layers.Notice
	noticeItem, detailsItem := noticeTreeItems()
	return []*Field{
		noticeItem,
		notice("isgeneric", "IsGeneric", FTUint8, func(n *N) uint64 { return b2u(n.IsGeneric) }),
		notice("type", "Type", FTUint8, func(n *N) uint64 { return uint64(n.Type) }),
		notice("producertypevendorid", "ProducerTypeVendorID", FTUint24, func(n *N) uint64 { return uint64(n.ProducerTypeVendorID) }),
		notice("trapnumberdeviceid", "TrapNumberDeviceID", FTUint16, func(n *N) uint64 { return uint64(n.TrapNumberDeviceID) }),
		notice("issuerlid", "IssuerLID", FTUint16, func(n *N) uint64 { return uint64(n.IssuerLID) }),
		notice("noticetoggle", "NoticeToggle", FTUint8, func(n *N) uint64 { return b2u(n.NoticeToggle) }),
		notice("noticecount", "NoticeCount", FTUint16, func(n *N) uint64 { return uint64(n.NoticeCount) }),

		detailsItem,

		b("gidaddr", "GIDADDR", FTIPv6, layers.TrapFieldGIDAddr, func(d *D) []byte { return d.GIDAddr }),
		u("comp_mask", "COMP_MASK", FTUint64, layers.TrapFieldCompMask, func(d *D) uint64 { return d.CompMask }),
		u("wait_for_repath", "WAIT_FOR_REPATH", FTUint8, layers.TrapFieldWaitForRepath, func(d *D) uint64 { return b2u(d.WaitForRepath) }),
		u("lidaddr", "LIDADDR", FTUint16, layers.TrapFieldLIDAddr, func(d *D) uint64 { return uint64(d.LIDAddr) }),
		u("portno", "PORTNO", FTUint8, layers.TrapFieldPortNo, func(d *D) uint64 { return uint64(d.PortNo) }),
		u("otherlocalchanges", "OtherLocalChanges", FTUint8, layers.TrapFieldOtherLocalChanges, func(d *D) uint64 { return b2u(d.OtherLocalChanges) }),
		u("capabilitymask", "CAPABILITYMASK", FTUint32, layers.TrapFieldCapabilityMask, func(d *D) uint64 { return uint64(d.CapabilityMask) }),
		u("linkspeecenabledchange", "LinkSpeecEnabledChange", FTUint8, layers.TrapFieldLinkSpeedEnabledChange, func(d *D) uint64 { return b2u(d.LinkSpeedEnabledChange) }),
		u("linkwidthenabledchange", "LinkWidthEnabledChange", FTUint8, layers.TrapFieldLinkWidthEnabledChange, func(d *D) uint64 { return b2u(d.LinkWidthEnabledChange) }),
		u("nodedescriptionchange", "NodeDescriptionChange", FTUint8, layers.TrapFieldNodeDescriptionChange, func(d *D) uint64 { return b2u(d.NodeDescriptionChange) }),
		u("systemimageguid", "SYSTEMIMAGEGUID", FTUint64, layers.TrapFieldSystemImageGUID, func(d *D) uint64 { return d.SystemImageGUID }),
		u("drslid", "DRSLID", FTUint16, layers.TrapFieldDRSLID, func(d *D) uint64 { return uint64(d.DRSLID) }),
		u("method", "METHOD", FTUint8, layers.TrapFieldMethod, func(d *D) uint64 { return uint64(d.Method) }),
		u("attributeid", "ATTRIBUTEID", FTUint16, layers.TrapFieldAttributeID, func(d *D) uint64 { return uint64(d.AttributeID) }),
		u("attributemodifier", "ATTRIBUTEMODIFIER", FTUint32, layers.TrapFieldAttributeModifier, func(d *D) uint64 { return uint64(d.AttributeModifier) }),
		u("mkey", "MKEY", FTUint64, layers.TrapFieldMKey, func(d *D) uint64 { return d.MKey }),
		u("drnotice", "DRNotice", FTUint8, layers.TrapFieldDRNotice, func(d *D) uint64 { return b2u(d.DRNotice) }),
		u("drpathtruncated", "DRPathTruncated", FTUint8, layers.TrapFieldDRPathTruncated, func(d *D) uint64 { return b2u(d.DRPathTruncated) }),
		u("drhopcount", "DRHopCount", FTUint8, layers.TrapFieldDRHopCount, func(d *D) uint64 { return uint64(d.DRHopCount) }),
		b("drnoticereturnpath", "DRNoticeReturnPath", FTBytes, layers.TrapFieldDRNoticeReturnPath, func(d *D) []byte { return d.DRNoticeReturnPath }),
		u("lidaddr1", "LIDADDR1", FTUint16, layers.TrapFieldLIDAddr1, func(d *D) uint64 { return uint64(d.LIDAddr1) }),
		u("lidaddr2", "LIDADDR2", FTUint16, layers.TrapFieldLIDAddr2, func(d *D) uint64 { return uint64(d.LIDAddr2) }),
		u("key", "KEY", FTUint32, layers.TrapFieldKey, func(d *D) uint64 { return uint64(d.Key) }),
		u("sl", "SL", FTUint8, layers.TrapFieldSL, func(d *D) uint64 { return uint64(d.SL) }),
		u("qp1", "QP1", FTUint24, layers.TrapFieldQP1, func(d *D) uint64 { return uint64(d.QP1) }),
		u("qp2", "QP2", FTUint24, layers.TrapFieldQP2, func(d *D) uint64 { return uint64(d.QP2) }),
		b("gidaddr1", "GIDADDR1", FTIPv6, layers.TrapFieldGIDAddr1, func(d *D) []byte { return d.GIDAddr1 }),
		b("gidaddr2", "GIDADDR2", FTIPv6, layers.TrapFieldGIDAddr2, func(d *D) []byte { return d.GIDAddr2 }),
		never("datavalid", "DataValid"),
		u("pkey", "PKEY", FTUint16, layers.TrapFieldPKey, func(d *D) uint64 { return uint64(d.PKey) }),
		never("swlidaddr", "SWLIDADDR"),

		// tshark adds the raw DataDetails after the trap's fields.
		details,
	}
}
