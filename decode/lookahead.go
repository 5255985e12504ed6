package decode

// Lookahead carries, from a look-ahead over the start of a capture file,
// the connections whose content showed an upper-layer protocol, so that
// the pass that prints decodes them from their first packet rather than
// from the evidence (a capture that starts mid-stream sends its first call
// before the reply that reveals the protocol). The evidence is the same
// as in one pass, only applied to the packets before it. Unlike FrameLinks
// (ibdump -2) it records nothing else, so a look-ahead over a bounded
// prefix of the file changes no other output. It knows RPC-over-RDMA.
type Lookahead struct {
	reading bool
	rpc     map[dirKey]bool
}

// NewLookahead returns a Lookahead for the look-ahead run.
func NewLookahead() *Lookahead { return &Lookahead{} }

// Done switches from recording to reading back: give it to the Analyzer
// of the pass that prints.
func (l *Lookahead) Done() { l.reading = true }

// record notes the directions of conversation c in seen.
func (l *Lookahead) record(c *conv, seen *map[dirKey]bool) {
	if l == nil || l.reading {
		return
	}
	if *seen == nil {
		*seen = map[dirKey]bool{}
	}
	for _, d := range c.dirs {
		if d != nil {
			(*seen)[d.key] = true
		}
	}
}
