package setup

import (
	"fmt"
	"net"

	"github.com/ibwire/ibwire/layers"
)

// PingpongDestSize is the size of ibv_rc_pingpong's, ibv_uc_pingpong's and
// ibv_ud_pingpong's set-up message: 51 characters and a NUL.
const PingpongDestSize = 52

// pingpongDone is what the client sends last: "done" and its NUL.
const pingpongDone = "done\x00"

// PingpongDest is the set-up message of the rdma-core pingpong examples
// (ENDPOINT.md §2.1): the sender's LID, QP number, first PSN and GID, sent
// as "LLLL:QQQQQQ:PPPPPP:GGGG…" — 4, 6 and 6 hex digits and the 16 GID bytes
// as 32 hex digits in network order — padded with a NUL to 52 bytes. The
// GID is the RoCEv2 one, the IP address as 16 bytes (IPv4 as ::ffff:a.b.c.d,
// netip.Addr.As16); a [16]byte is assignable to and from a GID type.
type PingpongDest struct {
	LID uint16 // 0 on RoCE
	QPN uint32 // 24 bits
	PSN layers.PSN
	GID [16]byte
}

// Marshal returns the 52-byte message, byte for byte what the C examples
// send (QPN and PSN are cut to their 24 bits).
func (d PingpongDest) Marshal() []byte {
	b := make([]byte, 0, PingpongDestSize)
	b = fmt.Appendf(b, "%04x:%06x:%06x:%x", d.LID, d.QPN&0xFFFFFF, uint32(d.PSN&layers.PSNMask), d.GID[:])
	return append(b, 0)
}

// String returns the message without its NUL.
func (d PingpongDest) String() string {
	b := d.Marshal()
	return string(b[:len(b)-1])
}

// ParsePingpongDest parses a message the way the C examples do with
// sscanf("%x:%x:%x:%s") followed by wire_gid_to_gid: numbers may carry
// leading white space, a 0x prefix and any number of digits in either case,
// the GID is the first 32 characters of the next white-space-free word,
// read as four 8-digit words, and anything after it (up to the NUL) is
// ignored. Values too large for their field, missing separators and GIDs
// that are short or not hexadecimal are errors (the C code would go on with
// garbage).
func ParsePingpongDest(msg []byte) (PingpongDest, error) {
	for i, c := range msg {
		if c == 0 {
			msg = msg[:i]
			break
		}
	}
	var d PingpongDest
	rest := msg
	off := func() int { return len(msg) - len(rest) }
	fail := func(field, reason string, args ...any) (PingpongDest, error) {
		return PingpongDest{}, &SyntaxError{Message: "pingpong", Field: field, Offset: off(), Reason: fmt.Sprintf(reason, args...)}
	}
	fields := []struct {
		name string
		max  uint64
		set  func(uint64)
	}{
		{"LID", 0xFFFF, func(v uint64) { d.LID = uint16(v) }},
		{"QPN", 0xFFFFFF, func(v uint64) { d.QPN = uint32(v) }},
		{"PSN", 0xFFFFFF, func(v uint64) { d.PSN = layers.PSN(v) }},
	}
	for _, f := range fields {
		v, r, ok := scanHex(rest, 0)
		if !ok {
			return fail(f.name, "want a hexadecimal number, have %q", clip(rest))
		}
		if v > f.max {
			return fail(f.name, "%#x is larger than %#x", v, f.max)
		}
		rest = r
		f.set(v)
		if len(rest) == 0 || rest[0] != ':' {
			return fail(f.name, "want ':' after it, have %q", clip(rest))
		}
		rest = rest[1:]
	}
	for len(rest) > 0 && isSpace(rest[0]) {
		rest = rest[1:]
	}
	word := rest
	for i, c := range word {
		if isSpace(c) {
			word = word[:i]
			break
		}
	}
	if len(word) < 32 {
		return fail("GID", "want 32 hexadecimal digits, have %d characters %q", len(word), clip(word))
	}
	for i := range 32 {
		if !isHexDigit(word[i]) {
			rest = rest[i:]
			return fail("GID", "%q is not a hexadecimal digit", word[i])
		}
		nibble := hexVal(word[i])
		if i%2 == 0 {
			d.GID[i/2] = nibble << 4
		} else {
			d.GID[i/2] |= nibble
		}
	}
	return d, nil
}

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// clip shortens what an error message quotes.
func clip(b []byte) []byte {
	if len(b) > 24 {
		return b[:24]
	}
	return b
}

// PingpongClient runs the client's side of the exchange on conn: it sends
// local, reads the server's message, and sends "done". The server has
// moved its QP to RTR/RTS before answering, so the caller moves its own QP
// and may send at once.
func PingpongClient(conn net.Conn, local PingpongDest) (PingpongDest, error) {
	c := msgConn{conn: conn, message: "pingpong"}
	if err := c.write("local address", local.Marshal()); err != nil {
		return PingpongDest{}, err
	}
	var msg [PingpongDestSize]byte
	if err := c.read("remote address", msg[:]); err != nil {
		return PingpongDest{}, err
	}
	remote, err := ParsePingpongDest(msg[:])
	if err != nil {
		return PingpongDest{}, err
	}
	return remote, c.write("done", []byte(pingpongDone))
}

// PingpongServer runs the server's side on an accepted conn: it reads the
// client's message, calls ready with it — the caller moves its QP to
// RTR/RTS there, because the client starts sending as soon as it has the
// answer — then sends local and waits for the client's 5-byte "done" (whose
// content the C server does not check either). When ready fails nothing is
// sent, as the C server closes the connection.
func PingpongServer(conn net.Conn, local PingpongDest, ready func(remote PingpongDest) error) (PingpongDest, error) {
	c := msgConn{conn: conn, message: "pingpong"}
	var msg [PingpongDestSize]byte
	if err := c.read("remote address", msg[:]); err != nil {
		return PingpongDest{}, err
	}
	remote, err := ParsePingpongDest(msg[:])
	if err != nil {
		return PingpongDest{}, err
	}
	if ready != nil {
		if err := ready(remote); err != nil {
			return remote, fmt.Errorf("pingpong set-up: connecting the QP to %v: %w", remote, err)
		}
	}
	if err := c.write("local address", local.Marshal()); err != nil {
		return remote, err
	}
	var done [len(pingpongDone)]byte
	return remote, c.read("done", done[:])
}

// SRQPingpongRecords is how many set-up messages ibv_srq_pingpong sends
// each way, whatever its -q says: one for each QP it could have (MAX_QP),
// those beyond the QPs it has all zero ("0000:000000:000000:000…0").
const SRQPingpongRecords = 256

// srqRecords marshals locals into the 256 messages, zero ones after them.
func srqRecords(locals []PingpongDest) ([]byte, error) {
	if len(locals) > SRQPingpongRecords {
		return nil, fmt.Errorf("srq pingpong: %d QPs, at most %d", len(locals), SRQPingpongRecords)
	}
	b := make([]byte, 0, SRQPingpongRecords*PingpongDestSize)
	for i := range SRQPingpongRecords {
		var d PingpongDest
		if i < len(locals) {
			d = locals[i]
		}
		b = append(b, d.Marshal()...)
	}
	return b, nil
}

// readSRQRecords reads and parses the 256 messages.
func readSRQRecords(c msgConn) ([]PingpongDest, error) {
	msgs := make([]byte, SRQPingpongRecords*PingpongDestSize)
	if err := c.read("remote addresses", msgs); err != nil {
		return nil, err
	}
	remotes := make([]PingpongDest, SRQPingpongRecords)
	for i := range remotes {
		d, err := ParsePingpongDest(msgs[i*PingpongDestSize : (i+1)*PingpongDestSize])
		if err != nil {
			return nil, fmt.Errorf("remote address %d of %d: %w", i+1, SRQPingpongRecords, err)
		}
		remotes[i] = d
	}
	return remotes, nil
}

// SRQPingpongClient runs ibv_srq_pingpong's client side on conn: it sends
// the 256 messages (locals first), reads the server's 256 and sends "done".
// It returns all 256: the caller takes as many as it has QPs.
func SRQPingpongClient(conn net.Conn, locals []PingpongDest) ([]PingpongDest, error) {
	out, err := srqRecords(locals)
	if err != nil {
		return nil, err
	}
	c := msgConn{conn: conn, message: "srq pingpong"}
	if err := c.write("local addresses", out); err != nil {
		return nil, err
	}
	remotes, err := readSRQRecords(c)
	if err != nil {
		return nil, err
	}
	return remotes, c.write("done", []byte(pingpongDone))
}

// SRQPingpongServer runs ibv_srq_pingpong's server side on an accepted
// conn: it reads the client's 256 messages, calls ready with them (the
// caller moves its QPs to RTS there: the client sends once it has the
// answer), sends its own 256 and waits for "done".
func SRQPingpongServer(conn net.Conn, locals []PingpongDest, ready func(remotes []PingpongDest) error) ([]PingpongDest, error) {
	out, err := srqRecords(locals)
	if err != nil {
		return nil, err
	}
	c := msgConn{conn: conn, message: "srq pingpong"}
	remotes, err := readSRQRecords(c)
	if err != nil {
		return nil, err
	}
	if ready != nil {
		if err := ready(remotes); err != nil {
			return remotes, fmt.Errorf("srq pingpong set-up: connecting the QPs: %w", err)
		}
	}
	if err := c.write("local addresses", out); err != nil {
		return remotes, err
	}
	var done [len(pingpongDone)]byte
	return remotes, c.read("done", done[:])
}
