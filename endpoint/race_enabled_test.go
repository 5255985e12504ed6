//go:build race

package endpoint_test

// raceEnabled gates the size of stress tests: the race detector slows the
// endpoint's per-packet work about twentyfold.
const raceEnabled = true
