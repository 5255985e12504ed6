package layers

import "fmt"

// IsPathMTU reports whether a size in bytes is an IB MTU, as PathMTUOf
// does: the IB MTUs are the powers of two from 256 to 4096, so the test is
// arithmetic, small enough for a per-packet check to inline.
func IsPathMTU(bytes int) bool {
	const lo, hi = 256, 4096 // MTU256.Bytes(), MTU4096.Bytes()
	return uint(bytes-lo) <= hi-lo && bytes&(bytes-1) == 0
}

// PathMTUOf returns the code of an IB MTU given in bytes (256, 512, 1024,
// 2048 or 4096); false for any other size.
func PathMTUOf(bytes int) (PathMTU, bool) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == bytes {
			return m, true
		}
	}
	return 0, false
}

// ParsePathMTU is PathMTUOf for a size a user or a peer gave: it says what
// it wants when the size is not an IB MTU.
func ParsePathMTU(bytes int) (PathMTU, error) {
	if m, ok := PathMTUOf(bytes); ok {
		return m, nil
	}
	return 0, fmt.Errorf("MTU %d: want 256, 512, 1024, 2048 or 4096", bytes)
}

// rxeMaxHeaderLength is what Linux rxe reserves below the netdev MTU for the
// headers around an IB payload (RXE_MAX_HDR_LENGTH in rxe_param.h).
const rxeMaxHeaderLength = 80

// RXEPortMTU is the active MTU Linux rxe gives a port on a netdev of the
// given MTU (eth_mtu_int_to_enum): the largest IB MTU not above the netdev
// MTU less rxeMaxHeaderLength. A netdev MTU of 1500 gives 1024, 2100 gives
// 1024 too (2020 usable), 4200 gives 4096. False when not even 256 bytes
// fit, where the kernel has no valid MTU.
func RXEPortMTU(netdevMTU int) (PathMTU, bool) {
	usable := netdevMTU - rxeMaxHeaderLength
	if usable < MTU256.Bytes() {
		return 0, false
	}
	m := MTU4096
	for m.Bytes() > usable {
		m--
	}
	return m, true
}
