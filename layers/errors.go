package layers

import (
	"errors"
	"fmt"
)

// Error classes. Compare with errors.Is; the *DecodeError around them says where.
var (
	// ErrTruncated means the input ended before a field that the header needs.
	ErrTruncated = errors.New("truncated")
	// ErrMalformed means a field holds a value that makes the header impossible
	// to decode (a length shorter than the header, a pad count larger than the payload).
	ErrMalformed = errors.New("malformed")
)

// DecodeError says which layer and field could not be decoded, and where.
// Offset counts bytes from the start of the layer's input, so a caller that
// knows where the layer starts in the frame can point at the byte.
type DecodeError struct {
	Layer  string // layer name as registered, e.g. "BTH"
	Field  string // IBTA field name, e.g. "PSN"
	Offset int    // byte offset of the field within the layer's input
	// FrameOffset is the field's byte offset in the whole frame, set by
	// Parser (0 when the layer was decoded on its own).
	FrameOffset int
	Need        int    // bytes the field needs from Offset (0 when not a length problem)
	Have        int    // bytes available from Offset
	Err         error  // ErrTruncated or ErrMalformed
	Detail      string // optional explanation, e.g. "PadCnt 3 exceeds payload of 2 bytes"
}

func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("%s.%s: %v at byte %d of the %s", e.Layer, e.Field, e.Err, e.Offset, e.Layer)
	if e.FrameOffset > 0 {
		msg += fmt.Sprintf(" (frame byte %d)", e.FrameOffset)
	}
	if e.Need > 0 {
		msg += fmt.Sprintf(" (need %d bytes, have %d)", e.Need, e.Have)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the error class (ErrTruncated or ErrMalformed).
func (e *DecodeError) Unwrap() error { return e.Err }

// FieldSpan names the bytes [Offset, Offset+Size) of a header. Each header keeps
// an ordered list of them so a short input can be reported by the first field
// that does not fit, rather than by a generic "too short".
type FieldSpan struct {
	Name   string
	Offset int
	Size   int
}

// checkLength returns a truncation error naming the first field of spans that
// does not fit into have bytes, or nil when all fit.
func checkLength(layer string, spans []FieldSpan, have int) error {
	for _, f := range spans {
		if f.Offset+f.Size > have {
			return &DecodeError{Layer: layer, Field: f.Name, Offset: f.Offset, Need: f.Size, Have: max(have-f.Offset, 0), Err: ErrTruncated}
		}
	}
	return nil
}

func malformed(layer, field string, offset int, format string, args ...any) error {
	return &DecodeError{Layer: layer, Field: field, Offset: offset, Err: ErrMalformed, Detail: fmt.Sprintf(format, args...)}
}
