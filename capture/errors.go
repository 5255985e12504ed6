package capture

import (
	"errors"
	"fmt"
)

// Sentinel errors. A FileError wraps one of the first four, so callers
// test the class with errors.Is and still print the details.
var (
	// ErrBadMagic means the stream starts with neither a pcap, a pcapng
	// nor a gzip magic number, or a pcapng section has a bad byte-order
	// magic.
	ErrBadMagic = errors.New("bad magic")
	// ErrTruncated means the stream ended inside a header, record or block.
	ErrTruncated = errors.New("truncated")
	// ErrCaplen means a record claims more than MaxCaplen bytes; no sane
	// writer produces it, so the file is taken to be damaged rather than
	// trusted with a large allocation.
	ErrCaplen = errors.New("capture length out of range")
	// ErrBadBlock means a pcapng block is malformed: a bad length, data
	// overrunning its block, or a packet naming an undeclared interface.
	ErrBadBlock = errors.New("bad pcapng block")
	// ErrLinkType means a packet's link type cannot be written: a pcap file
	// holds one link type, a pcapng interface holds a 16-bit one.
	ErrLinkType = errors.New("link type not writable")
)

// FileError reports a damaged capture file. Every packet before the damage
// has been returned when it is reported.
type FileError struct {
	File   string // the file name given to Open, or the name given to NewReader
	Packet int    // the 1-based number of the packet being read; 0 while reading the file header
	Offset int64  // byte offset of the damaged header, record or block (in the decompressed stream for gzip)
	Err    error  // the cause: a sentinel error for malformed files, else the I/O or gzip error
}

// Error reads like "capture: f.pcap: packet 12 at byte 4096: truncated
// record (wanted 1078 bytes, got 300)".
func (e *FileError) Error() string {
	if e.Packet == 0 {
		return fmt.Sprintf("capture: %s: at byte %d: %v", e.File, e.Offset, e.Err)
	}
	return fmt.Sprintf("capture: %s: packet %d at byte %d: %v", e.File, e.Packet, e.Offset, e.Err)
}

// Unwrap returns the cause, so errors.Is sees the sentinel.
func (e *FileError) Unwrap() error { return e.Err }
