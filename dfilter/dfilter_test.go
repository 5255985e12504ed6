package dfilter_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/dfilter"
)

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"bth.psn", "infiniband.bth.psn"},
		{"bth.opcode eq 0x11", "infiniband.bth.opcode == 17"},
		{"bth.destqp == 17", "infiniband.bth.destqp == 0x11"}, // BASE_HEX prints in hex
		{"bth.opcode == 017", "infiniband.bth.opcode == 15"},  // octal, as tshark reads it
		{"bth.opcode == 0o17 || bth.opcode == 0b101", "infiniband.bth.opcode == 15 || infiniband.bth.opcode == 5"},
		{"bth.opcode == RC_SEND_ONLY", "infiniband.bth.opcode == RC_SEND_ONLY"},
		{`bth.opcode == "RC_SEND_ONLY"`, "infiniband.bth.opcode == RC_SEND_ONLY"},
		{`bth.opcode == "Reliable Connection (RC) - SEND Only"`, `infiniband.bth.opcode == "Reliable Connection (RC) - SEND Only"`},
		{"aeth.syndrome.error_code ne psn_seq_err", "infiniband.aeth.syndrome.error_code != psn_seq_err"},
		{"bth.opcode in {4 6..10 0x11}", "infiniband.bth.opcode in {4, 6..10, 17}"},
		{"bth.opcode in {4,6 .. 10,0x11}", "infiniband.bth.opcode in {4, 6..10, 17}"},
		{"bth.psn & 0xff == 0", "infiniband.bth.psn & 0xff == 0"},
		{"bth.psn bitwise_and 255", "infiniband.bth.psn & 0xff"},
		{"bth.psn & 0xf in {1 2}", "infiniband.bth.psn & 0xf in {1, 2}"},
		{"ip.src == 192.168.77.5/24", "ip.src == 192.168.77.0/24"},
		{"ip.src == 192.168.77.5/32", "ip.src == 192.168.77.5"},
		{"grh.sgid == FE80::1/64", "infiniband.grh.sgid == fe80::/64"},
		{"grh.sgid == 192.168.77.11", "infiniband.grh.sgid == ::ffff:192.168.77.11"},
		{"grh.sgid == 192.168.77.11/24", "infiniband.grh.sgid == ::ffff:192.168.77.0/120"},
		{"eth.src == 02-00-00-00-00-01", "eth.src == 02:00:00:00:00:01"},
		{"eth.src == 0200.0000.0001", "eth.src == 02:00:00:00:00:01"},
		{"immdt contains DEADBEEF", "infiniband.immdt contains de:ad:be:ef"},
		{"immdt == a:b", "infiniband.immdt == 0a:0b"},
		{`frame contains "ab\x00"`, "frame contains 61:62:00"},
		{`ibwire.payload contains ""`, `ibwire.payload contains ""`},
		{"frame.protocols contains ethertype", `frame.protocols contains "ethertype"`},
		{`frame.protocols == "tab\there \"q\" \u00e9\101"`, `frame.protocols == "tab\there \"q\" éA"`},
		{`frame.protocols matches r"\d+\.x"`, `frame.protocols matches "\\d+\\.x"`},
		{`frame.protocols ~ "ip"`, `frame.protocols matches "ip"`},
		{"frame.time_relative > 1.50", "frame.time_relative > 1.5"},
		{"frame.time_relative > .000000001", "frame.time_relative > 0.000000001"},
		{"frame.time_relative >= -2", "frame.time_relative >= -2"},
		{"frame.time_relative < 1e-3", "frame.time_relative < 0.001"},
		{"frame.time_delta in {0..0.5}", "frame.time_delta in {0..0.5}"},
		{`frame.time_epoch > "Nov 14, 2023 22:13:20.25 UTC"`, "frame.time_epoch > 1700000000.25"},
		{"bth.se == true", "infiniband.bth.se == 1"},
		{"bth.se == FALSE", "infiniband.bth.se == 0"},
		{"bth.se == 7", "infiniband.bth.se == 1"},
		{"ip.dsfield.ecn == ce", "ip.dsfield.ecn == ce"},
		{`aeth.syndrome.timer == "655.36 ms"`, `infiniband.aeth.syndrome.timer == "655.36 ms"`},
		{"bth.se and bth.a or bth.m", "infiniband.bth.se && infiniband.bth.a || infiniband.bth.m"},
		{"bth.se and (bth.a or bth.m)", "infiniband.bth.se && (infiniband.bth.a || infiniband.bth.m)"},
		{"(bth.se || (bth.a || bth.m))", "infiniband.bth.se || infiniband.bth.a || infiniband.bth.m"},
		{"((bth.se && bth.a) && bth.m)", "infiniband.bth.se && infiniband.bth.a && infiniband.bth.m"},
		{"not not bth.se", "!!infiniband.bth.se"},
		{"!(bth.se)", "!infiniband.bth.se"},
		{"!(bth.se && bth.a)", "!(infiniband.bth.se && infiniband.bth.a)"},
		{"ip.ttl === 64 && ip.ttl !== 1 && ip.ttl any_ne 2 && ip.ttl all_eq 64", "ip.ttl === 64 && ip.ttl != 1 && ip.ttl ~= 2 && ip.ttl === 64"},
		{"ip.ttl lt 1 or ip.ttl le 2 or ip.ttl gt 3 or ip.ttl ge 4", "ip.ttl < 1 || ip.ttl <= 2 || ip.ttl > 3 || ip.ttl >= 4"},
	} {
		f, err := dfilter.Compile(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, f.String(), c.in)
		g, err := dfilter.Compile(f.String())
		require.NoError(t, err, f.String())
		assert.Equal(t, f.String(), g.String(), "round trip of %s", c.in)
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, c := range []struct {
		expr   string
		column int
		length int
		msg    string
	}{
		{"bth.psnn == 3", 1, 8, `"bth.psnn" is neither a field nor a protocol name`},
		{"bth.psn == 1 && foo.bar", 17, 7, `"foo.bar" is neither a field nor a protocol name`},
		{"bth.opcode == foo", 15, 3, `"foo" cannot be found among the possible values for infiniband.bth.opcode`},
		{`bth.opcode == "foo"`, 15, 5, `"foo" cannot be found among the possible values for infiniband.bth.opcode`},
		{"bth.opcode == 256", 15, 3, `"256" cannot be found among the possible values for infiniband.bth.opcode`},
		{"ip.ttl == 256", 11, 3, `"256" too big for this field, maximum 255`},
		{"bth.psn == 16777216", 12, 8, `"16777216" too big for this field, maximum 16777215`},
		{"bth.psn == 99999999999999999999", 12, 20, `"99999999999999999999" too big for this field, maximum 16777215`},
		{"ip.ttl == -1", 11, 2, `"-1" too small for this field, minimum 0`},
		{"ip.ttl == abc", 11, 3, `"abc" is not a valid number`},
		{"ip.ttl == 0x", 11, 2, `"0x" is not a valid number`},
		{`ip.ttl == "abc"`, 11, 5, `unsigned integer (1 byte) cannot be converted from a string ("abc")`},
		{"bth.se == yes", 11, 3, `"yes" cannot be found among the possible values for infiniband.bth.se`},
		{"ip.ttl contains 1", 1, 6, "ip.ttl (type=Unsigned integer (1 byte)) cannot participate in contains comparison"},
		{`bth.opcode matches "x"`, 1, 10, "infiniband.bth.opcode (type=Unsigned integer (1 byte)) cannot participate in matches comparison"},
		{"ip.src & 1", 1, 6, "ip.src (type=IPv4 address) cannot participate in bitwise and"},
		{"bth.psn & 0xff contains 1", 1, 7, "infiniband.bth.psn (type=Unsigned integer (3 bytes)) cannot participate in contains comparison"},
		{"bth.psn & x", 11, 1, `"x" is not a valid number`},
		{"bth.psn & ", 11, 0, "unexpected end of filter expression"},
		{"infiniband == 1", 1, 10, `infiniband (type=Protocol) cannot participate in "==" comparison`},
		{"infiniband.bth in {1}", 1, 14, `infiniband.bth (type=Protocol) cannot participate in "in" comparison`},
		{"ip.src == 1.2.3", 11, 5, `"1.2.3" is not a valid IPv4 address`},
		{"ip.src == ::1", 11, 3, `"::1" is not a valid IPv4 address`},
		{"ip.src == 1.2.3.4/33", 11, 10, "netmask bits in a CIDR IPv4 address should be <= 32, not 33"},
		{"ip.src == 1.2.3.4/x", 11, 9, `"1.2.3.4/x" is not a valid IPv4 address`},
		{"ipv6.src == fe80::/129", 13, 10, "netmask bits in a CIDR IPv6 address should be <= 128, not 129"},
		{"grh.sgid == 1.2.3.4/33", 13, 10, "netmask bits in a CIDR IPv6 address should be <= 32, not 33"},
		{"ipv6.src == fe80::1%eth0", 20, 1, `"%" was unexpected in this context`},
		{`ip.src == "1.2.3.4"`, 11, 9, `IPv4 address cannot be converted from a string ("1.2.3.4")`},
		{"eth.src == 02:00:00:00:00", 12, 14, `"02:00:00:00:00" contains too few bytes to be a valid Ethernet address`},
		{"eth.src == 02:00:00:00:00:01:02", 12, 20, `"02:00:00:00:00:01:02" contains too many bytes to be a valid Ethernet address`},
		{"eth.src == zz", 12, 2, `"zz" is not a valid Ethernet address`},
		{"immdt == abc", 10, 3, `"abc" is not a valid byte string`},
		{"immdt == aa::bb", 10, 6, `"aa::bb" is not a valid byte string`},
		{"frame.time_relative > 1s", 23, 2, `"1s" is not a valid time`},
		{`frame.time_relative > "1"`, 23, 3, `time offset cannot be converted from a string ("1")`},
		{`frame.time_epoch > "yesterday"`, 20, 11, `"yesterday" is not a valid time`},
		{`frame.protocols == "a\q"`, 22, 2, `\q is not a valid character escape sequence`},
		{`frame.protocols == "a\x4"`, 22, 2, `\x is not a valid character escape sequence`},
		{`frame.protocols == "abc`, 20, 4, "the final quote was missing from a quoted string"},
		{`frame.protocols matches "("`, 25, 3, "regex compilation error: missing closing ): `(`"},
		{"ip.src == 1.2.3.4 )", 19, 1, `")" was unexpected in this context`},
		{"ip.src = 1.2.3.4", 8, 1, `"=" was unexpected in this context`},
		{"ip.ttl == 1 1", 13, 1, `"1" was unexpected in this context`},
		{"ip.ttl ==", 10, 0, "unexpected end of filter expression"},
		{"ip.ttl == 1 &&", 15, 0, "unexpected end of filter expression"},
		{"(ip.ttl == 1", 13, 0, "unexpected end of filter expression"},
		{"()", 2, 1, `")" was unexpected in this context`},
		{"&& ip.ttl", 1, 2, `"&&" was unexpected in this context`},
		{"ip.ttl in {}", 12, 1, `"}" was unexpected in this context`},
		{"ip.ttl in {1..}", 15, 1, `"}" was unexpected in this context`},
		{"ip.ttl in {1,", 14, 0, "unexpected end of filter expression"},
		{"ip.ttl in 1", 11, 1, `"1" was unexpected in this context`},
		{"bth.se in {0..1}", 13, 2, "ranges are not supported for Boolean"},
		{"bth.opcode == 1..3", 16, 2, `".." was unexpected in this context`},
		{"ip.ttl[0] == 1", 7, 1, "slices are not supported (ip.ttl[...])"},
		{`"abc" == ip.ttl`, 1, 5, `left side of "==" expression must be a field or function, not "abc"`},
		{"ip.src == ip.dst", 11, 6, "ip.dst is a field: comparing two fields is not supported (quote it to mean the text)"},
		{"frame.protocols == eth", 20, 3, "eth is a field: comparing two fields is not supported (quote it to mean the text)"},
		{"frame.protocols contains udp", 26, 3, "udp is a field: comparing two fields is not supported (quote it to mean the text)"},
		{"frame.protocols matches udp", 25, 3, "matches requires a double quoted string on the right side"},
		{"ip.ttl not in {1}", 8, 3, `"not" was unexpected in this context`},
		{"ip.ttl == 'a'", 11, 1, `"'" was unexpected in this context`},
		{"ip.ttl == and", 11, 3, `"and" was unexpected in this context`},
		{"ip.ttl | 1", 8, 1, `"|" was unexpected in this context`},
		{"ip.ttl == 1 ; ", 13, 1, `";" was unexpected in this context`},
		{"ip.ttl == 1 ∧ 2", 13, 3, `"∧" was unexpected in this context`},
	} {
		_, err := dfilter.Compile(c.expr)
		require.Error(t, err, c.expr)
		var se *dfilter.SyntaxError
		require.ErrorAs(t, err, &se, c.expr)
		assert.Equal(t, c.msg, se.Msg, c.expr)
		assert.Equal(t, c.column, se.Column, "column of %q", c.expr)
		assert.Equal(t, c.length, se.Length, "length of %q", c.expr)
		assert.Equal(t, err, dfilter.Validate(c.expr), c.expr)
	}
}

func TestErrorAndCaret(t *testing.T) {
	expr := "bth.opcode == 1 && bth.psnn == 3"
	_, err := dfilter.Compile(expr)
	require.Error(t, err)
	assert.Equal(t, `dfilter: column 20: "bth.psnn" is neither a field nor a protocol name`, err.Error())
	se := err.(*dfilter.SyntaxError)
	assert.Equal(t, expr+"\n"+strings.Repeat(" ", 19)+"^~~~~~~~", se.Caret(expr))

	// Tabs stay tabs so the marker lines up; runes count as one column.
	expr = "ip.ttl == 1\t&& \"é\" == ip.ttl"
	_, err = dfilter.Compile(expr)
	se = err.(*dfilter.SyntaxError)
	assert.Equal(t, expr+"\n           \t   ^~~", se.Caret(expr))

	// At the end of the input the marker follows the expression.
	expr = "ip.ttl =="
	_, err = dfilter.Compile(expr)
	assert.Equal(t, "ip.ttl ==\n         ^", err.(*dfilter.SyntaxError).Caret(expr))
	assert.NoError(t, dfilter.Validate("ip.ttl == 64"))
}

func TestFields(t *testing.T) {
	f := dfilter.MustCompile("bth.psn > 3 && (ip.src == 10.0.0.1 || bth.psn & 1) && !ibwire.payload")
	var names []string
	for _, fd := range f.Fields() {
		names = append(names, fd.Name)
	}
	assert.Equal(t, []string{"infiniband.bth.psn", "ip.src", "ibwire.payload"}, names)
	assert.Empty(t, dfilter.MustCompile("").Fields())
	var nilFilter *dfilter.Filter
	assert.True(t, nilFilter.Match(&decode.Packet{}))
	assert.Equal(t, "", nilFilter.String())
	assert.Panics(t, func() { dfilter.MustCompile("bth.psnn") })
}

func TestClone(t *testing.T) {
	frames := readPcap(t, vectors+"scapy-rocev2.pcap")
	f := dfilter.MustCompile("bth.opcode == 17")
	g := f.Clone()
	assert.Equal(t, f.String(), g.String())
	assert.Equal(t, matching(t, f, frames), matching(t, g, frames))
}

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		prefix string
		start  int
		want   []string // exactly these, or
		has    []string // at least these
		hasNot []string
	}{
		{prefix: "bth.p", start: 0, want: []string{"bth.p_key", "bth.padcnt", "bth.psn"}},
		{prefix: "infiniband.bth.ps", start: 0, want: []string{"infiniband.bth.psn"}},
		{prefix: "ip.s", start: 0, want: []string{"ip.src"}},
		{prefix: "IP.S", start: 0, want: []string{"ip.src"}},
		{prefix: "in", start: 0, has: []string{"infiniband", "infiniband.bth.psn"}},
		{prefix: "ip.ttl == 1 && !aeth.syn", start: 16, has: []string{"aeth.syndrome", "aeth.syndrome.opcode", "aeth.syndrome.timer"}},
		{prefix: "(bth.opc", start: 1, want: []string{"bth.opcode"}},
		{prefix: "bth.opcode == RC_SEND_O", start: 14, want: []string{"RC_SEND_ONLY", "RC_SEND_ONLY_WITH_IMMEDIATE", "RC_SEND_ONLY_WITH_INVALIDATE"}},
		{prefix: "bth.opcode == rc_rdma_write_o", start: 14, want: []string{"RC_RDMA_WRITE_ONLY", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE"}},
		{prefix: `bth.opcode == "Reliable Connection (RC) - SEND O`, start: 14, want: []string{
			`"Reliable Connection (RC) - SEND Only with Immediate"`, `"Reliable Connection (RC) - SEND Only with Invalidate"`,
			`"Reliable Connection (RC) - SEND Only"`}},
		{prefix: "bth.opcode in {4 RC_RDMA_READ_RE", start: 17, want: []string{"RC_RDMA_READ_REQUEST", "RC_RDMA_READ_RESPONSE_FIRST",
			"RC_RDMA_READ_RESPONSE_LAST", "RC_RDMA_READ_RESPONSE_MIDDLE", "RC_RDMA_READ_RESPONSE_ONLY"}},
		{prefix: "bth.opcode in {4, RC_SEND_LAST..RC_SEND_ONLY_WITH_I", start: 32, want: []string{"RC_SEND_ONLY_WITH_IMMEDIATE", "RC_SEND_ONLY_WITH_INVALIDATE"}},
		{prefix: "aeth.syndrome.error_code == ", start: 28, has: []string{"psn_seq_err", `"PSN Sequence Error"`, "remote_access_err"}},
		{prefix: "aeth.syndrome.opcode != N", start: 24, want: []string{"NAK"}},
		{prefix: "ip.dsfield.ecn==E", start: 16, want: []string{`"ECT(0)"`, `"ECT(1)"`}},
		{prefix: "ip.ttl ", start: 7, want: []string{"!=", "&", "<", "<=", "==", ">", ">=", "in"}},
		{prefix: "frame.protocols con", start: 16, want: []string{"contains"}},
		{prefix: "bth.psn & 0xff == ", start: 18, want: nil}, // no names for PSNs
		{prefix: "bth.opcode == 4 ", start: 16, want: nil},
		{prefix: "bth.opcode == 4 && ", start: 19, has: []string{"infiniband.bth.opcode", "ip.src"}, hasNot: []string{"bth.opcode"}},
		{prefix: "ip.ttl == 1 | ", start: -1, want: nil},
	} {
		assert.Equal(t, c.start, dfilter.TokenStart(c.prefix), "start of %q", c.prefix)
		got := dfilter.Complete(c.prefix)
		if c.has == nil {
			assert.Equal(t, c.want, got, c.prefix)
		}
		for _, h := range c.has {
			assert.Contains(t, got, h, c.prefix)
		}
		for _, h := range c.hasNot {
			assert.NotContains(t, got, h, c.prefix)
		}
		if c.start >= 0 {
			// A suggestion in place of the token being typed must compile
			// or at least extend what was typed.
			for _, s := range got {
				typed := strings.ToLower(strings.TrimPrefix(c.prefix[c.start:], `"`))
				assert.True(t, strings.HasPrefix(strings.ToLower(strings.TrimPrefix(s, `"`)), typed), "%q extends %q", s, typed)
			}
		}
	}
	// Completing a value gives a filter that compiles.
	p := "bth.opcode == RC_RDMA_WRITE_O"
	for _, s := range dfilter.Complete(p) {
		assert.NoError(t, dfilter.Validate(p[:dfilter.TokenStart(p)]+s))
	}
}
