package decode_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// seriesPacket crafts and decodes one packet of direction dir with the
// findings given.
func seriesPacket(t *testing.T, opcode layers.Opcode, psn layers.PSN, dir uint8, at time.Duration, finds ...decode.FindingKind) *decode.Packet {
	t.Helper()
	b, err := craft.NewBuilder(craft.Config{})
	require.NoError(t, err)
	f, err := b.Build(craft.Packet{BTH: layers.BTH{Opcode: opcode, PKey: 0xFFFF, DestQP: 0x11, PSN: psn}}, craft.DefaultStart)
	require.NoError(t, err)
	p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, Time: f.Time, Length: len(f.Data), LinkType: f.LinkType, Data: f.Data})
	require.NoError(t, p.Err)
	p.RelTime = at
	p.Analysis.Conv, p.Analysis.Dir = 1, dir
	for _, k := range finds {
		p.Analysis.Findings |= 1 << k
	}
	return p
}

func TestMarkOf(t *testing.T) {
	const send, ack, cnp = 0x04, 0x11, 0x81
	tests := []struct {
		name   string
		opcode layers.Opcode
		finds  []decode.FindingKind
		want   decode.PSNMark
	}{
		{"request", send, nil, decode.MarkRequest},
		{"response", ack, nil, decode.MarkResponse},
		{"CNP by opcode", cnp, nil, decode.MarkCNP},
		{"CNP by finding", send, []decode.FindingKind{decode.FindCNP}, decode.MarkCNP},
		{"retransmission", send, []decode.FindingKind{decode.FindRetransmission}, decode.MarkRetransmission},
		{"NAK", ack, []decode.FindingKind{decode.FindNAK}, decode.MarkNAK},
		{"RNR NAK", ack, []decode.FindingKind{decode.FindRNRNAK}, decode.MarkRNRNAK},
		{"RNR NAK over NAK", ack, []decode.FindingKind{decode.FindNAK, decode.FindRNRNAK}, decode.MarkRNRNAK},
		{"NAK over retransmission", ack, []decode.FindingKind{decode.FindRetransmission, decode.FindNAK}, decode.MarkNAK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := seriesPacket(t, tc.opcode, 1, 1, 0, tc.finds...)
			assert.Equal(t, tc.want, decode.MarkOf(p, p.BTH().Info()))
		})
	}
	// The rank a cell goes by: each mark outranks the ones before it.
	assert.Less(t, decode.MarkResponse, decode.MarkCNP)
	assert.Less(t, decode.MarkCNP, decode.MarkRetransmission)
	assert.Less(t, decode.MarkRetransmission, decode.MarkNAK)
	assert.Less(t, decode.MarkNAK, decode.MarkRNRNAK)
}

// A series unwraps each request direction's PSNs from the first seen,
// responses on the line of the requests they answer, CNPs at the last place.
func TestPSNSeries(t *testing.T) {
	const send, ack, cnp = 0x04, 0x11, 0x81
	steps := []struct {
		opcode layers.Opcode
		psn    layers.PSN
		dir    uint8
		want   decode.PSNPoint
	}{
		{send, 0xFFFFFE, 1, decode.PSNPoint{PSN: 0xFFFFFE, Dir: 1, Line: 1}},
		{send, 0xFFFFFF, 1, decode.PSNPoint{PSN: 0xFFFFFF, Dir: 1, Line: 1}},
		{send, 0, 1, decode.PSNPoint{PSN: 0x1000000, Dir: 1, Line: 1}},
		{ack, 0, 2, decode.PSNPoint{PSN: 0x1000000, Dir: 2, Line: 1, Response: true, Mark: decode.MarkResponse}},
		{send, 500, 2, decode.PSNPoint{PSN: 500, Dir: 2, Line: 2}},
		{cnp, 0, 2, decode.PSNPoint{PSN: 500, Dir: 2, Mark: decode.MarkCNP}},
		{ack, 0xFFFFFF, 2, decode.PSNPoint{PSN: 0xFFFFFF, Dir: 2, Line: 1, Response: true, Mark: decode.MarkResponse}},
	}
	var s decode.PSNSeries
	for i, st := range steps {
		p := seriesPacket(t, st.opcode, st.psn, st.dir, time.Duration(i)*time.Millisecond)
		s.Add(p)
		st.want.T, st.want.Frame = time.Duration(i)*time.Millisecond, 1
		assert.Equal(t, st.want, s.Points[i], "step %d", i)
	}
	assert.EqualValues(t, 0, decode.WirePSN(0x1000000))
	assert.EqualValues(t, 0xFFFFFF, decode.WirePSN(-1))
}
