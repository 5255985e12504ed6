package decode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
)

// A call that offers a read chunk and a reply chunk (an NFS WRITE whose
// large reply comes back by RDMA_NOMSG): its segments list the read
// chunk's first, and the RDMA_NOMSG reply is read from the reply chunk's
// first segment, wherever it stands. Its reply answers the call, with the
// latency craft put in; no call is left unanswered.
func TestRPCRDMAReplyChunkAfterReadChunk(t *testing.T) {
	conn, err := craft.NewRPCRDMA(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, conn.Connect())
	_, err = conn.Call(craft.RPCCall{Program: 100003, Version: 3, Procedure: 7, Args: make([]byte, 32), ReadData: craft.Pattern(2048, 3),
		Results: make([]byte, 64), ReplyChunk: true, Latency: 300 * time.Microsecond})
	require.NoError(t, err)
	var unanswered int
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindRPCNoReply {
			unanswered++
		}
	}})
	dec := decode.NewDecoder(decode.Options{})
	for i, f := range conn.Trace().Frames {
		a.Analyze(dec.Decode(capture.Packet{Number: i + 1, Data: f.Data, Time: f.Time, LinkType: f.LinkType, Length: len(f.Data)}))
	}
	a.Finish()
	assert.Zero(t, unanswered)
	rows := a.RPCSRT().Rows()
	require.Len(t, rows, 1)
	assert.Equal(t, 1, rows[0].Count())
	assert.Equal(t, 300*time.Microsecond, rows[0].Max())
}
