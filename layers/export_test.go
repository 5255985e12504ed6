package layers

import "github.com/google/gopacket"

// NewSlowParser returns a parser without the RoCEv2 fast path, so tests can
// check the fast path against the general one.
func NewSlowParser(first gopacket.LayerType, opts ParserOptions) *Parser {
	p := NewParser(first, opts)
	p.noFastPath = true
	return p
}
