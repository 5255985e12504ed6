package decode_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

const rxe = "../pcaps/rxe/"

// conversation returns the RC (or other non-UD) conversations of r.
func rcConversations(r *analyzed) []decode.Conversation {
	var out []decode.Conversation
	for _, c := range r.a.Conversations() {
		if c.Service != layers.ServiceUD {
			out = append(out, c)
		}
	}
	return out
}

// TestAnalyzeRXE checks the analysis of the real rxe captures against the
// numbers of pcaps/rxe/MANIFEST.md.
func TestAnalyzeRXE(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, r *analyzed)
	}{
		{"write_bw_loss.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			c := cs[0]
			assert.Equal(t, decode.PairedOOB, c.PairedBy)
			// MANIFEST: "NAK_PSN_SEQ_ERR: 13".
			assert.EqualValues(t, 13, c.Dir[1].NAKs[layers.NAKPSNSequenceError])
			assert.Equal(t, 13, r.count(decode.FindNAK))
			// MANIFEST: "1192 retransmitted pkts", counted as request packets
			// whose (src, dst, destQP, PSN, opcode) was seen before: our
			// retransmissions whose first transmission was captured. The 12
			// others resend PSNs lost before the capture point (12 gaps).
			w := c.Dir[0]
			assert.EqualValues(t, 1192, w.Retransmissions-w.RetransLost)
			assert.EqualValues(t, 12, w.RetransLost)
			assert.EqualValues(t, 12, w.PSNGaps)
			withFrame := 0
			for _, pa := range r.packets {
				if pa.Has(decode.FindRetransmission) && pa.RetransmittedFrame != 0 {
					withFrame++
				}
			}
			assert.Equal(t, 1192, withFrame)
			assert.Zero(t, r.count(decode.FindBadOpcodeSequence))
			assert.Zero(t, r.count(decode.FindUnanswered))
		}},
		{"send_bw_rnr.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			c := cs[0]
			// MANIFEST: "RNR_NAK(timer=12): 49", "NAK_PSN_SEQ_ERR: 48",
			// "2444 retransmitted pkts".
			assert.EqualValues(t, 49, c.Dir[1].RNRNAKs)
			rnr := 0
			for _, f := range r.findings {
				if f.Kind == decode.FindRNRNAK {
					rnr++
					assert.EqualValues(t, 12, f.Sub, "frame %d", f.Frame)
					assert.Equal(t, 640*time.Microsecond, layers.RNRTimerCode(f.Sub).Duration())
				}
			}
			assert.Equal(t, 49, rnr)
			assert.EqualValues(t, 48, c.Dir[1].NAKs[layers.NAKPSNSequenceError])
			assert.EqualValues(t, 2444, c.Dir[0].Retransmissions)
			assert.Zero(t, c.Dir[0].RetransLost)
			assert.Zero(t, r.count(decode.FindAckTimeout), "every resend follows an RNR NAK")
		}},
		{"rping.pcap", func(t *testing.T, r *analyzed) {
			all := r.a.Conversations()
			require.Len(t, all, 2)
			mad, rc := all[0], all[1]
			assert.Equal(t, layers.ServiceUD, mad.Service)
			assert.EqualValues(t, 1, mad.QPNAB)
			assert.EqualValues(t, 1, mad.QPNBA)
			assert.EqualValues(t, 5, mad.Dir[0].Packets+mad.Dir[1].Packets, "REQ, REP, RTU, DREQ, DREP")
			assert.Equal(t, layers.ServiceRC, rc.Service)
			assert.Equal(t, decode.PairedCM, rc.PairedBy)
			assert.True(t, rc.HasBA)
			assert.EqualValues(t, 0x11, rc.QPNAB)
			assert.EqualValues(t, 0x11, rc.QPNBA)
			assert.Equal(t, "192.168.77.11", rc.A.String(), "the CM active side is A")
			assert.Equal(t, uint64(0x0000000001061c06), rc.ServiceID, "rping's port 7174 in the TCP port space")
			assert.Equal(t, 1024, rc.MTU)
			assert.Equal(t, decode.ConvClosed, rc.State)
			assert.EqualValues(t, 120, rc.Dir[0].Packets+rc.Dir[1].Packets)
			assert.EqualValues(t, 60, rc.Messages())
			assert.EqualValues(t, 60, rc.Latency.Count)
			assert.Equal(t, decode.SevChat, r.a.Expert().Max(), "a clean capture")
		}},
		{"rc_pingpong.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			assert.Equal(t, decode.PairedOOB, cs[0].PairedBy)
			assert.EqualValues(t, 0x11, cs[0].QPNAB)
			assert.EqualValues(t, 0x11, cs[0].QPNBA)
			assert.Equal(t, "192.168.77.11", cs[0].A.String(), "the pingpong client writes first")
			assert.EqualValues(t, 40, cs[0].Messages())
			assert.Equal(t, decode.SevChat, r.a.Expert().Max())
		}},
		{"read_bw.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			assert.EqualValues(t, 200, cs[0].Dir[0].Ops[decode.OpClassRead])
			reads, sized := 0, 0
			for _, pa := range r.packets {
				if pa.Info&decode.InfoLatency != 0 && pa.Op == decode.OpClassRead {
					reads++
					assert.Positive(t, pa.Latency)
				}
				if pa.Info&decode.InfoMessage != 0 && pa.MessageSize == 4096 {
					sized++
				}
			}
			assert.Equal(t, 200, reads, "each READ has a latency")
			assert.Equal(t, 200, sized, "each READ's responses carry 4096 bytes")
			assert.Equal(t, 1024, cs[0].MTU, "learned from the READ responses")
			assert.Equal(t, decode.SevChat, r.a.Expert().Max())
		}},
		{"ud_pingpong.pcap", func(t *testing.T, r *analyzed) {
			cs := r.a.Conversations()
			require.Len(t, cs, 1)
			assert.Equal(t, layers.ServiceUD, cs[0].Service)
			assert.Equal(t, decode.PairedOOB, cs[0].PairedBy)
			assert.EqualValues(t, 20, cs[0].Dir[0].Packets)
			assert.EqualValues(t, 20, cs[0].Dir[1].Packets)
		}},
		{"atomic_fadd.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			assert.EqualValues(t, 200, cs[0].Dir[0].Ops[decode.OpClassFetchAdd])
			assert.EqualValues(t, 200, cs[0].Latency.Count)
			assert.Equal(t, decode.SevChat, r.a.Expert().Max())
		}},
		{"write_bw.pcap", func(t *testing.T, r *analyzed) {
			cs := rcConversations(r)
			require.Len(t, cs, 1)
			assert.EqualValues(t, 200, cs[0].Messages())
			assert.EqualValues(t, 200*4096, cs[0].Dir[0].Goodput)
			assert.Equal(t, decode.SevChat, r.a.Expert().Max())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tt.check(t, analyze(t, rxe+tt.file, decode.AnalyzerOptions{}))
		})
	}
}

// manifestFindings reads the findings tables of pcaps/MANIFEST.md: for
// each file, its facts and its (frame, finding, ref) rows.
func manifestFindings(t *testing.T) map[string]manifestEntry {
	f, err := os.Open("../pcaps/MANIFEST.md")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]manifestEntry{}
	var cur string
	inFindings := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			cur, inFindings = strings.TrimPrefix(line, "## "), false
			out[cur] = manifestEntry{}
		case cur == "":
		case strings.HasPrefix(line, "- findings: "):
			e := out[cur]
			e.summary = strings.TrimPrefix(line, "- findings: ")
			out[cur] = e
		case strings.HasPrefix(line, "| frame |"):
			inFindings = true
		case inFindings && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---"):
			c := strings.Split(strings.Trim(line, "| "), " | ")
			frame, err1 := strconv.Atoi(c[0])
			ref, err2 := strconv.Atoi(c[2])
			require.NoError(t, err1, line)
			require.NoError(t, err2, line)
			e := out[cur]
			e.rows = append(e.rows, manifestRow{uint32(frame), c[1], uint32(ref), c[3]})
			out[cur] = e
		}
	}
	require.NoError(t, sc.Err())
	return out
}

type manifestEntry struct {
	summary string
	rows    []manifestRow
}

type manifestRow struct {
	frame   uint32
	kind    string
	ref     uint32
	comment string
}

// undetectable lists the injected anomalies no observer can see, with why.
var undetectable = map[string]string{
	"broken_wrong_pad.pcap/2": "PadCnt 2 for 3 pad bytes leaves a 14-byte payload whose pad is 2: the bytes agree with the header",
}

// TestAnalyzeGeneratedCorpus checks every finding pcaps/MANIFEST.md lists
// (frame, kind and related frame), and that files without injected
// anomalies report nothing above a note.
func TestAnalyzeGeneratedCorpus(t *testing.T) {
	entries := manifestFindings(t)
	require.NotEmpty(t, entries)
	for name, e := range entries {
		t.Run(name, func(t *testing.T) {
			r := analyze(t, "../pcaps/"+name, decode.AnalyzerOptions{})
			type key struct {
				frame uint32
				kind  string
			}
			got := map[key][]uint32{}
			for _, f := range r.findings {
				got[key{f.Frame, f.Kind.Name()}] = append(got[key{f.Frame, f.Kind.Name()}], f.Ref)
			}
			listed := map[uint32]bool{}
			for _, row := range e.rows {
				listed[row.frame] = true
				if why, ok := undetectable[name+"/"+strconv.Itoa(int(row.frame))]; ok {
					t.Logf("frame %d %s not checked: %s", row.frame, row.kind, why)
					continue
				}
				refs, ok := got[key{row.frame, row.kind}]
				if !assert.True(t, ok, "frame %d: want %s (%s)\n%s", row.frame, row.kind, row.comment, r.dump()) {
					continue
				}
				assert.Contains(t, refs, row.ref, "frame %d %s: related frame", row.frame, row.kind)
			}
			if strings.HasPrefix(name, "opcodes_") {
				// One packet of every opcode in a row is a catalogue, not a
				// conversation: its opcode sequences are rightly flagged.
				return
			}
			if strings.HasPrefix(name, "multipoint_") {
				// One point's view of a multi-point set lists no findings
				// of its own: its answers are the set's losses per segment
				// and drops per point, which package correlate's tests and
				// ibdump's correlate goldens check.
				return
			}
			for _, f := range r.findings {
				if f.Severity > decode.SevNote {
					assert.True(t, listed[f.Frame], "frame %d: %s (%s) is not an injected anomaly\n%s", f.Frame, f.Kind, f.Severity, r.dump())
				}
			}
			if e.summary == "none" {
				assert.LessOrEqual(t, r.a.Expert().Max(), decode.SevNote, "a clean capture")
			}
		})
	}
}

// TestAnalyzeConnectionSetUp checks pairing from the generated CM captures.
func TestAnalyzeConnectionSetUp(t *testing.T) {
	r := analyze(t, "../pcaps/cm_sidr_ud.pcap", decode.AnalyzerOptions{})
	cs := r.a.Conversations()
	require.Len(t, cs, 2)
	assert.Equal(t, decode.PairedCM, cs[1].PairedBy, "SIDR_REP named the UD QP")
	assert.Equal(t, layers.ServiceUD, cs[1].Service)
	assert.EqualValues(t, 0x12, cs[1].QPNAB)

	r = analyze(t, "../pcaps/cm_reject.pcap", decode.AnalyzerOptions{})
	require.Equal(t, 1, r.count(decode.FindCMReject))
	assert.EqualValues(t, 1, r.findings[0].Ref, "the REQ rejected")

	for _, f := range []string{"conv_rocev2", "conv_rocev2_ipv6", "conv_rocev1", "conv_ib", "conv_ib_grh", "conv_erf"} {
		r = analyze(t, "../pcaps/"+f+".pcap", decode.AnalyzerOptions{})
		cs = rcConversations(r)
		require.Len(t, cs, 1, f)
		c := cs[0]
		assert.Equal(t, decode.PairedCM, c.PairedBy, f)
		assert.Equal(t, decode.ConvClosed, c.State, f)
		assert.EqualValues(t, 0x12, c.QPNAB, f)
		assert.EqualValues(t, 0x11, c.QPNBA, f)
		assert.EqualValues(t, 8, c.Latency.Count, "%s: every request answered", f)
		assert.EqualValues(t, 1, c.Dir[0].Ops[decode.OpClassRead], f)
		assert.EqualValues(t, 1, c.Dir[0].Ops[decode.OpClassFetchAdd], f)
		assert.EqualValues(t, 1, c.Dir[0].Ops[decode.OpClassCompareSwap], f)
	}
}
