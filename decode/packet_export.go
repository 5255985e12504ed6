package decode

import (
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Accessors for values the registry's getters compute from a packet's
// headers and analysis, for callers that read a whole row at once (the
// Parquet export) and should not redo the protocol arithmetic themselves.

// DSCP returns the packet's Differentiated Services Codepoint, the six
// high bits of the IPv4 TOS or the IPv6 traffic class (ip.dsfield.dscp,
// ipv6.tclass.dscp); ok is false when it has no IP header. Its ECN
// codepoint, the two low bits, is ECN's.
func (p *Packet) DSCP() (dscp uint8, ok bool) {
	switch {
	case p.has&hasIPv4 != 0:
		return p.Headers.IPv4.TOS >> 2, true
	case p.has&hasIPv6 != 0:
		return p.Headers.IPv6.TrafficClass >> 2, true
	}
	return 0, false
}

// RemoteAddress returns the virtual address and R_Key the packet names,
// from its AtomicETH or else its RETH (infiniband.reth.va and .r_key,
// which serve both as Wireshark does); ok is false when it has neither.
func (p *Packet) RemoteAddress() (va uint64, rkey uint32, ok bool) {
	if p.has&hasBTH == 0 {
		return 0, 0, false
	}
	b := &p.Headers.BTH
	switch {
	case b.HasETH(layers.HdrAtomicETH):
		return b.AtomicETH.VA, b.AtomicETH.RKey, true
	case b.HasETH(layers.HdrRETH):
		return b.RETH.VA, b.RETH.RKey, true
	}
	return 0, 0, false
}

// NAK returns the code of the NAK the analysis found at the packet
// (ibwire.analysis.nak); ok is false when it found none.
func (p *Packet) NAK() (code layers.NAKCode, ok bool) {
	if !p.Analysis.Has(FindNAK) {
		return 0, false
	}
	return p.Headers.BTH.AETH.Syndrome.NAKCode(), true
}

// RNRTimer returns the timer of the RNR NAK the analysis found at the
// packet (ibwire.analysis.rnr_timer); ok is false when it found none.
func (p *Packet) RNRTimer() (timer time.Duration, ok bool) {
	if !p.Analysis.Has(FindRNRNAK) {
		return 0, false
	}
	return p.Headers.BTH.AETH.Syndrome.RNRTimer(), true
}
