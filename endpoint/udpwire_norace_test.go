//go:build !race

package endpoint

const udpRaceEnabled = false
