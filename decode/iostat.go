package decode

import (
	"sort"
	"time"
)

// IOInterval is one row of -z io,stat: frames and bytes in an interval, per
// filter column.
type IOInterval struct {
	Start  time.Duration
	Frames []int
	Bytes  []int
}

// IOStat buckets packets by time (-z io,stat,INTERVAL[,FILTER...]). A filter
// column is a predicate over packets; the dfilter package provides them.
// Only intervals that saw a packet take memory: a capture whose timestamps
// jump by years (or go backwards) costs no more than one that does not.
type IOStat struct {
	Interval time.Duration
	Columns  []func(*Packet) bool
	rows     map[int64]*IOInterval
	end      time.Duration
}

// MaxIORows is how many intervals Rows fills in with empty rows between the
// ones that saw packets; past it, only intervals with packets are listed.
const MaxIORows = 100000

// Add counts p in its interval.
func (s *IOStat) Add(p *Packet) {
	var i int64
	if s.Interval > 0 {
		i = int64(p.RelTime / s.Interval)
		if p.RelTime < 0 {
			i-- // floor, so a packet before the first one lands in interval -1
		}
	}
	if s.rows == nil {
		s.rows = map[int64]*IOInterval{}
	}
	r, ok := s.rows[i]
	if !ok {
		r = s.newRow(i)
		s.rows[i] = r
	}
	if len(s.Columns) == 0 {
		r.Frames[0]++
		r.Bytes[0] += p.Length
	}
	for c, match := range s.Columns {
		if match(p) {
			r.Frames[c]++
			r.Bytes[c] += p.Length
		}
	}
	s.end = max(s.end, p.RelTime)
}

func (s *IOStat) newRow(i int64) *IOInterval {
	n := max(len(s.Columns), 1)
	return &IOInterval{Start: time.Duration(i) * s.Interval, Frames: make([]int, n), Bytes: make([]int, n)}
}

// Rows returns the intervals in time order, and the capture's duration. The
// empty intervals between busy ones are included, as tshark lists them,
// unless there would be more than MaxIORows rows.
func (s *IOStat) Rows() ([]IOInterval, time.Duration) {
	keys := make([]int64, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	var out []IOInterval
	fill := len(keys) > 0 && keys[len(keys)-1]-keys[0] < MaxIORows
	for j, k := range keys {
		if fill && j > 0 {
			for e := keys[j-1] + 1; e < k; e++ {
				out = append(out, *s.newRow(e))
			}
		}
		out = append(out, *s.rows[k])
	}
	return out, s.end
}
