package layers

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
)

// Linux cooked captures (SLL and SLL2, written by tcpdump -i any) have
// layers here because gopacket v1.1.19 has no SLL2 and its SLL slices past
// the address field when the address length exceeds 8.

var (
	sllFields  = []FieldSpan{{"PacketType", 0, 2}, {"AddrType", 2, 2}, {"AddrLen", 4, 2}, {"Addr", 6, 8}, {"Protocol", 14, 2}}
	sll2Fields = []FieldSpan{{"Protocol", 0, 2}, {"Reserved", 2, 2}, {"InterfaceIndex", 4, 4}, {"AddrType", 8, 2},
		{"PacketType", 10, 1}, {"AddrLen", 11, 1}, {"Addr", 12, 8}}
	errSLLAddr = errors.New("linux sll: address longer than 8 bytes")
)

// SLLPacketType says where a cooked-capture packet was going (Linux
// PACKET_HOST and friends).
type SLLPacketType uint16

// Packet types of Linux cooked captures.
const (
	SLLHost      SLLPacketType = 0 // to us
	SLLBroadcast SLLPacketType = 1 // to all
	SLLMulticast SLLPacketType = 2 // to a group
	SLLOtherHost SLLPacketType = 3 // to someone else, seen in promiscuous mode
	SLLOutgoing  SLLPacketType = 4 // sent by us
)

var sllPacketTypeNames = [...]string{"host", "broadcast", "multicast", "otherhost", "outgoing"}

// String returns the kernel's name without the PACKET_ prefix, in lower case.
func (t SLLPacketType) String() string {
	if int(t) < len(sllPacketTypeNames) {
		return sllPacketTypeNames[t]
	}
	return fmt.Sprintf("Unknown(%d)", uint16(t))
}

// sllNext maps the protocol field to the next layer. Values below 0x0600
// are not ethertypes in cooked captures (1 is 802.3 Novell, 4 is 802.2
// LLC, netlink families on netlink taps), so they end at the payload.
func sllNext(proto gplayers.EthernetType) gopacket.LayerType {
	if proto >= 0x0600 {
		if lt := proto.LayerType(); lt != gopacket.LayerTypeZero {
			return lt
		}
	}
	return gopacket.LayerTypePayload
}

// LinuxSLL is the Linux cooked-capture header, version 1
// (LINKTYPE_LINUX_SLL, 113), which libpcap writes for "any" devices and
// links without a usable link-layer header. All fields are big-endian.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-------------------------------+-------------------------------+
//	|          packet type          |      ARPHRD_ address type     |
//	+-------------------------------+-------------------------------+
//	|   link-layer address length   |                               |
//	+-------------------------------+                               +
//	|          link-layer address (8 bytes, zero padded)            |
//	+                               +-------------------------------+
//	|                               |         protocol type         |
//	+-------------------------------+-------------------------------+
type LinuxSLL struct {
	gplayers.BaseLayer
	PacketType SLLPacketType
	AddrType   uint16 // ARPHRD_ETHER (1), ARPHRD_INFINIBAND (32), ...
	AddrLen    uint16 // may exceed 8; only 8 bytes are kept
	Addr       []byte // the first min(AddrLen, 8) bytes of the address field
	Protocol   gplayers.EthernetType
}

// LayerType returns LayerTypeLinuxSLL.
func (s *LinuxSLL) LayerType() gopacket.LayerType { return LayerTypeLinuxSLL }

// CanDecode returns LayerTypeLinuxSLL.
func (s *LinuxSLL) CanDecode() gopacket.LayerClass { return LayerTypeLinuxSLL }

// NextLayerType returns the layer of the protocol field's ethertype.
func (s *LinuxSLL) NextLayerType() gopacket.LayerType { return sllNext(s.Protocol) }

// DecodeFromBytes decodes the 16-byte header; Addr slices into data.
func (s *LinuxSLL) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := checkLength("LinuxSLL", sllFields, len(data)); err != nil {
		df.SetTruncated()
		return err
	}
	s.PacketType = SLLPacketType(binary.BigEndian.Uint16(data))
	s.AddrType = binary.BigEndian.Uint16(data[2:])
	s.AddrLen = binary.BigEndian.Uint16(data[4:])
	s.Addr = data[6 : 6+min(int(s.AddrLen), 8)]
	s.Protocol = gplayers.EthernetType(binary.BigEndian.Uint16(data[14:]))
	s.BaseLayer = gplayers.BaseLayer{Contents: data[:16], Payload: data[16:]}
	return nil
}

// SerializeTo prepends the header; with FixLengths, AddrLen becomes
// len(Addr).
func (s *LinuxSLL) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if len(s.Addr) > 8 {
		return errSLLAddr
	}
	h, err := b.PrependBytes(16)
	if err != nil {
		return err
	}
	if opts.FixLengths {
		s.AddrLen = uint16(len(s.Addr))
	}
	binary.BigEndian.PutUint16(h, uint16(s.PacketType))
	binary.BigEndian.PutUint16(h[2:], s.AddrType)
	binary.BigEndian.PutUint16(h[4:], s.AddrLen)
	clear(h[6:14]) // PrependBytes hands back old bytes
	copy(h[6:14], s.Addr)
	binary.BigEndian.PutUint16(h[14:], uint16(s.Protocol))
	return nil
}

// LinuxSLL2 is the Linux cooked-capture header, version 2
// (LINKTYPE_LINUX_SLL2, 276), which tcpdump -i any writes since libpcap
// 1.10. It adds the interface index. All fields are big-endian.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-------------------------------+-------------------------------+
//	|         protocol type         |       reserved (MBZ)          |
//	+-------------------------------+-------------------------------+
//	|                        interface index                        |
//	+-------------------------------+---------------+---------------+
//	|      ARPHRD_ address type     |  packet type  | address length|
//	+-------------------------------+---------------+---------------+
//	|          link-layer address (8 bytes, zero padded)            |
//	+                                                               +
//	|                                                               |
//	+---------------------------------------------------------------+
type LinuxSLL2 struct {
	gplayers.BaseLayer
	Protocol       gplayers.EthernetType
	Reserved       uint16
	InterfaceIndex uint32
	AddrType       uint16
	PacketType     SLLPacketType // one byte on the wire
	AddrLen        uint8
	Addr           []byte // the first min(AddrLen, 8) bytes of the address field
}

// LayerType returns LayerTypeLinuxSLL2.
func (s *LinuxSLL2) LayerType() gopacket.LayerType { return LayerTypeLinuxSLL2 }

// CanDecode returns LayerTypeLinuxSLL2.
func (s *LinuxSLL2) CanDecode() gopacket.LayerClass { return LayerTypeLinuxSLL2 }

// NextLayerType returns the layer of the protocol field's ethertype.
func (s *LinuxSLL2) NextLayerType() gopacket.LayerType { return sllNext(s.Protocol) }

// DecodeFromBytes decodes the 20-byte header; Addr slices into data.
func (s *LinuxSLL2) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := checkLength("LinuxSLL2", sll2Fields, len(data)); err != nil {
		df.SetTruncated()
		return err
	}
	s.Protocol = gplayers.EthernetType(binary.BigEndian.Uint16(data))
	s.Reserved = binary.BigEndian.Uint16(data[2:])
	s.InterfaceIndex = binary.BigEndian.Uint32(data[4:])
	s.AddrType = binary.BigEndian.Uint16(data[8:])
	s.PacketType = SLLPacketType(data[10])
	s.AddrLen = data[11]
	s.Addr = data[12 : 12+min(int(s.AddrLen), 8)]
	s.BaseLayer = gplayers.BaseLayer{Contents: data[:20], Payload: data[20:]}
	return nil
}

// SerializeTo prepends the header; with FixLengths, AddrLen becomes
// len(Addr).
func (s *LinuxSLL2) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if len(s.Addr) > 8 {
		return errSLLAddr
	}
	h, err := b.PrependBytes(20)
	if err != nil {
		return err
	}
	if opts.FixLengths {
		s.AddrLen = uint8(len(s.Addr))
	}
	binary.BigEndian.PutUint16(h, uint16(s.Protocol))
	binary.BigEndian.PutUint16(h[2:], s.Reserved)
	binary.BigEndian.PutUint32(h[4:], s.InterfaceIndex)
	binary.BigEndian.PutUint16(h[8:], s.AddrType)
	h[10], h[11] = uint8(s.PacketType), s.AddrLen
	clear(h[12:20])
	copy(h[12:20], s.Addr)
	return nil
}

func decodeLinuxSLL(data []byte, p gopacket.PacketBuilder) error {
	s := &LinuxSLL{}
	if err := s.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(s)
	return p.NextDecoder(s.NextLayerType())
}

func decodeLinuxSLL2(data []byte, p gopacket.PacketBuilder) error {
	s := &LinuxSLL2{}
	if err := s.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(s)
	return p.NextDecoder(s.NextLayerType())
}
