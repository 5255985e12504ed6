package decode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// An SMB Direct message whose data lies past its end is a malformed
// finding naming the layer and the field, and decoding goes on: frame 12
// of pcaps/smbdirect.pcap (a SESSION_SETUP request, 24 bytes of header and
// 152 of data) cut to 30 bytes. Its response then has no request to
// answer; every later request is still matched with its response.
func TestSMBDirectCutMessageIsMalformed(t *testing.T) {
	r, err := capture.Open("../pcaps/smbdirect.pcap")
	require.NoError(t, err)
	defer r.Close()
	var found []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindULPMalformed {
			found = append(found, f)
		}
	}})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	reqFrame := decode.MustLookup("ibwire.smb2.request_frame")
	command := decode.MustLookup("ibwire.smb2.command")
	var cp capture.Packet
	var v decode.Value
	matched := 0
	for r.NextInto(&cp) == nil {
		if cp.Number == 12 { // Ethernet 14, IPv4 20, UDP 8, BTH 12: the message
			cp.Data = shortenRoCEv2(cp.Data, 54, 30)
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		switch {
		case p.Number == 12:
			assert.True(t, p.Analysis.Has(decode.FindULPMalformed))
			assert.False(t, command.Get(p, &v), "no SMB2 header is read from a malformed message")
		case p.Number == 14:
			require.True(t, command.Get(p, &v))
			assert.Equal(t, "SESSION_SETUP", v.S)
			assert.False(t, reqFrame.Get(p, &v), "its request was not read")
		case p.Number > 14 && reqFrame.Get(p, &v):
			matched++
		}
	}
	a.Finish()
	require.Len(t, found, 1)
	assert.Equal(t, uint32(12), found[0].Frame)
	assert.Equal(t, "Malformed SMB Direct: smb_direct message ends before its header, or its data offset or length points outside it", found[0].Summary())
	// SESSION_SETUP 2, TREE_CONNECT, the compound CREATE+READ (one
	// response message), WRITE's interim and final responses, CLOSE.
	assert.Equal(t, 6, matched)
}
