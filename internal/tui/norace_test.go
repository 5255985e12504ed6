//go:build !race

package tui

// raceEnabled: the race detector's sync.Pool drops items at random, so
// allocation counts are not exact under it.
const raceEnabled = false
