package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
)

// TestWirePeerSkipsDroppedSlots: an oversize datagram from the peer's
// address, which the wire marks and leaves empty, is no response.
func TestWirePeerSkipsDroppedSlots(t *testing.T) {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	p := NewWirePeer(wa, wb.LocalAddr())
	defer p.Close()
	good := make([]byte, 12+4)
	good[0] = 0x11
	wa.InjectRaw(wb.LocalAddr(), make([]byte, endpoint.MaxDatagram+1))
	wa.Inject(wb.LocalAddr(), good)
	buf := make([]byte, endpoint.MaxDatagram)
	n, err := p.Receive(buf, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, len(good), n, "the first response is the real one")
}
