package capture

import "github.com/google/gopacket"

// DecodingLinkLayers returns, for each link type whose first header this
// package decodes (Linux SLL and SLL2), a function giving the first layer
// type and fresh decoding layers for a parser. It is the value of
// decode.Options.LinkLayers; capture does not import decode, so the map is
// spelled in gopacket's types.
func DecodingLinkLayers() map[uint32]func() (gopacket.LayerType, []gopacket.DecodingLayer) {
	return map[uint32]func() (gopacket.LayerType, []gopacket.DecodingLayer){
		uint32(LinkTypeLinuxSLL): func() (gopacket.LayerType, []gopacket.DecodingLayer) {
			return LayerTypeLinuxSLL, []gopacket.DecodingLayer{&LinuxSLL{}}
		},
		uint32(LinkTypeLinuxSLL2): func() (gopacket.LayerType, []gopacket.DecodingLayer) {
			return LayerTypeLinuxSLL2, []gopacket.DecodingLayer{&LinuxSLL2{}}
		},
	}
}
