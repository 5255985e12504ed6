package layers

import "encoding/binary"

// GSOSegmentSpan lays out in dst, as ICRCSpan does (network header through
// ICRC), the first datagram a UDP GSO run of segment-byte segments becomes
// on the wire. span is the ICRC span of the run as a capture before
// segmentation shows it (one RoCEv2 datagram), udpPayload the offset of its
// UDP payload in span. The kernel segments by copying the IP and UDP
// headers in front of each segment with their lengths rewritten (IPv4
// Total Length, IPv6 Payload Length, UDP Length), and the ICRC covers
// those lengths (Annex A17: only the variant fields are masked), so the
// first segment's ICRC verifies over this span and not over the run's
// headers. False when span is not RoCEv2 or holds no full first segment.
func GSOSegmentSpan(dst []byte, encap Encapsulation, span []byte, udpPayload, segment int) ([]byte, bool) {
	if encap != EncapRoCEv2IPv4 && encap != EncapRoCEv2IPv6 || udpPayload < 8 || segment < BTHLength+ICRCLength ||
		udpPayload+segment > len(span) {
		return dst, false
	}
	dst = append(dst[:0], span[:udpPayload+segment]...)
	udp := dst[udpPayload-8:]
	binary.BigEndian.PutUint16(udp[4:], uint16(8+segment))
	switch encap {
	case EncapRoCEv2IPv4:
		binary.BigEndian.PutUint16(dst[2:], uint16(udpPayload+segment))
	case EncapRoCEv2IPv6:
		binary.BigEndian.PutUint16(dst[4:], uint16(udpPayload-GRHLength+segment))
	}
	return dst, true
}
