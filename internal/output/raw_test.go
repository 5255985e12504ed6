package output_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// TestRawPacketsShowWhatTheyCarry: on pcaps/ib_raw_eoib.pcap, the carried
// protocol follows the IB headers in -V (tshark 4.0.17 -V: "InfiniBand",
// then "Internet Protocol Version 4"; EoIB a protocol of its own after
// InfiniBand), names the Protocol column (tshark's is the highest protocol
// it dissects: ICMP, ARP, ICMPv6, where ibdump stops at IP), and the
// structured tree says what -V prints.
func TestRawPacketsShowWhatTheyCarry(t *testing.T) {
	tests := []struct {
		frame    int
		protos   []string // the tree's top-level lines, after Frame (no ibwire analysis without a BTH)
		protocol string
		summary  string
	}{
		{1, []string{"InfiniBand", "Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2"}, "IPv4",
			"IP 10.0.0.1 > 10.0.0.2, length 66"},
		{3, []string{"InfiniBand"}, "ARP", "ARP, Request who-has 10.0.0.2 tell 10.0.0.1, length 56"},
		{4, []string{"InfiniBand", "Internet Protocol Version 6, Src: fe80::202:c9ff:fe00:1, Dst: fe80::202:c9ff:fe00:2"}, "IPv6",
			"IP6 fe80::202:c9ff:fe00:1 > fe80::202:c9ff:fe00:2, length 82"},
		{5, []string{"InfiniBand"}, "InfiniBand", "IB LID: 1 > LID: 2: raw, ethertype 0x88b5, length 16"},
		{8, []string{"InfiniBand", "Mellanox EoIB Encapsulation Header", "ibwire analysis"}, "InfiniBand", ""},
	}
	r, err := capture.Open("../../pcaps/ib_raw_eoib.pcap")
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	var tree output.Tree
	sum := output.Summary{Time: output.TimeNone}
	i := 0
	for i < len(tests) {
		cp, err := r.Next()
		require.NoError(t, err)
		p := dec.Decode(cp)
		var b strings.Builder
		for _, n := range output.TreeNodes(p) {
			b.WriteString(strings.Repeat("    ", n.Depth) + n.Text + "\n")
		}
		text := string(tree.Append(nil, p))
		require.Equal(t, text, b.String(), "frame %d", cp.Number)
		if cp.Number != tests[i].frame {
			continue
		}
		tt := tests[i]
		i++
		var top []string
		for _, l := range strings.Split(text, "\n") {
			if l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "Frame ") {
				top = append(top, l)
			}
		}
		assert.Equal(t, tt.protos, top, "frame %d", tt.frame)
		assert.Equal(t, tt.protocol, output.Protocol(p), "frame %d", tt.frame)
		if tt.summary != "" {
			assert.Equal(t, tt.summary, string(sum.Append(nil, p)), "frame %d", tt.frame)
		}
	}
	if raw := strings.Count(string(tree.Append(nil, dec.Decode(mustFrame(t, 1)))), "RWH - Raw Header"); raw != 1 {
		t.Errorf("the RWH node is titled as tshark titles it: %d", raw)
	}
}

func mustFrame(t *testing.T, n int) capture.Packet {
	r, err := capture.Open("../../pcaps/ib_raw_eoib.pcap")
	require.NoError(t, err)
	defer r.Close()
	for {
		cp, err := r.Next()
		require.NoError(t, err)
		if cp.Number == n {
			return cp
		}
	}
}
