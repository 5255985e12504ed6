package decode

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/layers"
)

// TestRPCRDMACloneKeepsAuth: a clone (what a packet keeps once it is
// detached from the Analyzer, to be printed after later packets are
// analysed) keeps what the fields show of the credential and the
// verifier, in memory of its own: rpc.auth.length is the verifier body's
// length, and the credential's machine name a field of its own.
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
			wantVerf, wantCred, wantName := string(tt.verf.Body), string(tt.cred.Body), string(tt.cred.MachineName)
			assert.Equal(t, len(tt.verf.Body), len(c.RPC.Verf.Body))
			assert.Equal(t, string(tt.verf.Body), string(c.RPC.Verf.Body))
			assert.Equal(t, string(tt.verf.MachineName), string(c.RPC.Verf.MachineName))
			assert.Equal(t, string(tt.cred.Body), string(c.RPC.Cred.Body))
			assert.Equal(t, string(tt.cred.MachineName), string(c.RPC.Cred.MachineName))
			for _, b := range [][]byte{r.RPC.Verf.Body, r.RPC.Cred.Body, r.RPC.Verf.MachineName, r.RPC.Cred.MachineName} {
				for i := range b {
					b[i] = 0xEE // the Analyzer reuses its memory
				}
			}
			assert.Equal(t, wantVerf, string(c.RPC.Verf.Body), "the clone's own memory")
			assert.Equal(t, wantCred, string(c.RPC.Cred.Body), "the clone's own memory")
			assert.Equal(t, wantName, string(c.RPC.Cred.MachineName), "the clone's own memory")
		})
	}
}
