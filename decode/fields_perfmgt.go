package decode

import (
	"github.com/ibwire/ibwire/layers"
)

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
			c := layers.DecodePortCounters(p.Headers.MAD.PerfMgt.Data)
			return get(&c), true
		})
	}
	ext := func(name, title string, t FieldType, base Base, get func(c *layers.PortCountersExtended) uint64) *Field {
		return uintField("infiniband.portcounters_ext."+name, title, t, base, func(p *Packet) (uint64, bool) {
			if !isExt(p) {
				return 0, false
			}
			c := layers.DecodePortCountersExtended(p.Headers.MAD.PerfMgt.Data)
			return get(&c), true
		})
	}
	type PC = layers.PortCounters
	type X = layers.PortCountersExtended
	return []*Field{
		noneField("infiniband.portcounters", "Port Counters (Performance Management MAD)", isPC),
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
		pc("locallinkintegrityerrors", "LocalLinkIntegrityErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.LocalLinkIntegrityErrors) }),
		pc("excessivebufferoverrunerrors", "ExcessiveBufferOverrunErrors", FTUint8, BaseDec, func(c *PC) uint64 { return uint64(c.ExcessiveBufferOverrunErrors) }),
		pc("vl15dropped", "VL15Dropped", FTUint16, BaseDec, func(c *PC) uint64 { return uint64(c.VL15Dropped) }),
		pc("portxmitdata", "PortXmitData", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitData) }),
		pc("portrcvdata", "PortRcvData", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvData) }),
		pc("portxmitpkts", "PortXmitPkts", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortXmitPkts) }),
		pc("portrcvpkts", "PortRcvPkts", FTUint32, BaseDec, func(c *PC) uint64 { return uint64(c.PortRcvPkts) }),

		noneField("infiniband.portcounters_ext", "Port Counters Extended (Performance Management MAD)", isExt),
		ext("portselect", "PortSelect", FTUint8, BaseHex, func(c *X) uint64 { return uint64(c.PortSelect) }),
		ext("counterselect", "CounterSelect", FTUint16, BaseHex, func(c *X) uint64 { return uint64(c.CounterSelect) }),
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
