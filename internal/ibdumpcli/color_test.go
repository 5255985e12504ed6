package ibdumpcli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ibwire/ibwire/decode"
)

// An analysis finding colours ibdump's line as it colours ibtui's row.
func TestColorizeBySeverity(t *testing.T) {
	tests := []struct {
		sev  decode.Severity
		want string
	}{
		{decode.SevNone, "line"},
		{decode.SevNote, "line"},
		{decode.SevWarn, ansiYellow + "line" + ansiReset},
		{decode.SevError, ansiRed + "line" + ansiReset},
	}
	for _, tc := range tests {
		t.Run(tc.sev.String(), func(t *testing.T) {
			p := &decode.Packet{}
			p.Analysis.Severity = tc.sev
			assert.Equal(t, "> "+tc.want, string(colorize([]byte("> line"), 2, p)))
		})
	}
}
