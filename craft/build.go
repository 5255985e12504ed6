package craft

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// Side names one end of a queue pair.
type Side uint8

// The two ends. The requester posts the work requests (and is the active
// side of a CM exchange); the responder answers.
const (
	Requester Side = iota
	Responder
)

func (s Side) String() string {
	if s == Requester {
		return "requester"
	}
	return "responder"
}

// Other returns the opposite side.
func (s Side) Other() Side { return 1 - s }

// Frame is one captured frame.
type Frame struct {
	Data     []byte
	Time     time.Time
	LinkType layers.LinkType // Ethernet, InfiniBand or ERF
	Info     FrameInfo
}

// FrameInfo says what craft put in a frame, for manifests and tests.
type FrameInfo struct {
	From    Side
	Opcode  layers.Opcode // as sent (after any corruption of the opcode)
	DestQP  uint32
	PSN     layers.PSN
	Note    string      // its part in the conversation, e.g. "op 2 write, packet 3" or "CM REQ"
	Corrupt CorruptKind // how the frame was broken on purpose, or NoCorruption
	Raw     bool        // a raw packet (BuildRaw): no BTH, so no Opcode, PSN or DestQP
}

// String summarises the frame on one line: "RC_RDMA_WRITE_FIRST psn 256: op 1 write, packet 1".
func (i FrameInfo) String() string {
	s := fmt.Sprintf("%v psn %d", i.Opcode, i.PSN)
	if i.Raw {
		s = "raw"
	}
	if i.Note != "" {
		s += ": " + i.Note
	}
	if i.Corrupt != NoCorruption {
		s += " [" + i.Corrupt.String() + "]"
	}
	return s
}

// Packet is one IB transport packet given by its field values: the BTH with
// the extended headers its opcode calls for filled in (BTH.RETH, BTH.AETH,
// ...), and the payload. Pad bytes and PadCount follow from the payload
// length; the ICRC (and VCRC) are computed over the finished frame.
type Packet struct {
	From    Side
	BTH     layers.BTH
	Payload []byte

	// Per-packet framing; zero values take the Config's.
	IPID       uint16 // IPv4 identification (rxe with PMTU discovery: 0)
	UDPSrcPort uint16
	ECN        ECN // RoCEv2; CE on RoCEv1 and native IB sets BTH.FECN instead
	VL         uint8
	VLSet      bool // use VL even when 0 (VL 15 for management is set automatically for QP0)
}

// Builder turns Packets into frames for one Config.
type Builder struct {
	cfg Config
}

// NewBuilder checks cfg, fills in its defaults and returns a Builder.
func NewBuilder(cfg Config) (*Builder, error) {
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &Builder{cfg: c}, nil
}

// Config returns the builder's configuration with its defaults filled in.
func (b *Builder) Config() Config { return b.cfg }

// endpoints returns the sender and the receiver of a packet from side s.
func (b *Builder) endpoints(s Side) (src, dst *Endpoint) {
	if s == Requester {
		return &b.cfg.Requester, &b.cfg.Responder
	}
	return &b.cfg.Responder, &b.cfg.Requester
}

// Build serializes p into a frame stamped t, with correct lengths, IPv4
// header checksum, ICRC and, for native IB, VCRC.
func (b *Builder) Build(p Packet, t time.Time) (Frame, error) {
	data, err := b.serialize(p, t)
	if err != nil {
		return Frame{}, err
	}
	return Frame{Data: data, Time: t, LinkType: b.cfg.Encap.LinkType(), Info: FrameInfo{
		From: p.From, Opcode: p.BTH.Opcode, DestQP: p.BTH.DestQP, PSN: p.BTH.PSN,
	}}, nil
}

func (b *Builder) serialize(p Packet, t time.Time) ([]byte, error) {
	c := &b.cfg
	bth := p.BTH // the layers below point into this copy
	if pad := (4 - len(p.Payload)%4) % 4; pad > 0 {
		bth.Trailer.Pad = make([]byte, pad)
	} else {
		bth.Trailer.Pad = nil
	}
	ecn := p.ECN
	if ecn == ECNDefault {
		ecn = c.ECN
	}
	if ecn == CE && (c.Encap == RoCEv1 || c.Encap.Native()) {
		bth.FECN = true // no IP header: congestion is marked in the BTH (Annex A10)
	}
	src, dst := b.endpoints(p.From)
	tclass := c.DSCP << 2
	var ls []gopacket.SerializableLayer
	ipIndex := -1
	switch c.Encap {
	case RoCEv2, RoCEv2IPv6:
		eth := &gplayers.Ethernet{SrcMAC: src.MAC, DstMAC: dst.MAC, EthernetType: gplayers.EthernetTypeIPv4}
		var ip gopacket.SerializableLayer
		if c.Encap == RoCEv2 {
			ip = &gplayers.IPv4{Version: 4, TOS: tclass | ecn.bits(), Id: p.IPID, Flags: gplayers.IPv4DontFragment,
				TTL: c.HopLimit, Protocol: gplayers.IPProtocolUDP, SrcIP: src.IPv4.To4(), DstIP: dst.IPv4.To4()}
		} else {
			eth.EthernetType = gplayers.EthernetTypeIPv6
			ip = &gplayers.IPv6{Version: 6, TrafficClass: tclass | ecn.bits(), FlowLabel: c.FlowLabel,
				NextHeader: gplayers.IPProtocolUDP, HopLimit: c.HopLimit, SrcIP: src.IPv6.To16(), DstIP: dst.IPv6.To16()}
		}
		sport := p.UDPSrcPort
		if sport == 0 {
			sport = c.UDPSrcPort
		}
		ipIndex = 1
		ls = []gopacket.SerializableLayer{eth, ip, &gplayers.UDP{SrcPort: gplayers.UDPPort(sport), DstPort: layers.UDPPortRoCEv2}}
	case RoCEv1:
		ls = []gopacket.SerializableLayer{
			&gplayers.Ethernet{SrcMAC: src.MAC, DstMAC: dst.MAC, EthernetType: layers.EthernetTypeRoCEv1},
			b.grh(src, dst, tclass),
		}
	default:
		vl := c.VL
		if p.VLSet {
			vl = p.VL
		} else if bth.DestQP == 0 {
			vl = 15 // subnet management travels on VL15
		}
		lrh := &layers.LRH{VL: vl, SL: c.SL, LNH: layers.LNHIBALocal, DLID: dst.LID, SLID: src.LID}
		if c.Encap.HasGRH() {
			lrh.LNH = layers.LNHIBAGlobal
			ls = []gopacket.SerializableLayer{lrh, b.grh(src, dst, tclass)}
		} else {
			ls = []gopacket.SerializableLayer{lrh}
		}
		if c.Encap == ERF || c.Encap == ERFGRH {
			ls = append([]gopacket.SerializableLayer{&layers.ERF{Type: layers.ERFTypeInfiniBand, Flags: erfFlags,
				Timestamp: erfTime(t)}}, ls...)
		}
	}
	ls = append(ls, bth.SerializableLayers(p.Payload)...)
	frame, err := serializeLayers(ls, ipIndex)
	if err != nil {
		return nil, fmt.Errorf("craft: serialize %v: %w", bth.Opcode, err)
	}
	if c.Encap == ERF || c.Encap == ERFGRH {
		// ERF records are padded to 8 bytes; ERF.SerializeTo puts the
		// padding after the packet, which needs its length first.
		frame = padERF(frame)
	}
	if err := layers.FinishFrame(frame, c.Encap.FirstLayer(), layers.ParserOptions{}); err != nil {
		return nil, fmt.Errorf("craft: finish %v: %w", bth.Opcode, err)
	}
	return frame, nil
}

// erfFlags are the ERF record flags of Mellanox ibdump captures: interface
// 1, variable-length record.
const erfFlags = 0x05

// erfTime is an ERF timestamp: seconds in the high 32 bits, the binary
// fraction of a second in the low 32.
func erfTime(t time.Time) uint64 {
	frac := (uint64(t.Nanosecond())<<32 + 500_000_000) / 1_000_000_000
	return uint64(t.Unix())<<32 + frac
}

// padERF pads an ERF record to a multiple of 8 bytes and fixes its RLen.
func padERF(rec []byte) []byte {
	pad := (8 - len(rec)%8) % 8
	rec = append(rec, make([]byte, pad)...)
	binary.BigEndian.PutUint16(rec[10:12], uint16(len(rec)))
	return rec
}

func (b *Builder) grh(src, dst *Endpoint, tclass uint8) *layers.GRH {
	return &layers.GRH{IPVer: 6, TClass: tclass, FlowLabel: b.cfg.FlowLabel, NxtHdr: layers.NxtHdrBTH,
		HopLmt: b.cfg.HopLimit, SGID: src.GID.To16(), DGID: dst.GID.To16()}
}

// serializeLayers is gopacket.SerializeLayers with FixLengths, computing
// only the IPv4 header checksum (layer ipIndex): RoCEv2 sends a zero UDP
// checksum, and gopacket's UDP would compute one.
func serializeLayers(ls []gopacket.SerializableLayer, ipIndex int) ([]byte, error) {
	buf := gopacket.NewSerializeBuffer()
	for i := len(ls) - 1; i >= 0; i-- {
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: i == ipIndex}
		if err := ls[i].SerializeTo(buf, opts); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
