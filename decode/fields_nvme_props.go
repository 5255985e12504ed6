package decode

import (
	"encoding/binary"
	"math/bits"
)

// The controller properties a Fabrics Property Get returns or a Property
// Set writes (NVMe 1.4 §3.1: CAP at 0x0, VS at 0x8, CC at 0x14, CSTS at
// 0x1c), shown as Wireshark 4.0 shows them under
// nvme.fabrics.prop_get_set.data: the register's bit fields by its
// offset, the upper half of an 8-byte data item a 4-byte property leaves
// (data.rsvd), and the raw value of a property it does not dissect
// (data.4B, data.8B). A Get's completion is read by its command's offset
// and size.

// nvmeProperty is one register's view of the 8 data bytes.
type nvmeProperty struct {
	offset uint32
	size8  bool // an 8-byte property (CAP); the others are 4 bytes
}

const (
	nvmePropCAP  = 0x00
	nvmePropVS   = 0x08
	nvmePropCC   = 0x14
	nvmePropCSTS = 0x1c
)

func nvmePropertyFields(N func(*Packet) *NVMePacket, cqePropGet, propSet, cqePropSet func(*Packet) bool) []*Field {
	// prop returns the property a packet carries the value of, and the
	// value: the SQE's bytes 48-55 for a Set, the CQE's first 8 for a Get's
	// completion.
	prop := func(p *Packet) (nvmeProperty, uint64, bool) {
		switch {
		case propSet(p):
			s := &N(p).SQE
			return nvmeProperty{offset: s.PropertyOffset(), size8: s.PropertyAttrib()&7 == 1}, s.PropertyValue(), true
		case cqePropGet(p):
			c := &N(p).Cmd
			return nvmeProperty{offset: c.CDW11, size8: c.CDW10&7 == 1}, binary.LittleEndian.Uint64(N(p).cqeBytes[:8]), true
		}
		return nvmeProperty{}, 0, false
	}
	known := func(off uint32) bool {
		return off == nvmePropCAP || off == nvmePropVS || off == nvmePropCC || off == nvmePropCSTS
	}
	// value is the register at offset, when the packet carries it.
	value := func(p *Packet, offset uint32) (uint64, bool) {
		pr, v, ok := prop(p)
		return v, ok && pr.offset == offset
	}
	// reg is a register's field: the whole register (mask 0), heading its
	// bits under the data item, or one of its bit fields, shifted down.
	reg := func(offset uint32, name, title string, t FieldType, base Base, mask uint64) *Field {
		f := uintField(name, title, t, base, func(p *Packet) (uint64, bool) {
			v, ok := value(p, offset)
			switch {
			case !ok:
				return 0, false
			case mask != 0:
				return v & mask >> bits.TrailingZeros64(mask), true
			case t == FTUint32:
				return uint64(uint32(v)), true
			}
			return v, true
		})
		if mask != 0 {
			return withMask(f, mask)
		}
		f.parent = "nvme.fabrics.prop_get_set.data"
		return opens(f)
	}
	flag := func(offset uint32, name, title string, mask uint64) *Field {
		return withMask(boolField(name, title, func(p *Packet) (bool, bool) {
			v, ok := value(p, offset)
			return v&mask != 0, ok
		}), mask)
	}
	const (
		cc, csts, ccap, vs = "nvme.fabrics.prop_get_set.cc", "nvme.fabrics.prop_get_set.csts", "nvme.fabrics.prop_get.ccap", "nvme.fabrics.prop_get.vs"
	)
	fields := []*Field{
		reg(nvmePropCAP, ccap, "Controller Capabilities", FTUint64, BaseHex, 0),
		reg(nvmePropCAP, ccap+".mqes", "Maximum Queue Entries Supported", FTUint64, BaseDec, 0xffff),
		flag(nvmePropCAP, ccap+".cqr", "Contiguous Queues Required", 0x10000),
		flag(nvmePropCAP, ccap+".ams.wrr", "Supports Arbitration Mechanism with Weighted Round Robin and Urgent Priority Class", 0x20000),
		flag(nvmePropCAP, ccap+".ams.vs", "Supports Arbitration Mechanism Vendor Specific", 0x40000),
		reg(nvmePropCAP, ccap+".rsvd0", "Reserved", FTUint64, BaseHex, 0xf80000),
		reg(nvmePropCAP, ccap+".to", "Timeout (to ready status)", FTUint64, BaseDec, 0xff000000),
		reg(nvmePropCAP, ccap+".dstrd", "Doorbell Stride", FTUint64, BaseDec, 0xf00000000),
		flag(nvmePropCAP, ccap+".nssrs", "NVM Subsystem Reset Supported", 0x1000000000),
		reg(nvmePropCAP, ccap+".css", "Command Sets Supported", FTUint64, BaseDec, 0x1fe000000000),
		flag(nvmePropCAP, ccap+".bps", "Boot Partition Support", 0x200000000000),
		reg(nvmePropCAP, ccap+".rsdv1", "Reserved", FTUint64, BaseHex, 0xc00000000000),
		reg(nvmePropCAP, ccap+".mpsmin", "Memory Page Size Minimum", FTUint64, BaseDec, 0xf000000000000),
		reg(nvmePropCAP, ccap+".mpsmax", "Memory Page Size Maximum", FTUint64, BaseDec, 0xf0000000000000),
		flag(nvmePropCAP, ccap+".pmrs", "Persistent Memory Region Supported", 0x100000000000000),
		flag(nvmePropCAP, ccap+".cmbs", "Controller Memory Buffer Supported", 0x200000000000000),
		reg(nvmePropCAP, ccap+".rsvd2", "Reserved", FTUint64, BaseHex, 0xfc00000000000000),

		reg(nvmePropVS, vs, "Version", FTUint32, BaseHex, 0),
		reg(nvmePropVS, vs+".ter", "Tertiary Version", FTUint32, BaseDec, 0xff),
		reg(nvmePropVS, vs+".mnr", "Minor Version", FTUint32, BaseDec, 0xff00),
		reg(nvmePropVS, vs+".mjr", "Major Version", FTUint32, BaseDec, 0xffff0000),

		reg(nvmePropCC, cc, "Controller Configuration", FTUint32, BaseHex, 0),
		reg(nvmePropCC, cc+".en", "Enable", FTUint32, BaseHex, 0x1),
		reg(nvmePropCC, cc+".rsvd0", "Reserved", FTUint32, BaseHex, 0xe),
		reg(nvmePropCC, cc+".css", "IO Command Set Selected", FTUint32, BaseHex, 0x70),
		reg(nvmePropCC, cc+".mps", "Memory Page Size", FTUint32, BaseDec, 0x780),
		reg(nvmePropCC, cc+".ams", "Arbitration Mechanism Selected", FTUint32, BaseHex, 0x3800),
		reg(nvmePropCC, cc+".shn", "Shutdown Notification", FTUint32, BaseHex, 0xc000),
		reg(nvmePropCC, cc+".iosqes", "IO Submission Queue Entry Size", FTUint32, BaseDec, 0xf0000),
		reg(nvmePropCC, cc+".iocqes", "IO Completion Queue Entry Size", FTUint32, BaseDec, 0xf00000),
		reg(nvmePropCC, cc+".rsvd1", "Reserved", FTUint32, BaseHex, 0xff000000),

		reg(nvmePropCSTS, csts, "Controller Status", FTUint32, BaseHex, 0),
		reg(nvmePropCSTS, csts+".rdy", "Ready", FTUint32, BaseHex, 0x1),
		reg(nvmePropCSTS, csts+".cfs", "Controller Fatal Status", FTUint32, BaseHex, 0x2),
		reg(nvmePropCSTS, csts+".shst", "Shutdown Status", FTUint32, BaseHex, 0xc),
		reg(nvmePropCSTS, csts+".nssro", "NVM Subsystem Reset Occurred", FTUint32, BaseHex, 0x10),
		reg(nvmePropCSTS, csts+".pp", "Processing Paused", FTUint32, BaseHex, 0x20),
		reg(nvmePropCSTS, csts+".rsvd", "Reserved", FTUint32, BaseHex, 0xffffffc0),

		uintField("nvme.fabrics.prop_get_set.data.4B", "Value", FTUint32, BaseHex, func(p *Packet) (uint64, bool) {
			pr, v, ok := prop(p)
			if !ok || known(pr.offset) || pr.size8 {
				return 0, false
			}
			return uint64(uint32(v)), true
		}),
		// The upper half a 4-byte property leaves of the 8 data bytes.
		uintField("nvme.fabrics.prop_get_set.data.rsvd", "Reserved", FTUint32, BaseHex, func(p *Packet) (uint64, bool) {
			pr, v, ok := prop(p)
			if !ok || pr.size8 || pr.offset == nvmePropCAP {
				return 0, false
			}
			return v >> 32, true
		}),
		uintField("nvme.fabrics.prop_get_set.data.8B", "Value", FTUint64, BaseHex, func(p *Packet) (uint64, bool) {
			pr, v, ok := prop(p)
			if !ok || known(pr.offset) || !pr.size8 {
				return 0, false
			}
			return v, true
		}),
		// A Property Set's completion carries no data: its first 8 bytes.
		bytesField("nvme.fabrics.cqe.prop_set.rsvd", "Reserved", FTBytes, func(p *Packet) ([]byte, bool) {
			if !cqePropSet(p) {
				return nil, false
			}
			return N(p).cqeBytes[:8], true
		}),
	}
	return fields
}
