package decode_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHeaderNodeBytes: -e of a header prints its bytes, as tshark 4.0.17
// prints its FT_BYTES header items (tshark -T fields -e infiniband.bth ...
// on the same frames); "" for a header the packet lacks.
func TestHeaderNodeBytes(t *testing.T) {
	const rping = "../pcaps/rxe/rping.pcap"
	tests := []struct {
		file  string
		frame int
		field string
		want  string
	}{
		{rping, 3, "infiniband.bth", "6400ffff0000000180000000"},
		{rping, 3, "infiniband.deth", "8001000000000001"},
		{rping, 3, "infiniband.aeth", ""},
		{rping, 7, "infiniband.aeth", "1f000001"},
		{rping, 8, "infiniband.reth", "000055c9c693f9e0000005d100000040"},
		{"../pcaps/rc_atomic.pcap", 1, "infiniband.atomiceth", "00007f000001000800c0ffee11111111111111112222222222222222"},
		{"../pcaps/rc_atomic.pcap", 4, "infiniband.atomicacketh", "2222222222222222"},
		{"../pcaps/conv_erf.pcap", 1, "infiniband.lrh", "0002000200480001"},
		{"../pcaps/conv_erf.pcap", 1, "infiniband.grh", ""},
		{"../pcaps/conv_rocev1.pcap", 1, "infiniband.grh",
			"6000000001181b40fe80000000000000000000fffe000001fe80000000000000000000fffe000002"},
		{"../pcaps/conv_rocev1.pcap", 1, "infiniband.lrh", ""},
		{"../pcaps/conv_rocev1.pcap", 1, "infiniband", ""}, // a protocol, not a header: no bytes
	}
	for _, tt := range tests {
		p := decodeFrame(t, tt.file, tt.frame)
		assert.Equal(t, tt.want, fieldText(t, p, tt.field), "%s frame %d %s", tt.file, tt.frame, tt.field)
	}
	// The MAD item covers the whole MAD, header and data: 256 bytes.
	mad := fieldText(t, decodeFrame(t, rping, 3), "infiniband.mad")
	assert.Len(t, mad, 512)
	assert.True(t, strings.HasPrefix(mad, "0107020300000000000000021026f808001000000000000008f82610000000000000000001061c06"), mad)
}

// TestReservedEveryOccurrence: infiniband.reserved has one occurrence per
// reserved field of every header tshark 4.0.17 dissects, in wire order (its
// -T fields -E occurrence=a -e infiniband.reserved on the same frames).
func TestReservedEveryOccurrence(t *testing.T) {
	const rping, mgmt = "../pcaps/rxe/rping.pcap", "../pcaps/mgmt_smp_sa_perf.pcap"
	zeros := func(n int) string { return strings.Repeat("00", n) }
	tests := []struct {
		file  string
		frame int
		want  string
	}{
		{rping, 1, ""},                                // ARP
		{rping, 6, "00"},                              // RC: the BTH's
		{"../pcaps/ud_send.pcap", 1, "00,00"},         // UD: BTH, DETH
		{rping, 3, "00,00,0000,00000000,00000000"},    // CM REQ: BTH, DETH, MAD, two of the REQ
		{rping, 4, "00,00,0000,00,00,00"},             // CM REP: three of the REP
		{rping, 5, "00,00,0000"},                      // CM RTU: none of its own
		{rping, 126, "00,00,0000,00"},                 // CM DREQ: one
		{"../pcaps/cm_reject.pcap", 2, "00,00,0000"},  // CM REJ
		{"../pcaps/cm_sidr_ud.pcap", 1, "00,00,0000"}, // SIDR_REQ: not dissected by tshark
		// tshark 4.0.17 on the file's user-DLT 147 copy: a LID-routed SMP's
		// 32 bytes before its data and 128 after, a directed-route SMP's 28,
		// PortCounters' and PortCountersExtended's 40 before the counters
		// and their own.
		{mgmt, 1, "00,00,0000," + zeros(32) + "," + zeros(128)},
		{mgmt, 7, "00,00,0000," + zeros(28)},
		{mgmt, 11, "00,00,0000," + zeros(40) + ",51,63,6566"},
		{mgmt, 13, "00,00,0000," + zeros(40) + ",61,65666768"},
	}
	for _, tt := range tests {
		p := decodeFrame(t, tt.file, tt.frame)
		assert.Equal(t, tt.want, fieldText(t, p, "infiniband.reserved"), "%s frame %d", tt.file, tt.frame)
	}
}
