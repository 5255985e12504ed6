//go:build linux

package endpoint

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/layers"
)

// openPacketWire opens a PacketWire or skips the test when the process may
// not open packet sockets.
func openPacketWire(t *testing.T, iface, addr string, opts ...PacketOption) *PacketWire {
	t.Helper()
	w, err := OpenPacketWire(iface, netip.MustParseAddr(addr), opts...)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skipf("packet sockets need CAP_NET_RAW: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

// wireReadN reads n datagrams from any Wire or fails after five seconds.
func wireReadN(t *testing.T, w Wire, n int) []Datagram {
	t.Helper()
	return wireReadMatching(t, w, n, func(Datagram) bool { return true })
}

// loQPN puts a test's destination QPN in a range no other program uses, so
// that wires on lo (shared with other packages' tests running at the same
// time: ibpeer, replay and ibtui send RoCEv2 to 127.0.0.1 and 127.0.0.2)
// can tell their own datagrams from the others' with wireReadOwn.
func loQPN(n uint32) uint32 { return 0xE1E100 | n&0xFF }

// wireReadOwn reads n datagrams addressed to a loQPN, skipping the rest.
func wireReadOwn(t *testing.T, w Wire, n int) []Datagram {
	t.Helper()
	return wireReadMatching(t, w, n, func(dg Datagram) bool {
		return len(dg.Payload) >= 8 && binary.BigEndian.Uint32(dg.Payload[4:])&0xFFFF00 == loQPN(0)
	})
}

// wireReadMatching reads until n datagrams that keep accepts have arrived,
// or fails after five seconds.
func wireReadMatching(t *testing.T, w Wire, n int, keep func(Datagram) bool) []Datagram {
	t.Helper()
	var got []Datagram
	done := make(chan error, 1)
	go func() {
		for len(got) < n {
			dgs := wireReadBuffers(w.BatchSize())
			k, err := w.ReadBatch(dgs)
			if err != nil {
				done <- err
				return
			}
			for _, dg := range dgs[:k] {
				if keep(dg) && len(got) < n {
					got = append(got, dg)
				}
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out with %d of %d datagrams", len(got), n)
	}
	return got
}

func TestPacketWireLoopback(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, batch := range []int{1, 16} {
		wa := openPacketWire(t, "lo", "127.0.0.1", WithPacketBatchSize(batch))
		wb := openPacketWire(t, "lo", "127.0.0.2", WithPacketBatchSize(batch))
		sent := make([]Datagram, 40)
		for i := range sent {
			sent[i] = Datagram{
				Src:          netip.AddrPortFrom(netip.Addr{}, uint16(0xC000+i)),
				Dst:          wb.LocalAddr(),
				TrafficClass: uint8(i),
				HopLimit:     uint8(i), // 0 becomes 64
				Payload:      testRoCEPayload([]int{minRoCEDatagram, 64, 1040, MaxDatagram}[i%4], loQPN(0x22), uint32(i), byte(i)),
			}
		}
		n, err := wa.WriteBatch(sent)
		require.NoError(t, err)
		require.Equal(t, len(sent), n)
		got := wireReadOwn(t, wb, len(sent))
		for i, dg := range got {
			assert.Equal(t, sent[i].Payload, dg.Payload, "batch %d datagram %d", batch, i)
			assert.Equal(t, netip.MustParseAddrPort("127.0.0.1:"+strconv.Itoa(0xC000+i)), dg.Src)
			assert.Equal(t, wb.LocalAddr(), dg.Dst)
			assert.Equal(t, sent[i].TrafficClass, dg.TrafficClass)
			wantHop := sent[i].HopLimit
			if wantHop == 0 {
				wantHop = packetDefaultHopLimit
			}
			assert.Equal(t, wantHop, dg.HopLimit)
			assert.Equal(t, ICRCGood, dg.ICRC)
		}
		wa.Close()
		wb.Close()
	}
}

// TestPacketWireWithUDPWire checks both wires against each other on lo: the
// kernel's UDP stack accepts the packet wire's frames (checksum 0, IPv6
// thanks to UDP_NO_CHECK6_RX), and the packet wire, which sees the whole
// header, finds the UDP wire's ICRC exact with the kernel's real IP ID.
func TestPacketWireWithUDPWire(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct{ packetAddr, udpAddr string }{
		{"127.0.0.1", "127.0.0.2:4791"},
		{"::1", "[::1]:4791"},
	} {
		t.Run(tt.packetAddr, func(t *testing.T) {
			looptest.Hold(t) // the UDP wire takes port 4791
			pw := openPacketWire(t, "lo", tt.packetAddr)
			uw, err := ListenUDP(netip.MustParseAddrPort(tt.udpAddr))
			require.NoError(t, err)
			defer uw.Close()

			// Linux drops an IPv4 frame with a 127/8 source that arrives from
			// a device (a martian, unless route_localnet is set), so over lo
			// only IPv6 reaches the kernel's UDP; TestPacketWireVeth covers
			// IPv4 on a veth pair.
			if pw.LocalAddr().Addr().Is6() {
				_, err = pw.WriteBatch([]Datagram{{Dst: uw.LocalAddr(), TrafficClass: 2, Payload: testRoCEPayload(200, loQPN(3), 1, 1)}})
				require.NoError(t, err)
				in := wireReadOwn(t, uw, 1)[0]
				assert.Equal(t, ICRCGood, in.ICRC, "the UDP wire checks the packet wire's ICRC")
				assert.Equal(t, uint8(2), in.TrafficClass)
				wireReadOwn(t, pw, 1) // ::1 to ::1: the packet wire sees its own frame too
			}

			_, err = uw.WriteBatch([]Datagram{{Dst: pw.LocalAddr(), HopLimit: 9, Payload: testRoCEPayload(300, loQPN(4), 2, 2)}})
			require.NoError(t, err)
			out := wireReadOwn(t, pw, 1)[0]
			assert.Equal(t, ICRCGood, out.ICRC, "the packet wire checks the kernel-built header")
			assert.Equal(t, uw.LocalAddr(), out.Src)
			assert.Equal(t, uint8(9), out.HopLimit)
		})
	}
}

func TestPacketWireDropsBadICRCAndLearnsMAC(t *testing.T) {
	defer goleak.VerifyNone(t)
	wa := openPacketWire(t, "lo", "127.0.0.1")
	wb := openPacketWire(t, "lo", "127.0.0.2")
	// Corrupt a frame after the ICRC is filled: send through a raw packet
	// socket of our own, built from what the wire would send.
	p := testRoCEPayload(64, loQPN(1), 1, 1)
	_, err := wa.WriteBatch([]Datagram{{Dst: wb.LocalAddr(), Payload: p}})
	require.NoError(t, err)
	good := wireReadOwn(t, wb, 1)[0]
	assert.Equal(t, ICRCGood, good.ICRC)

	b := newPacketBatch(1, wa.hdrLen)
	dg := Datagram{Dst: wb.LocalAddr(), Payload: testRoCEPayload(64, loQPN(1), 2, 1)}
	require.NoError(t, wa.buildFrame(b, 0, &dg))
	dg.Payload[20] ^= 1 // after the ICRC was computed
	frame := append(append([]byte(nil), b.hdrs[:wa.hdrLen]...), dg.Payload...)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	lo, err := net.InterfaceByName("lo")
	require.NoError(t, err)
	require.NoError(t, unix.Sendto(fd, frame, 0, &unix.SockaddrLinklayer{Ifindex: lo.Index, Protocol: packetHtons(unix.ETH_P_IP)}))
	bad := wireReadOwn(t, wb, 1)[0]
	assert.Equal(t, ICRCBad, bad.ICRC)
	assert.Equal(t, uint32(2), binary.BigEndian.Uint32(bad.Payload[8:]))

	wb.neighMu.RLock()
	_, learnt := wb.neigh[netip.MustParseAddr("127.0.0.1")]
	wb.neighMu.RUnlock()
	assert.True(t, learnt, "the sender's MAC is learnt")
}

func TestPacketWireErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	_, err := OpenPacketWire("lo", netip.IPv4Unspecified())
	require.ErrorContains(t, err, "need a specific local address")
	_, err = OpenPacketWire("no-such-if0", netip.MustParseAddr("10.0.0.1"))
	require.ErrorContains(t, err, "no-such-if0")

	w := openPacketWire(t, "lo", "127.0.0.1")
	for _, tt := range []struct {
		dg   Datagram
		want string
	}{
		{Datagram{Dst: netip.MustParseAddrPort("[::1]:4791"), Payload: testRoCEPayload(64, 1, 1, 1)}, "address family"},
		{Datagram{Dst: netip.MustParseAddrPort("127.0.0.2:4791"), Payload: make([]byte, 8)}, "shorter than BTH"},
		{Datagram{Dst: netip.MustParseAddrPort("127.0.0.2:4791"), Payload: make([]byte, MaxDatagram+1)}, "longer than MaxDatagram"},
	} {
		n, err := w.WriteBatch([]Datagram{tt.dg})
		assert.Zero(t, n)
		require.ErrorContains(t, err, tt.want)
	}

	errc := make(chan error)
	go func() {
		// Other tests' RoCEv2 on lo may arrive first: read until the
		// wire reports an error, which must be the close.
		bufs := wireReadBuffers(2)
		for {
			if _, err := w.ReadBatch(bufs); err != nil {
				errc <- err
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, w.Close())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrWireClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBatch did not return after Close")
	}
	_, err = w.WriteBatch([]Datagram{{Dst: netip.MustParseAddrPort("127.0.0.2:4791"), Payload: testRoCEPayload(64, 1, 1, 1)}})
	require.ErrorIs(t, err, ErrWireClosed)
}

func TestPacketWireNeighbors(t *testing.T) {
	arp := filepath.Join(t.TempDir(), "arp")
	require.NoError(t, os.WriteFile(arp, []byte(`IP address       HW type     Flags       HW address            Mask     Device
10.9.0.2         0x1         0x2         02:00:00:00:00:02     *        veth0
10.9.0.3         0x1         0x0         00:00:00:00:00:00     *        veth0
10.9.0.4         0x1         0x2         02:00:00:00:00:04     *        other0
`), 0o644))
	w := &PacketWire{iface: "veth0", arpFile: arp, neigh: map[netip.Addr][6]byte{}}
	WithNeighbor(netip.MustParseAddr("::ffff:10.9.0.9"), net.HardwareAddr{2, 0, 0, 0, 0, 9})(&packetConfig{neighbors: w.neigh})
	tests := []struct {
		ip   string
		want string // "" = unknown
	}{
		{"10.9.0.2", "02:00:00:00:00:02"},
		{"10.9.0.9", "02:00:00:00:00:09"}, // static, given IPv4-mapped
		{"10.9.0.3", ""},                  // incomplete entry
		{"10.9.0.4", ""},                  // another interface
		{"fe80::1", ""},
	}
	for _, tt := range tests {
		mac, err := w.neighbor(netip.MustParseAddr(tt.ip))
		if tt.want == "" {
			require.ErrorContains(t, err, "no MAC address for "+tt.ip, tt.ip)
			continue
		}
		require.NoError(t, err, tt.ip)
		assert.Equal(t, tt.want, net.HardwareAddr(mac[:]).String())
	}
}

func TestRoCEBPF(t *testing.T) {
	v4 := func(dst string, proto byte, flags uint16, dport uint16) []byte {
		f := make([]byte, ethHeaderLen+ipv4UDPHeaderLen+16)
		binary.BigEndian.PutUint16(f[12:], unix.ETH_P_IP)
		ip := f[ethHeaderLen:]
		ip[0], ip[9] = 0x45, proto
		binary.BigEndian.PutUint16(ip[6:], flags)
		a := netip.MustParseAddr(dst).As4()
		copy(ip[16:], a[:])
		binary.BigEndian.PutUint16(ip[22:], dport)
		return f
	}
	v6 := func(dst string, next byte, dport uint16) []byte {
		f := make([]byte, ethHeaderLen+ipv6UDPHeaderLen+16)
		binary.BigEndian.PutUint16(f[12:], unix.ETH_P_IPV6)
		ip := f[ethHeaderLen:]
		ip[0], ip[6] = 0x60, next
		a := netip.MustParseAddr(dst).As16()
		copy(ip[24:], a[:])
		binary.BigEndian.PutUint16(ip[42:], dport)
		return f
	}
	withOptions := v4("10.0.0.1", udpProto, 0x4000, 0)
	withOptions[ethHeaderLen] = 0x46 // IHL 6: the UDP header moves by 4
	binary.BigEndian.PutUint16(withOptions[ethHeaderLen+24+2:], layers.RoCEv2Port)
	tests := []struct {
		name, local string
		frame       []byte
		keep        bool
	}{
		{"ipv4 RoCE to us", "10.0.0.1", v4("10.0.0.1", udpProto, 0x4000, layers.RoCEv2Port), true},
		{"ipv4 without DF", "10.0.0.1", v4("10.0.0.1", udpProto, 0, layers.RoCEv2Port), true},
		{"ipv4 options", "10.0.0.1", withOptions, true},
		{"ipv4 to another address", "10.0.0.1", v4("10.0.0.2", udpProto, 0x4000, layers.RoCEv2Port), false},
		{"ipv4 other port", "10.0.0.1", v4("10.0.0.1", udpProto, 0x4000, 4792), false},
		{"ipv4 TCP", "10.0.0.1", v4("10.0.0.1", 6, 0x4000, layers.RoCEv2Port), false},
		{"ipv4 first fragment", "10.0.0.1", v4("10.0.0.1", udpProto, 0x2000, layers.RoCEv2Port), false},
		{"ipv4 later fragment", "10.0.0.1", v4("10.0.0.1", udpProto, 0x0010, layers.RoCEv2Port), false},
		{"ipv6 frame to an ipv4 wire", "10.0.0.1", v6("::1", udpProto, layers.RoCEv2Port), false},
		{"ipv6 RoCE to us", "fd00::1", v6("fd00::1", udpProto, layers.RoCEv2Port), true},
		{"ipv6 to another address", "fd00::1", v6("fd00::2", udpProto, layers.RoCEv2Port), false},
		{"ipv6 other port", "fd00::1", v6("fd00::1", udpProto, 4792), false},
		{"ipv6 extension header", "fd00::1", v6("fd00::1", 0, layers.RoCEv2Port), false},
		{"ipv4 frame to an ipv6 wire", "fd00::1", v4("10.0.0.1", udpProto, 0x4000, layers.RoCEv2Port), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := roceBPF(netip.MustParseAddr(tt.local))
			raw := make([]bpf.RawInstruction, len(prog))
			for i, f := range prog {
				raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}
			}
			ins, ok := bpf.Disassemble(raw)
			require.True(t, ok, "every instruction decodes")
			vm, err := bpf.NewVM(ins)
			require.NoError(t, err)
			n, err := vm.Run(tt.frame)
			require.NoError(t, err)
			assert.Equal(t, tt.keep, n > 0)
		})
	}
}

func TestIPv4HeaderChecksum(t *testing.T) {
	// The IPv4 header of scapy-rocev2.json vector 1; its checksum is a75b.
	h, err := hex.DecodeString("4502003c100040004011a75bc0a80101c0a80102")
	require.NoError(t, err)
	want := binary.BigEndian.Uint16(h[10:])
	h[10], h[11] = 0, 0
	assert.Equal(t, want, ipv4HeaderChecksum(h))
	assert.Equal(t, uint16(0xa75b), want)
}

// TestPacketWireFrameICRC checks a built frame as a whole with layers.
func TestPacketWireFrameICRC(t *testing.T) {
	for _, local := range []string{"192.168.1.1", "fd00::1"} {
		w := &PacketWire{v4: netip.MustParseAddr(local).Is4(), loopback: true, neigh: map[netip.Addr][6]byte{}}
		w.local = netip.AddrPortFrom(netip.MustParseAddr(local), layers.RoCEv2Port)
		w.hdrLen = ethHeaderLen + ipv6UDPHeaderLen
		encap := layers.EncapRoCEv2IPv6
		dst := "[fd00::2]:4791"
		if w.v4 {
			w.hdrLen, encap, dst = ethHeaderLen+ipv4UDPHeaderLen, layers.EncapRoCEv2IPv4, "192.168.1.2:4791"
		}
		b := newPacketBatch(1, w.hdrLen)
		dg := Datagram{Dst: netip.MustParseAddrPort(dst), TrafficClass: 0xFF, HopLimit: 1, Payload: testRoCEPayload(100, 7, 7, 7)}
		require.NoError(t, w.buildFrame(b, 0, &dg))
		frame := append(append([]byte(nil), b.hdrs[ethHeaderLen:w.hdrLen]...), dg.Payload...)
		got, want, err := layers.VerifyICRC(encap, frame)
		require.NoError(t, err)
		assert.Equal(t, want, got, local)
	}
}

// FuzzPacketWireParseFrame feeds arbitrary frames to the receive path's
// header checks: no panic, and a kept frame's payload lies within what was
// received.
func FuzzPacketWireParseFrame(f *testing.F) {
	for _, local := range []string{"127.0.0.1", "::1"} {
		w := &PacketWire{v4: netip.MustParseAddr(local).Is4(), loopback: true, neigh: map[netip.Addr][6]byte{}}
		w.local = netip.AddrPortFrom(netip.MustParseAddr(local), layers.RoCEv2Port)
		w.hdrLen = ethHeaderLen + ipv6UDPHeaderLen
		if w.v4 {
			w.hdrLen = ethHeaderLen + ipv4UDPHeaderLen
		}
		b := newPacketBatch(1, w.hdrLen)
		dg := Datagram{Dst: w.local, Payload: testRoCEPayload(64, 1, 1, 1)}
		if err := w.buildFrame(b, 0, &dg); err != nil {
			f.Fatal(err)
		}
		f.Add(append(append([]byte(nil), b.hdrs[:w.hdrLen]...), dg.Payload...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		for _, v4 := range []bool{true, false} {
			w := &PacketWire{v4: v4, neigh: map[netip.Addr][6]byte{}}
			w.hdrLen = ethHeaderLen + ipv6UDPHeaderLen
			if v4 {
				w.hdrLen = ethHeaderLen + ipv4UDPHeaderLen
			}
			b := newPacketBatch(1, w.hdrLen)
			dg := Datagram{Payload: make([]byte, 0, MaxDatagram)}
			copy(b.hdrs, frame)
			if len(frame) > w.hdrLen {
				copy(dg.Payload[:cap(dg.Payload)], frame[w.hdrLen:])
			}
			if w.parseFrame(b, 0, &dg, len(frame)) && len(dg.Payload) > len(frame)-w.hdrLen {
				t.Fatalf("payload of %d bytes from a %d-byte frame", len(dg.Payload), len(frame))
			}
		}
	})
}
