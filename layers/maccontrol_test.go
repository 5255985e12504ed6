package layers

import (
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The frames below, with what tshark 4.0.17 -V -O macc says of them.

// testPFCFrame: PFC pausing priorities 3 (65535 quanta) and 4 (0: resume).
//
//	0000  01 80 c2 00 00 01 02 00 00 00 00 01 88 08 01 01   ................
//	0010  00 18 00 00 00 00 00 00 ff ff 00 00 00 00 00 00   ................
//	0020  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
//	0030  00 00 00 00 00 00 00 00 00 00 00 00               ............
//
//	MAC Control
//	    Opcode: Class Based Flow Control [CBFC] Pause (0x0101)
//	    CBFC Class Enable Vector: 0x0018, C3, C4
//	    CBFC Class Pause Times
//	        C0: 0 ... C3: 65535 ... C7: 0
var testPFCFrame = padTo60([]byte{
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x01, 0x01,
	0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,
})

// testPauseFrame: 802.3x PAUSE for 65535 quanta.
//
//	0000  01 80 c2 00 00 01 02 00 00 00 00 01 88 08 00 01   ................
//	0010  ff ff 00 00 00 00 00 00 00 00 00 00 00 00 00 00   ................
//
//	MAC Control
//	    Opcode: Pause (0x0001)
//	    pause_time: 65535
var testPauseFrame = padTo60([]byte{
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x00, 0x01,
	0xff, 0xff,
})

// testPFCVLANFrame: PFC inside an 802.1Q tag (PRI 3, VLAN 100), every
// priority with a time, vector 0x0108 (tshark: "C3", and the warning
// "8 MSbs of ENBV must be 0").
//
//	0000  01 80 c2 00 00 01 02 00 00 00 00 01 81 00 60 64   ..............`d
//	0010  88 08 01 01 01 08 00 01 00 02 00 03 00 04 00 05   ................
//	0020  00 06 00 07 00 08 00 00 00 00 00 00 00 00 00 00   ................
var testPFCVLANFrame = append(padTo60([]byte{
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x81, 0x00, 0x60, 0x64,
	0x88, 0x08, 0x01, 0x01, 0x01, 0x08, 0x00, 0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00, 0x05,
	0x00, 0x06, 0x00, 0x07, 0x00, 0x08,
}), 0, 0, 0, 0)

// testPFCCutFrame: a PFC frame cut after its vector (tshark: opcode and
// vector, no pause times, [Malformed Packet: MACC]).
//
//	0000  01 80 c2 00 00 01 02 00 00 00 00 01 88 08 01 01   ................
//	0010  00 08                                             ..
var testPFCCutFrame = []byte{
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x01, 0x01,
	0x00, 0x08,
}

func padTo60(b []byte) []byte { return append(b, make([]byte, 60-len(b))...) }

func TestMACControlDecode(t *testing.T) {
	eth := gplayers.LayerTypeEthernet
	dot1q := gplayers.LayerTypeDot1Q
	for _, tc := range []struct {
		name   string
		frame  []byte
		stack  []gopacket.LayerType
		want   MACControl // BaseLayer and Params left out
		params int
		cut    bool
	}{
		{"pfc", testPFCFrame, []gopacket.LayerType{eth, LayerTypeMACControl},
			MACControl{Opcode: MACControlPFC, ClassEnableVector: 0x0018, PauseTimes: [8]uint16{3: 65535}}, 18, false},
		{"pause", testPauseFrame, []gopacket.LayerType{eth, LayerTypeMACControl},
			MACControl{Opcode: MACControlPause, PauseTime: 65535}, 2, false},
		{"pfc in vlan", testPFCVLANFrame, []gopacket.LayerType{eth, dot1q, LayerTypeMACControl},
			MACControl{Opcode: MACControlPFC, ClassEnableVector: 0x0108, PauseTimes: [8]uint16{1, 2, 3, 4, 5, 6, 7, 8}}, 18, false},
		{"pfc cut", testPFCCutFrame, []gopacket.LayerType{eth, LayerTypeMACControl},
			MACControl{Opcode: MACControlPFC, ClassEnableVector: 0x0008}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParser(eth, ParserOptions{})
			err := p.Decode(tc.frame)
			assert.Equal(t, tc.stack, p.Decoded)
			if tc.cut {
				var de *DecodeError
				require.ErrorAs(t, err, &de)
				assert.ErrorIs(t, err, ErrTruncated)
				assert.Equal(t, "MACControl", de.Layer)
				assert.Equal(t, "PauseTime0", de.Field)
				assert.Equal(t, 18, de.FrameOffset)
			} else {
				require.NoError(t, err)
			}
			got := p.MACControl
			assert.Len(t, got.Params, tc.params)
			got.BaseLayer, got.Params = gplayers.BaseLayer{}, nil
			assert.Equal(t, tc.want, got)
			assert.Equal(t, EncapNone, p.Encapsulation())
			if tc.cut {
				return
			}
			// Decode, serialize, compare: the frames are padded with zeros
			// as gopacket's Ethernet pads.
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, p.SerializableLayers()...))
			assert.Equal(t, tc.frame[:60], buf.Bytes()[:60])
		})
	}
}

func TestMACControlHas(t *testing.T) {
	p := NewParser(gplayers.LayerTypeEthernet, ParserOptions{})
	require.Error(t, p.Decode(testPFCCutFrame))
	m := &p.MACControl
	assert.True(t, m.HasClassEnableVector())
	assert.False(t, m.HasPauseTimeOf(0))
	assert.False(t, m.HasPauseTime())
	assert.True(t, m.Enabled(3))
	assert.False(t, m.Enabled(4))

	require.NoError(t, p.Decode(testPFCFrame))
	for prio := 0; prio < PFCPriorities; prio++ {
		assert.True(t, m.HasPauseTimeOf(prio), "priority %d", prio)
		assert.Equal(t, prio == 3 || prio == 4, m.Enabled(prio), "priority %d", prio)
	}
	assert.False(t, m.HasPauseTimeOf(8))
	assert.False(t, m.HasTimestamp())

	require.NoError(t, p.Decode(testPauseFrame))
	assert.True(t, m.HasPauseTime())
	assert.False(t, m.HasClassEnableVector())
	assert.False(t, m.Enabled(0), "PAUSE has no priorities")
}

func TestMACControlShort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		field string
	}{
		{"no opcode", testPauseFrame[:15], "Opcode"},
		{"pause without time", testPauseFrame[:17], "PauseTime"},
		{"pfc without vector", testPFCFrame[:16], "ClassEnableVector"},
		{"pfc cut in time 7", testPFCFrame[:33], "PauseTime7"},
		{"mpcp without timestamp", append(append([]byte{}, testPauseFrame[:14]...), 0x00, 0x03, 0x00), "Timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m MACControl
			var df truncFlag
			err := m.DecodeFromBytes(tc.frame[14:], &df)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.field, de.Field)
			assert.ErrorIs(t, err, ErrTruncated)
			assert.True(t, bool(df), "the decode feedback hears of the truncation")
		})
	}
}

func TestMACControlOpcodeString(t *testing.T) {
	for _, tc := range []struct {
		op   MACControlOpcode
		want string
	}{
		{MACControlPause, "Pause"},
		{MACControlPFC, "Class Based Flow Control [CBFC] Pause"},
		{MACControlReport, "Report"},
		{MACControlRegisterAck, "Register Ack"},
		{0x0007, "Unknown(0x0007)"},
	} {
		assert.Equal(t, tc.want, tc.op.String())
	}
}

func TestMACControlDoesNotAllocate(t *testing.T) {
	p := NewParser(gplayers.LayerTypeEthernet, ParserOptions{})
	var m MACControl
	allocs := testing.AllocsPerRun(100, func() {
		_ = p.Decode(testPFCFrame)
		_ = m.DecodeFromBytes(testPFCFrame[14:], gopacket.NilDecodeFeedback)
	})
	assert.Zero(t, allocs)
}

// TestMACControlPacketAPI decodes through gopacket.NewPacket, which finds
// the layer through the ethertype table register.go fills.
func TestMACControlPacketAPI(t *testing.T) {
	pkt := gopacket.NewPacket(testPFCVLANFrame, gplayers.LayerTypeEthernet, gopacket.Default)
	l := pkt.Layer(LayerTypeMACControl)
	require.NotNil(t, l, "%v", pkt)
	assert.Equal(t, MACControlPFC, l.(*MACControl).Opcode)
}

func BenchmarkDecodeMACControl(b *testing.B) {
	var m MACControl
	for i := 0; i < b.N; i++ {
		_ = m.DecodeFromBytes(testPFCFrame[14:], gopacket.NilDecodeFeedback)
	}
}
