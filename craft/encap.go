package craft

import (
	"fmt"
	"strings"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// Encap is how the IB transport packets of a conversation travel.
type Encap uint8

// Encapsulations. The zero value is RoCEv2 over IPv4.
const (
	RoCEv2     Encap = iota // Ethernet, IPv4, UDP 4791 (IBTA Annex A17)
	RoCEv2IPv6              // Ethernet, IPv6, UDP 4791 (Annex A17)
	RoCEv1                  // Ethernet type 0x8915, GRH (Annex A16)
	IB                      // native InfiniBand, LRH with LNH=2 (no GRH), LINKTYPE_INFINIBAND
	IBGRH                   // native InfiniBand, LRH with LNH=3 and a GRH, LINKTYPE_INFINIBAND
	ERF                     // native InfiniBand without GRH in ERF type-21 records, LINKTYPE_ERF
	ERFGRH                  // native InfiniBand with GRH in ERF type-21 records, LINKTYPE_ERF
)

var encapNames = [...]string{"rocev2", "rocev2-ipv6", "rocev1", "ib", "ib-grh", "erf", "erf-grh"}

// String returns the name ParseEncap accepts ("rocev2", "rocev2-ipv6", ...).
func (e Encap) String() string {
	if int(e) < len(encapNames) {
		return encapNames[e]
	}
	return fmt.Sprintf("Encap(%d)", uint8(e))
}

// ParseEncap parses an encapsulation name; "rocev2-ipv4" is accepted for rocev2.
func ParseEncap(s string) (Encap, error) {
	s = strings.ToLower(s)
	if s == "rocev2-ipv4" {
		return RoCEv2, nil
	}
	for i, n := range encapNames {
		if n == s {
			return Encap(i), nil
		}
	}
	return 0, fmt.Errorf("craft: unknown encapsulation %q (want one of %s)", s, strings.Join(encapNames[:], ", "))
}

// Encaps returns every encapsulation, in order.
func Encaps() []Encap {
	e := make([]Encap, len(encapNames))
	for i := range e {
		e[i] = Encap(i)
	}
	return e
}

// Valid reports whether e is one of the constants.
func (e Encap) Valid() bool { return int(e) < len(encapNames) }

// Native reports whether frames start with an LRH (possibly inside ERF).
func (e Encap) Native() bool { return e >= IB && e.Valid() }

// HasGRH reports whether the transport packet follows a GRH.
func (e Encap) HasGRH() bool { return e == RoCEv1 || e == IBGRH || e == ERFGRH }

// Ethernet reports whether frames are Ethernet frames.
func (e Encap) Ethernet() bool { return e <= RoCEv1 }

// LinkType returns the pcap link type of the frames.
func (e Encap) LinkType() layers.LinkType {
	switch {
	case e.Ethernet():
		return layers.LinkTypeEthernet
	case e == ERF || e == ERFGRH:
		return layers.LinkTypeERF
	}
	return layers.LinkTypeInfiniBand
}

// FirstLayer returns the layer the frames start with (layers.FirstLayer of
// their link type).
func (e Encap) FirstLayer() gopacket.LayerType {
	first, _ := layers.FirstLayer(e.LinkType(), nil) // never raw IP, never unknown
	return first
}

// Layers returns the layers.Encapsulation the parser reports for e.
func (e Encap) Layers() layers.Encapsulation {
	switch e {
	case RoCEv2:
		return layers.EncapRoCEv2IPv4
	case RoCEv2IPv6:
		return layers.EncapRoCEv2IPv6
	case RoCEv1:
		return layers.EncapRoCEv1
	case IB, ERF:
		return layers.EncapIBLocal
	case IBGRH, ERFGRH:
		return layers.EncapIBGlobal
	}
	return layers.EncapNone
}

// ECN is an explicit congestion notification codepoint.
type ECN uint8

// ECN codepoints. ECNDefault stands for the Config's choice, itself ECT(0)
// unless set.
const (
	ECNDefault ECN = iota
	NotECT
	ECT0
	ECT1
	CE
)

var ecnNames = [...]string{"default", "Not-ECT", "ECT(0)", "ECT(1)", "CE"}

func (e ECN) String() string {
	if int(e) < len(ecnNames) {
		return ecnNames[e]
	}
	return fmt.Sprintf("ECN(%d)", uint8(e))
}

// bits returns the two ECN bits of the IP header (RFC 3168).
func (e ECN) bits() uint8 {
	switch e {
	case ECT1:
		return 1
	case ECT0, ECNDefault:
		return 2
	case CE:
		return 3
	}
	return 0
}
