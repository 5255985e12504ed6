package layers

import (
	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// Layer types live in gopacket's application range 1000-1999, which
// gopacket keeps in an array (the fast path); the numbers here never change
// meaning.
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(1000, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH          = gopacket.RegisterLayerType(1001, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH          = gopacket.RegisterLayerType(1002, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeRDETH        = gopacket.RegisterLayerType(1003, gopacket.LayerTypeMetadata{Name: "RDETH", Decoder: ethOnlyInBTH})
	LayerTypeDETH         = gopacket.RegisterLayerType(1004, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: ethOnlyInBTH})
	LayerTypeXRCETH       = gopacket.RegisterLayerType(1005, gopacket.LayerTypeMetadata{Name: "XRCETH", Decoder: ethOnlyInBTH})
	LayerTypeFETH         = gopacket.RegisterLayerType(1006, gopacket.LayerTypeMetadata{Name: "FETH", Decoder: ethOnlyInBTH})
	LayerTypeRETH         = gopacket.RegisterLayerType(1007, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: ethOnlyInBTH})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1008, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: ethOnlyInBTH})
	LayerTypeAETH         = gopacket.RegisterLayerType(1009, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: ethOnlyInBTH})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1010, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: ethOnlyInBTH})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1011, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: ethOnlyInBTH})
	LayerTypeIETH         = gopacket.RegisterLayerType(1012, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: ethOnlyInBTH})
	LayerTypeCNP          = gopacket.RegisterLayerType(1013, gopacket.LayerTypeMetadata{Name: "CNP", Decoder: ethOnlyInBTH})
	LayerTypeTrailer      = gopacket.RegisterLayerType(1014, gopacket.LayerTypeMetadata{Name: "ICRC", Decoder: ethOnlyInBTH})
	LayerTypeERF          = gopacket.RegisterLayerType(1015, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: gopacket.DecodeFunc(decodeERF)})
	LayerTypeMAD          = gopacket.RegisterLayerType(1016, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMADPacket)})
	LayerTypeSMP          = gopacket.RegisterLayerType(1017, gopacket.LayerTypeMetadata{Name: "SMP", Decoder: madClassOnlyInMAD})
	LayerTypeSMPDirected  = gopacket.RegisterLayerType(1018, gopacket.LayerTypeMetadata{Name: "SMPDirected", Decoder: madClassOnlyInMAD})
	LayerTypeSA           = gopacket.RegisterLayerType(1019, gopacket.LayerTypeMetadata{Name: "SA", Decoder: madClassOnlyInMAD})
	LayerTypePerfMgt      = gopacket.RegisterLayerType(1020, gopacket.LayerTypeMetadata{Name: "PerfMgt", Decoder: madClassOnlyInMAD})
	LayerTypeCM           = gopacket.RegisterLayerType(1021, gopacket.LayerTypeMetadata{Name: "CM", Decoder: madClassOnlyInMAD})
	// Raw packets (LRH LNH 0) carry an RWH, whose EtherType leads on; EoIB
	// is found in UD payloads by heuristic only, so the parser never
	// decodes it on its own (decode reads it on demand).
	LayerTypeRWH  = gopacket.RegisterLayerType(1022, gopacket.LayerTypeMetadata{Name: "RWH", Decoder: gopacket.DecodeFunc(decodeRWH)})
	LayerTypeEoIB = gopacket.RegisterLayerType(1023, gopacket.LayerTypeMetadata{Name: "EoIB", Decoder: gopacket.DecodeFunc(decodeEoIB)})
	// MAC Control (ethertype 0x8808: PAUSE and PFC) is not InfiniBand, but
	// PFC is what keeps RoCE's Ethernet lossless.
	LayerTypeMACControl = gopacket.RegisterLayerType(1024, gopacket.LayerTypeMetadata{Name: "MACControl", Decoder: gopacket.DecodeFunc(decodeMACControl)})
	// ERSPAN type III (GRE protocol 0x22EB), around frames a switch mirrors;
	// gopacket has type II only. Numbered apart from the InfiniBand headers.
	LayerTypeERSPANIII = gopacket.RegisterLayerType(1040, gopacket.LayerTypeMetadata{Name: "ERSPANIII", Decoder: gopacket.DecodeFunc(decodeERSPANIII)})

	// The Linux cooked-capture headers (tcpdump -i any) sit apart from the
	// InfiniBand numbers, at 1900 and 1901; a layer type number never
	// changes once given.
	LayerTypeLinuxSLL  = gopacket.RegisterLayerType(1900, gopacket.LayerTypeMetadata{Name: "LinuxSLL", Decoder: gopacket.DecodeFunc(decodeLinuxSLL)})
	LayerTypeLinuxSLL2 = gopacket.RegisterLayerType(1901, gopacket.LayerTypeMetadata{Name: "LinuxSLL2", Decoder: gopacket.DecodeFunc(decodeLinuxSLL2)})
)

// Well-known numbers the registration below hooks into gopacket.
const (
	// EthernetTypeRoCEv1 is the ethertype of RoCE v1 (IBTA Annex A16): a GRH follows.
	EthernetTypeRoCEv1 gplayers.EthernetType = 0x8915
	// UDPPortRoCEv2 is RoCEv2Port as gopacket's port type.
	UDPPortRoCEv2 gplayers.UDPPort = RoCEv2Port
)

// RoCEv2Port is the IANA UDP port of RoCE v2 (IBTA Annex A17): the
// destination port of every RoCEv2 packet, and a BTH follows.
const RoCEv2Port = 4791

func init() {
	// RoCEv1: ethertype 0x8915 carries a GRH (gopacket has no constant for it).
	gplayers.EthernetTypeMetadata[EthernetTypeRoCEv1] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeGRH, Name: "RoCEv1", LayerType: LayerTypeGRH,
	}
	// MAC Control (PAUSE, PFC): gopacket v1.1.19 knows no 0x8808. Ethernet
	// and 802.1Q both find the next layer in this table.
	gplayers.EthernetTypeMetadata[EthernetTypeMACControl] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeMACControl, Name: "MACControl", LayerType: LayerTypeMACControl,
	}
	// ERSPAN type III under GRE: gopacket v1.1.19 knows type II (0x88BE) only.
	gplayers.EthernetTypeMetadata[EthernetTypeERSPANIII] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeERSPANIII, Name: "ERSPAN Type III", LayerType: LayerTypeERSPANIII,
	}
	// RoCEv2: UDP port 4791 carries a BTH. gopacket tries the destination port
	// first, then the source port (Wireshark tries the lower one first).
	gplayers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
	// Native InfiniBand captures: LINKTYPE_INFINIBAND starts at the LRH,
	// LINKTYPE_ERF wraps each packet in an Endace record.
	// (gopacket's link types are 8 bits wide; these two fit.)
	gplayers.LinkTypeMetadata[gplayers.LinkType(LinkTypeInfiniBand)] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeLRH, Name: "InfiniBand", LayerType: LayerTypeLRH,
	}
	gplayers.LinkTypeMetadata[gplayers.LinkType(LinkTypeERF)] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeERF, Name: "ERF", LayerType: LayerTypeERF,
	}
}

// ethOnlyInBTH is the packet-API decoder of the extended headers: they are
// decoded by the BTH, which alone knows the opcode that orders them.
var ethOnlyInBTH = gopacket.DecodeFunc(func(data []byte, p gopacket.PacketBuilder) error {
	return malformed("BTH", "OpCode", 0, "an extended transport header cannot be decoded without its BTH")
})

// madClassOnlyInMAD is the packet-API decoder of MAD class bodies: they are
// decoded by the MAD, whose header names the class and attribute.
var madClassOnlyInMAD = gopacket.DecodeFunc(func(data []byte, p gopacket.PacketBuilder) error {
	return malformed("MAD", "MgmtClass", 0, "a MAD class body cannot be decoded without its MAD header")
})
