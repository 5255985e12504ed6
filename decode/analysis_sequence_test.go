package decode_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// seqOpcodes are the short names of sequenceScript.
var seqOpcodes = map[string]string{
	"rd": "RC_RDMA_READ_REQUEST",
	"rf": "RC_RDMA_READ_RESPONSE_FIRST", "rm": "RC_RDMA_READ_RESPONSE_MIDDLE",
	"rl": "RC_RDMA_READ_RESPONSE_LAST", "ro": "RC_RDMA_READ_RESPONSE_ONLY",
	"wf": "RC_RDMA_WRITE_FIRST", "wm": "RC_RDMA_WRITE_MIDDLE", "wl": "RC_RDMA_WRITE_LAST", "wo": "RC_RDMA_WRITE_ONLY",
	"sf": "RC_SEND_FIRST", "sm": "RC_SEND_MIDDLE", "sl": "RC_SEND_LAST", "so": "RC_SEND_ONLY",
	"uf": "UC_SEND_FIRST", "um": "UC_SEND_MIDDLE", "ul": "UC_SEND_LAST",
	"ack": "RC_ACKNOWLEDGE", "nak": "RC_ACKNOWLEDGE",
}

// seqStep is one packet of a sequence script and what the analysis must
// say about it.
type seqStep struct {
	lost           bool // lost before the capture point: not in the capture
	p              craft.Packet
	err, warn, gap bool
}

// sequenceScript reads a conversation written one packet per word:
// NAME PSN [/LENGTH] [MARKS], with NAME one of seqOpcodes (requests go to
// the responder, responses and NAKs back), LENGTH the RETH DMA length of a
// READ or WRITE (a WRITE ONLY carries that many bytes; other packets with
// a payload carry 1024), a leading "-" for a packet lost before the
// capture point, and marks for what the analysis must find there: "!" an
// Error bad_opcode_sequence, "?" a Warning one, "~" a psn_gap.
func sequenceScript(t *testing.T, script string) []seqStep {
	t.Helper()
	var steps []seqStep
	for _, w := range strings.Fields(script) {
		var s seqStep
		if strings.HasPrefix(w, "-") {
			s.lost, w = true, w[1:]
		}
		for len(w) > 0 && strings.ContainsRune("!?~", rune(w[len(w)-1])) {
			switch w[len(w)-1] {
			case '!':
				s.err = true
			case '?':
				s.warn = true
			case '~':
				s.gap = true
			}
			w = w[:len(w)-1]
		}
		i := strings.IndexAny(w, "0123456789")
		require.Positive(t, i, "step %q", w)
		name, ok := seqOpcodes[w[:i]]
		require.True(t, ok, "step %q", w)
		op, ok := layers.OpcodeByName(name)
		require.True(t, ok, name)
		num, length, _ := strings.Cut(w[i:], "/")
		psn, err := strconv.Atoi(num)
		require.NoError(t, err, "step %q", w)
		n := 1024
		if length != "" {
			n, err = strconv.Atoi(length)
			require.NoError(t, err, "step %q", w)
		}
		payload := 1024
		if op.Info().Operation == layers.OpRDMAWrite && op.Info().Position == layers.PosOnly {
			payload = n
		}
		s.p = craft.Sample(op, layers.PSN(psn), payload)
		if op.Info().Has(layers.HdrRETH) {
			s.p.BTH.RETH.DMALength = uint32(n)
		}
		if w[:i] == "nak" {
			s.p.BTH.AETH.Syndrome = layers.MakeNakSyndrome(layers.NAKPSNSequenceError)
		}
		steps = append(steps, s)
	}
	return steps
}

// TestAnalyzeSequenceAfterLoss: a message whose start was lost before the
// capture point, or a response sequence the responder began again after a
// retry, shows as a PSN gap, not as an opcode out of sequence; a MIDDLE or
// LAST where nothing can have been lost still is one.
func TestAnalyzeSequenceAfterLoss(t *testing.T) {
	tests := []struct {
		name, script string
	}{
		// READ 4096 at MTU 1024: FIRST, MIDDLE, MIDDLE, LAST, as ib_read_bw.
		{"read response FIRST lost, READ asked again",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 -rf260 rm261~ rm262 rl263 rd260/4096 rf260 rm261 rm262 rl263"},
		{"read response MIDDLE lost, READ asked again for the rest",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 rf260 -rm261 rm262~ rl263 rd261/3072 rf261 rm262 rl263"},
		{"read response LAST and the next FIRST lost",
			"rd256/4096 rd260/4096 rd264/4096 rf256 rm257 rm258 rl259 rf260 rm261 rm262 -rl263 -rf264 rm265~ rm266 rl267 " +
				"rd263/1024 rd264/4096 ro263 rf264 rm265 rm266 rl267"},
		{"read responses sent again, their FIRST lost again",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 -rf260 rm261~ rm262 rl263 rd260/4096 -rf260 rm261 rm262 rl263"},
		{"read responses sent again carry a MIDDLE never captured before",
			"rd256/4096 rf256 -rm257 rm258~ rl259 rd256/4096 rf256 rm257 rm258 rl259"},
		{"read responses sent again after the READ was answered, a hole in them",
			"rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 rf260 rm261 rm262 rl263 rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 rf260 -rm261 rm262 rl263"},
		{"READs sent twice before any answer, the second answers carry a MIDDLE lost from the first",
			"rd256/4096 rd260/4096 rd256/4096 rd260/4096 rf256 rm257 rm258 rl259 rf260 -rm261 rm262~ rl263 " +
				"rf256 rm257 rm258 rl259 rf260 rm261 rm262 rl263"},
		{"capture begins inside a READ response", "rm257 rm258 rl259 rd260/1024 ro260"},
		// rxe replays the rest of a READ asked again from its middle as
		// MIDDLE ... LAST (rxe_resp.c duplicate_request: the replay state).
		{"read responses begun again with a MIDDLE at the PSN asked again (rxe)",
			"rd256/4096 rf256 -rm257 rm258~ rl259 rd257/3072 rm257 rm258 rl259"},
		{"read response LAST alone at the PSN asked again (rxe)",
			"rd256/4096 rf256 rm257 rm258 -rl259 rd259/1024 rl259"},
		// WRITE and SEND: go-back-N after the NAK.
		{"write FIRST lost",
			"wf256/4096 wm257 wm258 wl259 -wf260/4096 wm261~ wm262 wl263 nak260 wf260/4096 wm261 wm262 wl263"},
		{"send LAST and the next FIRST lost",
			"sf256 sm257 sm258 -sl259 -sf260 sm261~ sl262 nak259 sl259 sf260 sm261 sl262"},
		{"write resent after a NAK, its FIRST lost again",
			"wf256/4096 wm257 wm258 wl259 -wf260/4096 wm261~ wm262 wl263 nak260 -wf260/4096 wm261 wm262 wl263 nak260 wf260/4096 wm261 wm262 wl263"},
		{"write LAST and the next FIRST lost, the MIDDLE after them taken for the first write's",
			"wf256/3072 wm257 -wl258 -wf259/2048 wm260~ nak258 wl258 wf259/2048 wm260 wl261 wo262/8"},
		{"READ of a span not known yet, then a SEND FIRST lost (the gap is not seen)",
			"rd256/2048 -sf258 sm259 sl260 so261"},
		{"UC send FIRST lost", "uf256 um257 ul258 -uf259 um260~ ul261 uf262 ul263"},
		{"capture begins inside a WRITE", "wm257? wl258 wo259/8"},

		// Genuine sequence errors: nothing was lost where they are.
		{"read response MIDDLE where the READ's responses begin",
			"rd256/4096 rm256! rm257 rm258 rl259"},
		{"read response MIDDLE straight after a LAST",
			"rd256/4096 rf256 rm257 rm258 rl259 rm260! rl261"},
		{"read responses asked again whole begun with a MIDDLE",
			"rd256/4096 rf256 -rm257 rm258~ rl259 rd256/4096 rm256! rm257 rm258 rl259"},
		{"write MIDDLE with no FIRST", "wo256/8 wm257! wl258"},
		{"send FIRST while a message is open", "sf256 sm257 sf258! sl259"},
		{"send MIDDLE after a message with a hole ended", "sf256 -sm257 sm258~ sl259 sm260! sl261"},
		{"send MIDDLE right after a WRITE MIDDLE that followed a gap", "wf256/4096 -wm257 wm258~ sm259! sl260"},
		{"send ONLY while a SEND is open", "sf256 sm257 so258! sl259!"},
		{"send MIDDLE right after a READ", "rd256/1024 sm257! sl258"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := sequenceScript(t, tt.script)
			c, err := craft.New(craft.Config{})
			require.NoError(t, err)
			var want []seqStep
			for _, s := range steps {
				if s.lost {
					c.Wait(craft.DefaultStep)
					continue
				}
				require.NoError(t, c.Packet(s.p))
				want = append(want, s)
			}
			frames := c.Frames()
			a := decode.NewAnalyzer(decode.AnalyzerOptions{})
			dec := decode.NewDecoder(decode.Options{})
			var got strings.Builder
			for i, fr := range frames {
				p := dec.Decode(decode.Input{Number: i + 1, Time: fr.Time, Length: len(fr.Data), LinkType: fr.LinkType, Data: fr.Data})
				require.NoError(t, p.Err)
				a.Analyze(p)
				an := &p.Analysis
				w := want[i]
				seq := an.Has(decode.FindBadOpcodeSequence)
				what := fmt.Sprintf("frame %d %v psn %d", i+1, fr.Info.Opcode, fr.Info.PSN)
				assert.Equal(t, w.err || w.warn, seq, "%s: bad_opcode_sequence", what)
				if seq {
					sev := decode.SevWarn
					if w.err {
						sev = decode.SevError
					}
					assert.Equal(t, sev, an.Severity, "%s: severity", what)
				}
				assert.Equal(t, w.gap, an.Has(decode.FindPSNGap), "%s: psn_gap", what)
				fmt.Fprintf(&got, "%s findings %b\n", what, an.Findings)
			}
			a.Finish()
			if t.Failed() {
				t.Log(got.String())
			}
		})
	}
}

// TestAnalyzeRandomLossNoSequenceErrors runs ib_read_bw-, ib_write_bw- and
// ib_send_bw-like conversations with 2% random loss before the capture
// point: the analysis finds the gaps and retransmissions craft put in, and
// no opcode out of sequence (only a Warning when the capture's first packet
// is a MIDDLE whose FIRST was lost).
func TestAnalyzeRandomLossNoSequenceErrors(t *testing.T) {
	for _, kind := range []craft.OpKind{craft.OpRead, craft.OpWrite, craft.OpSend} {
		for seed := uint64(1); seed <= 12; seed++ {
			ops := make([]craft.Op, 64)
			for i := range ops {
				ops[i] = craft.Op{Kind: kind, Data: craft.Pattern(4096, byte(i)), VA: 0x10000 + uint64(i)*4096, RKey: 7}
			}
			c, err := craft.New(craft.Config{})
			require.NoError(t, err)
			require.NoError(t, c.Run(ops, craft.Faults{Seed: seed, Loss: craft.Loss{Prob: 0.02}}))
			tr := c.Trace()
			var gaps, retrans, lats, complete int
			a := decode.NewAnalyzer(decode.AnalyzerOptions{
				OnFinding: func(f decode.Finding) {
					switch f.Kind {
					case decode.FindPSNGap:
						gaps++
					case decode.FindRetransmission:
						retrans++
					}
				},
				OnLatency: func(decode.Latency) { lats++ },
			})
			dec := decode.NewDecoder(decode.Options{})
			for i, fr := range tr.Frames {
				p := dec.Decode(decode.Input{Number: i + 1, Time: fr.Time, Length: len(fr.Data), LinkType: fr.LinkType, Data: fr.Data})
				a.Analyze(p)
				an := &p.Analysis
				if an.Info&decode.InfoMessage != 0 {
					complete++
					// A SEND or WRITE whose FIRST was not captured yet
					// when its LAST came has no size known there.
					if kind == craft.OpRead {
						assert.EqualValues(t, 4096, an.MessageSize, "%v seed %d frame %d: message size", kind, seed, i+1)
					}
				}
				if an.Has(decode.FindBadOpcodeSequence) {
					assert.True(t, i == 0 && an.Severity == decode.SevWarn, "%v seed %d frame %d %v: opcode out of sequence",
						kind, seed, i+1, fr.Info)
				}
				// Every resent READ response is one, first transmission
				// captured or not.
				if fr.Info.Opcode.Info().Operation == layers.OpRDMAReadResponse {
					want := false
					for _, f := range tr.FindingsOf(i + 1) {
						want = want || f.Kind == craft.FindingRetransmission
					}
					assert.Equal(t, want, an.Has(decode.FindRetransmission), "%v seed %d frame %d %v: retransmission", kind, seed, i+1, fr.Info)
				}
			}
			a.Finish()
			// One definition of each count, whatever view reads it: the
			// row, the expert, the latency table, follow (InfoMessage).
			cs := a.Conversations()
			require.Len(t, cs, 1)
			cv := &cs[0]
			what := fmt.Sprintf("%v seed %d", kind, seed)
			assert.EqualValues(t, len(ops), cv.Messages(), "%s: messages", what)
			assert.Equal(t, len(ops), complete, "%s: messages complete (follow)", what)
			assert.EqualValues(t, len(ops), cv.Latency.Count, "%s: latencies in the row", what)
			assert.Equal(t, len(ops), lats, "%s: latencies", what)
			assert.EqualValues(t, gaps, cv.Sum(func(d *decode.DirStats) uint64 { return d.PSNGaps }), "%s: gaps", what)
			assert.EqualValues(t, retrans, cv.Sum(func(d *decode.DirStats) uint64 { return d.Retransmissions }), "%s: retransmissions", what)
		}
	}
}
