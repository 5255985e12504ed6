package decode

// Lookahead carries, from a look-ahead over the start of a capture file,
// the connections whose content showed an upper-layer protocol, so that
// the pass that prints decodes them from their first packet rather than
// from the evidence. A capture that starts mid-stream sends its first
// message before the evidence that reveals the protocol: NVMe-oF's first
// command before the completion that answers its command id, iSER's first
// request before the response that answers its task tag, RPC-over-RDMA's
// first call before its reply, SMB Direct's first request when it spans
// several packets (only a SEND ONLY is read for an SMB2 header). The
// look-ahead is an analysis with the run's upper-layer options, so the
// evidence is the same as in one pass and the connection it labels is
// the one the run would; the pass that prints only applies it to the
// packets before that evidence, and not when the protocol's detection by
// content is off (--disable-heuristic), since content is what it found.
// For NVMe-oF it also carries which side is the host, as the evidence
// showed it. Unlike FrameLinks (ibdump -2) it records nothing about
// frames, so a look-ahead over a bounded prefix of the file changes no
// other output; a pipe, read once, gets none.
type Lookahead struct {
	reading bool
	rpc     map[dirKey]bool
	iser    map[dirKey]bool
	smbd    map[dirKey]bool
	// nvme has the directions found to carry NVMe-oF, true for the host's.
	nvme map[dirKey]bool
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
	markDirs(c, seen)
}

// markDirs notes every direction of c in *seen, made when first needed:
// what a pass before the one that prints (the look-ahead, -2's first)
// tells it about a connection's upper layer.
func markDirs(c *conv, seen *map[dirKey]bool) {
	for _, d := range c.dirs {
		if d != nil {
			markDir(seen, d.key, true)
		}
	}
}

// markDir sets (*seen)[k], making the map when first needed.
func markDir(seen *map[dirKey]bool, k dirKey, v bool) {
	if *seen == nil {
		*seen = map[dirKey]bool{}
	}
	(*seen)[k] = v
}

// found reports, on the pass that prints, whether the look-ahead recorded
// direction d in seen (one of l's maps).
func (l *Lookahead) found(seen map[dirKey]bool, d *direction) bool {
	if !l.reading {
		return false
	}
	_, ok := seen[d.key]
	return ok
}
