package capture

import (
	"fmt"
	"sync"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// LinkType is a LINKTYPE_ value from the tcpdump.org link-layer header type
// registry, kept as the full 32 bits the pcap file header holds (gopacket
// v1.1.19's own LinkType is 8 bits wide).
type LinkType uint32

// Link types ibwire meets in RDMA captures.
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
)

var linkTypeNames = map[LinkType]string{
	LinkTypeNull: "NULL", LinkTypeEthernet: "ETHERNET", LinkTypeRaw: "RAW", LinkTypeLoop: "LOOP",
	LinkTypeLinuxSLL: "LINUX_SLL", LinkTypeERF: "ERF", LinkTypeIPv4: "IPV4", LinkTypeIPv6: "IPV6",
	LinkTypeInfiniBand: "INFINIBAND", LinkTypeLinuxSLL2: "LINUX_SLL2",
}

// String returns the registry name without its LINKTYPE_ prefix, or
// Unknown(n).
func (lt LinkType) String() string {
	if s, ok := linkTypeNames[lt]; ok {
		return s
	}
	return fmt.Sprintf("Unknown(%d)", uint32(lt))
}

// firstLayers maps link types to the layer decoding the start of a frame.
// It is guarded because RegisterLinkTypeLayer may run while readers decode.
var firstLayers = struct {
	sync.RWMutex
	m map[LinkType]gopacket.LayerType
}{m: map[LinkType]gopacket.LayerType{
	LinkTypeNull:      gplayers.LayerTypeLoopback,
	LinkTypeLoop:      gplayers.LayerTypeLoopback,
	LinkTypeEthernet:  gplayers.LayerTypeEthernet,
	LinkTypeRaw:       gplayers.LayerTypeIPv4,
	LinkTypeIPv4:      gplayers.LayerTypeIPv4,
	LinkTypeIPv6:      gplayers.LayerTypeIPv6,
	LinkTypeLinuxSLL:  LayerTypeLinuxSLL,
	LinkTypeLinuxSLL2: LayerTypeLinuxSLL2,
}}

// RegisterLinkTypeLayer makes first the layer that decodes the start of
// frames of link type lt, replacing any earlier mapping. The layers package
// owns the ERF and LRH layers, which capture must not import, so the caller
// wires LinkTypeERF and LinkTypeInfiniBand here.
func RegisterLinkTypeLayer(lt LinkType, first gopacket.LayerType) {
	firstLayers.Lock()
	defer firstLayers.Unlock()
	firstLayers.m[lt] = first
}

// FirstLayer returns the layer that decodes the start of a frame of link
// type lt. For LinkTypeRaw it answers IPv4, the common case; FirstLayerOf
// looks at the frame to tell IPv4 from IPv6.
func FirstLayer(lt LinkType) (gopacket.LayerType, error) {
	firstLayers.RLock()
	first, ok := firstLayers.m[lt]
	firstLayers.RUnlock()
	if !ok {
		return gopacket.LayerTypeZero, fmt.Errorf("capture: %w %v", ErrNoDecoder, lt)
	}
	return first, nil
}

// FirstLayerOf is FirstLayer for one frame: a LinkTypeRaw frame starts with
// IPv4 or IPv6 according to its version nibble.
func FirstLayerOf(lt LinkType, frame []byte) (gopacket.LayerType, error) {
	if lt == LinkTypeRaw && len(frame) > 0 {
		switch frame[0] >> 4 {
		case 4:
			return gplayers.LayerTypeIPv4, nil
		case 6:
			return gplayers.LayerTypeIPv6, nil
		}
		return gopacket.LayerTypeZero, fmt.Errorf("capture: %w %v (IP version %d)", ErrNoDecoder, lt, frame[0]>>4)
	}
	return FirstLayer(lt)
}
