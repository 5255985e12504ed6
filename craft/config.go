package craft

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/ibwire/ibwire/layers"
)

// Endpoint is one side of a queue pair: its addresses at every layer, its
// QP number and the first PSN it sends with.
type Endpoint struct {
	MAC  net.HardwareAddr // Ethernet address (RoCE)
	IPv4 net.IP           // RoCEv2 over IPv4
	IPv6 net.IP           // RoCEv2 over IPv6
	GID  net.IP           // GRH source/destination GID (RoCEv1, native IB with GRH); default fe80::GUID
	GUID uint64           // port GUID, also the CA GUID of CM messages; default the EUI-64 of MAC
	LID  uint16           // native IB local identifier
	QPN  uint32           // 24 bits
	PSN  layers.PSN       // first PSN this side sends as a requester
}

// Default endpoints: the addresses of the scapy known-answer vectors.
var (
	DefaultRequester = Endpoint{
		MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}, IPv4: net.IP{192, 168, 1, 1},
		IPv6: net.ParseIP("2001:db8::1"), LID: 1, QPN: 0x000011, PSN: 0x000100,
	}
	DefaultResponder = Endpoint{
		MAC: net.HardwareAddr{0x02, 0, 0, 0, 0, 0x02}, IPv4: net.IP{192, 168, 1, 2},
		IPv6: net.ParseIP("2001:db8::2"), LID: 2, QPN: 0x000012, PSN: 0x000800,
	}
)

// DefaultStart is the time of the first frame unless Config.Start says otherwise.
var DefaultStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Defaults of Config fields left zero.
const (
	DefaultMTU         = 1024
	DefaultPKey        = 0xFFFF
	DefaultQKey        = 0x11111111 // ibv_ud_pingpong and perftest UD
	DefaultHopLimit    = 64
	DefaultStep        = time.Microsecond
	DefaultDelay       = 3 * time.Microsecond
	DefaultAckTimeout  = 4096 * time.Nanosecond << 14 // timeout 14, ≈67 ms (rc_pingpong, perftest)
	DefaultWindow      = 128                          // rxe RXE_MAX_UNACKED_PSNS
	DefaultMaxRdAtomic = 16
	DefaultCMDelay     = 50 * time.Microsecond
)

// AckPolicy says when the requester asks for ACKs and when the responder
// sends them. The zero value is rxe's policy: AckReq on the last packet of
// every message and on the 66th packet in a row without one
// (RXE_MAX_PKT_PER_ACK = 64); an ACK only for packets with AckReq.
type AckPolicy struct {
	// MaxPacketsPerAck is rxe's RXE_MAX_PKT_PER_ACK: AckReq is set when more
	// than this many packets went without it. 0 means 64; negative never.
	MaxPacketsPerAck int
	// EveryPacket makes the responder ACK every SEND/WRITE packet, AckReq or not.
	EveryPacket bool
	// Credits is the AETH credit code of ACKs; 0 means 0x1F (no end-to-end
	// credits, what rxe sends). Use CreditsZero for a real zero.
	Credits uint8
}

// CreditsZero asks for an AETH credit code of 0 in AckPolicy.Credits.
const CreditsZero = 0x80

func (a AckPolicy) creditCode() uint8 {
	switch {
	case a.Credits == 0:
		return 0x1F
	case a.Credits == CreditsZero:
		return 0
	}
	return a.Credits & 0x1F
}

func (a AckPolicy) maxPerAck() int {
	if a.MaxPacketsPerAck == 0 {
		return 64
	}
	return a.MaxPacketsPerAck
}

// Config is a QP context: what the two sides of one queue pair and the
// network between them look like. Zero fields take the defaults above.
type Config struct {
	Encap   Encap
	Service layers.ServiceType // ServiceRC (default), ServiceUC or ServiceUD

	Requester, Responder Endpoint // zero values: DefaultRequester, DefaultResponder

	UDPSrcPort uint16 // RoCEv2 source port; 0: rxe's choice (layers.RXESourcePort, UD: layers.RXEUDSourcePort)
	MTU        int    // path MTU, 256..4096; 0: 1024
	PKey       uint16 // 0: 0xFFFF
	QKey       uint32 // UD Q_Key; 0: 0x11111111
	DSCP       uint8  // IPv4 TOS / IPv6 traffic class / GRH TClass, upper six bits
	ECN        ECN    // ECN codepoint of RoCEv2 packets; ECNDefault: ECT(0)
	HopLimit   uint8  // IPv4 TTL / IPv6 hop limit / GRH HopLmt; 0: 64
	FlowLabel  uint32 // IPv6 / GRH flow label (20 bits)
	SL         uint8  // native IB service level
	VL         uint8  // native IB virtual lane of non-management packets

	Start      time.Time     // time of the first frame; zero: DefaultStart
	Step       time.Duration // time one frame takes to send; 0: 1 µs
	Delay      time.Duration // one-way delay between the sides; 0: 3 µs; negative: none
	AckTimeout time.Duration // local ACK timeout of the requester; 0: ≈67 ms

	Ack         AckPolicy
	Window      int // unacknowledged PSNs the requester may have outstanding; 0: 128
	MaxRdAtomic int // outstanding READ and atomic requests; 0: 16
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.Service == layers.ServiceUnknown {
		c.Service = layers.ServiceRC
	}
	c.Requester = fillEndpoint(c.Requester, DefaultRequester)
	c.Responder = fillEndpoint(c.Responder, DefaultResponder)
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.PKey == 0 {
		c.PKey = DefaultPKey
	}
	if c.QKey == 0 {
		c.QKey = DefaultQKey
	}
	if c.ECN == ECNDefault {
		c.ECN = ECT0
	}
	if c.HopLimit == 0 {
		c.HopLimit = DefaultHopLimit
	}
	if c.UDPSrcPort == 0 {
		c.UDPSrcPort = layers.RXESourcePort(c.Requester.QPN, c.Responder.QPN)
		if c.Service == layers.ServiceUD {
			c.UDPSrcPort = layers.RXEUDSourcePort(c.Requester.QPN)
		}
	}
	if c.Start.IsZero() {
		c.Start = DefaultStart
	}
	if c.Step == 0 {
		c.Step = DefaultStep
	}
	switch {
	case c.Delay == 0:
		c.Delay = DefaultDelay
	case c.Delay < 0:
		c.Delay = 0
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = DefaultAckTimeout
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxRdAtomic == 0 {
		c.MaxRdAtomic = DefaultMaxRdAtomic
	}
	return c
}

// fillEndpoint fills the zero fields of e from def, then derives GUID and GID.
func fillEndpoint(e, def Endpoint) Endpoint {
	if e.MAC == nil {
		e.MAC = def.MAC
	}
	if e.IPv4 == nil {
		e.IPv4 = def.IPv4
	}
	if e.IPv6 == nil {
		e.IPv6 = def.IPv6
	}
	if e.LID == 0 {
		e.LID = def.LID
	}
	if e.QPN == 0 {
		e.QPN = def.QPN
	}
	if e.PSN == 0 {
		e.PSN = def.PSN
	}
	if e.GUID == 0 {
		e.GUID = EUI64(e.MAC)
	}
	if e.GID == nil {
		e.GID = LinkLocalGID(e.GUID)
	}
	return e
}

// validate checks a Config that has its defaults.
func (c Config) validate() error {
	var errs []error
	if !c.Encap.Valid() {
		errs = append(errs, fmt.Errorf("unknown encapsulation %d", c.Encap))
	}
	switch c.Service {
	case layers.ServiceRC, layers.ServiceUC, layers.ServiceUD:
	default:
		errs = append(errs, fmt.Errorf("service %v: conversations are RC, UC or UD", c.Service))
	}
	if _, ok := layers.PathMTUOf(c.MTU); !ok {
		errs = append(errs, fmt.Errorf("MTU %d: want 256, 512, 1024, 2048 or 4096", c.MTU))
	}
	for _, e := range []struct {
		name string
		ep   Endpoint
	}{{"requester", c.Requester}, {"responder", c.Responder}} {
		if e.ep.QPN > 0xFFFFFF {
			errs = append(errs, fmt.Errorf("%s QPN 0x%x does not fit 24 bits", e.name, e.ep.QPN))
		}
		if !e.ep.PSN.Valid() {
			errs = append(errs, fmt.Errorf("%s PSN 0x%x does not fit 24 bits", e.name, uint32(e.ep.PSN)))
		}
		if len(e.ep.MAC) != 6 {
			errs = append(errs, fmt.Errorf("%s MAC %v is not 6 bytes", e.name, e.ep.MAC))
		}
		if c.Encap == RoCEv2 && e.ep.IPv4.To4() == nil {
			errs = append(errs, fmt.Errorf("%s IPv4 address %v is not IPv4", e.name, e.ep.IPv4))
		}
		if c.Encap == RoCEv2IPv6 && (e.ep.IPv6.To16() == nil || e.ep.IPv6.To4() != nil) {
			errs = append(errs, fmt.Errorf("%s IPv6 address %v is not IPv6", e.name, e.ep.IPv6))
		}
		if e.ep.GID.To16() == nil {
			errs = append(errs, fmt.Errorf("%s GID %v is not 16 bytes", e.name, e.ep.GID))
		}
	}
	if c.FlowLabel > 0xFFFFF {
		errs = append(errs, fmt.Errorf("flow label 0x%x does not fit 20 bits", c.FlowLabel))
	}
	if c.DSCP > 63 {
		errs = append(errs, fmt.Errorf("DSCP %d does not fit 6 bits", c.DSCP))
	}
	if c.SL > 15 || c.VL > 14 {
		errs = append(errs, fmt.Errorf("SL %d / VL %d out of range", c.SL, c.VL))
	}
	if c.Step < 0 || c.AckTimeout < 0 || c.Window < 0 || c.MaxRdAtomic < 0 {
		errs = append(errs, errors.New("negative Step, AckTimeout, Window or MaxRdAtomic"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("craft: config: %w", err)
	}
	return nil
}

// EUI64 derives a port GUID from a MAC address the way RoCE GIDs do:
// insert FF:FE in the middle and flip the universal/local bit.
func EUI64(mac net.HardwareAddr) uint64 {
	if len(mac) != 6 {
		return 0
	}
	b := [8]byte{mac[0] ^ 2, mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]}
	var g uint64
	for _, x := range b {
		g = g<<8 | uint64(x)
	}
	return g
}

// LinkLocalGID returns the GID fe80::/64 with guid as interface identifier.
func LinkLocalGID(guid uint64) net.IP {
	g := make(net.IP, 16)
	g[0], g[1] = 0xfe, 0x80
	for i := 0; i < 8; i++ {
		g[15-i] = byte(guid >> (8 * i))
	}
	return g
}
