package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/layers"
)

// ServeRegionSize is the size of ibpeer serve's region message: 61
// characters and a NUL.
const ServeRegionSize = 62

// ServeRegion is the message ibpeer serve sends after ibv_rc_pingpong's
// exchange: what a client needs to reach the connection's memory. A plain
// ibv_rc_pingpong server sends nothing more and hangs up.
type ServeRegion struct {
	RKey      uint32
	VA        uint64
	Size      uint64
	MTU       int    // path MTU in bytes
	RecvLen   uint32 // bytes per receive buffer
	RecvCount int    // receive buffers, posted in order at offsets k·RecvLen
}

// Marshal returns the message, NUL included.
func (r ServeRegion) Marshal() []byte {
	b := fmt.Appendf(make([]byte, 0, ServeRegionSize), "%08x:%016x:%016x:%04x:%08x:%04x", r.RKey, r.VA, r.Size, r.MTU, r.RecvLen, r.RecvCount)
	return append(b, 0)
}

// ParseServeRegion parses a region message strictly: six hexadecimal fields of
// the widths above, values that make sense together.
func ParseServeRegion(b []byte) (ServeRegion, error) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	f := strings.Split(string(b), ":")
	widths := []int{8, 16, 16, 4, 8, 4}
	names := []string{"rkey", "VA", "size", "MTU", "receive length", "receive count"}
	if len(f) != len(widths) {
		return ServeRegion{}, fmt.Errorf("region message %q: want 6 fields separated by ':', have %d", clip(b), len(f))
	}
	v := make([]uint64, len(f))
	for i, s := range f {
		if len(s) != widths[i] {
			return ServeRegion{}, fmt.Errorf("region message: %s %q: want %d hexadecimal digits", names[i], s, widths[i])
		}
		n, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			return ServeRegion{}, fmt.Errorf("region message: %s %q: not hexadecimal", names[i], s)
		}
		v[i] = n
	}
	r := ServeRegion{RKey: uint32(v[0]), VA: v[1], Size: v[2], MTU: int(v[3]), RecvLen: uint32(v[4]), RecvCount: int(v[5])}
	if _, err := layers.ParsePathMTU(r.MTU); err != nil {
		return ServeRegion{}, fmt.Errorf("region message: %w", err)
	}
	if r.Size == 0 || r.RecvCount == 0 || uint64(r.RecvLen)*uint64(r.RecvCount) > r.Size {
		return ServeRegion{}, fmt.Errorf("region message: %d receive buffers of %d bytes do not fit a region of %d bytes", r.RecvCount, r.RecvLen, r.Size)
	}
	return r, nil
}

// ReadServeRegion reads the region message ibpeer serve sends after
// ibv_rc_pingpong's exchange. A plain ibv_rc_pingpong server hangs up
// instead: ok is false then, and the peer has no region to offer.
func ReadServeRegion(conn io.Reader) (reg ServeRegion, ok bool, err error) {
	var msg [ServeRegionSize]byte
	switch _, err := io.ReadFull(conn, msg[:]); {
	case errors.Is(err, io.EOF):
		return ServeRegion{}, false, nil
	case err != nil:
		return ServeRegion{}, false, fmt.Errorf("pingpong set-up: reading ibpeer serve's region message: %w", err)
	}
	if reg, err = ParseServeRegion(msg[:]); err != nil {
		return ServeRegion{}, false, fmt.Errorf("pingpong set-up: %w", err)
	}
	return reg, true, nil
}
