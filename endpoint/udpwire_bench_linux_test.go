//go:build linux

package endpoint

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/ipv4"
)

// BenchmarkUDPLoopback moves the same datagrams over loopback from
// 127.0.0.1 to 127.0.0.2 three ways in one run (ARCHITECTURE.md asks for the
// comparison): UDPWire; a plain net.UDPConn sending and receiving one
// datagram per call; and x/net/ipv4's PacketConn.WriteBatch/ReadBatch, which
// UDPWire's own recvmmsg/sendmmsg replace because x/net allocates a net.IP
// and a net.UDPAddr for every datagram it reads. Each op is one datagram;
// a batch is written, then read back, in lockstep so nothing is lost.
// UDPWire also computes the ICRC of every datagram on both sides, which the
// others do not. PacketWire (AF_PACKET on lo, needs CAP_NET_RAW) moves the
// same payloads in frames it builds itself.
func BenchmarkUDPLoopback(b *testing.B) {
	for _, size := range []int{64, 1024, 4096} {
		for _, batch := range []int{1, 32} {
			name := fmt.Sprintf("size=%d/batch=%d", size, batch)
			b.Run("UDPWire/"+name, func(b *testing.B) { benchUDPWire(b, size, batch) })
			b.Run("net.UDPConn/"+name, func(b *testing.B) { benchNetUDPConn(b, size, batch) })
			b.Run("x-net-ipv4/"+name, func(b *testing.B) { benchXNetBatch(b, size, batch) })
			b.Run("PacketWire/"+name, func(b *testing.B) { benchPacketWire(b, size, batch) })
		}
	}
}

// benchReportRate stops the clock (closing a packet socket waits for an RCU
// grace period, which is not the wire's speed) and adds datagrams/s and
// Gb/s of UDP payload.
func benchReportRate(b *testing.B, size int) {
	b.StopTimer()
	b.SetBytes(int64(size))
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/sec, "dgram/s")
	b.ReportMetric(float64(b.N)*float64(size)*8/sec/1e9, "Gb/s")
}

func benchUDPWire(b *testing.B, size, batch int) {
	wa, err := ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"), WithUDPBatchSize(batch))
	require.NoError(b, err)
	defer wa.Close()
	wb, err := ListenUDP(netip.MustParseAddrPort("127.0.0.2:0"), WithUDPBatchSize(batch))
	require.NoError(b, err)
	defer wb.Close()
	out := make([]Datagram, batch)
	for i := range out {
		out[i] = Datagram{Dst: wb.LocalAddr(), Payload: testRoCEPayload(size, 1, uint32(i), 1)}
	}
	in := wireReadBuffers(batch)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		k := min(batch, b.N-done)
		if _, err := wa.WriteBatch(out[:k]); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < k; {
			n, err := wb.ReadBatch(in[:k-got])
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	benchReportRate(b, size)
}

func listenPlainPair(b *testing.B) (*net.UDPConn, *net.UDPConn) {
	ca, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	require.NoError(b, err)
	cb, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.2:0")))
	require.NoError(b, err)
	for _, c := range []*net.UDPConn{ca, cb} {
		require.NoError(b, c.SetReadBuffer(defaultUDPSocketBuffer))
		require.NoError(b, c.SetWriteBuffer(defaultUDPSocketBuffer))
	}
	return ca, cb
}

func benchNetUDPConn(b *testing.B, size, batch int) {
	ca, cb := listenPlainPair(b)
	defer ca.Close()
	defer cb.Close()
	dst := cb.LocalAddr().(*net.UDPAddr).AddrPort()
	out := testRoCEPayload(size, 1, 1, 1)
	in := make([]byte, MaxDatagram)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		k := min(batch, b.N-done)
		for range k {
			if _, err := ca.WriteToUDPAddrPort(out, dst); err != nil {
				b.Fatal(err)
			}
		}
		for range k {
			if _, _, err := cb.ReadFromUDPAddrPort(in); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchReportRate(b, size)
}

func benchXNetBatch(b *testing.B, size, batch int) {
	ca, cb := listenPlainPair(b)
	defer ca.Close()
	defer cb.Close()
	pa, pb := ipv4.NewPacketConn(ca), ipv4.NewPacketConn(cb)
	out := make([]ipv4.Message, batch)
	in := make([]ipv4.Message, batch)
	for i := range out {
		out[i] = ipv4.Message{Buffers: [][]byte{testRoCEPayload(size, 1, uint32(i), 1)}, Addr: cb.LocalAddr()}
		in[i] = ipv4.Message{Buffers: [][]byte{make([]byte, MaxDatagram)}}
	}
	require.NoError(b, cb.SetReadDeadline(time.Time{}))
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		k := min(batch, b.N-done)
		for sent := 0; sent < k; {
			n, err := pa.WriteBatch(out[sent:k], 0)
			if err != nil {
				b.Fatal(err)
			}
			sent += n
		}
		for got := 0; got < k; {
			n, err := pb.ReadBatch(in[:k-got], 0)
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	benchReportRate(b, size)
}

func benchPacketWire(b *testing.B, size, batch int) {
	wa, err := OpenPacketWire("lo", netip.MustParseAddr("127.0.0.1"), WithPacketBatchSize(batch))
	if err != nil {
		b.Skipf("packet wire: %v", err)
	}
	defer wa.Close()
	wb, err := OpenPacketWire("lo", netip.MustParseAddr("127.0.0.2"), WithPacketBatchSize(batch))
	require.NoError(b, err)
	defer wb.Close()
	out := make([]Datagram, batch)
	for i := range out {
		out[i] = Datagram{Dst: wb.LocalAddr(), Payload: testRoCEPayload(size, 1, uint32(i), 1)}
	}
	in := wireReadBuffers(batch)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		k := min(batch, b.N-done)
		if _, err := wa.WriteBatch(out[:k]); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < k; {
			n, err := wb.ReadBatch(in[:k-got])
			if err != nil {
				b.Fatal(err)
			}
			got += n
		}
	}
	benchReportRate(b, size)
}

// BenchmarkUDPWireControlMessages measures what per-datagram IP_TOS and
// IP_TTL control messages cost against none (the socket's own values, which
// is what a per-socket setsockopt cached by value would cost in a run of
// equal values): the reason UDPWire sends them per datagram.
func BenchmarkUDPWireControlMessages(b *testing.B) {
	for _, tt := range []struct {
		name        string
		tclass, hop uint8
	}{{"none", 0, 0}, {"tos+ttl", 0x02, 64}} {
		b.Run(tt.name, func(b *testing.B) {
			wa, err := ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"), WithUDPBatchSize(32))
			require.NoError(b, err)
			defer wa.Close()
			wb, err := ListenUDP(netip.MustParseAddrPort("127.0.0.2:0"), WithUDPBatchSize(32))
			require.NoError(b, err)
			defer wb.Close()
			out := make([]Datagram, 32)
			for i := range out {
				out[i] = Datagram{Dst: wb.LocalAddr(), TrafficClass: tt.tclass, HopLimit: tt.hop, Payload: testRoCEPayload(64, 1, uint32(i), 1)}
			}
			in := wireReadBuffers(32)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 32 {
				k := min(32, b.N-done)
				if _, err := wa.WriteBatch(out[:k]); err != nil {
					b.Fatal(err)
				}
				for got := 0; got < k; {
					n, err := wb.ReadBatch(in[:k-got])
					if err != nil {
						b.Fatal(err)
					}
					got += n
				}
			}
			benchReportRate(b, 64)
		})
	}
}
