package replay_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/replay"
	"github.com/ibwire/ibwire/setup"
)

// TestCMSetupNobody: with nobody answering the REQ, CMSetup gives up within
// its Limit and says with whom and how long it tried.
func TestCMSetupNobody(t *testing.T) {
	defer goleak.VerifyNone(t)
	w, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.81.10.1:4791"))
	require.NoError(t, err)
	split := replay.NewSplitWire(w)
	peer := replay.NewWirePeer(split.Diverted(), netip.MustParseAddrPort("127.81.10.2:4791"))
	dev := endpoint.NewDevice(split.Rest())
	s := &replay.CMSetup{Server: netip.MustParseAddr("127.81.10.2"), Port: setup.DefaultPort, MTUs: replay.MTURange{Min: 1024, Max: 1024},
		Split: split, Dev: dev, Limit: 300 * time.Millisecond}
	start := time.Now()
	_, err = s.Exchange(context.Background(), replay.Dest{})
	require.Error(t, err)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Contains(t, err.Error(), "perftest -R set-up with 127.81.10.2 port 18515 not done within 300ms")
	require.NoError(t, s.Close())
	require.NoError(t, peer.Close())
	require.NoError(t, dev.Close())
}
