package decode

import (
	"github.com/ibwire/ibwire/layers"
)

// Wireshark's ClassPortInfo fields (infiniband.classportinfo.*). tshark 4.0
// dissects the attribute (0x0001) in two classes, whatever the method: in
// an SA MAD, under its "Attribute (ClassPortInfo)" item, and in a PerfMgt
// MAD, after an infiniband.classportinfo item ("ClassPortInfo (Performance
// Management MAD)") over the 40 reserved bytes. In SMPs, CM, BM, DevMgt and
// SNMP MADs it shows ClassPortInfo as undissected data.

const classPortInfoNode = "infiniband.classportinfo"

// packetClassPortInfo returns the ClassPortInfo p carries where tshark 4.0
// dissects one.
func packetClassPortInfo(p *Packet) (layers.ClassPortInfo, bool) {
	if p.has&hasMAD == 0 {
		return layers.ClassPortInfo{}, false
	}
	m := &p.Headers.MAD
	switch {
	case m.MgmtClass == layers.MgmtClassSubnAdm && m.SA.Contents != nil:
		return m.SA.ClassPortInfo()
	case m.MgmtClass == layers.MgmtClassPerf && m.PerfMgt.Contents != nil:
		return m.PerfMgt.ClassPortInfo()
	}
	return layers.ClassPortInfo{}, false
}

func classPortInfoFields() []*Field {
	const title = "ClassPortInfo (Performance Management MAD)"
	node := &Field{Name: classPortInfoNode, Title: title, Type: FTNone, none: true,
		get: func(p *Packet, v *Value) bool {
			_, ok := packetClassPortInfo(p)
			return ok && p.Headers.MAD.MgmtClass == layers.MgmtClassPerf
		},
		shape: &treeShape{label: func(buf []byte, _ *Packet, _ *Value) ([]byte, bool) { return append(buf, title...), true }}}
	// The fields sit in the SA's tree in an SA MAD, where the node is
	// absent (outside), and under the node in a PerfMgt MAD.
	u := func(name, title string, t FieldType, get func(c *layers.ClassPortInfo) uint64) *Field {
		f := uintField(classPortInfoNode+"."+name, title, t, BaseHex, func(p *Packet) (uint64, bool) {
			c, ok := packetClassPortInfo(p)
			return get(&c), ok
		})
		f.outside, f.parent = true, saNode
		return f
	}
	gid := func(name, title string, get func(c *layers.ClassPortInfo) []byte) *Field {
		f := bytesField(classPortInfoNode+"."+name, title, FTIPv6, func(p *Packet) ([]byte, bool) {
			c, ok := packetClassPortInfo(p)
			return get(&c), ok
		})
		f.outside, f.parent = true, saNode
		return f
	}
	type C = layers.ClassPortInfo
	reserved := u("reserved", "Reserved", FTUint8, func(c *C) uint64 { return uint64(c.Reserved) })
	// tshark shows the byte before TrapQP (TrapHL since IBTA 1.2) as a
	// second Reserved.
	reserved.nth = func(p *Packet, i int, v *Value) bool {
		c, ok := packetClassPortInfo(p)
		if !ok || i != 1 {
			return false
		}
		v.U = uint64(c.TrapHL)
		return true
	}
	return []*Field{
		node,
		u("baseversion", "BaseVersion", FTUint8, func(c *C) uint64 { return uint64(c.BaseVersion) }),
		u("classversion", "ClassVersion", FTUint8, func(c *C) uint64 { return uint64(c.ClassVersion) }),
		u("capabilitymask", "CapabilityMask", FTUint16, func(c *C) uint64 { return uint64(c.CapabilityMask) }),
		u("capabilitymask2", "CapabilityMask2", FTUint32, func(c *C) uint64 { return uint64(c.CapabilityMask2) }),
		u("resptimevalue", "RespTimeValue", FTUint8, func(c *C) uint64 { return uint64(c.RespTimeValue) }),
		gid("redirectgid", "RedirectGID", func(c *C) []byte { return c.RedirectGID }),
		u("redirecttc", "RedirectTC", FTUint8, func(c *C) uint64 { return uint64(c.RedirectTC) }),
		u("redirectsl", "RedirectSL", FTUint8, func(c *C) uint64 { return uint64(c.RedirectSL) }),
		u("redirectfl", "RedirectFL", FTUint24, func(c *C) uint64 { return uint64(c.RedirectFL) }),
		u("redirectlid", "RedirectLID", FTUint16, func(c *C) uint64 { return uint64(c.RedirectLID) }),
		u("redirectpkey", "RedirectP_Key", FTUint16, func(c *C) uint64 { return uint64(c.RedirectPKey) }),
		reserved,
		u("redirectqp", "RedirectQP", FTUint24, func(c *C) uint64 { return uint64(c.RedirectQP) }),
		u("redirectqkey", "RedirectQ_Key", FTUint32, func(c *C) uint64 { return uint64(c.RedirectQKey) }),
		gid("trapgid", "TrapGID", func(c *C) []byte { return c.TrapGID }),
		u("traptc", "TrapTC", FTUint8, func(c *C) uint64 { return uint64(c.TrapTC) }),
		u("trapsl", "TrapSL", FTUint8, func(c *C) uint64 { return uint64(c.TrapSL) }),
		u("trapfl", "TrapFL", FTUint24, func(c *C) uint64 { return uint64(c.TrapFL) }),
		u("traplid", "TrapLID", FTUint16, func(c *C) uint64 { return uint64(c.TrapLID) }),
		u("trappkey", "TrapP_Key", FTUint16, func(c *C) uint64 { return uint64(c.TrapPKey) }),
		u("trapqp", "TrapQP", FTUint24, func(c *C) uint64 { return uint64(c.TrapQP) }),
		u("trapqkey", "TrapQ_Key", FTUint32, func(c *C) uint64 { return uint64(c.TrapQKey) }),
	}
}

// classPortInfoTreeShape adds the item tshark 4.0 shows the byte before
// TrapQP as (TrapHL since IBTA 1.2): a second Reserved, which -e sees as
// infiniband.classportinfo.reserved's second occurrence.
func classPortInfoTreeShape(fs []*Field, inserts map[string][]*Field) {
	const before = classPortInfoNode + ".trapqp"
	for _, f := range fs {
		if f.Name != before {
			continue
		}
		inserts[before] = append(inserts[before], &Field{Name: classPortInfoNode + ".reserved", Title: "Reserved",
			Type: FTUint8, Base: BaseHex, parent: f.parent, outside: true, shape: &treeShape{treeOnly: true},
			get: func(p *Packet, v *Value) bool {
				c, ok := packetClassPortInfo(p)
				v.U = uint64(c.TrapHL)
				return ok
			}})
		return
	}
}
