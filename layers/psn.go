package layers

import "strconv"

// PSN is a 24-bit packet sequence number (IBTA Vol 1 §9.7.1). All PSN
// arithmetic in ibwire goes through this type: it wraps from 0xFFFFFF to 0,
// and comparisons are made in the half of the space ahead of or behind a PSN,
// as responders do (§9.7.5.1.1: the "valid" region is 2^23 wide).
type PSN uint32

// PSNMask keeps the 24 bits of a PSN.
const PSNMask = 0xFFFFFF

// psnHalf is half of the PSN space: the farthest two PSNs can be apart and
// still be ordered.
const psnHalf = 1 << 23

// Add returns p+n modulo 2^24; n may be negative.
func (p PSN) Add(n int) PSN { return PSN((int64(p) + int64(n)) & PSNMask) }

// Diff returns p-q as a signed distance in [-2^23, 2^23): positive when p is
// ahead of q.
func (p PSN) Diff(q PSN) int {
	d := int((uint32(p) - uint32(q)) & PSNMask)
	if d >= psnHalf {
		d -= 1 << 24
	}
	return d
}

// Less reports whether p comes before q (p.Diff(q) < 0).
func (p PSN) Less(q PSN) bool { return p.Diff(q) < 0 }

// Valid reports whether p fits in 24 bits.
func (p PSN) Valid() bool { return p <= PSNMask }

func (p PSN) String() string { return strconv.FormatUint(uint64(p), 10) }

// PSNWindowSize is how many PSNs behind the highest one a PSNWindow remembers.
const PSNWindowSize = 4096

const psnWindowWords = PSNWindowSize / 64

// PSNStatus classifies a PSN against what a PSNWindow has seen.
type PSNStatus uint8

// PSN classifications, in the words of tcp.analysis.
const (
	PSNFirst     PSNStatus = iota // the first PSN the window sees
	PSNInOrder                    // exactly one past the highest seen
	PSNAhead                      // further ahead: Gap PSNs were skipped
	PSNLate                       // behind the highest and not seen before: out of order or a hole filled
	PSNDuplicate                  // seen before (within the window)
	PSNTooOld                     // further behind than the window remembers
)

var psnStatusNames = [...]string{"first", "in-order", "ahead", "late", "duplicate", "too-old"}

func (s PSNStatus) String() string {
	if int(s) < len(psnStatusNames) {
		return psnStatusNames[s]
	}
	return "PSNStatus(" + strconv.Itoa(int(s)) + ")"
}

// PSNWindow is a sliding-window bitmap of the PSNs seen in one direction, in
// the manner of an anti-replay window. The zero value is ready to use.
type PSNWindow struct {
	highest PSN
	started bool
	bits    [psnWindowWords]uint64 // bit (psn mod PSNWindowSize) set when seen
}

// Highest returns the highest PSN seen and whether any was seen.
func (w *PSNWindow) Highest() (PSN, bool) { return w.highest, w.started }

// Reset forgets everything.
func (w *PSNWindow) Reset() { *w = PSNWindow{} }

func (w *PSNWindow) test(p PSN) bool {
	i := uint32(p) % PSNWindowSize
	return w.bits[i/64]&(1<<(i%64)) != 0
}

func (w *PSNWindow) set(p PSN) {
	i := uint32(p) % PSNWindowSize
	w.bits[i/64] |= 1 << (i % 64)
}

func (w *PSNWindow) clear(p PSN) {
	i := uint32(p) % PSNWindowSize
	w.bits[i/64] &^= 1 << (i % 64)
}

// Observe records p and says how it relates to the PSNs seen before. For
// PSNAhead, gap is the number of PSNs skipped; for PSNLate and PSNDuplicate it
// is how far behind the highest PSN p is; otherwise 0.
func (w *PSNWindow) Observe(p PSN) (status PSNStatus, gap int) {
	p &= PSNMask
	if w.ObserveNext(p) {
		return PSNInOrder, 0
	}
	if !w.started {
		w.started = true
		w.highest = p
		w.set(p)
		return PSNFirst, 0
	}
	d := p.Diff(w.highest)
	switch {
	case d > 0:
		if d >= PSNWindowSize {
			w.bits = [psnWindowWords]uint64{}
		} else {
			for q := w.highest.Add(1); q != p; q = q.Add(1) {
				w.clear(q)
			}
		}
		w.clear(p)
		w.set(p)
		w.highest = p
		if d == 1 {
			return PSNInOrder, 0
		}
		return PSNAhead, d - 1
	case d == 0:
		return PSNDuplicate, 0
	case -d >= PSNWindowSize:
		return PSNTooOld, -d
	case w.test(p):
		return PSNDuplicate, -d
	default:
		w.set(p)
		return PSNLate, -d
	}
}

// ObserveNext is Observe for the PSN one past the highest, as nearly every
// PSN is, in a function small enough to inline: when p is that PSN it
// records it and reports true (Observe's PSNInOrder); otherwise it records
// nothing and reports false.
func (w *PSNWindow) ObserveNext(p PSN) bool {
	if !w.started || p != w.highest.Add(1) {
		return false
	}
	w.highest = p
	w.set(p)
	return true
}

// Seen reports whether p was observed and is still inside the window.
func (w *PSNWindow) Seen(p PSN) bool {
	if !w.started {
		return false
	}
	d := p.Diff(w.highest)
	if d > 0 || -d >= PSNWindowSize {
		return false
	}
	return w.test(p)
}
