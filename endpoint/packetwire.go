package endpoint

import (
	"encoding/binary"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/layers"
)

// PacketOption configures OpenPacketWire.
type PacketOption func(*packetConfig)

type packetConfig struct {
	batch     int
	neighbors map[netip.Addr][6]byte
	arpFile   string
}

// WithNeighbor tells the packet wire the MAC address of a peer, so it can
// send before it has heard from it (and without an ARP entry).
func WithNeighbor(ip netip.Addr, mac net.HardwareAddr) PacketOption {
	return func(c *packetConfig) {
		if len(mac) == 6 {
			c.neighbors[ip.Unmap()] = [6]byte(mac)
		}
	}
}

// WithPacketBatchSize sets how many frames one system call moves at most.
func WithPacketBatchSize(n int) PacketOption {
	return func(c *packetConfig) { c.batch = max(n, 1) }
}

// Ethernet framing of the packet wire.
const (
	ethHeaderLen = 14
	// packetDefaultHopLimit is the TTL/hop limit of a datagram that does not
	// ask for one: Linux's default.
	packetDefaultHopLimit = 64
)

// roceBPF returns the classic BPF program that keeps, of the frames on the
// interface, only unfragmented RoCEv2 packets to local: Ethernet with the
// local address's IP version, UDP, destination port layers.RoCEv2Port and
// destination address local. (capture.RoCEFilter matches RoCE to any
// address; endpoint may not import capture, and needs the address test.)
func roceBPF(local netip.Addr) []unix.SockFilter {
	const (
		ldh  = unix.BPF_LD | unix.BPF_H | unix.BPF_ABS
		ldb  = unix.BPF_LD | unix.BPF_B | unix.BPF_ABS
		ldw  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ldhx = unix.BPF_LD | unix.BPF_H | unix.BPF_IND
		msh  = unix.BPF_LDX | unix.BPF_B | unix.BPF_MSH
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	// Each test jumps to the final "drop" when it fails; the jump offsets
	// are filled in at the end, when the program's length is known.
	type step struct {
		code uint16
		k    uint32
		drop bool // a test that drops on mismatch (jeq) or match (jset)
	}
	var steps []step
	if local.Is4() {
		a := local.As4()
		steps = []step{
			{ldh, 12, false}, {jeq, unix.ETH_P_IP, true},
			{ldb, ethHeaderLen + 9, false}, {jeq, udpProto, true},
			{ldh, ethHeaderLen + 6, false}, {jset, 0x3FFF, true}, // MF or an offset: a fragment
			{ldw, ethHeaderLen + 16, false}, {jeq, binary.BigEndian.Uint32(a[:]), true},
			{msh, ethHeaderLen, false},
			{ldhx, ethHeaderLen + 2, false}, {jeq, layers.RoCEv2Port, true},
		}
	} else {
		a := local.As16()
		steps = []step{
			{ldh, 12, false}, {jeq, unix.ETH_P_IPV6, true},
			{ldb, ethHeaderLen + 6, false}, {jeq, udpProto, true},
		}
		for i := 0; i < 16; i += 4 {
			steps = append(steps, step{ldw, uint32(ethHeaderLen + 24 + i), false}, step{jeq, binary.BigEndian.Uint32(a[i:]), true})
		}
		steps = append(steps, step{ldh, ethHeaderLen + 40 + 2, false}, step{jeq, layers.RoCEv2Port, true})
	}
	prog := make([]unix.SockFilter, 0, len(steps)+2)
	dropAt := len(steps) + 1 // after the steps: "accept", then "drop"
	for i, s := range steps {
		f := unix.SockFilter{Code: s.code, K: s.k}
		if s.drop {
			toDrop := uint8(dropAt - i - 1)
			if s.code == jset {
				f.Jt = toDrop // bits set: drop
			} else {
				f.Jf = toDrop // not equal: drop
			}
		}
		prog = append(prog, f)
	}
	prog = append(prog,
		unix.SockFilter{Code: ret, K: 0x40000}, // accept the whole frame
		unix.SockFilter{Code: ret, K: 0},       // drop
	)
	return prog
}

// ipv4HeaderChecksum is the Internet checksum (RFC 1071) of a 20-byte IPv4
// header whose checksum field is zero.
func ipv4HeaderChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}
