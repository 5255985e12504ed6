package decode_test

import (
	"net"
	"testing"
	"time"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// benchMix is the packet mix of bench/gencap (the 1M-packet benchmark
// capture): per QP, RDMA WRITE ONLY, ACK, READ request, READ response ONLY,
// SEND ONLY with immediate, ACK, 64-byte payloads, between two hosts. Each
// of the six packets of each QP is decoded once by its own Decoder; the
// stream is replayed by changing PSN, MSN, QP, frame number and time in
// the decoded headers, which is all the Analyzer reads of them.
type benchMix struct {
	pkts []*decode.Packet // step s of the cycle: pkts[s]
	psn  []layers.PSN     // per QP
	i    int
	qps  int
	base uint32 // QPN offset, moved to roll the set of QPs
}

func newBenchMix(t testing.TB, qps int) *benchMix {
	m := &benchMix{qps: qps, psn: make([]layers.PSN, qps)}
	a := struct {
		mac net.HardwareAddr
		ip  net.IP
	}{net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.IP{10, 0, 0, 1}}
	b := a
	b.mac, b.ip = net.HardwareAddr{2, 0, 0, 0, 0, 2}, net.IP{10, 0, 0, 2}
	payload := make([]byte, 64)
	buf := gopacket.NewSerializeBuffer()
	for step := range 6 {
		src, dst := a, b
		bth := &layers.BTH{PKey: 0xFFFF, DestQP: 0x100}
		var pl []byte
		switch step {
		case 0:
			bth.Opcode, bth.AckReq, pl = 0x0A, true, payload
			bth.RETH = layers.RETH{VA: 0x7f0000000000, RKey: 0x1234, DMALength: 64}
		case 1, 5:
			src, dst = b, a
			bth.Opcode, bth.DestQP = 0x11, 0x200
			bth.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(0x1F)}
		case 2:
			bth.Opcode, bth.AckReq = 0x0C, true
			bth.RETH = layers.RETH{VA: 0x7f1000000000, RKey: 0x5678, DMALength: 64}
		case 3:
			src, dst = b, a
			bth.Opcode, bth.DestQP, pl = 0x10, 0x200, payload
			bth.AETH = layers.AETH{Syndrome: layers.MakeAckSyndrome(0x1F)}
		case 4:
			bth.Opcode, bth.AckReq, bth.SE, pl = 0x05, true, true, payload
		}
		ip := &gplayers.IPv4{Version: 4, TTL: 64, Flags: gplayers.IPv4DontFragment, Protocol: gplayers.IPProtocolUDP, SrcIP: src.ip, DstIP: dst.ip, TOS: 2}
		ls := append([]gopacket.SerializableLayer{
			&gplayers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: gplayers.EthernetTypeIPv4},
			ip, &gplayers.UDP{SrcPort: 0xC000, DstPort: 4791},
		}, bth.SerializableLayers(pl)...)
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...))
		frame := append([]byte(nil), buf.Bytes()...)
		require.NoError(t, layers.FinishFrame(frame, gplayers.LayerTypeEthernet, layers.ParserOptions{}))
		p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: step + 1, Length: len(frame), LinkType: 1, Data: frame})
		require.NoError(t, p.Err)
		require.True(t, p.IsIB())
		m.pkts = append(m.pkts, p)
	}
	return m
}

// next returns the next packet of the stream, as gencap numbers it.
func (m *benchMix) next() *decode.Packet {
	i := m.i
	m.i++
	step := i % 6
	qp := (i / 6) % m.qps
	p := m.pkts[step]
	p.Analysis = decode.PacketAnalysis{}
	p.Number = i + 1
	p.RelTime = time.Duration(i) * time.Microsecond
	b := &p.Headers.BTH
	b.PSN = m.psn[qp]
	switch step {
	case 1, 3, 5:
		b.DestQP = m.base + 0x200 + uint32(qp)
		b.AETH.MSN = uint32(i/6) & 0xFFFFFF
	default:
		b.DestQP = m.base + 0x100 + uint32(qp)
		m.psn[qp] = m.psn[qp].Add(1)
	}
	return p
}

// BenchmarkAnalyze measures Analyzer.Analyze per packet on the benchmark
// capture's mix over 64 QPs.
func BenchmarkAnalyze(b *testing.B) {
	m := newBenchMix(b, 64)
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	for range 64 * 6 * 4 {
		a.Analyze(m.next())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		a.Analyze(m.next())
	}
}

// TestAnalyzeAllocatesNothing: once each QP's state exists, Analyze makes
// no allocation.
func TestAnalyzeAllocatesNothing(t *testing.T) {
	m := newBenchMix(t, 64)
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	for range 64 * 6 * 200 {
		a.Analyze(m.next())
	}
	allocs := testing.AllocsPerRun(64*6*20, func() { a.Analyze(m.next()) })
	assert.Zero(t, allocs)
}

// TestAnalyzeMemoryBounded feeds millions of packets over a rolling set of
// QPs: every 600 packets the QP numbers move on, so connections keep
// appearing and going idle. The connections followed stay bounded.
func TestAnalyzeMemoryBounded(t *testing.T) {
	n := 3_000_000
	if testing.Short() || raceEnabled {
		n = 300_000
	}
	m := newBenchMix(t, 16)
	const maxLive = 256
	a := decode.NewAnalyzer(decode.AnalyzerOptions{MaxLive: maxLive, MaxDone: 1000, IdleTimeout: 50 * time.Millisecond})
	peak := 0
	for i := range n {
		if i%600 == 0 {
			m.base += 16 << 12
		}
		a.Analyze(m.next())
		peak = max(peak, a.Live())
	}
	assert.LessOrEqual(t, peak, maxLive+1)
	a.Finish()
	cs := a.Conversations()
	assert.LessOrEqual(t, len(cs), 1000+maxLive+1)
	assert.Positive(t, a.Retired(), "summaries beyond MaxDone are counted, not kept")
	assert.Zero(t, a.Expert().Count(decode.FindUnanswered))
}

// BenchmarkAnalyzeCMContract measures what the CM contract checks cost a
// packet: the same 20,000 RDMA WRITEs and their ACKs decoded and analysed
// after a CM REQ/REP/RTU (the checks follow the connection) and without it
// (the connection is paired from its responses; one pointer test per
// packet). Decoding is in both: a Decoder's packets share its parser.
func BenchmarkAnalyzeCMContract(b *testing.B) {
	c, err := craft.New(craft.Config{})
	require.NoError(b, err)
	require.NoError(b, c.Connect(craft.CMOptions{}))
	ops := make([]craft.Op, 20000)
	for i := range ops {
		ops[i] = craft.Op{Kind: craft.OpWrite, Data: make([]byte, 64), VA: 0x7f0000000000, RKey: 1}
	}
	require.NoError(b, c.Run(ops, craft.Faults{}))
	frames := c.Frames()
	for _, bc := range []struct {
		name   string
		frames []craft.Frame
	}{{"with-cm", frames}, {"without-cm", frames[3:]}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			dec := decode.NewDecoder(decode.Options{})
			n := 0
			for b.Loop() {
				a := decode.NewAnalyzer(decode.AnalyzerOptions{})
				for _, f := range bc.frames {
					a.Analyze(dec.Decode(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
				}
				n += len(bc.frames)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/pkt")
		})
	}
}
