package decode

import (
	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// rawFields are tshark's fields for what an InfiniBand packet carries that
// is not IBA transport: the RWH of a raw packet (LRH LNH 0) and an IBA
// payload that tshark's "Ethernet over IB" heuristic takes for an
// EtherType-encapsulated packet (IPoIB framing: EtherType and two zero
// bytes). They sit in the InfiniBand tree after the extended headers, where
// tshark shows them.
func rawFields() []*Field {
	rwh := func(p *Packet) bool { return p.has&hasRWH != 0 }
	etherType := func(p *Packet) (uint64, bool) {
		if rwh(p) {
			return uint64(p.Headers.RWH.EtherType), true
		}
		t, ok := ethOverIB(p)
		return uint64(t), ok
	}
	etype := withNames(uintField("infiniband.rwh.etype", "Ethertype", FTUint16, BaseHex, etherType), etherTypeName, nil)
	// The same field serves the payload's EtherType (tshark adds it under
	// the payload item too): it can be there without an RWH.
	etype.outside, etype.parent = true, "infiniband.payload"
	return []*Field{
		byHeaders(nodeField("infiniband.rwh", "Raw Header", func(p *Packet) ([]byte, bool) { return p.Headers.RWH.Contents, rwh(p) })),
		nodeField("infiniband.payload", "Payload", ethOverIBPayload),
		etype,
		// tshark 4.0 adds Raw Data only for an LNH outside 0-3, which the
		// two-bit field cannot hold: never on a real packet.
		byHeaders(bytesField("infiniband.rawdata", "Raw Data", FTBytes, func(p *Packet) ([]byte, bool) { return nil, false })),
	}
}

// iba payload heuristics run on the payload (pad included) of a packet
// whose opcode tshark dissects and whose headers carry a payload, when it
// is not a management datagram and no upper-layer protocol followed on its
// connection claims it: tshark tries those first (an NVMe-oF CQE that
// opens with 08 00 00 00 is no IPv4 packet).
func heuristicPayload(p *Packet) ([]byte, bool) {
	if p.has&hasBTH == 0 || p.has&hasMAD != 0 || p.Analysis.NVMe != nil {
		return nil, false
	}
	b := &p.Headers.BTH
	if b.PayloadType() != gopacket.LayerTypePayload || !b.Info().Payload || !showsICRC(p) {
		return nil, false
	}
	return b.PayloadWithPad(), true
}

// ethOverIB is tshark's "Ethernet over IB" heuristic on the packet's
// payload; EoIB, when it applies, claims the payload first.
func ethOverIB(p *Packet) (uint16, bool) {
	pl, ok := heuristicPayload(p)
	if !ok || len(pl) < ethOverIBMin || layers.LooksLikeEoIB(p.Headers.BTH.Opcode, pl) {
		return 0, false
	}
	t, ok := layers.EtherTypeEncapsulated(pl)
	return uint16(t), ok
}

// ethOverIBMin: tshark's payload item spans the payload less 6 bytes (it
// subtracts the CRCs a second time), so a shorter payload gives none.
const ethOverIBMin = 6

// ethOverIBPayload is infiniband.payload as tshark 4.0 shows it: the
// payload's bytes but its last six.
func ethOverIBPayload(p *Packet) ([]byte, bool) {
	if _, ok := ethOverIB(p); !ok {
		return nil, false
	}
	pl, _ := heuristicPayload(p)
	return pl[:len(pl)-ethOverIBMin], true
}

// ethOverIBReserved is the reserved half of the encapsulation header, an
// occurrence of infiniband.reserved after the extended headers'.
func ethOverIBReserved(p *Packet) ([]byte, bool) {
	if _, ok := ethOverIB(p); !ok {
		return nil, false
	}
	pl, _ := heuristicPayload(p)
	return pl[2:4], true
}

func etherTypeName(u uint64) (string, bool) { return layers.EtherTypeName(uint16(u)) }

// eoib decodes the EoIB header of the packet's payload, when tshark's
// heuristic finds one.
func eoib(p *Packet) (layers.EoIB, bool) {
	var e layers.EoIB
	pl, ok := heuristicPayload(p)
	if !ok || !layers.LooksLikeEoIB(p.Headers.BTH.Opcode, pl) {
		return e, false
	}
	return e, e.DecodeFromBytes(pl, gopacket.NilDecodeFeedback) == nil
}

// eoibFields are the Mellanox EoIB encapsulation header's, a protocol of
// its own after InfiniBand in tshark's tree.
func eoibFields() []*Field {
	u := func(name, title string, base Base, get func(e *layers.EoIB) uint64) *Field {
		return uintField("infiniband.eoib."+name, title, FTUint16, base, func(p *Packet) (uint64, bool) {
			e, ok := eoib(p)
			return get(&e), ok
		})
	}
	b := func(name, title string, get func(e *layers.EoIB) bool) *Field {
		return boolField("infiniband.eoib."+name, title, func(p *Packet) (bool, bool) {
			e, ok := eoib(p)
			return get(&e), ok
		})
	}
	proto := protoField("infiniband.eoib", "Mellanox EoIB Encapsulation Header", func(p *Packet) bool {
		_, ok := eoib(p)
		return ok
	})
	proto.namedValue = true
	return []*Field{
		proto,
		u("version", "Version", BaseHex, func(e *layers.EoIB) uint64 { return uint64(e.Version) }),
		u("tcp_chk", "TCP Checksum", BaseHex, func(e *layers.EoIB) uint64 { return uint64(e.TCPChecksum) }),
		u("ip_chk", "IP Checksum", BaseHex, func(e *layers.EoIB) uint64 { return uint64(e.IPChecksum) }),
		b("fcs", "FCS Field Present", func(e *layers.EoIB) bool { return e.FCS }),
		b("ms", "More Segments to Follow", func(e *layers.EoIB) bool { return e.MoreSegments }),
		u("ip_seg_offset", "Segment Offset", BaseDec, func(e *layers.EoIB) uint64 { return uint64(e.SegOffset) }),
		u("ip_seg_id", "Segment ID", BaseDec, func(e *layers.EoIB) uint64 { return uint64(e.SegID) }),
	}
}

// stopAbortErrorData is infiniband.rmpp.extendederrordata.
func stopAbortErrorData(p *Packet) ([]byte, bool) {
	if !isSA(p) {
		return nil, false
	}
	return p.Headers.MAD.SA.ExtendedErrorData()
}

// rmppDataPlain: tshark 4.0 shows an RMPP header's Data1 and Data2 as
// rmpp.data1 and rmpp.data2 only when the type gives them no meaning of its
// own; a STOP or ABORT files them as two infiniband.reserved.
func rmppDataPlain(p *Packet) bool {
	t := p.Headers.MAD.SA.RMPP.Type
	return isSA(p) && (t == layers.RMPPTypeNone || t > layers.RMPPTypeAbort)
}

// stopAbortReserved: tshark files an RMPP STOP's or ABORT's Data1 and Data2
// as two infiniband.reserved, after the MAD header's.
func stopAbortReserved(p *Packet) (data1, data2 []byte, ok bool) {
	if !isSA(p) {
		return nil, nil, false
	}
	return p.Headers.MAD.SA.StopAbortReserved()
}
