package decode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
)

// The follower puts each message's payload together by PSN, whatever was
// lost and resent, one message per message the analysis counts.
func TestFollower(t *testing.T) {
	write, send, read := craft.Pattern(600, 1), craft.Pattern(300, 2), craft.Pattern(500, 3)
	tests := []struct {
		name string
		ops  []craft.Op
		loss []int
		want []decode.FollowMessage // without frames
	}{
		{"one of each", []craft.Op{{Kind: craft.OpWrite, Data: write, VA: 0x1000, RKey: 7}, {Kind: craft.OpSend, Data: send},
			{Kind: craft.OpRead, Data: read, VA: 0x2000, RKey: 7}}, nil, []decode.FollowMessage{
			{Dir: 1, Op: "RDMA_WRITE", Size: 600, Data: write}, {Dir: 1, Op: "SEND", Size: 300, Data: send},
			{Dir: 2, Op: "RDMA_READ", Size: 500, Data: read}}},
		{"write middle lost and resent", []craft.Op{{Kind: craft.OpWrite, Data: write, VA: 0x1000, RKey: 7}}, []int{2},
			[]decode.FollowMessage{{Dir: 1, Op: "RDMA_WRITE", Size: 600, Data: write}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := craft.New(craft.Config{MTU: 256})
			require.NoError(t, err)
			require.NoError(t, c.Run(tc.ops, craft.Faults{Loss: craft.Loss{Packets: tc.loss}}))
			dec := decode.NewDecoder(decode.Options{})
			an := decode.NewAnalyzer(decode.AnalyzerOptions{})
			f := decode.NewFollower(func(*decode.Packet) bool { return true })
			for i, fr := range c.Frames() {
				p := dec.Decode(decode.Input{Number: i + 1, Time: fr.Time, Length: len(fr.Data), LinkType: fr.LinkType, Data: fr.Data})
				an.Analyze(p)
				f.Add(p)
			}
			got := f.Messages()
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.NotZero(t, got[i].First)
				assert.GreaterOrEqual(t, got[i].Last, got[i].First)
				got[i].First, got[i].Last = 0, 0
			}
			assert.Equal(t, tc.want, got)
			assert.NotEmpty(t, f.Nodes()[0])
		})
	}
}
