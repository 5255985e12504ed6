package decode

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

// TestRPCRDMACloneKeepsAuth: a clone (what a packet keeps once it is
// detached from the Analyzer, to be printed after later packets are
// analysed) keeps what the fields show of the credential and the
// verifier, in memory of its own. rpc.auth.length is the verifier body's
// length, so a clone that dropped the body showed a length of 0.
func TestRPCRDMACloneKeepsAuth(t *testing.T) {
	tests := []struct {
		name string
		cred layers.RPCAuth
		verf layers.RPCAuth
	}{
		{"AUTH_NONE both", layers.RPCAuth{}, layers.RPCAuth{}},
		{"a verifier body", layers.RPCAuth{}, layers.RPCAuth{Flavor: 6, Body: []byte{1, 2, 3, 4}}},
		{"AUTH_UNIX credential", layers.RPCAuth{Flavor: 1, Body: []byte{9, 9, 9, 9, 9, 9, 9, 9}, MachineName: []byte("host")},
			layers.RPCAuth{Flavor: 2, Body: []byte{5, 6}, MachineName: []byte("peer")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &RPCRDMAPacket{}
			r.RPC.Cred, r.RPC.Verf = tt.cred, tt.verf
			c := r.Clone()
			want := string(tt.verf.Body)
			assert.Equal(t, len(tt.verf.Body), len(c.RPC.Verf.Body))
			assert.Equal(t, string(tt.verf.Body), string(c.RPC.Verf.Body))
			assert.Equal(t, string(tt.verf.MachineName), string(c.RPC.Verf.MachineName))
			assert.Equal(t, string(tt.cred.Body), string(c.RPC.Cred.Body))
			assert.Equal(t, string(tt.cred.MachineName), string(c.RPC.Cred.MachineName))
			for _, b := range [][]byte{r.RPC.Verf.Body, r.RPC.Cred.Body, r.RPC.Verf.MachineName} {
				for i := range b {
					b[i] = 0xEE // the Analyzer reuses its memory
				}
			}
			assert.Equal(t, want, string(c.RPC.Verf.Body), "the clone's own memory")
		})
	}
}
