package decode_test

import (
	"testing"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// feed runs frames through a fresh Decoder and Analyzer, numbering them in
// order, and returns each packet's analysis (index = frame number).
func feed(t *testing.T, frames []capture.Packet, opts decode.AnalyzerOptions) ([]decode.PacketAnalysis, *decode.Analyzer) {
	t.Helper()
	a := decode.NewAnalyzer(opts)
	dec := decode.NewDecoder(decode.Options{})
	out := []decode.PacketAnalysis{{}}
	for i, f := range frames {
		p := dec.Decode(decode.Input{Number: i + 1, Time: f.Time, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data})
		a.Analyze(p)
		out = append(out, p.Analysis)
	}
	a.Finish()
	return out, a
}

// TestAnalyzeReordered swaps two requests that left close together: the
// later PSN first is a gap, the earlier one then is out of order, not a
// retransmission.
func TestAnalyzeReordered(t *testing.T) {
	frames := corpusFrames(t, "../pcaps/rc_send.pcap", 100)
	// Frames 2 and 3 are SEND FIRST (257) and SEND MIDDLE (258).
	frames[1], frames[2] = frames[2], frames[1]
	frames[1].Time, frames[2].Time = frames[2].Time, frames[1].Time
	an, a := feed(t, frames, decode.AnalyzerOptions{})
	assert.True(t, an[2].Has(decode.FindPSNGap))
	assert.EqualValues(t, 1, an[2].GapPSNs)
	assert.True(t, an[3].Has(decode.FindOutOfOrder))
	assert.False(t, an[3].Has(decode.FindRetransmission))
	assert.EqualValues(t, 1, a.Expert().Count(decode.FindOutOfOrder))
}

// TestAnalyzeDroppedPacket removes a packet from a clean capture and
// duplicates another, as a capture that lost one and saw one twice.
func TestAnalyzeDroppedPacket(t *testing.T) {
	frames := corpusFrames(t, "../pcaps/rc_write.pcap", 100)
	require.Greater(t, len(frames), 6)
	lost := frames[2]
	frames = append(frames[:2], frames[3:]...)
	an, _ := feed(t, frames, decode.AnalyzerOptions{})
	p := decodeOne(t, lost)
	gapAt := 0
	for i, x := range an {
		if x.Has(decode.FindPSNGap) {
			gapAt = i
		}
	}
	require.NotZero(t, gapAt, "the loss of PSN %d shows", p.Headers.BTH.PSN)
	assert.EqualValues(t, 1, an[gapAt].GapPSNs)
}

func decodeOne(t *testing.T, f capture.Packet) *decode.Packet {
	t.Helper()
	p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data})
	require.True(t, p.IsIB())
	return p
}

// TestAnalyzeFlippedOpcode turns a SEND ONLY into a SEND MIDDLE (ICRC
// recomputed): a MIDDLE with no FIRST is out of sequence.
func TestAnalyzeFlippedOpcode(t *testing.T) {
	frames := corpusFrames(t, "../pcaps/rc_send.pcap", 100)
	f := &frames[5] // RC_SEND_ONLY_WITH_IMMEDIATE, PSN 260
	p := decodeOne(t, *f)
	require.Equal(t, layers.Opcode(0x05), p.Headers.BTH.Opcode)
	data := append([]byte(nil), f.Data...)
	off := len(p.Headers.Ethernet.Contents) + len(p.Headers.IPv4.Contents) + 8
	data[off] = 0x01 // RC SEND MIDDLE (no ImmDt: the 4 bytes become payload)
	require.NoError(t, layers.FinishFrame(data, gplayers.LayerTypeEthernet, layers.ParserOptions{}))
	f.Data = data
	an, _ := feed(t, frames, decode.AnalyzerOptions{})
	assert.True(t, an[6].Has(decode.FindBadOpcodeSequence))
	assert.Equal(t, decode.SevError, an[6].Severity)
}

// TestAnalyzeTwoPass: the first pass records which frame answers each
// request; the second names it on the request.
func TestAnalyzeTwoPass(t *testing.T) {
	frames := corpusFrames(t, "../pcaps/rc_read.pcap", 100)
	links := decode.NewFrameLinks()
	feed(t, frames, decode.AnalyzerOptions{Links: links})
	links.SecondPass()
	an, _ := feed(t, frames, decode.AnalyzerOptions{Links: links})
	answered := 0
	for i, x := range an {
		if x.Info&decode.InfoResponse != 0 {
			answered++
			assert.Greater(t, x.ResponseFrame, uint32(i))
			assert.GreaterOrEqual(t, x.LastResponseFrame, x.ResponseFrame)
			assert.Equal(t, uint32(i), an[x.LastResponseFrame].RequestFrame)
		}
	}
	assert.Equal(t, 3, answered, "three READs")
}

func TestHistogram(t *testing.T) {
	var h decode.Histogram
	for i := 1; i <= 100; i++ {
		h.Add(time.Duration(i) * time.Microsecond)
	}
	assert.EqualValues(t, 100, h.Count())
	assert.Equal(t, time.Microsecond, h.Min())
	assert.Equal(t, 100*time.Microsecond, h.Max())
	// Past 64 samples the quantiles come from buckets: within 4.5%.
	assert.InEpsilon(t, float64(50*time.Microsecond), float64(h.Quantile(0.5)), 0.045)
	assert.InEpsilon(t, float64(99*time.Microsecond), float64(h.Quantile(0.99)), 0.045)
	exact := decode.Histogram{Exact: 1000}
	for i := 1; i <= 100; i++ {
		exact.Add(time.Duration(i))
	}
	assert.Equal(t, time.Duration(50), exact.Quantile(0.5))
	assert.Equal(t, time.Duration(90), exact.Quantile(0.9))
	assert.Equal(t, time.Duration(99), exact.Quantile(0.99))
}

func TestParseIOFunc(t *testing.T) {
	tests := []struct {
		in            string
		fn            decode.IOFunc
		field, filter string
		ok            bool
	}{
		{"SUM(infiniband.reth.dmalen)", decode.IOSum, "infiniband.reth.dmalen", "", true},
		{"COUNT(ibwire.analysis.retransmission)ibwire.analysis.retransmission", decode.IOCount, "ibwire.analysis.retransmission", "ibwire.analysis.retransmission", true},
		{"avg(frame.len)ip.src == 1.2.3.4", decode.IOAvg, "frame.len", "ip.src == 1.2.3.4", true},
		{"bth.psn > 3", 0, "", "", false},
		{"len(frame.len)", 0, "", "", false},
	}
	for _, tt := range tests {
		fn, field, filter, ok := decode.ParseIOFunc(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		if ok {
			assert.Equal(t, tt.fn, fn, tt.in)
			assert.Equal(t, tt.field, field, tt.in)
			assert.Equal(t, tt.filter, filter, tt.in)
		}
	}
}

// TestTwoPassConvIDs: a CNP answering a connection before its two
// directions were paired opened a conversation of its own, merged into the
// connection later; the second pass gives every packet the id of the
// conversation -z conv,qp lists, so a filter on conv_id finds them all.
func TestTwoPassConvIDs(t *testing.T) {
	const path = "../pcaps/rc_cnp_ecn.pcap"
	one := analyze(t, path, decode.AnalyzerOptions{})
	convs := one.a.Conversations()
	require.Len(t, convs, 1)
	final := convs[0]
	require.NotEmpty(t, final.Aliases, "the capture must hold a packet numbered before the pairing, or this test proves nothing")
	aliased := 0
	for _, x := range one.packets {
		if x.Conv != 0 && x.Conv != final.ID {
			aliased++
		}
	}
	require.Positive(t, aliased, "one pass numbers the early packet with its merged conversation's id")

	links := decode.NewFrameLinks()
	analyze(t, path, decode.AnalyzerOptions{Links: links})
	links.SecondPass()
	two := analyze(t, path, decode.AnalyzerOptions{Links: links})
	withConv := 0
	for n, x := range two.packets {
		if x.Conv != 0 {
			withConv++
			assert.Equal(t, final.ID, x.Conv, "frame %d", n)
		}
	}
	assert.Equal(t, 13, withConv, "every RoCE packet of the capture is in the one connection")
}
