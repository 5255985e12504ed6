package replay

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sampleMap = `# move guest a onto loopback
mac 52:54:00:00:00:0b -> 02:00:00:00:00:01
ip  192.168.77.11 -> 127.0.0.1   # and its GID
gid fe80::1 -> fe80::2
port 49152 -> 50000
lid 1 -> 7
qpn 0x11 -> 0x22
rkey 0x1234 -> 0x5678
va 0x7f0000000000 -> 0x1000 len 0x100000
psn-base qpn=0x11 +1000
`

func TestParseRules(t *testing.T) {
	var r Rules
	require.NoError(t, ParseRules(strings.NewReader(sampleMap), "map", &r))
	assert.Equal(t, map[[6]byte][6]byte{{0x52, 0x54, 0, 0, 0, 0x0b}: {2, 0, 0, 0, 0, 1}}, r.MACs)
	assert.Equal(t, map[netip.Addr]netip.Addr{
		netip.MustParseAddr("192.168.77.11"): netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("fe80::1"):       netip.MustParseAddr("fe80::2"),
	}, r.Addrs)
	assert.Equal(t, map[uint16]uint16{49152: 50000}, r.Ports)
	assert.Equal(t, map[uint16]uint16{1: 7}, r.LIDs)
	assert.Equal(t, map[uint32]uint32{0x11: 0x22}, r.QPNs)
	assert.Equal(t, map[uint32]uint32{0x1234: 0x5678}, r.RKeys)
	assert.Equal(t, []VARule{{From: 0x7f0000000000, To: 0x1000, Len: 0x100000}}, r.VAs)
	assert.Equal(t, map[uint32]int{0x11: 1000}, r.PSNShift)

	// Format writes what ParseRules reads back.
	var out bytes.Buffer
	require.NoError(t, r.Format(&out))
	var again Rules
	require.NoError(t, ParseRules(&out, "formatted", &again))
	assert.Equal(t, r, again)

	inv, err := r.Inverse()
	require.NoError(t, err)
	assert.Equal(t, map[uint32]uint32{0x22: 0x11}, inv.QPNs)
	assert.Equal(t, map[uint32]int{0x22: -1000}, inv.PSNShift, "the inverse shift is keyed by the new QPN")
	assert.Equal(t, []VARule{{From: 0x1000, To: 0x7f0000000000, Len: 0x100000}}, inv.VAs)
}

func TestAddRuleForms(t *testing.T) {
	tests := []struct {
		kind, value string
		check       func(t *testing.T, r *Rules)
	}{
		{"qpn", "0x11,0x22", func(t *testing.T, r *Rules) { assert.Equal(t, uint32(0x22), r.QPNs[0x11]) }},
		{"ip", "[::ffff:10.0.0.1],[::ffff:127.0.0.1]", func(t *testing.T, r *Rules) {
			assert.Equal(t, netip.MustParseAddr("127.0.0.1"), r.Addrs[netip.MustParseAddr("10.0.0.1")], "mapped forms are unmapped")
		}},
		{"va", "0x1000,0x2000,0x10", func(t *testing.T, r *Rules) { assert.Equal(t, []VARule{{0x1000, 0x2000, 0x10}}, r.VAs) }},
		{"va", "0x1000->0x2000", func(t *testing.T, r *Rules) {
			assert.Equal(t, []VARule{{0x1000, 0x2000, 1<<64 - 0x2000}}, r.VAs, "no length: up to the top of the address space")
		}},
		{"port", "80:8080", func(t *testing.T, r *Rules) { assert.Equal(t, uint16(8080), r.Ports[80]) }},
		{"ip", "10.0.0.1:127.0.0.1", func(t *testing.T, r *Rules) {
			assert.Equal(t, netip.MustParseAddr("127.0.0.1"), r.Addrs[netip.MustParseAddr("10.0.0.1")])
		}},
		{"psn-base", "0x11,-5", func(t *testing.T, r *Rules) { assert.Equal(t, -5, r.PSNShift[0x11]) }},
		{"mac", "02:00:00:00:00:01,02:00:00:00:00:02", func(t *testing.T, r *Rules) { assert.Len(t, r.MACs, 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.kind+" "+tt.value, func(t *testing.T) {
			var r Rules
			require.NoError(t, r.Add(tt.kind, tt.value))
			tt.check(t, &r)
		})
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct{ text, err string }{
		{"qpn 0x11", `map:1: qpn "0x11": want FROM->TO or FROM,TO`},
		{"gid fe80::1:fe80::2", `want FROM->TO or FROM,TO (FROM:TO when neither has a colon)`},
		{"\n\nqpn 0x1000000 -> 1", `map:3: qpn "0x1000000 -> 1": "0x1000000" does not fit 24 bits`},
		{"ip 10.0.0.1 -> fe80::1", `both sides must be IPv4 or both IPv6`},
		{"mac 1:2:3 -> 02:00:00:00:00:01", `"1:2:3" is not a MAC address`},
		{"jump 1 -> 2", `map:1: unknown rule kind "jump"`},
		{"psn-base qpn=0x11 1000", `want a signed shift such as +1000`},
		{"psn-base qpn=0x11 +1\npsn-base qpn=0x11 +2", `map:2: psn-base "qpn=0x11 +2": qpn 0x11 already has a shift`},
		{"qpn 4 -> 2\nqpn 4 -> 3", `map:2: qpn "4 -> 3": the source already has a rule`},
		{"va 0x1000 -> 0x2000 len 0x1000\nva 0x1800 -> 0x9000 len 0x10", `source ranges overlap`},
		{"va 0x1000 -> 0x2000 len 0", `length "0": want a number from 1`},
		{"rkey 1 -> 2 len 3", `unexpected "len 3" after the target`},
		{"qpn 1 -> 0x22", `QP0 and QP1 are the management QPs`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var r Rules
			err := ParseRules(strings.NewReader(tt.text), "map", &r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestInverseNotOneToOne(t *testing.T) {
	var r Rules
	require.NoError(t, r.Add("qpn", "4->3"))
	require.NoError(t, r.Add("qpn", "2->3"))
	_, err := r.Inverse()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "both map to 0x3: cannot invert")
}

func FuzzParseRules(f *testing.F) {
	f.Add(sampleMap)
	f.Add("va 0,0\npsn-base 1,+0")
	f.Fuzz(func(t *testing.T, text string) {
		var r Rules
		if err := ParseRules(strings.NewReader(text), "fuzz", &r); err != nil {
			return
		}
		var out bytes.Buffer
		require.NoError(t, r.Format(&out))
		var again Rules
		require.NoError(t, ParseRules(&out, "formatted", &again), "%s", out.String())
		assert.Equal(t, r.Empty(), again.Empty())
	})
}
