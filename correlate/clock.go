package correlate

import (
	"math"
	"sort"
	"time"
)

// maxSlices is how many time slices a clock estimate keeps per point and
// flow; when the capture outlasts them, neighbours merge and the slices
// double in length.
const maxSlices = 64

// clockStats gathers, for one flow and one point, the time differences
// x = (point's time) - (first point's time) of the packets both saw.
type clockStats struct {
	n          int
	sumX, sumT float64
	minX, maxX int64
	slices     []slice
}

// slice is the extremes of x over one stretch of time.
type slice struct {
	n      int
	lo, hi int64
	sumT   float64
}

func (s *slice) add(x, t int64) {
	if s.n == 0 || x < s.lo {
		s.lo = x
	}
	if s.n == 0 || x > s.hi {
		s.hi = x
	}
	s.n++
	s.sumT += float64(t)
}

func (s *slice) merge(o slice) {
	if o.n == 0 {
		return
	}
	if s.n == 0 {
		*s = o
		return
	}
	s.lo, s.hi = min(s.lo, o.lo), max(s.hi, o.hi)
	s.n += o.n
	s.sumT += o.sumT
}

// sampleClocks records g's time differences against point 0.
func (m *matcher) sampleClocks(g *group) {
	if g.seen&1 == 0 {
		return
	}
	t0 := g.raw[0]
	rel := max(t0-m.origin, 0)
	for i := 1; i < m.n; i++ {
		if g.seen&(1<<i) == 0 {
			continue
		}
		x := g.raw[i] - t0
		cs := &g.fl.clk[i]
		if cs.n == 0 || x < cs.minX {
			cs.minX = x
		}
		if cs.n == 0 || x > cs.maxX {
			cs.maxX = x
		}
		cs.n++
		cs.sumX += float64(x)
		cs.sumT += float64(rel)
		k := int(rel / m.bucket[i])
		for k >= maxSlices {
			m.coarsen(i)
			k = int(rel / m.bucket[i])
		}
		for len(cs.slices) <= k {
			cs.slices = append(cs.slices, slice{})
		}
		cs.slices[k].add(x, rel)
	}
}

// coarsen doubles point i's slice length.
func (m *matcher) coarsen(i int) {
	m.bucket[i] *= 2
	for _, fl := range m.order {
		s := fl.clk[i].slices
		for k := 0; k < len(s); k++ {
			merged := s[k]
			if k%2 == 0 && k+1 < len(s) {
				merged.merge(s[k+1])
			}
			if k%2 == 0 {
				s[k/2] = merged
			}
		}
		fl.clk[i].slices = s[:(len(s)+1)/2]
	}
}

// estimateClocks estimates each point's clock against point 0's. For the
// flows on which point 0 is upstream, x is the offset plus a delay, so their
// smallest x bounds the offset from above; for the flows in the other
// direction, x is the offset minus a delay and their largest x bounds it
// from below. Which direction is which comes from the address pair: of its
// two directions, the one with the larger mean x leaves point 0 first. The
// bounds' midpoints per time slice, fitted by least squares, give offset and
// drift; the uncertainty is the bounds' mean half-distance plus the fit's RMS
// residual.
func (m *matcher) estimateClocks() []Clock {
	clocks := make([]Clock, m.n)
	clocks[0].Bounded = true
	for i := 1; i < m.n; i++ {
		clocks[i] = m.estimateClock(i)
	}
	m.clocks = clocks
	return clocks
}

type pairKey struct{ a, b string }

func (m *matcher) estimateClock(i int) Clock {
	var c Clock
	type side struct {
		flows []*flow
		n     int
		sumX  float64
	}
	pairs := map[pairKey]*[2]side{}
	var keys []pairKey
	var all []*flow
	for _, fl := range m.order {
		cs := &fl.clk[i]
		if cs.n == 0 {
			continue
		}
		c.Samples += cs.n
		all = append(all, fl)
		src, dst := fl.key.Src.String(), fl.key.Dst.String()
		dir := 0
		if dst < src {
			src, dst, dir = dst, src, 1
		}
		k := pairKey{src, dst}
		p, ok := pairs[k]
		if !ok {
			p = &[2]side{}
			pairs[k] = p
			keys = append(keys, k)
		}
		p[dir].flows = append(p[dir].flows, fl)
		p[dir].n += cs.n
		p[dir].sumX += cs.sumX
	}
	if len(all) == 0 {
		return c
	}
	var upper, lower []*flow // point 0 first; point i first
	for _, k := range keys {
		p := pairs[k]
		if p[0].n == 0 || p[1].n == 0 {
			continue
		}
		up, low := 0, 1
		if p[1].sumX/float64(p[1].n) > p[0].sumX/float64(p[0].n) {
			up, low = 1, 0
		}
		upper = append(upper, p[up].flows...)
		lower = append(lower, p[low].flows...)
	}
	if len(upper) == 0 {
		// Traffic in one direction only: assume the fastest packet took no
		// time, so the offset is the smallest difference; unbounded.
		minX := all[0].clk[i].minX
		for _, fl := range all {
			minX = min(minX, fl.clk[i].minX)
		}
		c.Offset = time.Duration(minX)
		return c
	}
	c.Bounded = true
	slices := 0
	for _, fl := range all {
		slices = max(slices, len(fl.clk[i].slices))
	}
	type point struct{ t, mid, half float64 }
	var pts []point
	// The bounds over the whole capture: with no drift the offset lies
	// between the lower flows' largest x and the upper flows' smallest.
	var lower0, upper0 float64
	have0 := false
	for k := 0; k < slices; k++ {
		var lo, hi slice // hi: the upper flows' smallest x; lo: the lower flows' largest
		for _, fl := range upper {
			if s := fl.clk[i].slices; k < len(s) && s[k].n > 0 {
				if hi.n == 0 || s[k].lo < hi.lo {
					hi.lo = s[k].lo
				}
				hi.n += s[k].n
				hi.sumT += s[k].sumT
			}
		}
		for _, fl := range lower {
			if s := fl.clk[i].slices; k < len(s) && s[k].n > 0 {
				if lo.n == 0 || s[k].hi > lo.hi {
					lo.hi = s[k].hi
				}
				lo.n += s[k].n
				lo.sumT += s[k].sumT
			}
		}
		if lo.n == 0 || hi.n == 0 {
			continue
		}
		t := (lo.sumT + hi.sumT) / float64(lo.n+hi.n)
		pts = append(pts, point{t, (float64(lo.hi) + float64(hi.lo)) / 2, (float64(hi.lo) - float64(lo.hi)) / 2})
		if !have0 || float64(lo.hi) > lower0 {
			lower0 = float64(lo.hi)
		}
		if !have0 || float64(hi.lo) < upper0 {
			upper0 = float64(hi.lo)
		}
		have0 = true
	}
	if len(pts) == 0 {
		return c
	}
	var st, sm float64
	for _, p := range pts {
		st += p.t
		sm += p.mid
	}
	nf := float64(len(pts))
	mt, mm := st/nf, sm/nf
	var sxx, sxy float64
	for _, p := range pts {
		sxx += (p.t - mt) * (p.t - mt)
		sxy += (p.t - mt) * (p.mid - mm)
	}
	slope := 0.0
	if len(pts) >= 3 && sxx > 0 {
		slope = sxy / sxx
	}
	offset := mm - slope*mt
	var res2, half float64
	for _, p := range pts {
		r := p.mid - (offset + slope*p.t)
		res2 += r * r
		half += math.Abs(p.half)
	}
	// The fitted line must respect what the packets say: in each slice the
	// offset lies within the slice's bounds. When it does not, and a clock
	// that does not drift does fit every packet both ways (the bounds over
	// the whole capture leave room), that clock is the estimate, with the
	// bounds as they are; so too when the drift found is within twice its
	// standard error of none: with bounds as loose as a virtual machine's
	// delays make them, the midpoints' jitter reads as a drift, and the
	// line can leave the bounds the packets set.
	fits := true
	for _, p := range pts {
		if math.Abs(p.mid-(offset+slope*p.t)) > math.Abs(p.half) {
			fits = false
			break
		}
	}
	if lower0 <= upper0 && (!fits || len(pts) < 3 || math.Abs(slope) <= 2*math.Sqrt(res2/(nf-2)/sxx)) {
		c.Offset = time.Duration(math.Round((lower0 + upper0) / 2))
		c.Uncertainty = time.Duration(math.Round((upper0 - lower0) / 2))
		return c
	}
	c.Offset = time.Duration(math.Round(offset))
	c.DriftPPM = slope * 1e6
	c.Uncertainty = time.Duration(math.Round(half/nf + math.Sqrt(res2/nf)))
	return c
}

// inferPath orders the points that saw fl by their corrected delay after
// point 0. A flow point 0 never saw keeps its points in the order given.
func (m *matcher) inferPath(fl *flow) []int {
	if fl.seen&1 == 0 {
		var path []int
		for p := 0; p < m.n; p++ {
			if fl.seen&(1<<p) != 0 {
				path = append(path, p)
			}
		}
		return path
	}
	path := []int{0}
	delay := make([]float64, m.n)
	for p := 1; p < m.n; p++ {
		cs := &fl.clk[p]
		if cs.n == 0 {
			continue
		}
		c := m.clocks[p]
		meanT := cs.sumT / float64(cs.n)
		delay[p] = cs.sumX/float64(cs.n) - (float64(c.Offset) + c.DriftPPM/1e6*meanT)
		path = append(path, p)
	}
	sort.SliceStable(path, func(a, b int) bool { return delay[path[a]] < delay[path[b]] })
	return path
}
