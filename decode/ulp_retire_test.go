package decode

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
)

// TestULPStateEndsWithItsConnection: the NVMe-oF and RPC-over-RDMA state
// of a connection goes when the connection is retired, so that MaxLive
// bounds it as it bounds the transport's; the commands and calls it left
// open are reported then, not lost.
func TestULPStateEndsWithItsConnection(t *testing.T) {
	for _, path := range []string{"../pcaps/rxe/nvme_rdma_connect.pcap", "../pcaps/rxe/nfs_rdma_v3_mount.pcap"} {
		t.Run(path, func(t *testing.T) {
			findings := map[FindingKind]int{}
			a := NewAnalyzer(AnalyzerOptions{MaxLive: 1, OnFinding: func(f Finding) { findings[f.Kind]++ }})
			dec := NewDecoder(Options{})
			r, err := capture.Open(path)
			require.NoError(t, err)
			defer r.Close()
			var cp capture.Packet
			ulp := 0
			for {
				err := r.NextInto(&cp)
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				a.Analyze(dec.Decode(cp))
				require.LessOrEqual(t, len(a.nv.conns), a.live, "frame %d", cp.Number)
				require.LessOrEqual(t, len(a.rpc.conns), a.live, "frame %d", cp.Number)
				ulp = max(ulp, len(a.nv.conns)+len(a.rpc.conns))
			}
			a.Finish()
			assert.Positive(t, ulp, "the capture's protocol was recognised")
			assert.Positive(t, a.Retired()+len(a.done), "connections were retired")
			assert.Positive(t, findings[FindNVMeNoCompletion]+findings[FindRPCNoReply], "what a retired connection left open is reported")
		})
	}
}
