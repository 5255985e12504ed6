package decode

import (
	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/layers"
)

// A ValueSpan says where one of a packet's headers holds a field's value,
// for the fields whose presence and value follow from that alone: whether
// the packet has the header, and the bytes of the span. Two packets with
// the same HeaderSet whose header bytes agree over the span answer the
// field's Get alike, so a renderer that draws many packets of one shape
// (the -V tree's plans) can compare a few bytes instead of asking the
// field again. A field whose value the decoder works out from more than
// its bytes (a checksum's verdict, ip.len, which an offloaded send leaves
// zero and the decoder then takes from the frame) has none.
// TestValueSpansHold holds every span to its field over the corpus.
type ValueSpan struct {
	Header   SpanHeader
	Off, Len uint8
}

// SpanHeader names a header a ValueSpan lies in.
type SpanHeader uint8

// The headers spans lie in; SpanNone marks a field without one.
const (
	SpanNone SpanHeader = iota
	SpanEthernet
	SpanIPv4
	SpanUDP
	SpanBTH // the Base Transport Header's 12 bytes
	spanHeaders
)

// SpanHeaders is how many SpanHeader values there are, SpanNone included:
// the size of an array a renderer indexes by them.
const SpanHeaders = int(spanHeaders)

// Span returns where the field's value lies, and false for a field
// without a span.
func (f *Field) Span() (ValueSpan, bool) { return f.span, f.span.Header != SpanNone }

// SpanBytes returns header h of p as decoded, nil when p has none.
func (p *Packet) SpanBytes(h SpanHeader) []byte {
	switch {
	case h == SpanEthernet && p.has&hasEthernet != 0:
		return p.Headers.Ethernet.Contents
	case h == SpanIPv4 && p.has&hasIPv4 != 0:
		return p.Headers.IPv4.Contents
	case h == SpanUDP && p.has&hasUDP != 0:
		return p.Headers.UDP.Contents
	case h == SpanBTH && p.has&hasBTH != 0:
		return p.Headers.BTH.Contents
	}
	return nil
}

// HeaderSet names the kinds of header p has, its extended transport
// headers among them: two packets with the same HeaderSet have the same
// headers.
func (p *Packet) HeaderSet() uint64 {
	s := uint64(p.has)
	if p.has&hasBTH != 0 {
		s |= uint64(p.Headers.BTH.ETHs()) << 32
	}
	return s
}

// PresentByHeaders reports a field whose presence follows from the
// packet's HeaderSet alone (a header's own item: Ethernet, the BTH, the
// RETH ...; the RETH's fields, there with a RETH or an AtomicETH), and
// none of whose subtree can be there without it: two packets with the
// same HeaderSet both have it or both lack it.
// TestPresentByHeadersHolds holds the fields that say so to it.
func (f *Field) PresentByHeaders() bool { return f.byHeaders }

// byHeaders marks f PresentByHeaders.
func byHeaders(f *Field) *Field {
	f.byHeaders = true
	return f
}

// spanLayers are the layer types of the headers spans lie in, whose
// field tables (layers.HeaderFields) place the fields.
var spanLayers = [spanHeaders]gopacket.LayerType{
	SpanEthernet: gplayers.LayerTypeEthernet,
	SpanIPv4:     gplayers.LayerTypeIPv4,
	SpanUDP:      gplayers.LayerTypeUDP,
	SpanBTH:      layers.LayerTypeBTH,
}

// spanned gives f the span of the entry named field in header h's field
// table: where the header's bytes lie is layers' to say.
func spanned(h SpanHeader, field string, f *Field) *Field {
	_, table := layers.HeaderFields(spanLayers[h])
	for _, s := range table {
		if s.Name == field {
			f.span = ValueSpan{Header: h, Off: uint8(s.Offset), Len: uint8(s.Size)}
			return f
		}
	}
	panic("decode: " + f.Name + ": no " + field + " in the field table of its header")
}
