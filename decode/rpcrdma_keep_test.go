package decode

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRPCPutKeep: a message grows within its own limit while the open
// calls together keep less than rpcKeepTotal; past it, a message grows no
// further than it has or than its floor, so a reply chunk still keeps its
// RPC header and status and a read chunk keeps nothing more.
func TestRPCPutKeep(t *testing.T) {
	pl := make([]byte, 1000)
	tests := []struct {
		name         string
		kept         int
		have         int
		limit, floor int
		want         int
	}{
		{"under the total, within the limit", 0, 0, rpcKeepMax, rpcReplyKeep, 1000},
		{"under the total, cut at the limit", 0, 0, 600, rpcReplyKeep, 600},
		{"over the total, a new reply keeps its floor", rpcKeepTotal, 0, rpcKeepMax, rpcReplyKeep, rpcReplyKeep},
		{"over the total, a read chunk keeps nothing more", rpcKeepTotal, 0, rpcKeepMax, 0, 0},
		{"over the total, a message past its floor stays", rpcKeepTotal, 300, rpcKeepMax, rpcReplyKeep, 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &rpcState{kept: tt.kept}
			buf := s.rpcPut(make([]byte, tt.have), 0, pl, tt.limit, tt.floor)
			assert.Len(t, buf, max(tt.want, tt.have))
			assert.Equal(t, tt.kept+len(buf)-tt.have, s.kept, "the total keep counts what was added")
		})
	}
}
