package decode_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// An SMB Direct message whose data lies past its end is a malformed
// finding naming the layer and the field, and decoding goes on: frame 12
// of pcaps/smbdirect.pcap (a SESSION_SETUP request, 24 bytes of header and
// 152 of data) cut to 30 bytes. Its response then has no request to
// answer; every later request is still matched with its response.
func TestSMBDirectCutMessageIsMalformed(t *testing.T) {
	reqFrame := decode.MustLookup("ibwire.smb2.request_frame")
	command := decode.MustLookup("ibwire.smb2.command")
	var v decode.Value
	matched := 0
	// Ethernet 14, IPv4 20, UDP 8, BTH 12: the message, cut to 30 bytes.
	_, found := analyseCut(t, "../pcaps/smbdirect.pcap", map[int]cutPayload{12: {54, 30}}, func(p *decode.Packet) {
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
	})
	require.Len(t, found, 1)
	assert.Equal(t, uint32(12), found[0].Frame)
	assert.Equal(t, "Malformed SMB Direct: smb_direct message ends before its header, or its data offset or length points outside it", found[0].Summary())
	// SESSION_SETUP 2, TREE_CONNECT, the compound CREATE+READ (one
	// response message), WRITE's interim and final responses, CLOSE.
	assert.Equal(t, 6, matched)
}

// An SMB2 message whose Data Transfers never say RemainingLength 0 is
// followed over at most 1024 of them, then said malformed (the frame that
// passed the bound, its message's first fragment as the reference), so a
// hostile or broken stream cannot grow the analysis' memory without end.
func TestSMBDirectEndlessFragments(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	sid := layers.IPCMServiceID(layers.PortSpaceTCP, layers.SMBDirectPort)
	require.NoError(t, c.Connect(craft.CMOptions{ServiceID: sid}))
	first := len(c.Frames()) + 1
	smb2 := layers.AppendSMB2Header(nil, &layers.SMB2Header{Command: layers.SMB2Write, MessageID: 1})
	var ops []craft.Op
	for i := range 1100 {
		data := smb2
		if i > 0 {
			data = craft.Pattern(64, byte(i))
		}
		msg := layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer, CreditsRequested: 1, RemainingLength: 1 << 20, Data: data}
		ops = append(ops, craft.Op{Kind: craft.OpSend, Data: layers.AppendSMBDirect(nil, &msg)})
	}
	require.NoError(t, c.Run(ops, craft.Faults{}))
	dec := decode.NewDecoder(decode.Options{})
	var found []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindULPMalformed {
			found = append(found, f)
		}
	}})
	for i, f := range c.Frames() {
		a.Analyze(dec.Decode(capture.Packet{Number: i + 1, Data: f.Data, Time: f.Time, LinkType: f.LinkType, Length: len(f.Data)}))
	}
	a.Finish()
	require.Len(t, found, 1)
	assert.Equal(t, "Malformed SMB Direct: smb_direct.remaining_length keeps an SMB2 message going over more than 1024 Data Transfers", found[0].Summary())
	assert.Equal(t, uint32(first), found[0].Ref, "the message's first Data Transfer")
	assert.Greater(t, found[0].Frame, found[0].Ref)
}
