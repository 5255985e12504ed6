//go:build race

package dfilter_test

// raceEnabled: the race detector makes sync.Pool drop items on purpose, so
// regexp's matcher pool allocates now and then; the allocation test skips
// `matches` under -race.
const raceEnabled = true
