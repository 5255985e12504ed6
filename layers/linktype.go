package layers

import (
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// LinkType is a LINKTYPE_ value from the tcpdump.org link-layer header type
// registry, kept as the full 32 bits a pcap file header holds (gopacket
// v1.1.19's own LinkType is 8 bits wide and turns LINUX_SLL2, 276, into 20).
// It says how a captured frame starts; FirstLayer says which layer decodes
// that start.
type LinkType uint32

// Link types met in RDMA captures.
const (
	LinkTypeNull       LinkType = 0   // BSD loopback, 4-byte host-order address family
	LinkTypeEthernet   LinkType = 1   // Ethernet (RoCEv1, RoCEv2, rxe)
	LinkTypeRaw        LinkType = 101 // raw IPv4 or IPv6, told apart by the version nibble
	LinkTypeLoop       LinkType = 108 // OpenBSD loopback, network-order address family
	LinkTypeLinuxSLL   LinkType = 113 // Linux cooked capture v1 (16-byte header)
	LinkTypeERF        LinkType = 197 // Endace ERF records (Mellanox ibdump on IB ports)
	LinkTypeIPv4       LinkType = 228 // raw IPv4
	LinkTypeIPv6       LinkType = 229 // raw IPv6
	LinkTypeInfiniBand LinkType = 247 // native InfiniBand, frames start with the LRH
	LinkTypeLinuxSLL2  LinkType = 276 // Linux cooked capture v2 (20 bytes; tcpdump -i any)

	// Some writers put the platform's DLT_RAW in the file header instead of
	// LINKTYPE_RAW: 12 on most systems, 14 on OpenBSD. libpcap reads both as
	// raw IP, and so does FirstLayer.
	linkTypeDLTRaw        LinkType = 12
	linkTypeDLTRawOpenBSD LinkType = 14
)

var linkTypeNames = map[LinkType]string{
	LinkTypeNull: "NULL", LinkTypeEthernet: "ETHERNET", LinkTypeRaw: "RAW", LinkTypeLoop: "LOOP",
	LinkTypeLinuxSLL: "LINUX_SLL", LinkTypeERF: "ERF", LinkTypeIPv4: "IPV4", LinkTypeIPv6: "IPV6",
	LinkTypeInfiniBand: "INFINIBAND", LinkTypeLinuxSLL2: "LINUX_SLL2",
	linkTypeDLTRaw: "RAW", linkTypeDLTRawOpenBSD: "RAW",
}

// String returns the registry name without its LINKTYPE_ prefix, or
// Unknown(n).
func (lt LinkType) String() string {
	if s, ok := linkTypeNames[lt]; ok {
		return s
	}
	return fmt.Sprintf("Unknown(%d)", uint32(lt))
}

// UnsupportedLinkTypeError says that no layer of this package decodes the
// start of frames of a link type.
type UnsupportedLinkTypeError struct {
	LinkType LinkType
	Detail   string // why, when the link type is known but this frame is not
}

func (e *UnsupportedLinkTypeError) Error() string {
	msg := fmt.Sprintf("link type %d (%v) is not supported", uint32(e.LinkType), e.LinkType)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// FirstLayer returns the layer that decodes the start of a frame of link
// type lt: the one a Parser for that frame starts with. Raw IP frames start
// with IPv4 or IPv6 according to their version nibble (whatever the link
// type claims, as Wireshark does), so the frame is needed for those; for
// the other link types it may be nil. BSD loopback (NULL, LOOP) has no
// decoder here.
func FirstLayer(lt LinkType, frame []byte) (gopacket.LayerType, error) {
	switch lt {
	case LinkTypeEthernet:
		return gplayers.LayerTypeEthernet, nil
	case LinkTypeLinuxSLL:
		return LayerTypeLinuxSLL, nil
	case LinkTypeLinuxSLL2:
		return LayerTypeLinuxSLL2, nil
	case LinkTypeERF:
		return LayerTypeERF, nil
	case LinkTypeInfiniBand:
		return LayerTypeLRH, nil
	case LinkTypeRaw, LinkTypeIPv4, LinkTypeIPv6, linkTypeDLTRaw, linkTypeDLTRawOpenBSD:
		if len(frame) > 0 && frame[0]>>4 == 6 {
			return gplayers.LayerTypeIPv6, nil
		}
		if len(frame) > 0 && frame[0]>>4 != 4 {
			return gopacket.LayerTypeZero, &UnsupportedLinkTypeError{LinkType: lt, Detail: fmt.Sprintf("IP version %d", frame[0]>>4)}
		}
		return gplayers.LayerTypeIPv4, nil
	}
	return gopacket.LayerTypeZero, &UnsupportedLinkTypeError{LinkType: lt}
}
