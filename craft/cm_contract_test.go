package craft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// TestCMContractValues: the REQ and REP carry what CMOptions.Contract says,
// and by default the READ/atomic depth the requester model uses.
func TestCMContractValues(t *testing.T) {
	c, err := craft.New(craft.Config{MaxRdAtomic: 4, MTU: 4096, PKey: 0xFFFF, DSCP: 0})
	require.NoError(t, err)
	require.NoError(t, c.Connect(craft.CMOptions{}))
	ds := decodeAll(t, craft.RoCEv2, c.Trace())
	req, rep := ds[0].mad.CM.REQ, ds[1].mad.CM.REP
	assert.Equal(t, [4]uint8{4, 4, 4, 4}, [4]uint8{req.ResponderResources, req.InitiatorDepth, rep.ResponderResources, rep.InitiatorDepth})
	assert.Equal(t, [3]uint8{7, 7, 7}, [3]uint8{req.RetryCount, req.RNRRetryCount, rep.RNRRetryCount})

	c, err = craft.New(craft.Config{MTU: 4096})
	require.NoError(t, err)
	k := craft.CMContract{REQResponderResources: new(uint8(0)), REQInitiatorDepth: new(uint8(1)),
		REPResponderResources: new(uint8(2)), REPInitiatorDepth: new(uint8(3)), RetryCount: new(uint8(4)),
		RNRRetryCount: new(uint8(5)), REPRNRRetryCount: new(uint8(6)), PathMTU: 512, PKey: new(uint16(0x8001)),
		TrafficClass: new(uint8(0x28)), FlowLabel: new(uint32(0x54321)), SL: new(uint8(9))}
	require.NoError(t, c.Connect(craft.CMOptions{Contract: k}))
	ds = decodeAll(t, craft.RoCEv2, c.Trace())
	req, rep = ds[0].mad.CM.REQ, ds[1].mad.CM.REP
	assert.Equal(t, [7]uint8{0, 1, 2, 3, 4, 5, 6}, [7]uint8{req.ResponderResources, req.InitiatorDepth, rep.ResponderResources,
		rep.InitiatorDepth, req.RetryCount, req.RNRRetryCount, rep.RNRRetryCount})
	assert.Equal(t, layers.MTU512, req.PathMTU)
	assert.Equal(t, uint16(0x8001), req.PKey)
	assert.Equal(t, uint8(0x28), req.Primary.TrafficClass)
	assert.Equal(t, uint32(0x54321), req.Primary.FlowLabel)
	assert.Equal(t, uint8(9), req.Primary.SL)
	assert.Equal(t, uint16(0xFFFF), ds[0].bth.PKey, "the MAD itself goes at the Config's P_Key")
}

// TestCMExchangesGoneWrong: an MRA and the REQ sent again before its
// timeout, a REP the requester rejects, a DREQ nobody answers, each with
// the findings craft knows it made.
func TestCMExchangesGoneWrong(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Connect(craft.CMOptions{MRA: &craft.CMMRA{ServiceTimeout: 14, Resend: time.Millisecond}}))
	require.NoError(t, c.DisconnectUnanswered(100*time.Millisecond))
	tr := c.Trace()
	ds := decodeAll(t, craft.RoCEv2, tr)
	attrs := make([]layers.CMAttribute, len(ds))
	for i, d := range ds {
		attrs[i] = d.mad.CM.AttributeID
	}
	assert.Equal(t, []layers.CMAttribute{layers.CMAttrREQ, layers.CMAttrMRA, layers.CMAttrREQ, layers.CMAttrREP, layers.CMAttrRTU,
		layers.CMAttrDREQ, layers.CMAttrDREQ}, attrs)
	assert.Equal(t, layers.CMMRAedREQ, ds[1].mad.CM.MRA.MessageMRAed)
	assert.Equal(t, uint8(14), ds[1].mad.CM.MRA.ServiceTimeout)
	assert.Equal(t, time.Millisecond, tr.Frames[2].Time.Sub(tr.Frames[1].Time))
	assert.Equal(t, 100*time.Millisecond, tr.Frames[6].Time.Sub(tr.Frames[5].Time))
	assert.Equal(t, []craft.Finding{
		{Frame: 2, Kind: craft.FindingCMMRA, Ref: 1, Detail: "service timeout 14: 67.108864ms"},
		{Frame: 3, Kind: craft.FindingCMMRAIgnored, Ref: 2, Detail: "REQ sent again after 1ms"},
		{Frame: 6, Kind: craft.FindingCMDREQUnanswered, Detail: "no DREP by the end"},
		{Frame: 7, Kind: craft.FindingCMDREQUnanswered, Ref: 6, Detail: "the first DREQ had no DREP"},
	}, tr.Findings)

	// An MRA honoured: the REQ again only after the service timeout.
	c, err = craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Connect(craft.CMOptions{MRA: &craft.CMMRA{ServiceTimeout: 2, Resend: time.Millisecond}}))
	assert.Len(t, c.Trace().Findings, 1, "only the MRA: 16 µs passed before the REQ came again")
	assert.Error(t, c.Connect(craft.CMOptions{MRA: &craft.CMMRA{ServiceTimeout: 32}}), "5 bits")

	c, err = craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Reject(craft.CMOptions{RequesterRejects: true}, layers.RejConsumerDefined))
	ds = decodeAll(t, craft.RoCEv2, c.Trace())
	require.Len(t, ds, 3)
	rej := ds[2].mad.CM.REJ
	assert.Equal(t, layers.CMRejectedREP, rej.MessageRejected)
	assert.Equal(t, ds[0].mad.CM.REQ.LocalCommID, rej.LocalCommID, "the requester's comm ID is the REJ's local one")
	assert.Equal(t, c.Trace().Frames[2].Info.From, craft.Requester)
	assert.Error(t, c.DisconnectUnanswered(0), "not connected")
}

func TestExpect(t *testing.T) {
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: make([]byte, 8)}}, craft.Faults{}))
	require.NoError(t, c.Expect(craft.Finding{Frame: 2, Kind: craft.FindingCMPathMismatch, Ref: 1, Detail: "why"}))
	assert.Equal(t, []craft.Finding{{Frame: 2, Kind: craft.FindingCMPathMismatch, Ref: 1, Detail: "why"}}, c.Trace().Findings)
	assert.Error(t, c.Expect(craft.Finding{Frame: 3, Kind: craft.FindingCMMTUExceeded, Detail: "x"}), "no frame 3")
	assert.Error(t, c.Expect(craft.Finding{Frame: 1, Kind: craft.FindingCMMTUExceeded}), "no detail")
}
