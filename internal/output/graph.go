package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
)

// PSNGraph gathers the points of --graph psn: for one connection, the PSN
// of each request against time (new ones and retransmissions), the PSN each
// ACK or response reaches, and NAK, RNR NAK and CNP markers — Wireshark's
// tcptrace graph for RDMA. The connection is the one of the first packet
// shown; the request direction is the one of its first request. PSNs are
// unwrapped (24-bit) and counted from the first.
type PSNGraph struct {
	conv    uint32
	dir     uint8 // the request direction (1 or 2)
	series  decode.PSNSeries
	points  []decode.PSNPoint
	dropped int
}

type graphKind uint8

const (
	gNone graphKind = iota
	gRequest
	gRetrans
	gAck
	gNAK
	gRNR
	gCNP
)

// kind is how the graph draws pt: the requests of the request direction,
// and the answers and CNPs of the other; nothing else.
func (g *PSNGraph) kind(pt *decode.PSNPoint) graphKind {
	if pt.Dir == g.dir {
		switch {
		case pt.Response:
		case pt.Mark == decode.MarkRequest:
			return gRequest
		case pt.Mark == decode.MarkRetransmission:
			return gRetrans
		}
		return gNone
	}
	switch {
	case pt.Mark == decode.MarkCNP:
		return gCNP
	case pt.Mark == decode.MarkNAK:
		return gNAK
	case pt.Mark == decode.MarkRNRNAK:
		return gRNR
	case pt.Response:
		return gAck
	}
	return gNone
}

// maxGraphPoints bounds the points kept.
const maxGraphPoints = 1 << 20

// NewPSNGraph returns an empty graph.
func NewPSNGraph() *PSNGraph { return &PSNGraph{} }

// Add records p if it belongs to the graph's connection. Give it every
// packet, before the display filter: the first one shown picks the
// connection.
func (g *PSNGraph) Add(p *decode.Packet, shown bool) {
	a := &p.Analysis
	b := p.BTH()
	if b == nil || a.Conv == 0 || p.Err != nil || b.DestQP <= 1 {
		return
	}
	if g.conv == 0 {
		if !shown {
			return
		}
		g.conv = a.Conv
	}
	if a.Conv != g.conv {
		return
	}
	if g.dir == 0 {
		if !b.Info().IsRequest() {
			return
		}
		g.dir = a.Dir
	}
	pt := g.series.Point(p)
	if g.kind(&pt) == gNone {
		return
	}
	if len(g.points) >= maxGraphPoints {
		g.dropped++
		return
	}
	g.points = append(g.points, pt)
}

// WriteSVG draws the graph as a plain SVG document.
func (g *PSNGraph) WriteSVG(w io.Writer, title string) error {
	const (
		width, height = 960, 540
		left, right   = 90, 30
		top, bottom   = 50, 70
	)
	// The PSNs count from the first request's: base.
	var base int64
	if len(g.points) > 0 {
		base = g.points[0].PSN
	}
	// The axes span what is drawn: requests and NAK markers at their
	// PSN, the ACK line at the highest PSN answered yet, CNPs on it.
	var t0, t1 time.Duration
	var y0, y1 int64
	lastAck := int64(0)
	for i := range g.points {
		pt := &g.points[i]
		if i == 0 {
			t0, t1 = pt.T, pt.T
		}
		t0, t1 = min(t0, pt.T), max(t1, pt.T)
		psn := pt.PSN - base
		switch g.kind(pt) {
		case gCNP:
			continue
		case gAck:
			lastAck = max(lastAck, psn)
			psn = lastAck
		}
		y0, y1 = min(y0, psn), max(y1, psn)
	}
	lastAck = 0
	if t1 == t0 {
		t1 = t0 + time.Microsecond
	}
	if y1 == y0 {
		y1 = y0 + 1
	}
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	x := func(t time.Duration) float64 { return left + pw*float64(t-t0)/float64(t1-t0) }
	y := func(v int64) float64 { return top + ph - ph*float64(v-y0)/float64(y1-y0) }
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"24\" font-size=\"15\">%s</text>\n", left, xmlEscape(title))
	// Axes, ticks and labels.
	fmt.Fprintf(&b, "<g stroke=\"black\" fill=\"none\"><rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/></g>\n", left, top, pw, ph)
	b.WriteString("<g fill=\"black\" stroke=\"#ccc\">\n")
	for i := 0; i <= 5; i++ {
		tv := t0 + time.Duration(float64(t1-t0)*float64(i)/5)
		yv := y0 + int64(math.Round(float64(y1-y0)*float64(i)/5))
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\"/>", x(tv), top, x(tv), top+ph)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" stroke=\"none\">%s</text>\n", x(tv), top+ph+18, secondsLabel(tv))
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>", left, y(yv), left+pw, y(yv))
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\">%d</text>\n", left-6, y(yv)+4, yv)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">time (s)</text>\n", left+pw/2, height-30)
	fmt.Fprintf(&b, "<text x=\"20\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.0f)\">PSN (from %d)</text>\n", top+ph/2, top+ph/2, decode.WirePSN(base))
	// The ACK trace: a step line of the highest PSN answered.
	var acks []string
	for i := range g.points {
		pt := &g.points[i]
		if k := g.kind(pt); k == gAck || k == gNAK || k == gRNR {
			acks = append(acks, fmt.Sprintf("%.1f,%.1f", x(pt.T), y(max(pt.PSN-base, lastAck))))
			lastAck = max(lastAck, pt.PSN-base)
		}
	}
	if len(acks) > 0 {
		fmt.Fprintf(&b, "<polyline fill=\"none\" stroke=\"#2a2\" stroke-width=\"1\" points=\"%s\"/>\n", strings.Join(acks, " "))
	}
	// Requests: a tick each, red when sent again; markers for NAK, RNR, CNP.
	b.WriteString("<g stroke-width=\"1.5\">\n")
	lastAck = 0
	for i := range g.points {
		pt := &g.points[i]
		px, psn := x(pt.T), pt.PSN-base
		switch k := g.kind(pt); k {
		case gRequest, gRetrans:
			color := "#238"
			if k == gRetrans {
				color = "#d22"
			}
			fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", px, y(psn)+3, px, y(psn)-3, color)
		case gAck:
			lastAck = max(lastAck, psn)
		case gNAK:
			py := y(psn)
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#d22\"/>\n", px-4, py-4)
		case gRNR:
			py := y(psn)
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fl5 9h-10z\" fill=\"#e90\" stroke=\"none\"/>\n", px, py-5)
		case gCNP:
			py := y(lastAck)
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"#93c\" stroke=\"none\"/>\n", px, py-5)
		}
	}
	b.WriteString("</g>\n")
	// Legend.
	legend := []struct{ color, text string }{{"#238", "request"}, {"#d22", "retransmission"}, {"#2a2", "ACK / response"},
		{"#d22", "NAK (x)"}, {"#e90", "RNR NAK"}, {"#93c", "CNP"}}
	for i, l := range legend {
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			left+i*130, height-18, l.color, left+i*130+14, height-9, l.text)
	}
	if len(g.points) == 0 {
		fmt.Fprintf(&b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no requests in the connection chosen</text>\n", left+pw/2, top+ph/2)
	}
	if g.dropped > 0 {
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"40\" font-size=\"11\">%d later packets not drawn</text>\n", left, g.dropped)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Conv is the conversation drawn (0 when none was chosen).
func (g *PSNGraph) Conv() uint32 { return g.conv }

func secondsLabel(d time.Duration) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.6f", d.Seconds()), "0"), ".")
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;").Replace(s)
}
