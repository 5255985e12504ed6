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
// × 64 registrations (and re-registrations of the same buffer) the keys of
// a device's live regions are distinct and non-zero (the device promises
// that), consecutive keys are hardly ever within 256 of each other, the
// keys use all 32 bits, and two devices do not start alike. A sequential
// or per-device-offset allocator fails each of these; random keys fail
// none but by a chance below 1e-9.
func TestMRKeysUnpredictable(t *testing.T) {
	const devices, regs = 4, 64
	var or, and uint32 = 0, ^uint32(0)
	var firsts []uint32
	near := 0 // consecutive keys within 256: 2^-23 per pair by chance
	for d := range devices {
		wa, _ := wiretest.NewPair(wiretest.Config{})
		dev := endpoint.NewDevice(wa)
		pd := dev.AllocPD()
		buf := make([]byte, 64)
		live := map[uint32]bool{}
		var prev uint32
		for i := range regs {
			mr, err := pd.RegMR(buf, endpoint.AccessLocalWrite|endpoint.AccessRemoteWrite)
			require.NoError(t, err)
			for _, k := range []uint32{mr.LKey(), mr.RKey()} {
				require.NotZero(t, k)
				require.NotContains(t, live, k, "key %#x of device %d registration %d", k, d, i)
				live[k] = true
				or, and = or|k, and&k
				if diff := k - prev; prev != 0 && (diff <= 1<<8 || -diff <= 1<<8) {
					near++
				}
				prev = k
			}
			if i == 0 {
				firsts = append(firsts, mr.RKey())
			}
			if i%2 == 1 {
				delete(live, mr.LKey())
				delete(live, mr.RKey())
				require.NoError(t, mr.Dereg()) // a fresh pair of keys for the next registration
			}
		}
		require.NoError(t, dev.Close())
	}
	require.Less(t, near, 3, "consecutive keys follow each other closely")
	require.Equal(t, 32, bits.OnesCount32(or), "some key bit is always 0: %032b", or)
	require.Zero(t, and, "some key bit is always 1: %032b", and)
	for i := 1; i < len(firsts); i++ {
		require.NotEqual(t, firsts[0], firsts[i], "device %d starts with device 0's R_Key", i)
	}
}
