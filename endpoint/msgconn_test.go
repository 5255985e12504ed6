package endpoint_test

import (
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/setup"
)

// The struct pingpong_dest ib_write_bw -R (perftest 6.06 on rxe) sent in
// its set-up exchange (an rxe<->rxe interop capture, client 192.168.77.11).
const rxePerftestDest = "00000000 00000001 00000012 00512f6e 000003a1 00000000 00007f6e2135e000" +
	" 00000000000000000000ffffc0a84d0b 00000000 00000001"

func TestPerftestDestBinary(t *testing.T) {
	b, err := hex.DecodeString(strings.ReplaceAll(rxePerftestDest, " ", ""))
	require.NoError(t, err)
	require.Len(t, b, setup.PerftestDestBinarySize)
	d, err := setup.ParsePerftestDestBinary(b)
	require.NoError(t, err)
	want := setup.PerftestDest{OutReads: 1, QPN: 0x12, PSN: 0x512f6e, RKey: 0x3a1, VAddr: 0x7f6e2135e000,
		GID: endpoint.GIDOf(netip.MustParseAddr("192.168.77.11"))}
	assert.Equal(t, want, d)
	assert.Equal(t, b, d.MarshalBinary(), "perftest's own bytes, padding and gid_index included")
	_, err = setup.ParsePerftestDestBinary(b[:55])
	require.Error(t, err)
}
