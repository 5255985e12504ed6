package device

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// RateLog writes ibpeer serve's lines about refused and failed
// connections, each kind at most once a second: a flood of them is
// counted, not written out one by one. A kind names what its lines are
// about ("connection requests refused").
type RateLog struct {
	Out  func(line string) // writes one line
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int // lines not written since the last one of the kind
}

// Printf writes a line of kind, or counts it when one of the kind went
// out less than a second ago.
func (l *RateLog) Printf(kind, format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.held = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	if t, ok := l.last[kind]; ok && now.Sub(t) < time.Second {
		l.held[kind]++
		return
	}
	l.last[kind] = now
	line := fmt.Sprintf(format, a...)
	if n := l.held[kind]; n > 0 {
		line += fmt.Sprintf(" (and %d more %s since the last such line)", n, kind)
		l.held[kind] = 0
	}
	l.Out(line)
}

// Flush writes the counts of the lines held back.
func (l *RateLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, kind := range slices.Sorted(maps.Keys(l.held)) {
		if n := l.held[kind]; n > 0 {
			l.Out(fmt.Sprintf("ibpeer serve: %d more %s", n, kind))
		}
	}
}
