package replay

import (
	"context"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibwire/ibwire/endpoint"
)

// drain reads w until it closes and counts the datagrams.
func drain(w endpoint.Wire, n *atomic.Int64) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		dgs := make([]endpoint.Datagram, max(1, w.BatchSize()))
		for i := range dgs {
			dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
		}
		for {
			for i := range dgs {
				dgs[i].Payload = dgs[i].Payload[:0]
			}
			k, err := w.ReadBatch(dgs)
			n.Add(int64(k))
			if err != nil {
				return
			}
		}
	}()
	return done
}

// BenchmarkReplayRate sends the RoCEv2 datagrams of write_bw.pcap (1000
// datagrams of 20 to 1056 bytes, looped) to a UDP wire on 127.0.0.1: paced
// at --pps 10000, unpaced (--top), and by a plain net.UDPConn blaster
// sending the same datagrams one WriteTo each, all in one run. Run with
// -benchtime 50000x for the 5-second paced row (bench/replay-rate.sh).
func BenchmarkReplayRate(b *testing.B) {
	c, err := Load("../pcaps/rxe/write_bw.pcap", LoadOptions{Decode: decodeOpts()})
	if err != nil {
		b.Fatal(err)
	}
	var roce []Frame
	for _, f := range c.Frames {
		if f.RoCEv2 {
			roce = append(roce, f)
		}
	}
	run := func(b *testing.B, send func(rx netip.AddrPort, loops int) (Summary, error)) {
		rx, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"), endpoint.WithUDPSocketBuffer(8<<20))
		if err != nil {
			b.Fatal(err)
		}
		var got atomic.Int64
		done := drain(rx, &got)
		loops := max(1, b.N/len(roce))
		b.ResetTimer()
		sum, err := send(rx.LocalAddr(), loops)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // let the receiver catch up before counting
		rx.Close()
		<-done
		b.ReportMetric(sum.AchievedPPS, "pps")
		b.ReportMetric(sum.AchievedMbps, "Mb/s")
		b.ReportMetric(float64(got.Load())/float64(sum.Packets)*100, "%received")
		if sum.AskedPPS > 0 {
			b.ReportMetric((sum.AchievedPPS/sum.AskedPPS-1)*100, "%off-rate")
			b.ReportMetric(float64(sum.ErrP50)/1e3, "p50-µs")
			b.ReportMetric(float64(sum.ErrP90)/1e3, "p90-µs")
			b.ReportMetric(float64(sum.ErrP99)/1e3, "p99-µs")
			b.ReportMetric(float64(sum.ErrMax)/1e3, "max-µs")
		}
		b.ReportMetric(0, "ns/op")
	}
	play := func(opts PaceOptions) func(netip.AddrPort, int) (Summary, error) {
		return func(rx netip.AddrPort, loops int) (Summary, error) {
			tx, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.1:0"))
			if err != nil {
				return Summary{}, err
			}
			s := NewWireSender(tx, rx)
			defer s.Close()
			opts.Loop = loops
			return Play(context.Background(), &Capture{Frames: roce}, s, opts)
		}
	}
	b.Run("pps=10000", func(b *testing.B) {
		run(b, play(PaceOptions{PPS: 10000, CapPPS: DefaultCapPPS, CapMbps: 0}))
	})
	b.Run("top", func(b *testing.B) { run(b, play(PaceOptions{Top: true})) })
	b.Run("udpconn-blaster", func(b *testing.B) {
		run(b, func(rx netip.AddrPort, loops int) (Summary, error) {
			conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
			if err != nil {
				return Summary{}, err
			}
			defer conn.Close()
			var sum Summary
			start := time.Now()
			for range loops {
				for i := range roce {
					if _, err := conn.WriteToUDPAddrPort(roce[i].Datagram(), rx); err != nil {
						return sum, err
					}
					sum.Packets++
					sum.Bytes += int64(len(roce[i].Data))
				}
			}
			el := time.Since(start).Seconds()
			sum.AchievedPPS = float64(sum.Packets) / el
			sum.AchievedMbps = float64(sum.Bytes) * 8 / el / 1e6
			return sum, nil
		})
	})
}
