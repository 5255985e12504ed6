package endpoint_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// benchmarkOp runs one verb of size bytes per iteration over a fault-free
// wiretest pair, 16 outstanding, and reports allocations: in steady state
// the endpoint allocates nothing per packet, so allocs/op is 0.
func benchmarkOp(b *testing.B, op endpoint.WROpcode, size int, mtu layers.PathMTU) {
	defer goleak.VerifyNone(b, goleak.IgnoreCurrent())
	a, p := pair(b, wiretest.Config{}, peerOpts{typ: endpoint.RC, memSize: 1 << 20, maxSend: 64, maxRecv: 512}, mtu)
	defer p.close(b)
	defer a.close(b)
	wr := endpoint.SendWR{Op: op, SGL: []endpoint.SGE{a.mr.SGE(0, size)}, RemoteAddr: p.mr.Addr(), RKey: p.mr.RKey(), CompareAdd: 1}
	recv := endpoint.RecvWR{SGL: []endpoint.SGE{p.mr.SGE(0, size)}}
	wcs := make([]endpoint.WC, 32)
	rwcs := make([]endpoint.WC, 32)
	run := func(n int) {
		posted, done := 0, 0
		for done < n {
			for posted < n && posted-done < 16 {
				if op == endpoint.WRSend {
					if err := p.qp.PostRecv(recv); err != nil {
						b.Fatal(err)
					}
				}
				if err := a.qp.PostSend(&wr); err != nil {
					b.Fatal(err)
				}
				posted++
			}
			k := a.scq.Poll(wcs)
			if k == 0 {
				<-a.scq.Notify()
				continue
			}
			for _, wc := range wcs[:k] {
				if wc.Status != endpoint.StatusSuccess {
					b.Fatal(wc)
				}
			}
			done += k
			p.rcq.Poll(rwcs)
		}
	}
	run(1000) // warm the pools and rings
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	run(b.N)
}

func BenchmarkWrite4KiB(b *testing.B)  { benchmarkOp(b, endpoint.WRWrite, 4096, layers.MTU4096) }
func BenchmarkWrite64KiB(b *testing.B) { benchmarkOp(b, endpoint.WRWrite, 65536, layers.MTU4096) }
func BenchmarkRead4KiB(b *testing.B)   { benchmarkOp(b, endpoint.WRRead, 4096, layers.MTU4096) }
func BenchmarkSend4KiB(b *testing.B)   { benchmarkOp(b, endpoint.WRSend, 4096, layers.MTU1024) }
func BenchmarkFetchAdd(b *testing.B)   { benchmarkOp(b, endpoint.WRFetchAdd, 8, layers.MTU1024) }
