package tui

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSLL2Capture opens a capture of tcpdump -i any (Linux cooked capture
// v2): ibtui decodes it as ibdump does. Its frames all showed as "Unknown"
// while the cooked-capture layers had to be handed to the decoder by each
// command and cmd/ibtui did not.
func TestSLL2Capture(t *testing.T) {
	h := start(t, "../../testdata/sll2-tcpdump-any.pcap", "", 120, 40)
	screen := h.waitFor("Frame 1:", "ConnectRequest", "RC RDMA Write Only")
	assert.NotContains(t, screen, "Unknown")
	golden(t, "sll2", screen)
}
