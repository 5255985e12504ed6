package output

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
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
	base    layers.PSN
	prev    layers.PSN
	off     int64 // unwrapped PSN of prev, from base
	started bool
	points  []graphPoint
	dropped int
}

type graphKind uint8

const (
	gRequest graphKind = iota
	gRetrans
	gAck
	gNAK
	gRNR
	gCNP
)

type graphPoint struct {
	t    time.Duration
	psn  int64
	kind graphKind
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
	info := b.Info()
	if g.dir == 0 {
		if !info.IsRequest() {
			return
		}
		g.dir = a.Dir
	}
	var kind graphKind
	switch {
	case a.Dir == g.dir && info.IsRequest():
		kind = gRequest
		if a.Has(decode.FindRetransmission) {
			kind = gRetrans
		}
	case a.Dir != g.dir && a.Has(decode.FindCNP):
		kind = gCNP
	case a.Dir != g.dir && a.Has(decode.FindNAK):
		kind = gNAK
	case a.Dir != g.dir && a.Has(decode.FindRNRNAK):
		kind = gRNR
	case a.Dir != g.dir && info.Response:
		kind = gAck
	default:
		return
	}
	psn := g.unwrap(b.PSN)
	if kind == gCNP {
		psn = -1 // drawn at the last ACK's height
	}
	if len(g.points) >= maxGraphPoints {
		g.dropped++
		return
	}
	g.points = append(g.points, graphPoint{p.RelTime, psn, kind})
}

// unwrap places a 24-bit PSN on a line that does not wrap.
func (g *PSNGraph) unwrap(p layers.PSN) int64 {
	if !g.started {
		g.base, g.prev, g.started = p, p, true
		return 0
	}
	g.off += int64(p.Diff(g.prev))
	g.prev = p
	return g.off
}

// WriteSVG draws the graph as a plain SVG document.
func (g *PSNGraph) WriteSVG(w io.Writer, title string) error {
	const (
		width, height = 960, 540
		left, right   = 90, 30
		top, bottom   = 50, 70
	)
	var t0, t1 time.Duration
	var y0, y1 int64
	lastAck := int64(0)
	for i, pt := range g.points {
		if i == 0 {
			t0, t1 = pt.t, pt.t
		}
		t0, t1 = min(t0, pt.t), max(t1, pt.t)
		if pt.psn >= 0 {
			if i == 0 || pt.psn < y0 {
				y0 = pt.psn
			}
			y1 = max(y1, pt.psn)
		}
	}
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
	fmt.Fprintf(&b, "<text x=\"20\" y=\"%.0f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.0f)\">PSN (from %d)</text>\n", top+ph/2, top+ph/2, g.base)
	// The ACK trace: a step line of the highest PSN answered.
	var acks []string
	for _, pt := range g.points {
		if pt.kind == gAck || pt.kind == gNAK || pt.kind == gRNR {
			acks = append(acks, fmt.Sprintf("%.1f,%.1f", x(pt.t), y(max(pt.psn, lastAck))))
			lastAck = max(lastAck, pt.psn)
		}
	}
	if len(acks) > 0 {
		fmt.Fprintf(&b, "<polyline fill=\"none\" stroke=\"#2a2\" stroke-width=\"1\" points=\"%s\"/>\n", strings.Join(acks, " "))
	}
	// Requests: a tick each, red when sent again; markers for NAK, RNR, CNP.
	b.WriteString("<g stroke-width=\"1.5\">\n")
	lastAck = 0
	for _, pt := range g.points {
		px := x(pt.t)
		switch pt.kind {
		case gRequest, gRetrans:
			color := "#238"
			if pt.kind == gRetrans {
				color = "#d22"
			}
			fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", px, y(pt.psn)+3, px, y(pt.psn)-3, color)
		case gAck:
			lastAck = max(lastAck, pt.psn)
		case gNAK:
			py := y(pt.psn)
			fmt.Fprintf(&b, "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"#d22\"/>\n", px-4, py-4)
		case gRNR:
			py := y(pt.psn)
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
