package correlate

import (
	"time"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// Report is what Run learns from a set of captures.
type Report struct {
	// Points are the capture points in the order given; the first is the
	// clock reference.
	Points []PointReport `json:"points"`
	// Flows are the directions of the connections seen, in order of first
	// sighting.
	Flows []FlowReport `json:"flows"`
	// Window is the matching window used.
	Window time.Duration `json:"window_ns"`
	// ClockFixed says whether delays were measured on corrected clocks.
	ClockFixed bool `json:"clock_fixed"`
}

// PointReport describes one capture point.
type PointReport struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Frames is every frame read; RoCE the RoCE and InfiniBand transport
	// packets among them, the ones matched.
	Frames int `json:"frames"`
	RoCE   int `json:"roce"`
	// Errors counts frames that did not decode; FirstError describes the
	// first of them (file, packet, layer and field).
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// Clock is this point's clock against the first point's.
	Clock Clock `json:"clock"`
	// CaptureDrops counts packets that passed this point without being
	// captured there.
	CaptureDrops int `json:"capture_drops"`
}

// Clock is a point's clock estimated against the first point's: its
// reading minus the first point's at the same instant is Offset plus
// DriftPPM millionths of the time elapsed since the first packet.
type Clock struct {
	Offset      time.Duration `json:"offset_ns"`
	DriftPPM    float64       `json:"drift_ppm"`
	Uncertainty time.Duration `json:"uncertainty_ns"`
	// Samples is how many packets seen at both points went into it.
	Samples int `json:"samples"`
	// Bounded says whether packets crossed in both directions, so the offset
	// is bounded from both sides; otherwise Offset assumes the smallest delay
	// seen was zero and Uncertainty is unknown (0).
	Bounded bool `json:"bounded"`
}

// FlowReport is one direction of a connection: who sent to whom, to which
// destination QP, along which points.
type FlowReport struct {
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	DestQP uint32 `json:"dest_qp"`
	// Path names the points this direction crossed, upstream first.
	Path []string `json:"path"`
	// Packets counts transmissions: a retransmission counts again.
	Packets int `json:"packets"`
	// Segments are the stretches between the sender, the points of Path and
	// the receiver, with the packets lost on each.
	Segments []Segment `json:"segments"`
	// CaptureDrops counts, per point of Path, the packets the point did not
	// capture though they passed it.
	CaptureDrops []int `json:"capture_drops"`
	// Hops are the delays between consecutive points of Path.
	Hops []Hop `json:"hops"`
	// ReorderedBeforeFirst counts packets that reached the first point after
	// a later PSN without having been lost.
	ReorderedBeforeFirst int `json:"reordered_before_first"`
}

// Segment is a stretch of a flow's path and the packets lost on it.
type Segment struct {
	Name   string `json:"name"`
	Losses int    `json:"losses"`
}

// Hop is the one-way delay between two consecutive points of a path.
type Hop struct {
	From  string                `json:"from"`
	To    string                `json:"to"`
	Delay decode.LatencySummary `json:"delay"`
	// Negative counts delays below zero (clock error left after the fix),
	// counted as zero in Delay.
	Negative int `json:"negative"`
	// Reordered counts packets that arrived at To after a later PSN of the
	// flow though they had arrived at From in order.
	Reordered int `json:"reordered"`
	// Marked counts packets that left From without a congestion mark (ECN
	// CE, or FECN) and reached To with one: marked on this hop.
	Marked int `json:"ce_marked"`
}

// Sighting is one packet as Config.Packet sees it once its fate is known.
type Sighting struct {
	Flow   decode.FlowKey
	PSN    uint32
	Opcode uint8
	// Copy is 1 for the first transmission of the PSN, 2 for its first
	// retransmission, and so on.
	Copy int
	// Frames holds the frame number at each point, 0 where it was not seen;
	// Times the time at each point, corrected unless Config.NoClockFix (on
	// captures longer than the heads, with the clocks as estimated when the
	// packet was seen: the estimate is refined as the matching goes).
	Frames []int
	Times  []time.Time
	// Dropped says, per point, that the point's capture missed the packet.
	Dropped []bool
	// LostAfter is the segment the packet was lost on, as an index into its
	// flow's Segments, or -1.
	LostAfter int
	// LostOn names that segment, "" if the packet was not lost.
	LostOn string
	// Path lists the points of the packet's flow along its path, upstream
	// first, as indexes into Config.Points.
	Path []int
	// Point is the first point along the path that saw the packet, and
	// Frame its frame there (its time corrected unless NoClockFix), when
	// Config.Frames asks for it; Frame.Data is valid during the call only.
	Point int
	Frame capture.Packet
}
