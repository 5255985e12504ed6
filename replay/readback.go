package replay

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// Readback is what reading the WRITEs' span back from the live responder
// found (CompareOptions.Payload, when the plan has RDMA WRITEs): a
// responder answers WRITEs with bare ACKs, so only reading its memory shows
// whether the data landed where the capture says it did.
type Readback struct {
	// VA is where the span starts in the peer's region; Len its length.
	VA  uint64
	Len int
	// Checked is how many of those bytes the capture's WRITEs determine
	// (the last WRITE to each byte, unless an atomic touched it later);
	// Wrong how many of them the peer holds otherwise, the first at
	// offset FirstWrong (-1: none).
	Checked, Wrong, FirstWrong int
	// Err says why the span could not be read (a NAK, no answer).
	Err error
}

// Failed reports a read-back that could not be made or found wrong bytes.
func (r *Readback) Failed() bool { return r != nil && (r.Err != nil || r.Wrong > 0) }

// readbackChunk is the most one RDMA READ asks for.
const readbackChunk = 1 << 20

// Written returns what the plan's RDMA WRITEs leave in the responder's
// region: from offset lo to hi (relative to Responder.VA) the bytes the last
// WRITE to each put there, and which of them are known (written and not
// touched by a later atomic). ok is false when the plan has no WRITE, or
// when the region is too large to build (RegionErr).
func (p *Plan) Written() (data []byte, known []bool, lo, hi uint64, ok bool) {
	if p.RegionErr() != nil {
		return nil, nil, 0, 0, false
	}
	data = make([]byte, p.RegionLen)
	known = make([]bool, p.RegionLen)
	lo, hi = p.RegionLen, 0
	writes := p.writePlacer()
	var b layers.BTH
	for _, s := range p.Steps {
		if !s.Request || b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) != nil {
			continue
		}
		info := b.Opcode.Info()
		switch {
		case info.Operation == layers.OpRDMAWrite:
			writeVA, placed := writes.place(&b)
			if !placed {
				continue
			}
			for i, c := range b.PacketPayload() {
				va := writeVA + uint64(i)
				if va < p.Responder.VA || va-p.Responder.VA >= p.RegionLen {
					continue
				}
				off := va - p.Responder.VA
				data[off], known[off], ok = c, true, true
				lo, hi = min(lo, off), max(hi, off+1)
			}
		case info.Has(layers.HdrAtomicETH):
			for i := range uint64(8) {
				if va := b.AtomicETH.VA + i; va >= p.Responder.VA && va-p.Responder.VA < p.RegionLen {
					known[va-p.Responder.VA] = false
				}
			}
		}
	}
	return data, known, lo, hi, ok
}

// hasWrites reports an RDMA WRITE among the plan's requests.
func (p *Plan) hasWrites() bool {
	for _, s := range p.Steps {
		if s.Request && s.Frame.Opcode.Info().Operation == layers.OpRDMAWrite {
			return true
		}
	}
	return false
}

// nextPSN is the PSN after the plan's last request, relative to the first:
// a READ takes one PSN per response packet.
func (p *Plan) nextPSN() int {
	_, next := p.requestFrames()
	return next
}

// readBack reads [va, va+n) of the peer's region with RDMA READs in
// partition pkey starting at PSN psn, one at a time, each taking one PSN per mtu bytes, and returns
// the data.
func readBack(peer Peer, remote Dest, pkey uint16, psn layers.PSN, va uint64, n, mtu int, timeout time.Duration) ([]byte, error) {
	op, _ := layers.OpcodeFor(layers.ServiceRC, layers.OpRDMAReadRequest, layers.PosOnly, false, false)
	if n > maxRegion {
		return nil, fmt.Errorf("%d bytes at va 0x%x: more than the %d MiB replay reads back", n, va, maxRegion>>20)
	}
	out := make([]byte, 0, n)
	buf := make([]byte, 1<<16)
	for len(out) < n {
		size := min(n-len(out), readbackChunk)
		req, err := readRequest(op, pkey, remote, psn, va+uint64(len(out)), size)
		if err != nil {
			return out, err
		}
		if err := peer.Send(req); err != nil {
			return out, fmt.Errorf("send: %w", err)
		}
		// The READ takes one PSN per response packet; a response is
		// accepted only at one of those, and the data only once every
		// packet from the first to the last received is there.
		segs := layers.Segments(size, mtu)
		parts := map[int][]byte{}
		got := 0
		last := -1
		deadline := time.Now().Add(timeout)
		for got < size || len(parts) < last+1 {
			left := time.Until(deadline)
			if left <= 0 {
				return out, fmt.Errorf("%d of the %d bytes at va 0x%x came back within %v", got, size, va+uint64(len(out)), timeout)
			}
			k, err := peer.Receive(buf, left)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
			if err != nil {
				return out, fmt.Errorf("receive: %w", err)
			}
			var b layers.BTH
			if b.DecodeFromBytes(buf[:k], gopacket.NilDecodeFeedback) != nil {
				continue
			}
			rel := b.PSN.Diff(psn)
			info := b.Opcode.Info()
			// Any NAK ends the read-back, whichever PSN it carries: a
			// PSN sequence error carries the PSN the peer expects (behind
			// a played stream with gaps, not the READ's), and the READ
			// will not be answered after it.
			if info.Has(layers.HdrAETH) && (b.AETH.Syndrome.IsNak() || b.AETH.Syndrome.IsRNRNak()) {
				return out, fmt.Errorf("the peer answered the READ of va 0x%x with %v at PSN %d (the READ's is %d)",
					va+uint64(len(out)), b.AETH.Syndrome, b.PSN, psn)
			}
			if info.Operation != layers.OpRDMAReadResponse || rel < 0 || rel >= segs || parts[rel] != nil {
				continue // a late answer to a played request, a stray, or a duplicate
			}
			parts[rel] = append([]byte{}, b.PacketPayload()...)
			got += len(parts[rel])
			last = max(last, rel)
		}
		for i := 0; i <= last; i++ {
			out = append(out, parts[i]...)
		}
		psn = psn.Add(last + 1)
	}
	return out[:n], nil
}

// readRequest builds an RDMA READ request (BTH, RETH, room for the ICRC
// the transport fills) for size bytes at va of remote's region.
func readRequest(op layers.Opcode, pkey uint16, remote Dest, psn layers.PSN, va uint64, size int) ([]byte, error) {
	b := layers.BTH{Opcode: op, PKey: pkey, DestQP: remote.QPN, AckReq: true, PSN: psn,
		RETH: layers.RETH{VA: va, RKey: remote.RKey, DMALength: uint32(size)}}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, b.SerializableLayers(nil)...); err != nil {
		return nil, fmt.Errorf("READ request: %w", err)
	}
	return buf.Bytes(), nil
}

// pkey is the P_Key of the plan's first request: the partition the
// played requests, and so the read-back, are sent in.
func (p *Plan) pkey() uint16 {
	var b layers.BTH
	for _, s := range p.Steps {
		if s.Request && b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback) == nil {
			return b.PKey
		}
	}
	return 0xFFFF // the default partition
}

// checkWrites reads the WRITEs' span back and compares it with what the
// capture's WRITEs left there.
func checkWrites(plan *Plan, peer Peer, local, remote Dest, timeout time.Duration) *Readback {
	if err := plan.RegionErr(); err != nil {
		if !plan.hasWrites() {
			return nil
		}
		return &Readback{VA: remote.VA, Len: int(min(plan.RegionLen, math.MaxInt)), FirstWrong: -1, Err: err}
	}
	data, known, lo, hi, ok := plan.Written()
	if !ok {
		return nil
	}
	rb := &Readback{VA: remote.VA + lo, Len: int(hi - lo), FirstWrong: -1}
	got, err := readBack(peer, remote, plan.pkey(), local.PSN.Add(plan.nextPSN()), rb.VA, rb.Len, cmp.Or(remote.MTU, plan.MTU), timeout)
	if err != nil {
		rb.Err = err
		return rb
	}
	for i, c := range got {
		if !known[lo+uint64(i)] {
			continue
		}
		rb.Checked++
		if c != data[lo+uint64(i)] {
			rb.Wrong++
			if rb.FirstWrong < 0 {
				rb.FirstWrong = i
			}
		}
	}
	return rb
}
