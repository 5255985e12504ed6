package endpoint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/ibwire/ibwire/layers"
)

// A UDP socket hands us the UDP payload (BTH … ICRC) but the ICRC also
// covers the IP and UDP headers the kernel builds or strips. The helpers in
// this file rebuild those headers as a short synthetic packet — header, the
// 12-byte BTH and a 4-byte ICRC placeholder — so that layers.ICRCComputer
// applies the RoCEv2 masking rules (ENDPOINT.md §1.4) to them, and then
// continue the same CRC-32 over the rest of the payload in place. Nothing
// here knows which header bytes are masked: that fact lives in layers.

// ipv4UDPHeaderLen and ipv6UDPHeaderLen are the headers a UDP socket adds.
const (
	ipv4UDPHeaderLen = 20 + 8
	ipv6UDPHeaderLen = 40 + 8
	// minRoCEDatagram is the shortest UDP payload carrying a transport
	// packet: a BTH and an ICRC.
	minRoCEDatagram = layers.BTHLength + layers.ICRCLength
	// ipv4DontFragment is the flags/fragment-offset word of every RoCEv2
	// IPv4 packet: DF set, no fragmentation (rxe always sets DF).
	ipv4DontFragment = 0x4000
	// udpProto is IPPROTO_UDP in the IPv4 protocol / IPv6 next-header field.
	udpProto = 17
)

var errDatagramTooShort = errors.New("datagram shorter than BTH and ICRC")

// icrcSynth computes ICRCs of UDP payloads under headers that a UDP socket
// does not show. It is not safe for concurrent use: each reader and each
// writer batch owns one.
type icrcSynth struct {
	crc     layers.ICRCComputer
	scratch [synthHead + layers.ICRCLength]byte
}

// synthHead is how much of the synthetic packet goes to layers in one
// piece: the headers, the BTH and the payload's first bytes. crc32 runs its
// carry-less-multiply code only on 64 bytes or more and a table below that,
// so the 60 or so header bytes are hashed together with the start of the
// payload, and what stays for the second update is none or at least 64
// bytes. layers hashes up to 256 bytes (its 8-byte pseudo-LRH in front of
// the packet) as one update, so 248 bytes of packet stay one update there.
const synthHead = 256 - 8

// compute returns the ICRC of payload (BTH through ICRC) travelling from
// src to dst in a packet whose IPv4 Identification is ipID (ignored for
// IPv6). The header fields the ICRC masks (TOS, TTL, checksums, traffic
// class, flow label, hop limit) may hold anything: layers masks them.
func (s *icrcSynth) compute(src, dst netip.AddrPort, ipID uint16, payload []byte) (uint32, error) {
	if len(payload) < minRoCEDatagram {
		return 0, fmt.Errorf("icrc of %d-byte datagram: %w", len(payload), errDatagramTooShort)
	}
	b := s.scratch[:]
	var n int
	encap := layers.EncapRoCEv2IPv4
	if src.Addr().Is4() {
		b[0] = 0x45 // version 4, IHL 5: rxe assumes no options
		b[1] = 0
		binary.BigEndian.PutUint16(b[2:], uint16(ipv4UDPHeaderLen+len(payload)))
		binary.BigEndian.PutUint16(b[4:], ipID)
		binary.BigEndian.PutUint16(b[6:], ipv4DontFragment)
		b[8] = 0
		b[9] = udpProto
		b[10], b[11] = 0, 0
		s4, d4 := src.Addr().As4(), dst.Addr().As4()
		copy(b[12:16], s4[:])
		copy(b[16:20], d4[:])
		n = 20
	} else {
		encap = layers.EncapRoCEv2IPv6
		binary.BigEndian.PutUint32(b[0:], 6<<28)
		binary.BigEndian.PutUint16(b[4:], uint16(8+len(payload)))
		b[6] = udpProto
		b[7] = 0
		s16, d16 := src.Addr().As16(), dst.Addr().As16()
		copy(b[8:24], s16[:])
		copy(b[24:40], d16[:])
		n = 40
	}
	binary.BigEndian.PutUint16(b[n:], src.Port())
	binary.BigEndian.PutUint16(b[n+2:], dst.Port())
	binary.BigEndian.PutUint16(b[n+4:], uint16(8+len(payload)))
	b[n+6], b[n+7] = 0, 0
	return s.finish(encap, n+8, payload)
}

// computeUnder returns the ICRC of payload under the IP and UDP headers in
// hdr, exactly as received (the packet wire sees them).
func (s *icrcSynth) computeUnder(encap layers.Encapsulation, hdr, payload []byte) (uint32, error) {
	if len(payload) < minRoCEDatagram {
		return 0, fmt.Errorf("icrc of %d-byte datagram: %w", len(payload), errDatagramTooShort)
	}
	if len(hdr) > ipv6UDPHeaderLen {
		return 0, fmt.Errorf("icrc: %d bytes of IP and UDP header, at most %d supported", len(hdr), ipv6UDPHeaderLen)
	}
	return s.finish(encap, copy(s.scratch[:], hdr), payload)
}

// finish appends the BTH and an ICRC placeholder to the n header bytes in
// the scratch buffer, lets layers mask and hash them, and continues the CRC
// over the rest of the payload.
func (s *icrcSynth) finish(encap layers.Encapsulation, n int, payload []byte) (uint32, error) {
	b := s.scratch[:]
	body := payload[:len(payload)-layers.ICRCLength] // BTH and what follows it
	k := min(len(body), synthHead-n)
	if rest := len(body) - k; rest > 0 && rest < 64 {
		k = max(layers.BTHLength, k-(64-rest))
	}
	n += copy(b[n:], body[:k])
	clear(b[n : n+layers.ICRCLength])
	n += layers.ICRCLength
	crc, err := s.crc.Compute(encap, b[:n])
	if err != nil {
		return 0, err
	}
	// layers hashed everything it masks; the rest of the payload is hashed
	// as it is, so the same CRC-32 simply continues over it.
	return crc32.Update(crc, crc32.IEEETable, body[k:]), nil
}

// fill writes the ICRC of payload into its last four bytes (little-endian,
// as RoCEv2 sends it).
func (s *icrcSynth) fill(src, dst netip.AddrPort, ipID uint16, payload []byte) error {
	crc, err := s.compute(src, dst, ipID, payload)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(payload[len(payload)-layers.ICRCLength:], crc)
	return nil
}

// verify classifies a received payload's ICRC.
//
// IPv6: every hashed field is known, so the answer is ICRCGood or ICRCBad.
//
// IPv4: a UDP socket never reports the sender's IP Identification, which the
// ICRC hashes (ENDPOINT.md §1.4). The CRC is affine, so for packets of one
// length the ICRC under ID x differs from the ICRC under ID 0 by L(x), a
// linear function of x's 16 bits. verify predicts the ICRC for ID 0; when the
// received one equals it the packet is ICRCGood (a peer like this wire sends
// ID 0), when the difference lies in the 16-dimensional space spanned by
// L(1), L(2), … L(0x8000) the packet is ICRCUnverifiable (correct for ID =
// the returned value), otherwise ICRCBad. A random corruption falls in that
// space with probability 2^16/2^32 = 2^-16, so IPv4 over a UDP socket detects
// all but one corrupted packet in 65536; with ID 0 the check is exact.
func (s *icrcSynth) verify(src, dst netip.AddrPort, payload []byte) (ICRCStatus, uint16) {
	want, err := s.compute(src, dst, 0, payload)
	if err != nil {
		return ICRCBad, 0
	}
	got := binary.LittleEndian.Uint32(payload[len(payload)-layers.ICRCLength:])
	diff := got ^ want
	if diff == 0 {
		return ICRCGood, 0
	}
	if !src.Addr().Is4() || len(payload) > MaxDatagram {
		return ICRCBad, 0
	}
	id, ok := ipv4IDBasisFor(len(payload)).solve(diff)
	if !ok {
		return ICRCBad, 0
	}
	return ICRCUnverifiable, id
}

// ipv4IDBasis is L(1<<i) for i = 0..15 for one payload length, in reduced
// row-echelon form: each row's pivot bit is set in no other row, so the
// difference reduces to zero in one pass exactly when it lies in the span.
// The rows are independent because CRC-32 detects every burst of up to 32
// bits, so no non-zero ID change leaves the ICRC unchanged.
type ipv4IDBasis struct {
	rows [16]struct {
		vec   uint32 // a combination of L(1<<i)
		pivot uint32 // the single bit of vec that identifies the row
		ids   uint16 // which ID bits the combination XORs
	}
}

// solve returns the ID x with L(x) = diff, when there is one.
func (b *ipv4IDBasis) solve(diff uint32) (uint16, bool) {
	var id uint16
	for i := range b.rows {
		r := &b.rows[i]
		if diff&r.pivot != 0 {
			diff ^= r.vec
			id ^= r.ids
		}
	}
	return id, diff == 0
}

// ipv4IDBases caches the basis per payload length; the set of lengths is
// small (RoCE pads payloads to 4 bytes) and each basis is 128 bytes, built
// on first use by the one length's readers.
var (
	ipv4IDBases   [MaxDatagram + 1]atomic.Pointer[ipv4IDBasis]
	ipv4IDBasisMu sync.Mutex
)

func ipv4IDBasisFor(payloadLen int) *ipv4IDBasis {
	if b := ipv4IDBases[payloadLen].Load(); b != nil {
		return b
	}
	ipv4IDBasisMu.Lock()
	defer ipv4IDBasisMu.Unlock()
	if b := ipv4IDBases[payloadLen].Load(); b != nil {
		return b
	}
	b := buildIPv4IDBasis(payloadLen)
	ipv4IDBases[payloadLen].Store(b)
	return b
}

// buildIPv4IDBasis measures L(1<<i) with layers.ComputeICRC over an all-zero
// IPv4/UDP packet of the given payload length: ICRC(ID=1<<i) xor ICRC(ID=0).
func buildIPv4IDBasis(payloadLen int) *ipv4IDBasis {
	pkt := make([]byte, ipv4UDPHeaderLen+payloadLen)
	pkt[0] = 0x45
	icrcOf := func(id uint16) uint32 {
		binary.BigEndian.PutUint16(pkt[4:], id)
		crc, err := layers.ComputeICRC(layers.EncapRoCEv2IPv4, pkt)
		if err != nil {
			panic(fmt.Sprintf("endpoint: icrc of a %d-byte zero packet: %v", len(pkt), err))
		}
		return crc
	}
	zero := icrcOf(0)
	b := new(ipv4IDBasis)
	n := 0
	for bit := range 16 {
		vec, ids := icrcOf(1<<bit)^zero, uint16(1)<<bit
		for i := range n { // reduce by the rows so far
			if vec&b.rows[i].pivot != 0 {
				vec ^= b.rows[i].vec
				ids ^= b.rows[i].ids
			}
		}
		if vec == 0 {
			panic("endpoint: CRC-32 lost an IP ID bit") // impossible, see ipv4IDBasis
		}
		pivot := vec & -vec
		for i := range n { // keep the form reduced: clear the new pivot elsewhere
			if b.rows[i].vec&pivot != 0 {
				b.rows[i].vec ^= vec
				b.rows[i].ids ^= ids
			}
		}
		b.rows[n].vec, b.rows[n].pivot, b.rows[n].ids = vec, pivot, ids
		n++
	}
	return b
}
