package decode_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// scriptRun is a sequence script run through an Analyzer.
type scriptRun struct {
	analyzed
	latencies []decode.Latency
}

// runScript plays a sequenceScript whose parts, separated by "|", are
// 10 ms apart (an ACK timer's worth: what follows a "|" is a retry).
func runScript(t *testing.T, script string) *scriptRun {
	t.Helper()
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	for i, part := range strings.Split(script, "|") {
		if i > 0 {
			c.Wait(10 * time.Millisecond)
		}
		for _, s := range sequenceScript(t, part) {
			if s.lost {
				c.Wait(craft.DefaultStep)
				continue
			}
			require.NoError(t, c.Packet(s.p))
		}
	}
	res := &scriptRun{analyzed: analyzed{packets: []decode.PacketAnalysis{{}}}}
	res.a = decode.NewAnalyzer(decode.AnalyzerOptions{
		OnFinding: func(f decode.Finding) { res.findings = append(res.findings, f) },
		OnLatency: func(l decode.Latency) { res.latencies = append(res.latencies, l) },
	})
	dec := decode.NewDecoder(decode.Options{})
	for i, fr := range c.Frames() {
		p := dec.Decode(decode.Input{Number: i + 1, Time: fr.Time, Length: len(fr.Data), LinkType: fr.LinkType, Data: fr.Data})
		require.NoError(t, p.Err)
		res.a.Analyze(p)
		res.packets = append(res.packets, p.Analysis)
	}
	res.a.Finish()
	return res
}

// TestAnalyzeReadRetryFromMiddle: rxe answers a lost READ response by
// asking again from the lost PSN, with a new RETH for the rest (VA
// advanced, length reduced), and replays the rest of the response as
// MIDDLE ... LAST (rxe_resp.c: a duplicate READ at a PSN other than the
// first is in the replay state); a responder may also begin the rest with
// FIRST or ONLY. Either way it is the same READ: counted once, with its
// full length and one latency from its first request to the response that
// completes it, and no opcode out of sequence. Every count agrees with
// the findings behind it.
func TestAnalyzeReadRetryFromMiddle(t *testing.T) {
	tests := []struct {
		name, script string
		reads, gaps  int
	}{
		{"MIDDLE lost, rest replayed from MIDDLE (rxe)",
			"rd256/4096 rd260/4096 rf256 -rm257 rm258~ rl259 rf260 rm261 rm262 rl263 | " +
				"rd257/3072 rd260/4096 rm257 rm258 rl259 rf260 rm261 rm262 rl263", 2, 1},
		{"MIDDLE lost, rest begun with FIRST",
			"rd256/4096 rd260/4096 rf256 -rm257 rm258~ rl259 rf260 rm261 rm262 rl263 | " +
				"rd257/3072 rd260/4096 rf257 rm258 rl259 rf260 rm261 rm262 rl263", 2, 1},
		{"LAST lost, rest replayed as LAST alone (rxe)",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 -rl259 rf260~ rm261 rm262 rl263 | " +
				"rd259/1024 rd260/4096 rl259 rf260 rm261 rm262 rl263", 2, 1},
		{"LAST lost, rest begun with ONLY",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 -rl259 rf260~ rm261 rm262 rl263 | " +
				"rd259/1024 rd260/4096 ro259 rf260 rm261 rm262 rl263", 2, 1},
		{"two MIDDLEs lost in two READs, retried twice",
			"rd256/4096 rd260/4096 rd264/4096 rf256 -rm257 rm258~ rl259 rf260 rm261 rm262 rl263 rf264 rm265 rm266 rl267 | " +
				"rd257/3072 rd260/4096 rd264/4096 rm257 rm258 rl259 rf260 -rm261 rm262 rl263 rf264 rm265 rm266 rl267 | " +
				"rd261/3072 rd264/4096 rm261 rm262 rl263 rf264 rm265 rm266 rl267", 3, 1},
		{"FIRST lost, whole READ asked again",
			"rd256/4096 rd260/4096 -rf256 rm257~ rm258 rl259 rf260 rm261 rm262 rl263 | " +
				"rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 rf260 rm261 rm262 rl263", 2, 1},
		{"READ request lost before the capture point, sent again",
			"-rd256/4096 | rd256/4096 rf256 rm257 rm258 rl259 rd260/4096 rf260 rm261 rm262 rl263", 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runScript(t, tt.script)
			t.Log(r.dump())
			cs := r.a.Conversations()
			require.Len(t, cs, 1)
			c := &cs[0]
			assert.Zero(t, r.count(decode.FindBadOpcodeSequence), "opcode out of sequence")
			assert.Zero(t, r.count(decode.FindRETHLengthMismatch), "RETH length mismatch")
			assert.Less(t, r.a.Expert().Max(), decode.SevError, "no error on a run that succeeded")
			assert.EqualValues(t, tt.reads, c.Messages(), "messages")
			assert.EqualValues(t, tt.reads, c.Dir[0].Ops[decode.OpClassRead], "ops RDMA_READ")
			var sizes []uint32
			for _, pa := range r.packets {
				if pa.Info&decode.InfoMessage != 0 {
					sizes = append(sizes, pa.MessageSize)
				}
			}
			want := make([]uint32, tt.reads)
			for i := range want {
				want[i] = 4096
			}
			assert.Equal(t, want, sizes, "one complete message per READ, its full length")
			assert.Len(t, r.latencies, tt.reads, "one latency per READ")
			assert.EqualValues(t, tt.reads, c.Latency.Count, "conversation latency samples")
			var longest time.Duration
			for _, l := range r.latencies {
				assert.Equal(t, decode.OpClassRead, l.Op)
				assert.False(t, r.packets[l.Request].Has(decode.FindRetransmission), "from the READ's first request: %+v", l)
				longest = max(longest, l.D)
			}
			if tt.gaps > 0 {
				assert.Greater(t, longest, 10*time.Millisecond, "the READ that lost a response waited for its retry")
			}
			assert.EqualValues(t, r.count(decode.FindPSNGap), c.Sum(func(d *decode.DirStats) uint64 { return d.PSNGaps }),
				"the row's PSN gaps are the expert's")
			assert.EqualValues(t, tt.gaps, r.count(decode.FindPSNGap), "PSN gaps")
			assert.EqualValues(t, r.count(decode.FindRetransmission), c.Sum(func(d *decode.DirStats) uint64 { return d.Retransmissions }),
				"the row's retransmissions are the expert's")
		})
	}
}

// TestAnalyzeMalformedOnlyWhenIB: a frame that is not InfiniBand (empty,
// a cut Ethernet header, a cut IPv4 packet that is not UDP 4791) is no
// malformed InfiniBand packet; a RoCEv2 frame cut inside its BTH or its
// payload is one.
func TestAnalyzeMalformedOnlyWhenIB(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Packet(craft.Sample(layers.Opcode(0x04), 256, 64)))
	roce := c.Frames()[0].Data
	arp := append(bytes.Repeat([]byte{0xff}, 6), 0x52, 0x54, 0, 0x77, 0, 0x11, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1)
	tests := []struct {
		name string
		data []byte
		ib   bool
	}{
		{"empty frame", nil, false},
		{"Ethernet header cut", roce[:10], false},
		{"ARP cut", arp, false},
		{"IPv4 header cut", roce[:20], false},
		{"BTH cut", roce[:14+20+8+6], true},
		{"RoCEv2 frame cut in its payload", roce[:len(roce)-10], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found []decode.FindingKind
			a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) { found = append(found, f.Kind) }})
			p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, Length: len(tt.data), LinkType: 1, Data: tt.data})
			require.Error(t, p.Err)
			assert.Equal(t, tt.ib, p.IBMalformed(), "%v", p.Err)
			a.Analyze(p)
			a.Finish()
			if tt.ib {
				assert.NotEmpty(t, found, "%v", p.Err)
			} else {
				assert.Empty(t, found, "%v: not an InfiniBand finding", p.Err)
			}
		})
	}
}
