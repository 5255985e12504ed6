package output

import (
	"math"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The renderers' number formatting against strconv's and netip's, which
// they replace on the hot paths.
func TestAppendNumbers(t *testing.T) {
	for _, u := range []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 4791, 49152, 65535, 1<<24 - 1,
		1<<32 - 1, 1704067200, 1e15, 1e19 - 1, 1e19, math.MaxUint64} {
		assert.Equal(t, strconv.FormatUint(u, 10), string(appendDec(nil, u)), "dec %d", u)
		assert.Equal(t, strconv.FormatUint(u, 16), string(appendHexTrim(nil, u)), "hex %d", u)
		assert.Equal(t, strconv.FormatInt(int64(u), 10), string(appendInt([]byte{}, int64(u))), "int %d", u)
		for _, n := range []int{1, 2, 3, 6, 9} {
			want := strconv.FormatUint(u%uint64(math.Pow10(n))+uint64(math.Pow10(n)), 10)[1:]
			assert.Equal(t, want, string(appendDigits([]byte("x"), u, n))[1:], "%d digits of %d", n, u)
		}
	}
	assert.Equal(t, "-42", string(appendInt(nil, -42)))
	assert.Equal(t, "0x0001f", string(appendHex(nil, 0x1f, 5)))
	assert.Equal(t, "0xffffffffffffffff", string(appendHex(nil, math.MaxUint64, 16)))
	assert.Equal(t, "  -42", string(appendIntLeft(nil, -42, 5)))
	assert.Equal(t, "123456", string(appendIntLeft(nil, 123456, 5)))
}

func TestAppendIPv4(t *testing.T) {
	for _, ip := range [][4]byte{{0, 0, 0, 0}, {10, 0, 0, 1}, {192, 168, 100, 255}, {1, 22, 99, 100}, {255, 255, 255, 255}} {
		assert.Equal(t, netip.AddrFrom4(ip).String(), string(appendIPv4(nil, ip)))
	}
	for i := range 256 {
		b := byte(i)
		ip := [4]byte{b, b ^ 0x55, 255 - b, b / 3}
		assert.Equal(t, netip.AddrFrom4(ip).String(), string(appendIPv4([]byte{}, ip)))
	}
}
