package fuzz

import (
	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// linkLayers wires capture's Linux cooked-capture headers into the decoder,
// as ibdump does.
func linkLayers() map[uint32]decode.LinkLayerFactory {
	return map[uint32]decode.LinkLayerFactory{
		uint32(capture.LinkTypeLinuxSLL): func() (gopacket.LayerType, []gopacket.DecodingLayer) {
			return capture.LayerTypeLinuxSLL, []gopacket.DecodingLayer{&capture.LinuxSLL{}}
		},
		uint32(capture.LinkTypeLinuxSLL2): func() (gopacket.LayerType, []gopacket.DecodingLayer) {
			return capture.LayerTypeLinuxSLL2, []gopacket.DecodingLayer{&capture.LinuxSLL2{}}
		},
	}
}
