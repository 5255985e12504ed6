package setup

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegionMessage(t *testing.T) {
	r := ServeRegion{RKey: 0xdeadbeef, VA: 0x7f0012345000, Size: 4 << 20, MTU: 1024, RecvLen: 1 << 18, RecvCount: 16}
	b := r.Marshal()
	require.Len(t, b, ServeRegionSize)
	assert.Equal(t, "deadbeef:00007f0012345000:0000000000400000:0400:00040000:0010\x00", string(b))
	got, err := ParseServeRegion(b)
	require.NoError(t, err)
	assert.Equal(t, r, got)

	bad := []struct {
		name, msg, err string
	}{
		{"empty", "", "want 6 fields"},
		{"fields", "deadbeef:00007f0012345000:0000000000400000:0400:00040000", "want 6 fields"},
		{"width", "deadbee:00007f0012345000:0000000000400000:0400:00040000:0010", "rkey \"deadbee\": want 8"},
		{"not hex", "deadbeeg:00007f0012345000:0000000000400000:0400:00040000:0010", "not hexadecimal"},
		{"mtu", "deadbeef:00007f0012345000:0000000000400000:0300:00040000:0010", "MTU 768"},
		{"no room", "deadbeef:00007f0012345000:0000000000400000:0400:00080000:0010", "do not fit"},
		{"no buffers", "deadbeef:00007f0012345000:0000000000400000:0400:00040000:0000", "do not fit"},
		{"zero size", "deadbeef:00007f0012345000:0000000000000000:0400:00000000:0001", "do not fit"},
		{"garbage", "\xff\xfe:::::", "want 8 hexadecimal"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseServeRegion(append([]byte(tt.msg), 0))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

// ReadRegion: the message after the pingpong exchange, nothing from a
// plain ibv_rc_pingpong server (it hangs up), an error for a cut one.
func TestReadRegion(t *testing.T) {
	r := ServeRegion{RKey: 1, VA: 0x1000, Size: 1 << 20, MTU: 4096, RecvLen: 1 << 16, RecvCount: 16}
	got, ok, err := ReadServeRegion(bytes.NewReader(r.Marshal()))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, r, got)
	_, ok, err = ReadServeRegion(bytes.NewReader(nil))
	require.NoError(t, err)
	assert.False(t, ok, "no region from a peer that hung up")
	_, _, err = ReadServeRegion(bytes.NewReader(r.Marshal()[:30]))
	assert.ErrorContains(t, err, "reading ibpeer serve's region message")
}
