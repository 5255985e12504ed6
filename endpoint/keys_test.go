package endpoint_test

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
)

// TestMRKeysUnpredictable: L_Keys and R_Keys are random per device, so a
// peer cannot guess another region's R_Key from its own: across 4 devices
// × 64 registrations (and re-registrations of the same buffer) every key is
// distinct and non-zero, consecutive keys are more than 256 apart, the
// keys use all 32 bits, and two devices do not repeat each other's
// sequence. A sequential or per-device-offset allocator fails each of
// these.
func TestMRKeysUnpredictable(t *testing.T) {
	const devices, regs = 4, 64
	seen := map[uint32]bool{}
	var or, and uint32 = 0, ^uint32(0)
	var firsts []uint32
	for d := range devices {
		wa, _ := wiretest.NewPair(wiretest.Config{})
		dev := endpoint.NewDevice(wa)
		pd := dev.AllocPD()
		buf := make([]byte, 64)
		var prev uint32
		for i := range regs {
			mr, err := pd.RegMR(buf, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
			require.NoError(t, err)
			for _, k := range []uint32{mr.LKey(), mr.RKey()} {
				require.NotZero(t, k)
				require.NotContains(t, seen, k, "key %#x of device %d registration %d", k, d, i)
				seen[k] = true
				or, and = or|k, and&k
				if prev != 0 {
					diff := k - prev
					// 1 in 8 million per pair by chance; a
					// sequential or index<<8 allocator always.
					require.False(t, diff <= 1<<8 || -diff <= 1<<8, "key %#x follows %#x closely", k, prev)
				}
				prev = k
			}
			if i == 0 {
				firsts = append(firsts, mr.RKey())
			}
			if i%2 == 1 {
				require.NoError(t, mr.Dereg()) // keys are not reused after Dereg either
			}
		}
		require.NoError(t, dev.Close())
	}
	require.Len(t, seen, devices*regs*2)
	require.Equal(t, 32, bits.OnesCount32(or), "some key bit is always 0: %032b", or)
	require.Zero(t, and, "some key bit is always 1: %032b", and)
	for i := 1; i < len(firsts); i++ {
		require.NotEqual(t, firsts[0], firsts[i], "device %d starts with device 0's R_Key", i)
	}
}
