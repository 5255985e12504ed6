package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ibwire/ibwire/craft"
)

// multipointNames name the three capture points of the multipoint_* files,
// from the requester's side to the responder's.
var multipointNames = []string{"a", "b", "c"}

// multipointSet is one conversation captured at three points with clocks
// of their own: what ibdump --correlate lines up.
var multipointSet = sync.OnceValues(func() (craft.MultiTrace, error) {
	c, err := craft.New(craft.Config{MTU: 256, Step: time.Millisecond, Delay: 14 * time.Microsecond})
	if err != nil {
		return craft.MultiTrace{}, err
	}
	var ops []craft.Op
	for i := 0; i < 24; i++ {
		switch i % 3 {
		case 0:
			ops = append(ops, craft.Op{Kind: craft.OpWrite, Data: craft.Pattern(600, byte(i)), VA: 0x7f0000d00000, RKey: 0x48})
		case 1:
			ops = append(ops, craft.Op{Kind: craft.OpSend, Data: craft.Pattern(300, byte(i))})
		default:
			ops = append(ops, craft.Op{Kind: craft.OpRead, Data: craft.Pattern(500, byte(i)), VA: 0x7f0000e00000, RKey: 0x49})
		}
	}
	if err := c.Run(ops, craft.Faults{Loss: craft.Loss{Every: 9}}); err != nil {
		return craft.MultiTrace{}, err
	}
	mp := craft.MultiPoint{
		Points: []craft.CapturePoint{
			{},
			{Offset: 250 * time.Millisecond, DriftPPM: 40, DropProb: 0.03},
			{Offset: -time.Second, DriftPPM: -100, DropProb: 0.02},
		},
		Hops:   []time.Duration{2 * time.Microsecond, 3 * time.Microsecond, 4 * time.Microsecond, 5 * time.Microsecond},
		Jitter: 300 * time.Nanosecond,
		Seed:   7,
	}
	return mp.Capture(c.Trace())
})

// multipoint builds the capture of point i of multipointSet.
func multipoint(i int) func() (craft.Encap, craft.Trace, []string, error) {
	return func() (craft.Encap, craft.Trace, []string, error) {
		mt, err := multipointSet()
		if err != nil {
			return 0, craft.Trace{}, nil, err
		}
		segments := func(side craft.Side) string {
			path := append([]string{}, multipointNames...)
			if side == craft.Responder {
				for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
					path[l], path[r] = path[r], path[l]
				}
			}
			names := append(append([]string{side.String()}, path...), side.Other().String())
			var parts []string
			for k, n := range mt.Losses[side] {
				parts = append(parts, fmt.Sprintf("%s → %s %d", names[k], names[k+1], n))
			}
			return strings.Join(parts, ", ")
		}
		notes := []string{
			fmt.Sprintf("point %s of multipoint_a/b/c (requester → a → b → c → responder; hops 2, 3, 4, 5 µs, jitter up to 0.3 µs); clocks against a: b +250 ms and +40 ppm, c -1 s and -100 ppm", multipointNames[i]),
			fmt.Sprintf("capture drops at this point: %d of the requester's frames, %d of the responder's", mt.Drops[craft.Requester][i], mt.Drops[craft.Responder][i]),
			"losses (the same in each file of the set): requester's frames " + segments(craft.Requester) + "; responder's " + segments(craft.Responder),
			"findings: none listed (a single point's view of a multi-point set; ibdump --correlate reads the three together)",
		}
		return craft.RoCEv2, craft.Trace{Frames: mt.Points[i]}, notes, nil
	}
}
