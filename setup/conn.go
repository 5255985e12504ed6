package setup

import (
	"errors"
	"fmt"
	"io"
	"net"
)

// Every message has a fixed size that the C code reads with a single
// read() (ENDPOINT.md §2).

// DefaultPort is the TCP port of ibv_*_pingpong's and perftest's set-up
// exchange.
const DefaultPort = 18515

// errSyntax is the class of every malformed set-up message.
var errSyntax = errors.New("malformed set-up message")

// SyntaxError says where a set-up message stops making sense.
type SyntaxError struct {
	Message string // which message: "pingpong", "perftest", …
	Field   string // the field being parsed
	Offset  int    // byte offset into the message
	Reason  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s set-up message: %s at byte %d: %s", e.Message, e.Field, e.Offset, e.Reason)
}

// Unwrap lets errors.Is match every syntax error as one class.
func (e *SyntaxError) Unwrap() error { return errSyntax }

// scanHex reads one unsigned hexadecimal number as C's sscanf("%x") does:
// optional white space, an optional sign, an optional 0x/0X prefix and at
// most maxDigits digits (0 = no limit, as %x without a width). It returns
// the value and the rest of s.
func scanHex(s []byte, maxDigits int) (v uint64, rest []byte, ok bool) {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
		if maxDigits > 0 {
			maxDigits-- // the sign counts against the width
		}
	}
	if len(s) >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHexDigit(s[2]) && (maxDigits == 0 || maxDigits > 2) {
		s = s[2:]
		if maxDigits > 0 {
			maxDigits -= 2
		}
	}
	n := 0
	for n < len(s) && isHexDigit(s[n]) && (maxDigits == 0 || n < maxDigits) {
		if v > (1<<64-1)>>4 {
			return 0, s, false // more than 64 bits: not a value we accept
		}
		v = v<<4 | uint64(hexVal(s[n]))
		n++
	}
	if n == 0 {
		return 0, s, false
	}
	if neg {
		v = -v
	}
	return v, s[n:], true
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// conn does the fixed-size reads and writes of a set-up exchange. It
// sets no deadlines: the C tools wait forever, and the caller bounds the
// exchange with conn.SetDeadline or by closing conn.
type msgConn struct {
	conn    net.Conn
	message string
}

func (c msgConn) write(step string, b []byte) error {
	if _, err := c.conn.Write(b); err != nil {
		return fmt.Errorf("%s set-up: sending %s: %w", c.message, step, err)
	}
	return nil
}

func (c msgConn) read(step string, b []byte) error {
	if n, err := io.ReadFull(c.conn, b); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%s set-up: receiving %s: peer closed after %d of %d bytes: %w", c.message, step, n, len(b), io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("%s set-up: receiving %s: %w", c.message, step, err)
	}
	return nil
}

// exchange is one symmetric step: the client writes then reads, the server
// reads then writes.
func (c msgConn) exchange(server bool, step string, out, in []byte) error {
	if server {
		if err := c.read(step, in); err != nil {
			return err
		}
		return c.write(step, out)
	}
	if err := c.write(step, out); err != nil {
		return err
	}
	return c.read(step, in)
}
