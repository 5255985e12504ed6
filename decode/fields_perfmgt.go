package decode

import (
	"github.com/ibwire/ibwire/layers"
)

const (
	perfNode    = "infiniband.portcounters"
	perfExtNode = "infiniband.portcounters_ext"
)

// perfCounters holds a PerfMgt packet's counters, decoded once for all of
// the packet's fields (-T fields asks for each).
type perfCounters struct {
	decoded bool
	pc      layers.PortCounters
	ext     layers.PortCountersExtended
}

// counters decodes the packet's PortCounters or PortCountersExtended, once
// per packet when the Decoder gave it room (Packet.perf), else each time.
func (p *Packet) counters() *perfCounters {
	c := p.perf
	if c == nil {
		c = &perfCounters{}
	} else if c.decoded {
		return c
	}
	pm := &p.Headers.MAD.PerfMgt
	switch {
	case pm.AttributeID == layers.PerfAttrPortCounters && len(pm.Data) >= layers.PortCountersLength:
		c.pc = layers.DecodePortCounters(pm.Data)
	case pm.AttributeID == layers.PerfAttrPortCountersExtended && len(pm.Data) >= layers.PortCountersExtendedLength:
		c.ext = layers.DecodePortCountersExtended(pm.Data)
	}
	c.decoded = true
	return c
}

// perfMgtFields are Wireshark's PortCounters and PortCountersExtended
// fields (infiniband.portcounters.*, infiniband.portcounters_ext.*), which
// tshark 4.0 dissects in requests and responses alike; the values come from
// layers' decoding of the PerfMgt data.
func perfMgtFields() []*Field {
	has := func(p *Packet, a layers.PerfAttribute, n int) bool {
		return p.has&hasMAD != 0 && p.Headers.MAD.MgmtClass == layers.MgmtClassPerf &&
			p.Headers.MAD.PerfMgt.Contents != nil && p.Headers.MAD.PerfMgt.AttributeID == a &&
			len(p.Headers.MAD.PerfMgt.Data) >= n
	}
	isPC := func(p *Packet) bool { return has(p, layers.PerfAttrPortCounters, layers.PortCountersLength) }
	isExt := func(p *Packet) bool {
		return has(p, layers.PerfAttrPortCountersExtended, layers.PortCountersExtendedLength)
	}
	pc := func(name, title string, t FieldType, base Base, get func(c *layers.PortCounters) uint64) *Field {
		return uintField("infiniband.portcounters."+name, title, t, base, func(p *Packet) (uint64, bool) {
			if !isPC(p) {
				return 0, false
			}
			return get(&p.counters().pc), true
		})
	}
	ext := func(name, title string, t FieldType, base Base, get func(c *layers.PortCountersExtended) uint64) *Field {
		return uintField("infiniband.portcounters_ext."+name, title, t, base, func(p *Packet) (uint64, bool) {
			if !isExt(p) {
				return 0, false
			}
			return get(&p.counters().ext), true
		})
	}
	// reserved is reserved span i of the counters, where the tree shows it.
	reserved := func(parent string, has func(p *Packet) bool, i int) *Field {
		return reservedItem(parent, func(p *Packet) []byte {
			if !has(p) {
				return nil
			}
			if i < 0 { // the 40 bytes before the counters
				return p.Headers.MAD.PerfMgt.Reserved
			}
			return layers.PortCountersReservedBytes(p.Headers.MAD.PerfMgt.Data, parent == perfExtNode, i)
		})
	}
	// treeMask: tshark 4.0 draws these two as bit fields in the tree but
	// registers them without a mask.
	treeMask := func(f *Field, mask uint64) *Field {
		f.shapeOf().mask, f.shapeOf().maskTreeOnly = mask, true
		return f
	}
	type PC = layers.PortCounters
	type X = layers.PortCountersExtended
	return []*Field{
		noneField("infiniband.portcounters", "Port Counters (Performance Management MAD)", isPC),
		reserved(perfNode, isPC, -1),
		reserved(perfNode, isPC, 0),
		pc("portselect", "PortSelect", FTUint8, BaseHex, func(c *PC) uint64 { return uint64(c.PortSelect) }),
		pc("counterselect", "CounterSelect", FTUint16, BaseHex, func(c *PC) uint64 { return uint64(c.CounterSelect) }),
		pc("symbolerrorcounter", "SymbolErrorCounter", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.SymbolErrorCounter) }),
		pc("linkerrorrecoverycounter", "LinkErrorRecoveryCounter", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.LinkErrorRecoveryCounter) }),
		pc("linkdownedcounter", "LinkDownedCounter", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.LinkDownedCounter) }),
		pc("portrcverrors", "PortRcvErrors", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvErrors) }),
		pc("portrcvremotephysicalerrors", "PortRcvRemotePhysicalErrors", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvRemotePhysicalErrors) }),
		pc("portrcvswitchrelayerrors", "PortRcvSwitchRelayErrors", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvSwitchRelayErrors) }),
		pc("portxmitdiscards", "PortXmitDiscards", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitDiscards) }),
		pc("portxmitconstrainterrors", "PortXmitConstraintErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitConstraintErrors) }),
		pc("portrcvconstrainterrors", "PortRcvConstraintErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvConstraintErrors) }),
		reserved(perfNode, isPC, 1),
		treeMask(pc("locallinkintegrityerrors", "LocalLinkIntegrityErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.LocalLinkIntegrityErrors) }), 0xf0),
		treeMask(pc("excessivebufferoverrunerrors", "ExcessiveBufferOverrunErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.ExcessiveBufferOverrunErrors) }), 0x0f),
		reserved(perfNode, isPC, 2),
		pc("vl15dropped", "VL15Dropped", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.VL15Dropped) }),
		pc("portxmitdata", "PortXmitData", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitData) }),
		pc("portrcvdata", "PortRcvData", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvData) }),
		pc("portxmitpkts", "PortXmitPkts", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitPkts) }),
		pc("portrcvpkts", "PortRcvPkts", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvPkts) }),

		noneField("infiniband.portcounters_ext", "Port Counters Extended (Performance Management MAD)", isExt),
		reserved(perfExtNode, isExt, -1),
		reserved(perfExtNode, isExt, 0),
		ext("portselect", "PortSelect", FTUint8, BaseHex, func(c *X) uint64 { return uint64(c.PortSelect) }),
		ext("counterselect", "CounterSelect", FTUint16, BaseHex, func(c *X) uint64 { return uint64(c.CounterSelect) }),
		reserved(perfExtNode, isExt, 1),
		ext("portxmitdata", "PortXmitData", FTUint64, BaseDec, func(c *X) uint64 { return c.PortXmitData }),
		ext("portrcvdata", "PortRcvData", FTUint64, BaseDec, func(c *X) uint64 { return c.PortRcvData }),
		ext("portxmitpkts", "PortXmitPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortXmitPkts }),
		ext("portrcvpkts", "PortRcvPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortRcvPkts }),
		ext("portunicastxmitpkts", "PortUnicastXmitPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortUnicastXmitPkts }),
		ext("portunicastrcvpkts", "PortUnicastRcvPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortUnicastRcvPkts }),
		ext("portmulticastxmitpkts", "PortMulticastXmitPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortMulticastXmitPkts }),
		ext("portmulticastrcvpkts", "PortMulticastRcvPkts", FTUint64, BaseDec, func(c *X) uint64 { return c.PortMulticastRcvPkts }),
	}
}
