//go:build linux

package endpoint

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/layers"
)

// PacketWire is the Wire over an AF_PACKET socket: it builds every
// Ethernet, IP and UDP header itself and sees every header it receives, so
// the ICRC is exact in both directions and for both IP versions. It needs
// CAP_NET_RAW.
//
// Sent packets look like rxe's (ENDPOINT.md §1.5): IPv4 with DF and IP
// Identification 0, UDP checksum 0 over both IP versions, flow label 0, TTL
// or hop limit from the datagram (64 when zero), and the UDP source port
// from Datagram.Src (the wire's port when zero), so a caller can use rxe's
// symmetric source-port formula. Received packets are kept by a BPF program
// only when they are unfragmented RoCEv2 to the wire's address; IPv4
// options and IPv6 extension headers are not expected from RoCE peers, and
// frames carrying them are dropped.
//
// The peer's MAC address comes from WithNeighbor, from the source of the
// last frame received from that address, or from /proc/net/arp (IPv4). The
// kernel still sees the received frames too: when the wire's address is
// configured on the interface and nothing listens on UDP 4791, it answers
// each with an ICMP port-unreachable, which RoCE peers ignore.
type PacketWire struct {
	mmsgSocket
	iface    string
	loopback bool
	localMAC [6]byte
	v4       bool
	hdrLen   int // Ethernet + IP + UDP
	arpFile  string

	neighMu sync.RWMutex
	neigh   map[netip.Addr][6]byte

	rx     *packetBatch
	txPool sync.Pool
}

// packetBatch is the kernel-facing state of one recvmmsg/sendmmsg call:
// each message has two iovecs, the headers in hdrs and the UDP payload in
// the caller's Datagram buffer, so nothing is copied.
type packetBatch struct {
	mmsgBatch
	iovs  []unix.Iovec // two per message
	hdrs  []byte       // hdrLen per message
	synth icrcSynth
}

func newPacketBatch(n, hdrLen int) *packetBatch {
	b := &packetBatch{
		mmsgBatch: newMmsgBatch(n),
		iovs:      make([]unix.Iovec, 2*n),
		hdrs:      make([]byte, n*hdrLen),
	}
	for i := range b.msgs {
		b.iovs[2*i].Base = &b.hdrs[i*hdrLen]
		b.iovs[2*i].SetLen(hdrLen)
		b.msgs[i].Hdr.Iov = &b.iovs[2*i]
		b.msgs[i].Hdr.SetIovlen(2)
	}
	b.bind()
	return b
}

func packetHtons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenPacketWire opens a PacketWire on the named interface for the local
// address (which need not be configured on the interface).
func OpenPacketWire(iface string, local netip.Addr, opts ...PacketOption) (*PacketWire, error) {
	cfg := packetConfig{batch: DefaultUDPBatchSize, neighbors: map[netip.Addr][6]byte{}, arpFile: "/proc/net/arp"}
	for _, o := range opts {
		o(&cfg)
	}
	local = local.Unmap()
	if !local.IsValid() || local.IsUnspecified() {
		return nil, fmt.Errorf("endpoint: packet wire on %s: need a specific local address, have %v", iface, local)
	}
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("endpoint: packet wire on %s: %w", iface, err)
	}
	w := &PacketWire{
		iface:    iface,
		loopback: ifi.Flags&net.FlagLoopback != 0,
		v4:       local.Is4(),
		neigh:    cfg.neighbors,
		arpFile:  cfg.arpFile,
	}
	w.local, w.batch, w.kind, w.where = netip.AddrPortFrom(local, layers.RoCEv2Port), cfg.batch, "packet", iface
	if len(ifi.HardwareAddr) == 6 {
		w.localMAC = [6]byte(ifi.HardwareAddr)
	} else if !w.loopback {
		return nil, fmt.Errorf("endpoint: packet wire: %s is not an Ethernet interface (hardware address %v)", iface, ifi.HardwareAddr)
	}
	proto := uint16(unix.ETH_P_IPV6)
	w.hdrLen = ethHeaderLen + ipv6UDPHeaderLen
	if w.v4 {
		proto = unix.ETH_P_IP
		w.hdrLen = ethHeaderLen + ipv4UDPHeaderLen
	}
	// Protocol 0: nothing arrives until bind, by which time the filter is
	// in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("endpoint: packet wire on %s (needs CAP_NET_RAW): %w", iface, os.NewSyscallError("socket", err))
	}
	prog := roceBPF(local)
	setup := func() error {
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			return os.NewSyscallError("setsockopt SO_ATTACH_FILTER", err)
		}
		// Frames we send must not come back to us (older kernels lack the
		// option; the BPF address test drops them there).
		_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, defaultUDPSocketBuffer) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, defaultUDPSocketBuffer)
		}
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: packetHtons(proto), Ifindex: ifi.Index}); err != nil {
			return os.NewSyscallError("bind", err)
		}
		return nil
	}
	if err := setup(); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("endpoint: packet wire on %s: %w", iface, err)
	}
	file := os.NewFile(uintptr(fd), "packet:"+iface)
	w.closer = file
	if w.raw, err = file.SyscallConn(); err != nil {
		file.Close()
		return nil, fmt.Errorf("endpoint: packet wire on %s: %w", iface, err)
	}
	w.rx = newPacketBatch(w.batch, w.hdrLen)
	w.txPool.New = func() any { return newPacketBatch(w.batch, w.hdrLen) }
	return w, nil
}

// ReadBatch blocks until at least one RoCEv2 frame for the wire's address
// arrives and fills dgs[:n] with the UDP payloads, addresses, traffic
// class, received TTL/hop limit (in HopLimit) and an exact ICRC verdict.
// It learns each sender's MAC address. A frame it cannot deliver keeps its
// slot, empty and marked: DropTooLong when longer than its buffer,
// DropTooShort when its headers are unusable (IPv4 options, IPv6
// extension headers, lengths that disagree, no room for a BTH and ICRC).
func (w *PacketWire) ReadBatch(dgs []Datagram) (int, error) {
	b := w.rx
	return w.readBatch(dgs, &b.mmsgBatch, func(i int, buf []byte) {
		b.iovs[2*i+1].Base = &buf[0]
		b.iovs[2*i+1].SetLen(len(buf))
	}, func(i int, dg *Datagram) {
		m := &b.msgs[i]
		ok := w.parseFrame(b, i, dg, int(m.Len))
		switch {
		case m.Hdr.Flags&unix.MSG_TRUNC != 0:
			dg.Payload, dg.Drop, dg.ICRC = dg.Payload[:0], DropTooLong, ICRCBad
		case !ok:
			dg.Payload, dg.Drop, dg.ICRC = dg.Payload[:0], DropTooShort, ICRCBad
		}
	})
}

// parseFrame checks the headers of frame i and fills dg. It reports false
// for a frame to drop (options, extension headers, a bad length); dg then
// has the frame's addresses when its headers were all there.
func (w *PacketWire) parseFrame(b *packetBatch, i int, dg *Datagram, frameLen int) bool {
	*dg = Datagram{Payload: dg.Payload[:0], ICRC: ICRCBad}
	h := b.hdrs[i*w.hdrLen : (i+1)*w.hdrLen]
	if frameLen < w.hdrLen {
		return false
	}
	ip := h[ethHeaderLen:]
	var udp []byte
	encap := layers.EncapRoCEv2IPv4
	if w.v4 {
		if ip[0] != 0x45 {
			return false // options: our fixed header split would be off
		}
		udp = ip[20:]
		dg.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[12:16])), binary.BigEndian.Uint16(udp))
		dg.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(ip[16:20])), binary.BigEndian.Uint16(udp[2:]))
		dg.TrafficClass, dg.HopLimit = ip[1], ip[8]
		if int(binary.BigEndian.Uint16(ip[2:])) != 20+int(binary.BigEndian.Uint16(udp[4:])) {
			return false
		}
	} else {
		encap = layers.EncapRoCEv2IPv6
		if ip[0]>>4 != 6 || ip[6] != udpProto {
			return false
		}
		udp = ip[40:]
		dg.Src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(ip[8:24])), binary.BigEndian.Uint16(udp))
		dg.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(ip[24:40])), binary.BigEndian.Uint16(udp[2:]))
		dg.TrafficClass, dg.HopLimit = uint8(binary.BigEndian.Uint16(ip[0:])>>4), ip[7]
		if binary.BigEndian.Uint16(ip[4:]) != binary.BigEndian.Uint16(udp[4:]) {
			return false
		}
	}
	payloadLen := int(binary.BigEndian.Uint16(udp[4:])) - 8
	if payloadLen < minRoCEDatagram || frameLen < w.hdrLen+minRoCEDatagram || payloadLen > frameLen-w.hdrLen {
		return false // Ethernet padding is cut off by the UDP length
	}
	dg.Payload = dg.Payload[:payloadLen]
	crc, err := b.synth.computeUnder(encap, h[ethHeaderLen:], dg.Payload)
	dg.ICRC = ICRCBad
	if err == nil && crc == binary.LittleEndian.Uint32(dg.Payload[payloadLen-layers.ICRCLength:]) {
		dg.ICRC = ICRCGood
	}
	w.learn(dg.Src.Addr(), [6]byte(h[6:12]))
	return true
}

func (w *PacketWire) learn(ip netip.Addr, mac [6]byte) {
	w.neighMu.RLock()
	old, ok := w.neigh[ip]
	w.neighMu.RUnlock()
	if ok && old == mac {
		return
	}
	w.neighMu.Lock()
	w.neigh[ip] = mac
	w.neighMu.Unlock()
}

// neighbor returns the MAC address to send to ip.
func (w *PacketWire) neighbor(ip netip.Addr) ([6]byte, error) {
	if w.loopback {
		return [6]byte{}, nil
	}
	w.neighMu.RLock()
	mac, ok := w.neigh[ip]
	w.neighMu.RUnlock()
	if ok {
		return mac, nil
	}
	if ip.Is4() {
		if mac, ok := lookupARP(w.arpFile, w.iface, ip); ok {
			w.learn(ip, mac)
			return mac, nil
		}
	}
	return [6]byte{}, fmt.Errorf("no MAC address for %v on %s: give it with WithNeighbor, or receive from it first", ip, w.iface)
}

// lookupARP finds ip's complete entry on iface in /proc/net/arp:
// "IP address  HW type  Flags  HW address  Mask  Device".
func lookupARP(path, iface string, ip netip.Addr) ([6]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return [6]byte{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[0] != ip.String() || fs[5] != iface || fs[2] == "0x0" {
			continue
		}
		mac, err := net.ParseMAC(fs[3])
		if err != nil || len(mac) != 6 {
			continue
		}
		return [6]byte(mac), true
	}
	return [6]byte{}, false
}

// WriteBatch builds each datagram's headers, fills its ICRC and sends the
// frames in order. It fails, after sending those before it, at the first
// datagram whose peer MAC address is unknown.
func (w *PacketWire) WriteBatch(dgs []Datagram) (int, error) {
	b := w.txPool.Get().(*packetBatch)
	defer w.txPool.Put(b)
	return w.writeBatches(dgs, &b.mmsgBatch, func(chunk []Datagram) (int, error) { return w.pack(b, chunk) })
}

func (w *PacketWire) pack(b *packetBatch, chunk []Datagram) (int, error) {
	for i := range chunk {
		dg := &chunk[i]
		if err := w.buildFrame(b, i, dg); err != nil {
			b.count = i
			return i, fmt.Errorf("endpoint: packet write on %s: datagram %d: %w", w.iface, i, err)
		}
		b.iovs[2*i+1].Base = &dg.Payload[0]
		b.iovs[2*i+1].SetLen(len(dg.Payload))
	}
	b.count = len(chunk)
	return len(chunk), nil
}

// buildFrame writes the Ethernet, IP and UDP headers of dg into message i
// and fills dg's ICRC.
func (w *PacketWire) buildFrame(b *packetBatch, i int, dg *Datagram) error {
	dst := netip.AddrPortFrom(dg.Dst.Addr().Unmap(), dg.Dst.Port())
	if !dst.Addr().IsValid() || dst.Addr().Is4() != w.v4 {
		return fmt.Errorf("destination %v is not of the wire's address family", dg.Dst)
	}
	if len(dg.Payload) < minRoCEDatagram {
		return fmt.Errorf("%d-byte datagram: %w", len(dg.Payload), errDatagramTooShort)
	}
	if len(dg.Payload) > MaxDatagram {
		return fmt.Errorf("%d-byte datagram is longer than MaxDatagram", len(dg.Payload))
	}
	mac, err := w.neighbor(dst.Addr())
	if err != nil {
		return err
	}
	srcPort := dg.Src.Port()
	if srcPort == 0 {
		srcPort = w.local.Port()
	}
	hop := dg.HopLimit
	if hop == 0 {
		hop = packetDefaultHopLimit
	}
	h := b.hdrs[i*w.hdrLen : (i+1)*w.hdrLen]
	copy(h[0:6], mac[:])
	copy(h[6:12], w.localMAC[:])
	ip := h[ethHeaderLen:]
	var udp []byte
	encap := layers.EncapRoCEv2IPv4
	if w.v4 {
		binary.BigEndian.PutUint16(h[12:], unix.ETH_P_IP)
		ip[0], ip[1] = 0x45, dg.TrafficClass
		binary.BigEndian.PutUint16(ip[2:], uint16(ipv4UDPHeaderLen+len(dg.Payload)))
		binary.BigEndian.PutUint16(ip[4:], 0)
		binary.BigEndian.PutUint16(ip[6:], ipv4DontFragment)
		ip[8], ip[9] = hop, udpProto
		binary.BigEndian.PutUint16(ip[10:], 0)
		s4, d4 := w.local.Addr().As4(), dst.Addr().As4()
		copy(ip[12:16], s4[:])
		copy(ip[16:20], d4[:])
		binary.BigEndian.PutUint16(ip[10:], ipv4HeaderChecksum(ip[:20]))
		udp = ip[20:28]
	} else {
		encap = layers.EncapRoCEv2IPv6
		binary.BigEndian.PutUint16(h[12:], unix.ETH_P_IPV6)
		binary.BigEndian.PutUint32(ip[0:], 6<<28|uint32(dg.TrafficClass)<<20) // flow label 0
		binary.BigEndian.PutUint16(ip[4:], uint16(8+len(dg.Payload)))
		ip[6], ip[7] = udpProto, hop
		s16, d16 := w.local.Addr().As16(), dst.Addr().As16()
		copy(ip[8:24], s16[:])
		copy(ip[24:40], d16[:])
		udp = ip[40:48]
	}
	binary.BigEndian.PutUint16(udp[0:], srcPort)
	binary.BigEndian.PutUint16(udp[2:], dst.Port())
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(dg.Payload)))
	binary.BigEndian.PutUint16(udp[6:], 0) // no checksum, as rxe
	crc, err := b.synth.computeUnder(encap, ip, dg.Payload)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(dg.Payload[len(dg.Payload)-layers.ICRCLength:], crc)
	return nil
}

var _ Wire = (*PacketWire)(nil)
