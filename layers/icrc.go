package layers

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Encapsulation says what carries an IB transport packet, which decides the
// headers the ICRC covers and how they are masked.
type Encapsulation uint8

// Encapsulations of the IB transport.
const (
	EncapNone       Encapsulation = iota // no IB transport packet
	EncapRoCEv2IPv4                      // Ethernet/IPv4/UDP 4791 (Annex A17)
	EncapRoCEv2IPv6                      // Ethernet/IPv6/UDP 4791 (Annex A17)
	EncapRoCEv1                          // Ethernet/GRH, ethertype 0x8915 (Annex A16)
	EncapIBLocal                         // native IB, LRH then BTH (LNH=2)
	EncapIBGlobal                        // native IB, LRH, GRH then BTH (LNH=3)
)

var encapNames = [...]string{"none", "RoCEv2", "RoCEv2", "RoCEv1", "IB", "IB"}

// String returns "RoCEv1", "RoCEv2" or "IB", the values of ibwire.encap.
func (e Encapsulation) String() string {
	if int(e) < len(encapNames) {
		return encapNames[e]
	}
	return fmt.Sprintf("Encapsulation(%d)", uint8(e))
}

// Native reports native InfiniBand, which adds a VCRC.
func (e Encapsulation) Native() bool { return e == EncapIBLocal || e == EncapIBGlobal }

// pseudoLRH stands in for the LRH that RoCE does not have (and replaces the
// real one of a native packet with a GRH): eight bytes of ones.
var pseudoLRH = [LRHLength]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

// maxMaskedHeader is the longest run of headers the ICRC masks: pseudo-LRH,
// an IPv4 header with the largest options, UDP and a BTH.
const maxMaskedHeader = LRHLength + 60 + 8 + BTHLength

// ComputeICRC computes the invariant CRC (IBTA Vol 1 §7.8.1, Annex A16/A17)
// of one packet. pkt starts at the first header the ICRC covers — the IPv4 or
// IPv6 header for RoCEv2, the GRH for RoCEv1, the LRH for native IB — and
// ends with the four ICRC bytes (native IB: the VCRC is not part of pkt).
//
// The CRC is the standard CRC-32 over 8 bytes of ones (a masked LRH), the
// network headers with their variant fields set to ones (IPv4 TOS, TTL and
// checksum; IPv6 or GRH traffic class, flow label and hop limit; UDP
// checksum; BTH byte 4 with FECN/BECN), then everything up to the ICRC. A
// native packet without GRH keeps its LRH and masks only VL. It allocates
// its scratch buffer; ICRCComputer does not.
func ComputeICRC(encap Encapsulation, pkt []byte) (uint32, error) {
	var c ICRCComputer
	return c.Compute(encap, pkt)
}

// ICRCComputer computes ICRCs without allocating: it keeps the scratch
// buffer the masked headers are copied into (crc32 lets that buffer escape,
// so a local one would be allocated on every call). The zero value is ready.
type ICRCComputer struct {
	scratch [maxMaskedHeader + crcHead]byte
}

// crcHead is how much of a packet the masked headers and the start of the
// payload make, copied together into one CRC update: Go's crc32 runs its
// carry-less-multiply code only on 64 bytes or more and takes a table
// eight bytes at a time below that, so the 48 masked bytes of a RoCEv2
// header must not go alone. A packet that fits is one update; a longer one
// leaves at least 64 bytes for the second.
const crcHead = 256

// Compute is ComputeICRC using c's scratch buffer.
func (c *ICRCComputer) Compute(encap Encapsulation, pkt []byte) (uint32, error) {
	scratch := &c.scratch
	n := 0
	rest := pkt
	need := func(layer, field string, size int) error {
		if len(rest) < size {
			return &DecodeError{Layer: layer, Field: field, Offset: len(pkt) - len(rest), Need: size, Have: len(rest), Err: ErrTruncated}
		}
		return nil
	}
	switch encap {
	case EncapRoCEv2IPv4:
		n += copy(scratch[n:], pseudoLRH[:])
		if err := need("IPv4", "IHL", 20); err != nil {
			return 0, err
		}
		ihl := int(rest[0]&0x0F) * 4
		if ihl < 20 {
			return 0, malformed("IPv4", "IHL", 0, "header length %d", ihl)
		}
		if err := need("IPv4", "Options", ihl); err != nil {
			return 0, err
		}
		h := scratch[n : n+ihl]
		n += copy(h, rest[:ihl])
		h[1] = 0xFF               // TOS: DSCP and ECN
		h[8] = 0xFF               // TTL
		h[10], h[11] = 0xFF, 0xFF // header checksum
		rest = rest[ihl:]
	case EncapRoCEv2IPv6, EncapRoCEv1, EncapIBGlobal:
		layer := "IPv6"
		if encap == EncapIBGlobal {
			if err := need("LRH", "SLID", LRHLength); err != nil {
				return 0, err
			}
			rest = rest[LRHLength:] // the whole LRH is masked: the pseudo-LRH takes its place
		}
		if encap != EncapRoCEv2IPv6 {
			layer = "GRH"
		}
		n += copy(scratch[n:], pseudoLRH[:])
		if err := need(layer, "DGID", GRHLength); err != nil {
			return 0, err
		}
		h := scratch[n : n+GRHLength]
		n += copy(h, rest[:GRHLength])
		h[0] |= 0x0F // traffic class and flow label; the version nibble stays
		h[1], h[2], h[3] = 0xFF, 0xFF, 0xFF
		h[7] = 0xFF // hop limit
		rest = rest[GRHLength:]
	case EncapIBLocal:
		if err := need("LRH", "SLID", LRHLength); err != nil {
			return 0, err
		}
		h := scratch[n : n+LRHLength]
		n += copy(h, rest[:LRHLength])
		h[0] |= 0xF0 // VL, the only variant LRH field when there is no GRH
		rest = rest[LRHLength:]
	default:
		return 0, fmt.Errorf("icrc: no ICRC for encapsulation %v", encap)
	}
	if encap == EncapRoCEv2IPv4 || encap == EncapRoCEv2IPv6 {
		if err := need("UDP", "Checksum", 8); err != nil {
			return 0, err
		}
		h := scratch[n : n+8]
		n += copy(h, rest[:8])
		h[6], h[7] = 0xFF, 0xFF // UDP checksum
		rest = rest[8:]
	}
	if err := need("BTH", "PSN", BTHLength+ICRCLength); err != nil {
		return 0, err
	}
	h := scratch[n : n+BTHLength]
	n += copy(h, rest[:BTHLength])
	h[4] = 0xFF // FECN, BECN, Resv6
	rest = rest[BTHLength:]

	payload := rest[:len(rest)-ICRCLength]
	if k := crcHead - n; len(payload) <= k {
		n += copy(scratch[n:], payload)
		payload = nil
	} else if len(payload)-k >= 64 {
		n += copy(scratch[n:crcHead], payload)
		payload = payload[k:]
	}
	crc := crc32.Update(0, crc32.IEEETable, scratch[:n])
	return crc32.Update(crc, crc32.IEEETable, payload), nil
}

// VerifyICRC computes the ICRC of pkt (laid out as for ComputeICRC) and
// compares it with the one the packet carries.
func VerifyICRC(encap Encapsulation, pkt []byte) (got, want uint32, err error) {
	want, err = ComputeICRC(encap, pkt)
	if err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint32(pkt[len(pkt)-ICRCLength:]), want, nil
}

// vcrcTable drives the VCRC: CRC-16 with polynomial 0x100B, reflected
// (0xD008), initial value 0xFFFF and final xor 0xFFFF (IBTA Vol 1 §7.8.2).
var vcrcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// ComputeVCRC computes the variant CRC of a native IB packet: pkt is the LRH
// through the ICRC (LRH.PktLen×4 bytes). The VCRC is sent little-endian.
func ComputeVCRC(pkt []byte) uint16 {
	c := uint16(0xFFFF)
	for _, b := range pkt {
		c = c>>8 ^ vcrcTable[byte(c)^b]
	}
	return ^c
}
