package replay

import (
	"fmt"
	"io"
)

// rnrRetries is how many times the player sends a request again after
// RNR NAKs for it: a QP's largest rnr_retry short of 7, which means
// forever.
const rnrRetries = 7

// WriteRNR prints, when the peer sent RNR NAKs, one line saying so and
// what the peer needs (fix, e.g. the flag that gives it more receive
// buffers); nothing otherwise. It goes first, before the diff: an empty
// receive queue explains the differences that follow it.
func (r *Result) WriteRNR(w io.Writer, fix string) {
	if r.RNRNaks == 0 {
		return
	}
	fmt.Fprintf(w, "compare: peer sent RNR NAK %d %s (its receive queue was empty): %s\n", r.RNRNaks, plural(r.RNRNaks, "time"), fix)
}

// writeRNRSummary says what the player did about the RNR NAKs.
func (r *Result) writeRNRSummary(w io.Writer) {
	switch {
	case r.RNRGaveUp != 0:
		fmt.Fprintf(w, "compare: the player gave up on the request of frame %d after %d RNR NAKs for it\n", r.RNRGaveUp, rnrRetries+1)
	case r.Resent > 0:
		fmt.Fprintf(w, "compare: the player sent %d %s again after the RNR NAK's timer, as a requester does; RNR NAKs are no difference\n",
			r.Resent, plural(r.Resent, "request"))
	}
}
