package layers

import (
	"encoding/binary"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// RWHLength is the size of the Raw Header.
const RWHLength = 4

// RWH is the Raw Header (IBTA Vol 1 §5.3.1, §7.7.3) of a raw packet whose
// LRH says LNH 0: an EtherType names what the packet carries (IPv4, ARP ...)
// in place of a BTH. A raw packet has no ICRC; the LRH's VCRC ends it.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Reserved (16)         |        EtherType (16)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	...               the EtherType's packet, up to the VCRC      ...
//
// Wireshark hands what follows to its ethertype table, as the Ethernet
// dissector does; the parser decodes IPv4, IPv6 and ARP, the rest is payload.
type RWH struct {
	Contents []byte
	Payload  []byte

	Reserved  uint16
	EtherType gplayers.EthernetType
}

var rwhFields = []FieldSpan{{"Reserved", 0, 2}, {"EtherType", 2, 2}}

// LayerType returns LayerTypeRWH.
func (r *RWH) LayerType() gopacket.LayerType { return LayerTypeRWH }

// CanDecode returns LayerTypeRWH.
func (r *RWH) CanDecode() gopacket.LayerClass { return LayerTypeRWH }

// LayerContents returns the 4 RWH bytes.
func (r *RWH) LayerContents() []byte { return r.Contents }

// LayerPayload returns the carried packet.
func (r *RWH) LayerPayload() []byte { return r.Payload }

// NextLayerType follows the EtherType into the parser's stack.
func (r *RWH) NextLayerType() gopacket.LayerType { return etherTypeLayer(r.EtherType) }

// etherTypeLayer is the layer of the EtherTypes the parser decodes, and
// payload for the others: untrusted bytes reach no other gopacket decoder.
func etherTypeLayer(t gplayers.EthernetType) gopacket.LayerType {
	switch t {
	case gplayers.EthernetTypeIPv4:
		return gplayers.LayerTypeIPv4
	case gplayers.EthernetTypeIPv6:
		return gplayers.LayerTypeIPv6
	case gplayers.EthernetTypeARP:
		return gplayers.LayerTypeARP
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the RWH in place.
func (r *RWH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < RWHLength {
		df.SetTruncated()
		return checkLength("RWH", rwhFields, len(data))
	}
	r.Reserved = binary.BigEndian.Uint16(data[0:2])
	r.EtherType = gplayers.EthernetType(binary.BigEndian.Uint16(data[2:4]))
	r.Contents, r.Payload = data[:RWHLength], data[RWHLength:]
	return nil
}

// SerializeTo prepends the RWH.
func (r *RWH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	h, err := b.PrependBytes(RWHLength)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h[0:2], r.Reserved)
	binary.BigEndian.PutUint16(h[2:4], uint16(r.EtherType))
	return nil
}

func decodeRWH(data []byte, p gopacket.PacketBuilder) error {
	r := &RWH{}
	if err := r.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(r)
	return p.NextDecoder(r.NextLayerType())
}

// EtherTypeName names the EtherTypes a raw packet or an IBA payload
// commonly carries, as Wireshark's ethertype names them.
func EtherTypeName(t uint16) (string, bool) {
	switch gplayers.EthernetType(t) {
	case gplayers.EthernetTypeIPv4:
		return "IPv4", true
	case gplayers.EthernetTypeARP:
		return "ARP", true
	case gplayers.EthernetTypeIPv6:
		return "IPv6", true
	case gplayers.EthernetTypeDot1Q:
		return "802.1Q Virtual LAN", true
	case EthernetTypeRoCEv1:
		return "RDMA over Converged Ethernet", true
	}
	return "", false
}
