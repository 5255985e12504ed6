package output_test

import (
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// convs are n connections with every column non-zero.
func benchConvs(n int) []decode.Conversation {
	cs := make([]decode.Conversation, n)
	for i := range cs {
		c := &cs[i]
		c.ID, c.QPNAB, c.QPNBA, c.HasBA = uint32(i+1), uint32(i), uint32(i+7), i%3 != 0
		c.A = decode.Endpoint{Addr: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}
		c.B = decode.Endpoint{Addr: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})}
		for d := range c.Dir {
			s := &c.Dir[d]
			s.Packets, s.Bytes, s.Messages, s.Retransmissions, s.PSNGaps = uint64(1000+i), uint64(100000+i), 300, 3, 1
			s.Ops[decode.OpClassSend], s.NAKs[1] = 100, 2
		}
		c.Start, c.Duration = time.Duration(i)*time.Microsecond, time.Second
		c.Latency = decode.LatencySummary{Count: 10, P50: time.Microsecond, P99: 9 * time.Microsecond}
	}
	return cs
}

func BenchmarkConvText(b *testing.B) {
	cs := benchConvs(10000)
	b.ReportAllocs()
	for b.Loop() {
		_ = output.WriteConversations(io.Discard, cs, "")
	}
}

func BenchmarkConvJSON(b *testing.B) {
	cs := benchConvs(10000)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = output.AppendConversationsJSON(buf[:0], cs)
	}
}
