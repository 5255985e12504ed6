//go:build !race

package decode_test

// raceEnabled shortens the stress tests under the race detector.
const raceEnabled = false
