package correlate

import (
	"context"
	"errors"
	"io"
)

// stream yields one point's sightings in capture order, then io.EOF or
// the error that ended the capture.
type stream interface {
	next() (*sighting, error)
}

// head is the first headPackets sightings of one point's capture, held
// in memory: the first matching estimates the clocks and the paths from
// it, and the second matches it again before going on with the rest.
type head struct {
	s []sighting
	// whole: the capture ended within the head (err is then nil); err is
	// what ended it otherwise early.
	whole bool
	err   error
}

// readHead reads the head of f. The frames' bytes, when the source keeps
// them, are copied out of the feed's batches, which are reused.
func readHead(ctx context.Context, f *feed, keep bool) (*head, error) {
	h := &head{}
	var arena []byte
	var offsets []int
	for len(h.s) < headPackets {
		if len(h.s)%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s, err := f.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.err = err
			}
			h.whole = true
			break
		}
		if keep && s.data != nil {
			offsets = append(offsets, len(arena))
			arena = append(arena, s.data...)
		}
		h.s = append(h.s, *s)
	}
	if keep {
		k := 0
		for i := range h.s {
			if d := h.s[i].data; d != nil {
				h.s[i].data = arena[offsets[k] : offsets[k]+len(d) : offsets[k]+len(d)]
				k++
			}
		}
	}
	return h, nil
}

// transport lists the head's transport packets.
func (h *head) transport() []*sighting {
	out := make([]*sighting, 0, len(h.s))
	for i := range h.s {
		if !h.s[i].other {
			out = append(out, &h.s[i])
		}
	}
	return out
}

// replay yields a head's sightings, then the rest of the capture from its
// feed; without a feed, it ends with the error that ended the head, or
// io.EOF.
type replay struct {
	s    []sighting
	at   int
	err  error
	rest *feed
}

func (r *replay) next() (*sighting, error) {
	if r.at < len(r.s) {
		s := &r.s[r.at]
		r.at++
		if r.at == len(r.s) && r.rest != nil {
			r.s = nil // the head's memory goes once it is matched
		}
		return s, nil
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.rest == nil {
		return nil, io.EOF
	}
	return r.rest.next()
}
