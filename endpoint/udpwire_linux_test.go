//go:build linux

package endpoint

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// testRoCEPayload returns a UDP payload of the given length: an RC SEND Only
// BTH (P_Key 0xFFFF, destination QP dqpn, PSN psn), filler bytes derived from
// seed, and room for the ICRC.
func testRoCEPayload(length int, dqpn, psn uint32, seed byte) []byte {
	p := make([]byte, length, MaxDatagram)
	p[0] = 0x04 // RC SEND Only
	binary.BigEndian.PutUint16(p[2:], 0xFFFF)
	binary.BigEndian.PutUint32(p[4:], dqpn&0xFFFFFF)
	binary.BigEndian.PutUint32(p[8:], psn&0xFFFFFF)
	for i := layers.BTHLength; i < length-layers.ICRCLength; i++ {
		p[i] = seed + byte(i*7)
	}
	return p
}

func wireReadBuffers(n int) []Datagram {
	dgs := make([]Datagram, n)
	for i := range dgs {
		dgs[i].Payload = make([]byte, 0, MaxDatagram)
	}
	return dgs
}

// udpReadN reads until n datagrams have arrived or the deadline passes.
func udpReadN(t *testing.T, w *UDPWire, n int) []Datagram {
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
			got = append(got, dgs[:k]...)
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

func udpListenPair(t *testing.T, a, b string, opts ...UDPOption) (*UDPWire, *UDPWire) {
	t.Helper()
	wa, err := ListenUDP(netip.MustParseAddrPort(a), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { wa.Close() })
	wb, err := ListenUDP(netip.MustParseAddrPort(b), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { wb.Close() })
	return wa, wb
}

func TestUDPWireRoundTrip(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name   string
		a, b   string
		batch  int
		count  int
		length int
	}{
		{"ipv4 batch 1", "127.0.0.1:0", "127.0.0.2:0", 1, 5, 64},
		{"ipv4 batch 32", "127.0.0.1:0", "127.0.0.2:0", 32, 100, 1024 + 28 + 4},
		{"ipv4 batch 128 full MTU", "127.0.0.1:0", "127.0.0.2:0", 128, 300, MaxDatagram},
		{"ipv4 shortest", "127.0.0.1:0", "127.0.0.2:0", 8, 8, minRoCEDatagram},
		{"ipv6 batch 1", "[::1]:0", "[::1]:0", 1, 5, 64},
		{"ipv6 batch 32", "[::1]:0", "[::1]:0", 32, 100, 4096 + 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wa, wb := udpListenPair(t, tt.a, tt.b, WithUDPBatchSize(tt.batch))
			assert.Equal(t, tt.batch, wa.BatchSize())
			sent := make([]Datagram, tt.count)
			for i := range sent {
				sent[i] = Datagram{
					Dst:          wb.LocalAddr(),
					TrafficClass: uint8(i%64)<<2 | uint8(i%4), // every DSCP and ECN codepoint
					HopLimit:     uint8(1 + i%255),
					Payload:      testRoCEPayload(tt.length, 0x11, uint32(i), byte(i)),
				}
			}
			n, err := wa.WriteBatch(sent)
			require.NoError(t, err)
			require.Equal(t, tt.count, n)

			got := udpReadN(t, wb, tt.count)
			require.Len(t, got, tt.count)
			for i, dg := range got { // loopback keeps the order
				assert.Equal(t, sent[i].Payload, dg.Payload, "datagram %d bytes (ICRC included)", i)
				assert.Equal(t, wa.LocalAddr(), dg.Src, "datagram %d source", i)
				assert.Equal(t, wb.LocalAddr(), dg.Dst, "datagram %d destination", i)
				assert.Equal(t, sent[i].TrafficClass, dg.TrafficClass, "datagram %d traffic class", i)
				assert.Equal(t, sent[i].HopLimit, dg.HopLimit, "datagram %d TTL or hop limit", i)
				assert.Equal(t, ICRCGood, dg.ICRC, "datagram %d ICRC", i)
			}
		})
	}
}

// TestUDPWireRoCEPortOnTwoAddresses binds both loopback addresses to 4791,
// as two peers on one machine do, and checks the wildcard-free addressing.
func TestUDPWireRoCEPortOnTwoAddresses(t *testing.T) {
	defer goleak.VerifyNone(t)
	wa, wb := udpListenPair(t, "127.0.0.1:4791", "127.0.0.2:4791")
	assert.Equal(t, netip.MustParseAddrPort("127.0.0.1:4791"), wa.LocalAddr())
	for _, dir := range []struct{ from, to *UDPWire }{{wa, wb}, {wb, wa}} {
		_, err := dir.from.WriteBatch([]Datagram{{Dst: dir.to.LocalAddr(), Payload: testRoCEPayload(40, 1, 2, 3)}})
		require.NoError(t, err)
		got := udpReadN(t, dir.to, 1)
		assert.Equal(t, dir.from.LocalAddr(), got[0].Src)
		assert.Equal(t, ICRCGood, got[0].ICRC)
	}
}

// TestUDPWireWildcard checks that a wire bound to 0.0.0.0 learns each
// datagram's destination from IP_PKTINFO and sends from the Src it is told.
func TestUDPWireWildcard(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct{ any, peer, anyAs string }{
		{"0.0.0.0:0", "127.0.0.1:0", "127.0.0.2"},
		{"[::]:0", "[::1]:0", "::1"},
	} {
		t.Run(tt.any, func(t *testing.T) {
			wany, wpeer := udpListenPair(t, tt.any, tt.peer)
			anyAddr := netip.AddrPortFrom(netip.MustParseAddr(tt.anyAs), wany.LocalAddr().Port())
			_, err := wpeer.WriteBatch([]Datagram{{Dst: anyAddr, Payload: testRoCEPayload(64, 1, 1, 1)}})
			require.NoError(t, err)
			in := udpReadN(t, wany, 1)[0]
			assert.Equal(t, anyAddr, in.Dst)
			assert.Equal(t, ICRCGood, in.ICRC)

			// Reply from the address the request came to.
			_, err = wany.WriteBatch([]Datagram{{Src: in.Dst, Dst: in.Src, Payload: testRoCEPayload(64, 2, 2, 2)}})
			require.NoError(t, err)
			out := udpReadN(t, wpeer, 1)[0]
			assert.Equal(t, anyAddr, out.Src)
			assert.Equal(t, ICRCGood, out.ICRC)

			_, err = wany.WriteBatch([]Datagram{{Dst: in.Src, Payload: testRoCEPayload(64, 2, 2, 2)}})
			require.ErrorContains(t, err, "needs the source address")
		})
	}
}

func TestUDPWireWriteErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0")
	good := Datagram{Dst: wb.LocalAddr(), Payload: testRoCEPayload(64, 1, 1, 1)}
	tests := []struct {
		name string
		dg   Datagram
		want string
	}{
		{"short", Datagram{Dst: wb.LocalAddr(), Payload: make([]byte, 15)}, "shorter than BTH and ICRC"},
		{"wrong family", Datagram{Dst: netip.MustParseAddrPort("[::1]:4791"), Payload: testRoCEPayload(64, 1, 1, 1)}, "address family"},
		{"no destination", Datagram{Payload: testRoCEPayload(64, 1, 1, 1)}, "address family"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := wa.WriteBatch([]Datagram{good, tt.dg, good})
			require.ErrorContains(t, err, tt.want)
			assert.Equal(t, 1, n, "the datagram before the bad one is sent")
			udpReadN(t, wb, 1)
		})
	}
}

func TestUDPWireCloseUnblocksRead(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, err := ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"))
	require.NoError(t, err)
	errc := make(chan error)
	go func() {
		_, err := w.ReadBatch(wireReadBuffers(4))
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the reader block in the poller
	require.NoError(t, w.Close())
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrWireClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBatch did not return after Close")
	}
	_, err = w.ReadBatch(wireReadBuffers(1))
	require.ErrorIs(t, err, ErrWireClosed)
	_, err = w.WriteBatch([]Datagram{{Dst: w.LocalAddr(), Payload: testRoCEPayload(64, 1, 1, 1)}})
	require.ErrorIs(t, err, ErrWireClosed)
	require.ErrorIs(t, w.Close(), ErrWireClosed)
}

// TestUDPWireICRCOnTheWire captures what the kernel really sent on lo and
// checks the ICRC against the whole IPv4 header, with the IP ID the kernel
// chose: it proves the IP_PMTUDISC_DO/ID-0 behaviour on this kernel.
func TestUDPWireICRCOnTheWire(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, tt := range []struct{ a, b string }{
		{"127.0.0.1:4791", "127.0.0.2:4791"},
		{"[::1]:0", "[::1]:4791"},
	} {
		t.Run(tt.b, func(t *testing.T) {
			src, err := capture.OpenLive("lo", 0, capture.RoCEFilter())
			if err != nil {
				t.Skipf("no live capture on lo (needs CAP_NET_RAW): %v", err)
			}
			defer src.Close()
			wa, wb := udpListenPair(t, tt.a, tt.b)
			const marker = 0xC0FFEE
			sent := []Datagram{
				{Dst: wb.LocalAddr(), TrafficClass: 0x02, HopLimit: 1, Payload: testRoCEPayload(1024+16, marker, 1, 9)},
				{Dst: wb.LocalAddr(), TrafficClass: 0xB8 | 3, HopLimit: 255, Payload: testRoCEPayload(64, marker, 2, 8)},
			}
			_, err = wa.WriteBatch(sent)
			require.NoError(t, err)
			udpReadN(t, wb, len(sent))

			require.NoError(t, src.SetReadDeadline(time.Now().Add(3*time.Second)))
			seen := map[uint32]bool{}
			var p capture.Packet
			for len(seen) < len(sent) {
				require.NoError(t, src.NextInto(&p), "capturing our datagrams")
				frame := p.Data[14:] // lo has an Ethernet header of zeros
				ipLen, encap := 20, layers.EncapRoCEv2IPv4
				if frame[0]>>4 == 6 {
					ipLen, encap = 40, layers.EncapRoCEv2IPv6
				}
				bth := frame[ipLen+8:]
				if len(bth) < 12 || binary.BigEndian.Uint32(bth[4:])&0xFFFFFF != marker {
					continue // someone else's RoCE traffic on lo
				}
				psn := binary.BigEndian.Uint32(bth[8:])
				got, want, err := layers.VerifyICRC(encap, frame)
				require.NoError(t, err)
				assert.Equal(t, want, got, "ICRC of the captured frame, PSN %d", psn)
				if encap == layers.EncapRoCEv2IPv4 {
					assert.Equal(t, uint16(0), binary.BigEndian.Uint16(frame[4:]), "IP ID")
					assert.Equal(t, uint16(0x4000), binary.BigEndian.Uint16(frame[6:]), "DF")
					assert.Equal(t, sent[psn-1].TrafficClass, frame[1], "TOS")
					assert.Equal(t, sent[psn-1].HopLimit, frame[8], "TTL")
				} else {
					assert.Equal(t, sent[psn-1].TrafficClass, uint8(binary.BigEndian.Uint16(frame[0:])>>4), "traffic class")
					assert.Equal(t, sent[psn-1].HopLimit, frame[7], "hop limit")
				}
				seen[psn] = true
			}
		})
	}
}

// TestUDPWireReadMarksTruncated: a datagram longer than MaxDatagram keeps
// its slot, empty and marked, with the sender's address for the drop
// report; the next one is delivered whole (TestWireBatchKeepsSlots mixes
// many).
func TestUDPWireReadMarksTruncated(t *testing.T) {
	defer goleak.VerifyNone(t)
	wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0")
	big := make([]byte, MaxDatagram+100)
	_, err := wa.WriteBatch([]Datagram{
		{Dst: wb.LocalAddr(), Payload: big},
		{Dst: wb.LocalAddr(), Payload: testRoCEPayload(64, 1, 7, 1)},
	})
	require.NoError(t, err)
	got := udpReadN(t, wb, 2)
	assert.Equal(t, DropTooLong, got[0].Drop)
	assert.Empty(t, got[0].Payload)
	assert.Equal(t, wa.LocalAddr(), got[0].Src)
	assert.Zero(t, got[1].Drop)
	assert.Equal(t, uint32(7), binary.BigEndian.Uint32(got[1].Payload[8:]))
}

func TestUDPWireSteadyStateAllocs(t *testing.T) {
	if udpRaceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0", WithUDPBatchSize(16))
	out := make([]Datagram, 16)
	for i := range out {
		out[i] = Datagram{Dst: wb.LocalAddr(), TrafficClass: 1, HopLimit: 64, Payload: testRoCEPayload(1024, 1, uint32(i), 1)}
	}
	in := wireReadBuffers(16)
	roundTrip := func() {
		_, err := wa.WriteBatch(out)
		if err != nil {
			panic(err)
		}
		for got := 0; got < len(out); {
			n, err := wb.ReadBatch(in)
			if err != nil {
				panic(err)
			}
			got += n
		}
	}
	roundTrip()
	assert.Zero(t, testing.AllocsPerRun(50, roundTrip))
}

// TestUDPWireSecondOwnerFails: a second wire on an address and port a wire
// already has, or on the wildcard beside it, or on the address beside a
// wildcard one, fails with EADDRINUSE and names the address (issue 17: a
// second ibpeer serve bound 4791 too and took half the first one's
// datagrams).
func TestUDPWireSecondOwnerFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct{ first, second string }{
		{"127.81.19.1", "127.81.19.1"},
		{"127.81.19.1", "0.0.0.0"},
		{"0.0.0.0", "127.81.19.1"},
		{"::1", "::1"},
	}
	for _, tt := range tests {
		t.Run(tt.first+" then "+tt.second, func(t *testing.T) {
			w, err := ListenUDP(netip.AddrPortFrom(netip.MustParseAddr(tt.first), 0))
			require.NoError(t, err)
			defer w.Close()
			second := netip.AddrPortFrom(netip.MustParseAddr(tt.second), w.LocalAddr().Port())
			w2, err := ListenUDP(second)
			if err == nil {
				w2.Close()
			}
			require.ErrorIs(t, err, unix.EADDRINUSE)
			assert.ErrorContains(t, err, "listen udp "+second.String()+": address in use")
		})
	}
}

func TestUDPWireListenErrors(t *testing.T) {
	_, err := ListenUDP(netip.AddrPort{})
	require.ErrorContains(t, err, "invalid address")
	_, err = ListenUDP(netip.MustParseAddrPort("192.0.2.1:0"))
	require.Error(t, err, "not a local address")
	assert.False(t, errors.Is(err, ErrWireClosed))
}
