package decode

import "time"

// Correlation is what correlating several captures of the same traffic
// (package correlate, ibdump --correlate) learned about one packet: where
// it was seen, dropped or lost. The ibwire.correlate.* fields read it; it is
// nil on a packet of a single capture.
type Correlation struct {
	// Point is the capture point this frame comes from: the first, along
	// the packet's path, that saw it.
	Point string
	// Seen lists the points that saw the packet, upstream first, as one
	// string ("a,b,c"); Dropped those whose captures missed it though it
	// passed them.
	Seen, Dropped string
	// LostOn names the segment the packet was lost on ("a → b"), "" if it
	// was not lost.
	LostOn string
	// Copy is 1 for a PSN's first transmission, 2 for its first
	// retransmission, and so on.
	Copy int
	// Delay is the one-way delay from the first point that saw it to the
	// last (on corrected clocks unless told otherwise), when two saw it.
	Delay    time.Duration
	HasDelay bool
}

// correlateFields are ibwire.correlate.*, set only by a correlation.
func correlateFields() []*Field {
	c := func(p *Packet) bool { return p.Correlation != nil }
	str := func(name, title string, get func(c *Correlation) string) *Field {
		return &Field{Name: name, Title: title, Type: FTString, get: func(p *Packet, v *Value) bool {
			if p.Correlation == nil {
				return false
			}
			v.S = get(p.Correlation)
			return v.S != ""
		}}
	}
	return []*Field{
		protoField("ibwire.correlate", "Correlation of capture points", c),
		str("ibwire.correlate.point", "Capture point of this frame", func(c *Correlation) string { return c.Point }),
		str("ibwire.correlate.seen", "Capture points that saw the packet", func(c *Correlation) string { return c.Seen }),
		str("ibwire.correlate.dropped", "Capture points whose capture missed the packet", func(c *Correlation) string { return c.Dropped }),
		str("ibwire.correlate.lost_on", "Segment the packet was lost on", func(c *Correlation) string { return c.LostOn }),
		uintField("ibwire.correlate.copy", "Transmission of the PSN (1: first)", FTUint32, BaseDec, func(p *Packet) (uint64, bool) {
			if p.Correlation == nil {
				return 0, false
			}
			return uint64(p.Correlation.Copy), true
		}),
		{Name: "ibwire.correlate.delay", Title: "Delay from the first point that saw it to the last", Type: FTRelTime,
			get: func(p *Packet, v *Value) bool {
				if p.Correlation == nil || !p.Correlation.HasDelay {
					return false
				}
				v.D = p.Correlation.Delay
				return true
			}},
	}
}
