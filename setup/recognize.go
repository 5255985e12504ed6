package setup

import "bytes"

// Kind says which tool's set-up message a TCP payload is.
type Kind uint8

// Kinds of set-up message Recognize tells apart.
const (
	NotSetup Kind = iota
	Pingpong      // ibv_*_pingpong's 52-byte message (PingpongDest)
	Perftest      // perftest's 108-byte QP message (PerftestDest)
)

// Recognize reads a TCP payload that is exactly one set-up message, byte for
// byte as the tools write it: perftest's QP message (pt) or pingpong's (pp).
// Anything else is NotSetup, including text the lenient parsers would read
// but no tool writes, so arbitrary TCP traffic of the same length is not
// taken for a set-up exchange.
func Recognize(payload []byte) (kind Kind, pp PingpongDest, pt PerftestDest) {
	switch len(payload) {
	case PerftestDestSize:
		d, err := ParsePerftestDest(payload)
		if err == nil && bytes.Equal(d.Marshal(), payload) {
			return Perftest, PingpongDest{}, d
		}
	case PingpongDestSize:
		d, err := ParsePingpongDest(payload)
		if err == nil && bytes.Equal(d.Marshal(), payload) {
			return Pingpong, d, PerftestDest{}
		}
	}
	return NotSetup, PingpongDest{}, PerftestDest{}
}
