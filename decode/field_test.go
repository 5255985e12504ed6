package decode_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// TestFieldsMatchTsharkGlossary checks the type and base of every
// infiniband.* field against tshark 4.0.17's -G fields output, checked in as
// testdata/tshark-4.0.17-infiniband-fields.tsv.
func TestFieldsMatchTsharkGlossary(t *testing.T) {
	f, err := os.Open("testdata/tshark-4.0.17-infiniband-fields.tsv")
	require.NoError(t, err)
	defer f.Close()
	glossary := map[string][2]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "#") {
			continue
		}
		c := strings.Split(s.Text(), "\t")
		glossary[c[0]] = [2]string{c[1], c[2]}
	}
	checked := 0
	for _, fd := range decode.Fields() {
		if !strings.HasPrefix(fd.Name, "infiniband.") {
			continue
		}
		g, ok := glossary[fd.Name]
		require.True(t, ok, "%s is not a tshark 4.0 field: ibwire's own fields go under ibwire.*", fd.Name)
		wantType, wantBase := g[0], g[1]
		switch {
		case fd.Type == decode.FTProtocol:
			assert.Contains(t, []string{"FT_PROTOCOL", "FT_BYTES", "FT_NONE"}, wantType, fd.Name)
		default:
			assert.Equal(t, wantType, fd.Type.String(), "%s type", fd.Name)
			if fd.Type.IsUnsigned() {
				assert.Equal(t, wantBase, fd.Base.String(), "%s base", fd.Name)
			}
		}
		checked++
	}
	assert.Greater(t, checked, 60)
}

func TestLookupShorthand(t *testing.T) {
	f, ok := decode.Lookup("bth.psn")
	require.True(t, ok)
	assert.Equal(t, "infiniband.bth.psn", f.Name)
	_, ok = decode.Lookup("nosuch.field")
	assert.False(t, ok)
}

// TestEveryFieldIsSafeOnEveryPacket gets every field from packets that lack
// most headers (ARP, TCP, a cut frame, an empty frame) and from IB packets
// of every encapsulation: no getter may touch a header the packet lacks.
func TestEveryFieldIsSafeOnEveryPacket(t *testing.T) {
	frames := [][]byte{
		{},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1},
		{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			0x48, 0x33, 0x48, 0x33, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0},
		{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			0xc0, 0, 0x12, 0xb7, 0, 40, 0, 0, 0x0a},
	}
	d := decode.NewDecoder(decode.Options{})
	for i, f := range frames {
		p := d.Decode(decode.Input{Number: i + 1, LinkType: layers.LinkTypeEthernet, Data: f, Length: len(f)})
		for _, fd := range decode.Fields() {
			var v decode.Value
			require.NotPanics(t, func() { fd.Get(p, &v); fd.GetSecond(p, &v) }, "frame %d field %s", i+1, fd.Name)
		}
	}
}

// InTreeOf answers from bits what InTree answers from names, for every
// field against every protocol and header.
func TestInTreeOfAgreesWithInTree(t *testing.T) {
	all := decode.FieldsInWireOrder()
	protos := 0
	for _, p := range all {
		if p.Type != decode.FTProtocol {
			continue
		}
		protos++
		for _, f := range all {
			assert.Equal(t, f.InTree(p.Name), f.InTreeOf(p), "%s under %s", f.Name, p.Name)
		}
	}
	require.Greater(t, protos, 10)
}

// TestProtocolsAsTshark: frame.protocols names what tshark 4.0.17 names on
// the same frames (its -T fields -e frame.protocols), link layer, the
// dispatch between headers, and "data" for a payload no dissector takes.
func TestProtocolsAsTshark(t *testing.T) {
	tests := []struct {
		file  string
		frame int
		want  string
	}{
		{"../pcaps/rxe/rping.pcap", 1, "eth:ethertype:arp"},
		{"../pcaps/rxe/rping.pcap", 3, "eth:ethertype:ip:udp:infiniband"}, // CM: a MAD, not data
		{"../pcaps/rxe/rping.pcap", 6, "eth:ethertype:ip:udp:infiniband:data"},
		{"../pcaps/rxe/rping.pcap", 7, "eth:ethertype:ip:udp:infiniband"}, // ACK
		{"../testdata/sll2-tcpdump-any.pcap", 1, "sll:ethertype:ip:udp:infiniband"},
		{"../testdata/sll2-tcpdump-any.pcap", 4, "sll:ethertype:ip:udp:infiniband:data"},
		{"../pcaps/conv_rocev1.pcap", 1, "eth:ethertype:infiniband"},
		{"../pcaps/conv_rocev1.pcap", 4, "eth:ethertype:infiniband:data"},
		{"../pcaps/conv_erf.pcap", 1, "erf:infiniband"},
		{"../pcaps/conv_erf.pcap", 4, "erf:infiniband:data"},
		{"../pcaps/rxe/write_bw_loss.pcap", 3, "eth:ethertype:ip:tcp"},
		{"../pcaps/rxe/write_bw_loss.pcap", 6, "eth:ethertype:ip:tcp:data"},
		{"../pcaps/conv_rocev2_ipv6.pcap", 4, "eth:ethertype:ipv6:udp:infiniband:data"},
	}
	for _, tt := range tests {
		r, err := capture.Open(tt.file)
		require.NoError(t, err)
		d := decode.NewDecoder(decode.Options{})
		var rec capture.Packet
		for rec.Number != tt.frame {
			require.NoError(t, r.NextInto(&rec))
		}
		r.Close()
		assert.Equal(t, tt.want, d.Decode(rec).Protocols(), "%s frame %d", tt.file, tt.frame)
	}
	// Raw IP has no link layer (tshark: "raw:ip:udp").
	raw := []byte{0x45, 0, 0, 29, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0x30, 0x39, 0, 9, 0, 0, 0x0a}
	p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, LinkType: layers.LinkTypeRaw, Data: raw, Length: len(raw)})
	assert.Equal(t, "raw:ip:udp:data", p.Protocols())
}
