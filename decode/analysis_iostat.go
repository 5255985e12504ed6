package decode

import (
	"math"
	"sort"
	"strings"
	"time"
)

// IOFunc is a -z io,stat column function, as tshark names them.
type IOFunc uint8

// Column functions. IOFrames counts the frames that match the column's
// filter (with their bytes); the others compute over a field's values.
const (
	IOFrames IOFunc = iota
	IOCount
	IOSum
	IOMin
	IOMax
	IOAvg
)

var ioFuncNames = [...]string{"FRAMES", "COUNT", "SUM", "MIN", "MAX", "AVG"}

func (f IOFunc) String() string { return ioFuncNames[f%IOFunc(len(ioFuncNames))] }

// ParseIOFunc splits a column "FUNC(field)filter" into its parts.
func ParseIOFunc(col string) (fn IOFunc, field, filter string, ok bool) {
	open := strings.IndexByte(col, '(')
	end := strings.IndexByte(col, ')')
	if open <= 0 || end < open {
		return 0, "", "", false
	}
	name := strings.ToUpper(strings.TrimSpace(col[:open]))
	for i, n := range ioFuncNames {
		if i > 0 && n == name {
			return IOFunc(i), strings.TrimSpace(col[open+1 : end]), col[end+1:], true
		}
	}
	return 0, "", "", false
}

// IOColumn is one column of an IOFuncStat.
type IOColumn struct {
	Title string
	Func  IOFunc
	Field *Field             // for the functions
	Match func(*Packet) bool // nil: every packet
}

// IOFuncRow is one interval: per column, the frames, bytes and the
// function's value.
type IOFuncRow struct {
	Start  time.Duration
	Frames []int
	Bytes  []int
	Values []float64
	n      []int // values seen, for MIN/MAX/AVG
}

// MaxIORows is how many intervals Rows fills in with empty rows between the
// ones that saw packets; past it, only intervals with packets are listed.
const MaxIORows = 100000

// IOFuncStat is -z io,stat with function columns (SUM(infiniband.reth.dmalen),
// COUNT(ibwire.analysis.retransmission) ...). Only busy intervals take
// memory.
type IOFuncStat struct {
	Interval time.Duration
	Columns  []IOColumn
	rows     map[int64]*IOFuncRow
	end      time.Duration
	v        Value
}

// Add counts p in its interval.
func (s *IOFuncStat) Add(p *Packet) {
	var i int64
	if s.Interval > 0 {
		i = int64(p.RelTime / s.Interval)
		if p.RelTime < 0 {
			i--
		}
	}
	if s.rows == nil {
		s.rows = map[int64]*IOFuncRow{}
	}
	r, ok := s.rows[i]
	if !ok {
		r = s.newRow(i)
		s.rows[i] = r
	}
	for c := range s.Columns {
		col := &s.Columns[c]
		if col.Match != nil && !col.Match(p) {
			continue
		}
		r.Frames[c]++
		r.Bytes[c] += p.Length
		if col.Func == IOFrames || col.Field == nil || !col.Field.Get(p, &s.v) {
			continue
		}
		x := s.value(col.Field)
		switch col.Func {
		case IOCount:
			r.Values[c]++
		case IOSum, IOAvg:
			r.Values[c] += x
		case IOMin:
			if r.n[c] == 0 || x < r.Values[c] {
				r.Values[c] = x
			}
		case IOMax:
			if r.n[c] == 0 || x > r.Values[c] {
				r.Values[c] = x
			}
		}
		r.n[c]++
	}
	s.end = max(s.end, p.RelTime)
}

// value is the number a field holds: integers as they are, times in seconds.
func (s *IOFuncStat) value(f *Field) float64 {
	switch f.Type {
	case FTDouble:
		return s.v.F
	case FTRelTime, FTAbsTime:
		return s.v.D.Seconds()
	case FTBytes, FTString, FTIPv4, FTIPv6, FTEther, FTProtocol:
		return 1
	}
	return float64(s.v.U)
}

func (s *IOFuncStat) newRow(i int64) *IOFuncRow {
	n := len(s.Columns)
	return &IOFuncRow{Start: time.Duration(i) * s.Interval, Frames: make([]int, n), Bytes: make([]int, n),
		Values: make([]float64, n), n: make([]int, n)}
}

// Rows returns the intervals in time order (the empty ones between busy ones
// included, up to MaxIORows), AVG columns averaged, and the duration.
func (s *IOFuncStat) Rows() ([]IOFuncRow, time.Duration) {
	keys := make([]int64, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	var out []IOFuncRow
	fill := len(keys) > 0 && keys[len(keys)-1]-keys[0] < MaxIORows
	for j, k := range keys {
		if fill && j > 0 {
			for e := keys[j-1] + 1; e < k; e++ {
				out = append(out, *s.newRow(e))
			}
		}
		r := *s.rows[k]
		r.Values = append([]float64(nil), r.Values...)
		for c := range s.Columns {
			if s.Columns[c].Func == IOAvg && r.n[c] > 0 {
				r.Values[c] /= float64(r.n[c])
			}
			if math.IsNaN(r.Values[c]) {
				r.Values[c] = 0
			}
		}
		out = append(out, r)
	}
	return out, s.end
}
