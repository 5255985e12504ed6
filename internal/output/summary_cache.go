package output

import (
	"encoding/binary"

	"github.com/ibwire/ibwire/decode"
)

// lineCache keeps the text a line renderer wrote for a part of a line that
// follows from a few header values alone: the default line's "RoCEv2
// A.port > B.port: opcode QP 0x... PSN " is the same for every packet of
// one connection's direction and opcode, and -T text's addresses for every
// packet between two hosts. A renderer writes such a part once, keeps it
// under its key, and copies it for the next packets that have the same key.
//
// A key has lineCacheWays slots (the cache is set-associative): a key
// found in none writes its part afresh and takes the first, the others
// moving one slot on. A part longer than a slot holds is not kept.
type lineCache struct {
	slots [lineCacheSlots]lineSlot
}

const (
	lineCacheBits  = 10
	lineCacheSlots = 1 << lineCacheBits
	lineCacheWays  = 8
	lineSlotRoom   = 134 // a slot is 192 bytes
)

// lineKey is what a cached part follows from. The renderers fill the
// fields their part depends on and leave the others zero; part says which
// part of which line the text is, so that parts do not share keys.
type lineKey struct {
	src, dst [2]uint64 // the IP addresses, an IPv4 one in word 0
	ports    uint32    // UDP source port << 16 | destination port
	qp       uint32    // destination QP | opcode << 24
	fam      uint8     // 4 or 6: the IP version of src and dst
	encap    uint8     // layers.Encapsulation
	part     uint8     // the renderer's part
}

type lineSlot struct {
	hash uint64 // key's
	key  lineKey
	n    uint8 // 0: empty
	text [lineSlotRoom]byte
}

// setAddrs sets k's addresses from p's IP header, as AppendAddress writes
// them; it reports false when p has no IPv4 or IPv6 header with addresses
// of their size, whose text AppendAddress would write otherwise.
func (k *lineKey) setAddrs(p *decode.Packet) bool {
	h := p.Headers
	switch {
	case p.HasIPv4():
		s, d := h.IPv4.SrcIP, h.IPv4.DstIP
		if len(s) != 4 || len(d) != 4 {
			return false
		}
		k.src[0], k.dst[0] = uint64(binary.BigEndian.Uint32(s)), uint64(binary.BigEndian.Uint32(d))
		k.fam = 4
	case p.HasIPv6():
		s, d := h.IPv6.SrcIP, h.IPv6.DstIP
		if len(s) != 16 || len(d) != 16 {
			return false
		}
		k.src[0], k.src[1] = binary.BigEndian.Uint64(s), binary.BigEndian.Uint64(s[8:])
		k.dst[0], k.dst[1] = binary.BigEndian.Uint64(d), binary.BigEndian.Uint64(d[8:])
		k.fam = 6
	default:
		return false
	}
	return true
}

// same reports k == o, without the runtime's memequal call that == makes
// for a struct with padding.
func (k *lineKey) same(o *lineKey) bool {
	return k.src == o.src && k.dst == o.dst && k.ports == o.ports && k.qp == o.qp &&
		k.fam == o.fam && k.encap == o.encap && k.part == o.part
}

// hash mixes k's words into 64 bits.
func (k *lineKey) hash() uint64 {
	h := (k.src[0] ^ k.src[1]<<1 ^ uint64(k.qp)<<32) * 0x9E3779B97F4A7C15
	h ^= (k.dst[0] ^ k.dst[1]<<1 ^ uint64(k.ports)<<32 ^ uint64(k.fam)<<24 ^ uint64(k.encap)<<16 ^ uint64(k.part)<<8) * 0xC2B2AE3D27D4EB4F
	h ^= h >> 31
	return h * 0x165667B19E3779F9
}

// set returns the first of k's lineCacheWays slots.
func set(h uint64) int {
	return int(h>>(64-lineCacheBits)) &^ (lineCacheWays - 1)
}

// appendKept appends k's kept text and reports true, or reports false when
// k has none.
func (c *lineCache) appendKept(buf []byte, k *lineKey) ([]byte, bool) {
	h := k.hash()
	for i := set(h); i < set(h)+lineCacheWays; i++ {
		s := &c.slots[i&(lineCacheSlots-1)]
		if s.hash == h && s.n != 0 && s.key.same(k) {
			return append(buf, s.text[:s.n]...), true
		}
	}
	return buf, false
}

// keep keeps text under k, when it fits a slot: in the first of k's slots,
// the others' texts moving one slot on (the least recently kept goes).
func (c *lineCache) keep(k *lineKey, text []byte) {
	if len(text) == 0 || len(text) > lineSlotRoom {
		return
	}
	h := k.hash()
	set := c.slots[set(h):][:lineCacheWays]
	copy(set[1:], set)
	s := &set[0]
	s.hash, s.key = h, *k
	s.n = uint8(copy(s.text[:], text))
}
