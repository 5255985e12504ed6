package layers_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// seqBytes is n bytes counting up from first: the corpus's DataDetails.
func seqBytes(n int, first byte) []byte {
	d := make([]byte, n)
	for i := range d {
		d[i] = first + byte(i)
	}
	return d
}

// TestTrapDetailsAsTshark decodes the DataDetails of each trap as
// pcaps/mgmt_traps_classportinfo.pcap carries them (a byte sequence from
// 0x10+3i for the i-th trap) and compares with tshark 4.0.17's values for
// the same frames (tshark -T fields, the file read as user DLT 147).
// Trap 259 has no tshark answer (tshark stops at its DataValid): its
// offsets are the IBTA's, and the case checks where they fall.
func TestTrapDetailsAsTshark(t *testing.T) {
	gid := func(s string) []byte { return net.ParseIP(s).To16() }
	tests := []struct {
		frame int
		trap  layers.TrapNumber
		want  layers.TrapDetails
	}{
		{1, 64, layers.TrapDetails{GIDAddr: gid("1617:1819:1a1b:1c1d:1e1f:2021:2223:2425")}},
		{4, 67, layers.TrapDetails{GIDAddr: gid("1f20:2122:2324:2526:2728:292a:2b2c:2d2e")}},
		{5, 68, layers.TrapDetails{CompMask: 0x1c1d1e1f20212223}},
		{7, 128, layers.TrapDetails{LIDAddr: 0x2223}},
		{8, 129, layers.TrapDetails{LIDAddr: 0x2728, PortNo: 0x29}},
		{10, 131, layers.TrapDetails{LIDAddr: 0x2d2e, PortNo: 0x2f}},
		{11, 144, layers.TrapDetails{LIDAddr: 0x3031, OtherLocalChanges: true, CapabilityMask: 0x34353637,
			NodeDescriptionChange: true}},
		{12, 145, layers.TrapDetails{LIDAddr: 0x3334, SystemImageGUID: 0x3738393a3b3c3d3e}},
		{13, 256, layers.TrapDetails{LIDAddr: 0x3637, DRSLID: 0x3839, Method: 0x3a, AttributeID: 0x3c3d,
			AttributeModifier: 0x3e3f4041, MKey: 0x4243444546474849, DRPathTruncated: true, DRHopCount: 0x0b,
			DRNoticeReturnPath: seqBytes(30, 0x4c)}},
		{14, 257, layers.TrapDetails{LIDAddr1: 0x393a, LIDAddr2: 0x3b3c, Key: 0x3d3e3f40, SL: 4, QP1: 0x424344,
			QP2: 0x464748, GIDAddr1: gid("494a:4b4c:4d4e:4f50:5152:5354:5556:5758"),
			GIDAddr2: gid("595a:5b5c:5d5e:5f60:6162:6364:6566:6768")}},
		{15, 258, layers.TrapDetails{LIDAddr1: 0x3c3d, LIDAddr2: 0x3e3f, Key: 0x40414243, SL: 4, QP1: 0x454647,
			QP2: 0x494a4b, GIDAddr1: gid("4c4d:4e4f:5051:5253:5455:5657:5859:5a5b"),
			GIDAddr2: gid("5c5d:5e5f:6061:6263:6465:6667:6869:6a6b")}},
		{16, 259, layers.TrapDetails{DataValid: 0x3d3e, LIDAddr1: 0x3f40, LIDAddr2: 0x4142, PKey: 0x4344, SL: 4,
			QP1: 0x464748, QP2: 0x4a4b4c, GIDAddr1: seqBytes(16, 0x4d), GIDAddr2: seqBytes(16, 0x5d),
			SwLIDAddr: 0x6d6e, PortNo: 0x6f}},
	}
	for _, tt := range tests {
		t.Run(tt.trap.String(), func(t *testing.T) {
			n := layers.Notice{IsGeneric: true, TrapNumberDeviceID: uint16(tt.trap),
				DataDetails: seqBytes(layers.NoticeDataDetailsLength, byte(0x10+3*(tt.frame-1)))}
			tt.want.Trap, tt.want.Fields = tt.trap, tt.trap.Fields()
			assert.Equal(t, tt.want, n.TrapDetails())
		})
	}
}

// TestNoticeHeaderAsTshark: the Notice of frame 14 (trap 257) as tshark
// 4.0.17 shows it: IsGeneric 1, Type 0x02, ProducerTypeVendorID 0x000002,
// TrapNumberDeviceID 0x0101, IssuerLID 0x0002, NoticeToggle 1, NoticeCount
// 0x000e; and the bytes round-trip.
func TestNoticeHeaderAsTshark(t *testing.T) {
	wire := append([]byte{0x82, 0x00, 0x00, 0x02, 0x01, 0x01, 0x00, 0x02, 0x80, 0x0e}, seqBytes(54, 0x37)...)
	n := layers.DecodeNotice(wire)
	assert.Equal(t, layers.Notice{IsGeneric: true, Type: 2, ProducerTypeVendorID: 2, TrapNumberDeviceID: 0x0101,
		IssuerLID: 2, NoticeToggle: true, NoticeCount: 0x0e, DataDetails: wire[10:]}, n)
	trap, generic := n.Trap()
	assert.True(t, generic)
	assert.Equal(t, layers.TrapBadPKey, trap)
	out := make([]byte, layers.NoticeLength)
	require.NoError(t, n.MarshalTo(out))
	assert.Equal(t, wire, out)
	assert.Error(t, n.MarshalTo(out[:63]))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		n := layers.DecodeNotice(wire)
		_ = n.TrapDetails()
	}))
}

// TestTrapDetailsWithoutFields: a vendor notice and a trap number without
// defined details decode to no fields, whatever their bytes.
func TestTrapDetailsWithoutFields(t *testing.T) {
	for _, n := range []layers.Notice{
		{IsGeneric: false, TrapNumberDeviceID: 128, DataDetails: seqBytes(54, 1)},
		{IsGeneric: true, TrapNumberDeviceID: 1000, DataDetails: seqBytes(54, 1)},
		{IsGeneric: true, TrapNumberDeviceID: 128, DataDetails: seqBytes(10, 1)},
	} {
		d := n.TrapDetails()
		assert.Zero(t, d.Fields, "%+v", n)
		assert.Zero(t, d.LIDAddr, "%+v", n)
	}
	assert.Equal(t, "link state change", layers.TrapLinkStateChange.String())
	assert.Equal(t, "Unknown(1000)", layers.TrapNumber(1000).String())
	assert.False(t, layers.TrapNumber(1000).Known())
}

// TestClassPortInfoAsTshark: the PerfMgt ClassPortInfo of
// pcaps/mgmt_traps_classportinfo.pcap frame 21 (72 bytes counting up from
// 0x21) as tshark 4.0.17 shows it, and its round trip.
func TestClassPortInfoAsTshark(t *testing.T) {
	wire := seqBytes(layers.ClassPortInfoLength, 0x21)
	c := layers.DecodeClassPortInfo(wire)
	assert.Equal(t, layers.ClassPortInfo{
		BaseVersion: 0x21, ClassVersion: 0x22, CapabilityMask: 0x2324, CapabilityMask2: 0x01293139, RespTimeValue: 0x08,
		RedirectGID: net.ParseIP("292a:2b2c:2d2e:2f30:3132:3334:3536:3738").To16(), RedirectTC: 0x39, RedirectSL: 0x03,
		RedirectFL: 0x0a3b3c, RedirectLID: 0x3d3e, RedirectPKey: 0x3f40, Reserved: 0x41, RedirectQP: 0x424344,
		RedirectQKey: 0x45464748, TrapGID: net.ParseIP("494a:4b4c:4d4e:4f50:5152:5354:5556:5758").To16(),
		TrapTC: 0x59, TrapSL: 0x05, TrapFL: 0x0a5b5c, TrapLID: 0x5d5e, TrapPKey: 0x5f60, TrapHL: 0x61,
		TrapQP: 0x626364, TrapQKey: 0x65666768,
	}, c)
	out := make([]byte, layers.ClassPortInfoLength)
	require.NoError(t, c.MarshalTo(out))
	assert.Equal(t, wire, out)
	assert.Error(t, c.MarshalTo(out[:71]))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = layers.DecodeClassPortInfo(wire) }))
}
