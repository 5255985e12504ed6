//go:build race

package endpoint

// udpRaceEnabled: the race detector makes sync.Pool drop items at random,
// so allocation counts are meaningless under -race.
const udpRaceEnabled = true
