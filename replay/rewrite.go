package replay

import (
	"encoding/binary"
	"net/netip"

	gplayers "github.com/google/gopacket/layers"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// Rewriter applies Rules to frames in place. It patches the bytes of each
// field it changes and nothing else, then brings the checksums that cover
// them up to date: the IPv4 header checksum and UDP/TCP checksums
// incrementally (RFC 1624, so a zero UDP checksum stays zero), the ICRC and
// the VCRC with layers' code. A Rewriter is not safe for concurrent use.
type Rewriter struct {
	rules *Rules
	dec   *decode.Decoder
	icrc  layers.ICRCComputer

	// per frame: the changes that the UDP/TCP pseudo-header and the IPv4
	// header checksum must follow
	ipDiff, l4Diff diffs
	// Stats counts what was changed.
	Stats RewriteStats
}

// RewriteStats counts a Rewriter's work.
type RewriteStats struct {
	Frames      int // frames seen
	Changed     int // frames with at least one field changed
	ICRCs       int // ICRCs recomputed
	VCRCs       int // VCRCs recomputed
	Undecodable int // frames whose damage kept some headers from being rewritten
	NoPSNSpace  int // responses whose request stream was unknown, so psn-base could not move them
}

// diffs is a list of (old, new) byte runs of even length for an incremental
// checksum update.
type diffs struct{ old, new []byte }

func (d *diffs) reset()                  { d.old, d.new = d.old[:0], d.new[:0] }
func (d *diffs) add(old, new []byte)     { d.old, d.new = append(d.old, old...), append(d.new, new...) }
func (d *diffs) empty() bool             { return len(d.old) == 0 }
func (d *diffs) apply(sum uint16) uint16 { return csumUpdate(sum, d.old, d.new) }

// NewRewriter returns a rewriter of frames decoded with opts.
func NewRewriter(rules *Rules, opts decode.Options) (*Rewriter, error) {
	if err := rules.check(); err != nil {
		return nil, err
	}
	opts.SkipCRC = false
	return &Rewriter{rules: rules, dec: decode.NewDecoder(opts)}, nil
}

// csumUpdate is RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), over 16-bit words.
func csumUpdate(hc uint16, old, new []byte) uint16 {
	s := uint32(^hc)
	for i := 0; i+1 < len(old); i += 2 {
		s += uint32(^binary.BigEndian.Uint16(old[i:]))
		s += uint32(binary.BigEndian.Uint16(new[i:]))
	}
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

// offsetIn returns where sub, a slice of frame, starts in frame.
func offsetIn(frame, sub []byte) int { return cap(frame) - cap(sub) }

// Rewrite applies the rules to f.Data in place.
func (rw *Rewriter) Rewrite(f *Frame) {
	rw.Stats.Frames++
	r := rw.rules
	data := f.Data
	p := rw.dec.Decode(f.Packet)
	h := p.Headers
	if p.Err != nil {
		rw.Stats.Undecodable++
	}
	// CRC faults are kept unless FixCRC: the difference between the carried
	// and the computed value is put back after recomputing.
	var icrcFault uint32
	var vcrcFault uint16
	if p.ICRC != layers.CRCAbsent && !r.FixCRC {
		icrcFault = h.BTH.Trailer.ICRC ^ p.ICRCComputed
	}
	if p.VCRC != layers.CRCAbsent && !r.FixCRC {
		vcrcFault = h.LRH.VCRC ^ p.VCRCComputed
	}
	rw.ipDiff.reset()
	rw.l4Diff.reset()
	changed := false
	put := func(b []byte, v []byte, d ...*diffs) {
		if string(b) == string(v) {
			return
		}
		for _, dd := range d {
			dd.add(b, v)
		}
		copy(b, v)
		changed = true
	}
	var buf [16]byte
	for _, t := range h.Decoded {
		switch t {
		case gplayers.LayerTypeEthernet:
			c := h.Ethernet.Contents
			if len(c) >= 12 && len(r.MACs) > 0 {
				for _, at := range []int{0, 6} {
					if m, ok := r.MACs[[6]byte(c[at:at+6])]; ok {
						put(c[at:at+6], m[:])
					}
				}
			}
		case gplayers.LayerTypeARP:
			a := &h.ARP
			for _, hw := range [][]byte{a.SourceHwAddress, a.DstHwAddress} {
				if len(hw) == 6 {
					if m, ok := r.MACs[[6]byte(hw)]; ok {
						put(hw, m[:])
					}
				}
			}
			for _, ip := range [][]byte{a.SourceProtAddress, a.DstProtAddress} {
				rw.addr(ip, put)
			}
		case gplayers.LayerTypeIPv4:
			c := h.IPv4.Contents
			if len(c) >= 20 {
				rw.addr(c[12:16], put, &rw.ipDiff, &rw.l4Diff)
				rw.addr(c[16:20], put, &rw.ipDiff, &rw.l4Diff)
				if !rw.ipDiff.empty() {
					binary.BigEndian.PutUint16(c[10:], rw.ipDiff.apply(binary.BigEndian.Uint16(c[10:])))
				}
			}
		case gplayers.LayerTypeIPv6:
			c := h.IPv6.Contents
			if len(c) >= 40 {
				rw.addr(c[8:24], put, &rw.l4Diff)
				rw.addr(c[24:40], put, &rw.l4Diff)
			}
		case gplayers.LayerTypeUDP, gplayers.LayerTypeTCP:
			var c []byte
			sumAt := 6
			if t == gplayers.LayerTypeUDP {
				c = h.UDP.Contents
			} else {
				c, sumAt = h.TCP.Contents, 16
			}
			if len(c) < sumAt+2 {
				continue
			}
			for _, at := range []int{0, 2} {
				if np, ok := r.Ports[binary.BigEndian.Uint16(c[at:])]; ok {
					binary.BigEndian.PutUint16(buf[:2], np)
					put(c[at:at+2], buf[:2], &rw.l4Diff)
				}
			}
			if t == gplayers.LayerTypeTCP {
				// Set-up messages start at an even offset of the segment, as
				// an incremental checksum update needs.
				if p := h.TCP.Payload; len(p) > 0 && (len(c)%2 == 0) {
					if m := rw.rewriteOOB(f, p); m != nil && len(m) == len(p) {
						put(p, m, &rw.l4Diff)
					}
				}
			}
			sum := binary.BigEndian.Uint16(c[sumAt:])
			if !rw.l4Diff.empty() && (sum != 0 || t == gplayers.LayerTypeTCP) {
				sum = rw.l4Diff.apply(sum)
				if sum == 0 && t == gplayers.LayerTypeUDP {
					sum = 0xFFFF // a zero UDP checksum means none (RFC 768)
				}
				binary.BigEndian.PutUint16(c[sumAt:], sum)
			}
		case layers.LayerTypeLRH:
			c := h.LRH.Contents
			if len(c) >= 8 && len(r.LIDs) > 0 {
				for _, at := range []int{2, 6} {
					if nl, ok := r.LIDs[binary.BigEndian.Uint16(c[at:])]; ok {
						binary.BigEndian.PutUint16(buf[:2], nl)
						put(c[at:at+2], buf[:2])
					}
				}
			}
		case layers.LayerTypeGRH:
			c := h.GRH.Contents
			if len(c) >= 40 {
				rw.addr(c[8:24], put)
				rw.addr(c[24:40], put)
			}
		case layers.LayerTypeBTH:
			rw.bth(f, h, put)
		case layers.LayerTypeMAD:
			rw.rewriteCM(f, h, put)
		}
	}
	if !changed && !r.FixCRC {
		return
	}
	if changed {
		rw.Stats.Changed++
	}
	if p.ICRC != layers.CRCAbsent {
		if span, enc, ok := h.ICRCSpan(); ok {
			if crc, err := rw.icrc.Compute(enc, span); err == nil {
				binary.LittleEndian.PutUint32(span[len(span)-layers.ICRCLength:], crc^icrcFault)
				rw.Stats.ICRCs++
			}
		}
	}
	if p.VCRC != layers.CRCAbsent {
		s := offsetIn(data, h.LRH.Contents)
		n := int(h.LRH.PktLen) * 4
		if s >= 0 && s+n+2 <= len(data) {
			binary.LittleEndian.PutUint16(data[s+n:], layers.ComputeVCRC(data[s:s+n])^vcrcFault)
			rw.Stats.VCRCs++
		}
	}
}

// addr rewrites an IPv4 address, an IPv6 address or a GID in place.
func (rw *Rewriter) addr(b []byte, put func([]byte, []byte, ...*diffs), d ...*diffs) {
	if len(rw.rules.Addrs) == 0 {
		return
	}
	a, ok := netip.AddrFromSlice(b)
	if !ok {
		return
	}
	mapped := a.Is4In6()
	n, ok := rw.rules.Addrs[a.Unmap()]
	if !ok {
		return
	}
	switch {
	case len(b) == 4:
		v := n.As4()
		put(b, v[:], d...)
	case mapped && n.Is4():
		v := netip.AddrFrom16(n.As16()).As16() // ::ffff:a.b.c.d
		put(b, v[:], d...)
	case n.Is6():
		v := n.As16()
		put(b, v[:], d...)
	}
}

// bth rewrites the transport headers: QPNs, PSN, R_Keys and VAs.
func (rw *Rewriter) bth(f *Frame, h *layers.Parser, put func([]byte, []byte, ...*diffs)) {
	r := rw.rules
	b := &h.BTH
	c := b.Contents
	if len(c) < layers.BTHLength {
		return
	}
	var buf [8]byte
	put24 := func(dst []byte, v uint32) {
		buf[0], buf[1], buf[2] = byte(v>>16), byte(v>>8), byte(v)
		put(dst, buf[:3])
	}
	if len(r.PSNShift) > 0 {
		if !f.HasPSNSpace {
			if b.Opcode.Info().Response {
				rw.Stats.NoPSNSpace++
			}
		} else if d, ok := r.PSNShift[f.PSNSpace]; ok {
			put24(c[9:12], uint32(b.PSN.Add(d)))
		}
	}
	if q, ok := r.QPNs[b.DestQP]; ok {
		put24(c[5:8], q)
	}
	info := b.Opcode.Info()
	for _, k := range info.HeaderList() {
		eh := b.ETH(k)
		ec := eh.LayerContents()
		if len(ec) < k.Size() {
			continue
		}
		switch k {
		case layers.HdrDETH:
			if q, ok := r.QPNs[b.DETH.SrcQP]; ok {
				put24(ec[5:8], q)
			}
		case layers.HdrRETH, layers.HdrAtomicETH:
			va := binary.BigEndian.Uint64(ec[0:8])
			for _, v := range r.VAs {
				if v.contains(va) {
					binary.BigEndian.PutUint64(buf[:], va-v.From+v.To)
					put(ec[0:8], buf[:8])
					break
				}
			}
			if k2, ok := r.RKeys[binary.BigEndian.Uint32(ec[8:12])]; ok {
				binary.BigEndian.PutUint32(buf[:4], k2)
				put(ec[8:12], buf[:4])
			}
		case layers.HdrIETH:
			if k2, ok := r.RKeys[binary.BigEndian.Uint32(ec[0:4])]; ok {
				binary.BigEndian.PutUint32(buf[:4], k2)
				put(ec[0:4], buf[:4])
			}
		}
	}
}
