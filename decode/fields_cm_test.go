package decode_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// fieldText is a field's value as tshark -T fields -E occurrence=a prints
// it ("" when the packet does not have it), every occurrence joined by ",".
func fieldText(t *testing.T, p *decode.Packet, name string) string {
	f, ok := decode.Lookup(name)
	require.True(t, ok, "no field %s", name)
	var v decode.Value
	if !f.Get(p, &v) {
		return ""
	}
	s := f.String(&v)
	for i := 1; f.GetOccurrence(p, i, &v); i++ {
		s += "," + f.String(&v)
	}
	return s
}

// decodeFrame decodes frame n of a capture.
func decodeFrame(t *testing.T, file string, n int) *decode.Packet {
	r, err := capture.Open(file)
	require.NoError(t, err)
	defer r.Close()
	var rec capture.Packet
	for rec.Number != n {
		require.NoError(t, r.NextInto(&rec), "%s has no frame %d", file, n)
	}
	return decode.NewDecoder(decode.Options{}).Decode(rec)
}

// TestCMFieldsAsTshark: the infiniband.cm.* values are tshark 4.0.17's
// (tshark -T fields -E occurrence=a -e ... on the same frames), "" where
// tshark has no such field in the frame.
func TestCMFieldsAsTshark(t *testing.T) {
	const rping, rej = "../pcaps/rxe/rping.pcap", "../pcaps/cm_reject.pcap"
	tests := []struct {
		file  string
		frame int
		want  map[string]string
	}{
		{rping, 3, map[string]string{ // REQ, RoCEv2 over IPv4, IP CM service ID (TCP port 7174)
			"infiniband.cm.req": "0x08f82610", "infiniband.cm.req.serviceid": "0x0000000001061c06",
			"infiniband.cm.req.serviceid.prefix": "0000000001", "infiniband.cm.req.serviceid.protocol": "0x06",
			"infiniband.cm.req.serviceid.dport": "0x1c06", "infiniband.cm.req.localcaguid": "0x505400fffe770011",
			"infiniband.cm.req.localqkey": "0x00000000", "infiniband.cm.req.localqpn": "0x000011",
			"infiniband.cm.req.responderres": "0x01", "infiniband.cm.req.localeecn": "0x000000",
			"infiniband.cm.req.initdepth": "0x01", "infiniband.cm.req.remoteeecn": "0x000000",
			"infiniband.cm.req.remoteresptout": "0x14", "infiniband.cm.req.transpsvctype": "0x00",
			"infiniband.cm.req.e2eflowctrl": "0x00", "infiniband.cm.req.startpsn": "0x244955",
			"infiniband.cm.req.localresptout": "0x14", "infiniband.cm.req.retrcount": "0x07",
			"infiniband.cm.req.pkey": "0xffff", "infiniband.cm.req.pppmtu": "0x03", "infiniband.cm.req.rdcexist": "0x00",
			"infiniband.cm.req.rnrretrcount": "0x07", "infiniband.cm.req.maxcmretr": "0x0f", "infiniband.cm.req.srq": "0x00",
			"infiniband.cm.req.ext_transport": "0x00", "infiniband.cm.req.prim_locallid": "65535",
			"infiniband.cm.req.prim_remotelid": "65535", "infiniband.cm.req.prim_localgid_ipv4": "192.168.77.11",
			"infiniband.cm.req.prim_remotegid_ipv4": "192.168.77.12", "infiniband.cm.req.prim_localgid": "",
			"infiniband.cm.req.prim_tfcclass": "0x00", "infiniband.cm.req.prim_hoplim": "0x40",
			"infiniband.cm.req.prim_sl": "0x00", "infiniband.cm.req.prim_subnetlocal": "0x00",
			"infiniband.cm.req.prim_reserved1": "0x00", "infiniband.cm.req.prim_localacktout": "0x13",
			"infiniband.cm.req.prim_reserved2": "0x00", "infiniband.cm.req.alt_locallid": "0",
			"infiniband.cm.req.alt_localgid": "00000000000000000000000000000000", "infiniband.cm.req.alt_flowlabel": "0x00000000",
			"infiniband.cm.req.alt_reserved1": "0x00,0x00", "infiniband.cm.req.alt_localacktout": "0x00",
			"infiniband.cm.req.private": "", "infiniband.cm.req.ip_cm.majv": "0x00", "infiniband.cm.req.ip_cm.ipv": "0x04",
			"infiniband.cm.req.ip_cm.sport": "0xbea9", "infiniband.cm.req.ip_cm.sip4": "192.168.77.11",
			"infiniband.cm.req.ip_cm.dip4": "192.168.77.12", "infiniband.cm.req.ip_cm.sip6": "",
			"infiniband.cm.req.ip_cm": "0040bea9000000000000000000000000c0a84d0b000000000000000000000000c0a84d0c" +
				"0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
			"infiniband.cm.rep": "", "infiniband.cm.rej.reason": "",
		}},
		{rping, 4, map[string]string{ // REP
			"infiniband.cm.rep": "0xa611f467", "infiniband.cm.rep.remotecommid": "0x08f82610",
			"infiniband.cm.rep.localqkey": "0x00000000", "infiniband.cm.rep.localqpn": "0x000011",
			"infiniband.cm.rep.localeecn": "0x000000", "infiniband.cm.rep.startpsn": "0x22ce1c",
			"infiniband.cm.rep.respres": "0x01", "infiniband.cm.rep.initdepth": "0x01", "infiniband.cm.rep.tgtackdelay": "0x0f",
			"infiniband.cm.rep.failoveracc": "0x00", "infiniband.cm.rep.e2eflowctrl": "0x00",
			"infiniband.cm.rep.rnrretrcount": "0x07", "infiniband.cm.rep.srq": "0x00", "infiniband.cm.rep.reserved": "0x00",
			"infiniband.cm.rep.localcaguid": "0x505400fffe770012", "infiniband.cm.req": "",
		}},
		{rping, 5, map[string]string{"infiniband.cm.rtu.localcommid": "0x08f82610", "infiniband.cm.rtu.remotecommid": "0xa611f467"}},
		{rping, 126, map[string]string{"infiniband.cm.dreq.localcommid": "0x08f82610",
			"infiniband.cm.dreq.remotecommid": "0xa611f467", "infiniband.cm.req.remoteqpneecn": "0x000011"}},
		{rping, 127, map[string]string{"infiniband.cm.drsp.localcommid": "0xa611f467", "infiniband.cm.drsp.remotecommid": "0x08f82610"}},
		{rej, 2, map[string]string{ // REJ: invalid service ID
			"infiniband.cm.rej.localcommid": "0x20000012", "infiniband.cm.rej.remotecommid": "0x10000011",
			"infiniband.cm.rej.msgrej": "0x00", "infiniband.cm.rej.reserved0": "0x00", "infiniband.cm.rej.rejinfolen": "0x00",
			"infiniband.cm.rej.reserved1": "0x00", "infiniband.cm.rej.reason": "0x0008",
			"infiniband.cm.rej.ari": "000000000000000000000000000000000000000000000000000000000000000000000000" +
				"000000000000000000000000000000000000000000000000000000000000000000000000",
		}},
		{"../pcaps/conv_rocev2_ipv6.pcap", 1, map[string]string{ // RoCEv2 over IPv6: GIDs and IP CM addresses as IPv6
			"infiniband.cm.req.prim_localgid": "2001:db8::1", "infiniband.cm.req.prim_remotegid": "2001:db8::2",
			"infiniband.cm.req.prim_localgid_ipv4": "", "infiniband.cm.req.ip_cm.ipv": "0x06",
			"infiniband.cm.req.ip_cm.sip6": "2001:db8::1", "infiniband.cm.req.ip_cm.dip4": "",
		}},
		{"../pcaps/conv_rocev1.pcap", 1, map[string]string{ // RoCEv1: no IPv4 destination, so IPv6 GIDs
			"infiniband.cm.req.prim_localgid": "fe80::ff:fe00:1", "infiniband.cm.req.prim_remotegid": "fe80::ff:fe00:2",
			"infiniband.cm.req.ip_cm.ipv": "0x04", "infiniband.cm.req.ip_cm.dip4": "192.168.1.2",
		}},
		{"../pcaps/cm_native_service.pcap", 1, map[string]string{ // native IB, a service ID outside the IP CM range
			"infiniband.cm.req.serviceid": "0x0002c90300001234", "infiniband.cm.req.serviceid.prefix": "",
			"infiniband.cm.req.private": "69627769726520636f6e73756d65722064617461" + strings.Repeat("00", 92-20),
			"infiniband.cm.req.ip_cm":   "", "infiniband.cm.req.ip_cm.sport": "",
			"infiniband.cm.req.prim_locallid": "1", "infiniband.cm.req.prim_remotelid": "2",
			"infiniband.cm.req.prim_localgid": "fe80::ff:fe00:1", "infiniband.cm.req.prim_sl": "0x03",
			"infiniband.cm.req.prim_subnetlocal": "0x01",
			// tshark says 0x00000123, 0x00000000 and 0x00000012: it reads the
			// word's first three bytes under a four-byte mask (diff_test.go).
			"infiniband.cm.req.prim_flowlabel": "0x00012345", "infiniband.cm.req.prim_reserved0": "0x00000000",
			"infiniband.cm.req.prim_pktrate": "0x00000000",
		}},
		{"../pcaps/cm_sidr_ud.pcap", 1, map[string]string{ // SIDR_REQ: tshark 4.0 shows its bytes and dissects none of it
			"infiniband.cm.req": "", "infiniband.cm.req.serviceid": "",
			"infiniband.smplid.smpdata": "10000011ffff00000000000001111d2f0040bea9" + strings.Repeat("0", 24) + "c0a80101" +
				strings.Repeat("0", 24) + "c0a80102" + strings.Repeat("0", 2*(232-52)),
		}},
	}
	for _, tt := range tests {
		p := decodeFrame(t, tt.file, tt.frame)
		for name, want := range tt.want {
			assert.Equal(t, want, fieldText(t, p, name), "%s frame %d %s", tt.file, tt.frame, name)
		}
	}
}

// TestCMRejectReasonNames: a filter may name a REJ reason, and the tree
// names it (tshark 4.0 shows the number only).
func TestCMRejectReasonNames(t *testing.T) {
	f := decode.MustLookup("infiniband.cm.rej.reason")
	tests := []struct {
		v    uint64
		name string
		ok   bool
	}{{8, "Invalid Service ID", true}, {28, "Consumer Reject", true}, {34, "", false}, {0, "", false}}
	for _, tt := range tests {
		name, ok := f.Names(tt.v)
		assert.Equal(t, tt.ok, ok, "%d", tt.v)
		if ok {
			assert.Equal(t, tt.name, name)
			v, found := f.ByName(tt.name)
			require.True(t, found, tt.name)
			assert.Equal(t, tt.v, v)
		}
	}
}
