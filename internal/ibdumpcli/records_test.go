package ibdumpcli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFrames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []recordRef
		err  string
	}{
		{"a.pcap:159@143152", []recordRef{{"a.pcap", 159, 143152}}, ""},
		{"a.pcap:1@24,b.pcapng:7@1000", []recordRef{{"a.pcap", 1, 24}, {"b.pcapng", 7, 1000}}, ""},
		{"c:/x:y.pcap:3@24", []recordRef{{"c:/x:y.pcap", 3, 24}}, ""}, // colons in the name: the last one counts
		{"a.pcap@24,a.pcap@99", []recordRef{{"a.pcap", 1, 24}, {"a.pcap", 2, 99}}, ""},
		{"a.pcap:3", nil, "want FILE:FRAME@OFFSET"},
		{"a.pcap:3@-1", nil, "is not a byte offset"},
		{"a.pcap:3@x", nil, "is not a byte offset"},
		{":3@24", nil, "no file"},
	} {
		got, err := parseFrames(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

// FuzzParseFrames: --frames never panics, and what it accepts prints back
// as FILE:FRAME@OFFSET and parses to the same records.
func FuzzParseFrames(f *testing.F) {
	for _, s := range []string{"a.pcap:159@143152", "a@1,b:2@3", "x:y:z@4", ":1@2", "a.pcap:0@5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := parseFrames(s)
		if err != nil {
			return
		}
		var parts []string
		for _, r := range refs {
			require.NotEmpty(t, r.file)
			require.GreaterOrEqual(t, r.offset, int64(0))
			require.Positive(t, r.frame)
			parts = append(parts, fmt.Sprintf("%s:%d@%d", r.file, r.frame, r.offset))
		}
		again, err := parseFrames(strings.Join(parts, ","))
		require.NoError(t, err)
		require.Equal(t, refs, again)
	})
}
