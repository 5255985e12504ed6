package replay

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// rnrNAK turns a response into an RNR NAK of timer code 1 (10 µs) at its PSN.
func rnrNAK(dg []byte) []byte {
	dg[12] = byte(layers.MakeRNRNakSyndrome(1))
	return dg
}

// TestCompareRNRNak: a responder whose receive queue ran out answers a
// SEND with an RNR NAK. The player does what a requester does, sends the
// request again after the NAK's timer, and the peer's answers then match:
// the RNR NAKs are counted and said first, not differences. A peer that
// keeps answering RNR NAK past the retries differs, and the report says
// why before the diff.
func TestCompareRNRNak(t *testing.T) {
	sends := craftPlan(t, 1024, repeat(10, craft.Op{Kind: craft.OpSend, Data: craft.Pattern(2, 1)}))
	fifth := func(dg []byte) bool {
		var b layers.BTH
		return b.DecodeFromBytes(dg, gopacket.NilDecodeFeedback) == nil && b.AETH.MSN == 5
	}
	tests := []struct {
		name            string
		mutate          func(int, []byte) []byte
		differ          bool
		rnr, resent     int
		first           string // the report's first line
		summary, notRNR string
	}{
		{name: "once", mutate: func(n int, dg []byte) []byte {
			if n == 5 {
				return rnrNAK(dg)
			}
			return dg
		}, rnr: 1, resent: 1, first: "compare: peer sent RNR NAK 1 time (its receive queue was empty): fake needs more receive buffers\n",
			summary: "compare: the player sent 1 request again after the RNR NAK's timer, as a requester does; RNR NAKs are no difference\n"},
		{name: "three times", mutate: func(n int, dg []byte) []byte {
			if n >= 5 && n <= 7 {
				return rnrNAK(dg)
			}
			return dg
		}, rnr: 3, resent: 3, first: "compare: peer sent RNR NAK 3 times (its receive queue was empty): fake needs more receive buffers\n"},
		{name: "always", mutate: func(n int, dg []byte) []byte {
			if fifth(dg) {
				return rnrNAK(dg)
			}
			return dg
		}, differ: true, rnr: rnrRetries + 1, resent: rnrRetries,
			first:   "compare: peer sent RNR NAK 8 times (its receive queue was empty): fake needs more receive buffers\n",
			summary: "gave up on the request of frame "},
		{name: "none", mutate: nil, notRNR: "RNR NAK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakePeer(sends, tt.mutate)
			res, err := Compare(context.Background(), sends, fp, fp, CompareOptions{Timeout: 300 * time.Millisecond, Linger: 5 * time.Millisecond})
			require.NoError(t, err)
			var out bytes.Buffer
			res.WriteRNR(&out, "fake needs more receive buffers")
			res.WriteDiff(&out, "fake")
			res.WriteSummary(&out)
			report := out.String()
			assert.Equal(t, tt.differ, res.Differ(), "%s", report)
			assert.Equal(t, tt.rnr, res.RNRNaks)
			assert.Equal(t, tt.resent, res.Resent)
			if tt.first != "" {
				assert.Equal(t, tt.first, report[:bytes.IndexByte(out.Bytes(), '\n')+1])
			}
			if tt.summary != "" {
				assert.Contains(t, report, tt.summary)
			}
			if tt.notRNR != "" {
				assert.NotContains(t, report, tt.notRNR)
			}
			if !tt.differ {
				assert.Equal(t, sends.Responses(), len(res.Live), "%s", report)
			}
		})
	}
}
