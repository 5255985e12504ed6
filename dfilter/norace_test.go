//go:build !race

package dfilter_test

const raceEnabled = false
