package decode

import (
	"errors"

	"github.com/ibwire/ibwire/layers"
)

// infinibandFields are Wireshark's infiniband.* fields for the IB headers,
// with its types and bases (checked against tshark -G fields in the tests).
func infinibandFields() []*Field {
	lrh := func(p *Packet) bool { return p.has&hasLRH != 0 }
	grh := func(p *Packet) bool { return p.has&hasGRH != 0 }
	bth := func(p *Packet) bool { return p.has&hasBTH != 0 }
	L := func(p *Packet) *layers.LRH { return &p.Headers.LRH }
	G := func(p *Packet) *layers.GRH { return &p.Headers.GRH }
	B := func(p *Packet) *layers.BTH { return &p.Headers.BTH }
	eth := func(k layers.HeaderKind) func(p *Packet) bool {
		return func(p *Packet) bool { return p.has&hasBTH != 0 && p.Headers.BTH.HasETH(k) }
	}
	reth, aeth, deth := eth(layers.HdrRETH), eth(layers.HdrAETH), eth(layers.HdrDETH)
	atomic, ack, imm, ieth, rdeth := eth(layers.HdrAtomicETH), eth(layers.HdrAtomicAckETH), eth(layers.HdrImmDt), eth(layers.HdrIETH), eth(layers.HdrRDETH)
	syn := func(p *Packet) layers.AETHSyndrome { return p.Headers.BTH.AETH.Syndrome }
	synType := func(t layers.AETHType) func(p *Packet) bool {
		return func(p *Packet) bool { return aeth(p) && syn(p).Type() == t }
	}
	// Built once: a closure made inside a getter would allocate per call.
	isAck, isRNR, isRsv, isNak := synType(layers.AETHAck), synType(layers.AETHRNRNak), synType(layers.AETHReserved), synType(layers.AETHNak)
	// The RETH's fields serve the AtomicETH's too, as Wireshark's do:
	// Packet.RemoteAddress says which header names them.
	vaOf := func(p *Packet) (uint64, bool) {
		va, _, ok := p.RemoteAddress()
		return va, ok
	}
	rkeyOf := func(p *Packet) (uint64, bool) {
		_, rkey, ok := p.RemoteAddress()
		return uint64(rkey), ok
	}
	// Each is there exactly when a RETH or an AtomicETH is.
	va := byHeaders(uintField("infiniband.reth.va", "Virtual Address", FTUint64, BaseHex, vaOf))
	va.outside = true
	rkey := byHeaders(uintField("infiniband.reth.r_key", "Remote Key", FTUint32, BaseHex, rkeyOf))
	rkey.outside = true
	opcode := uintField("infiniband.bth.opcode", "Opcode", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).Opcode), bth(p) })
	opcode = spanned(SpanBTH, "OpCode", withNames(opcode, opcodeName, opcodeByName))
	immdt := bytesField("infiniband.immdt", "Immediate Data", FTBytes, func(p *Packet) ([]byte, bool) { return B(p).ImmDt.Contents, imm(p) })
	immdt.second = immdt.get
	iethF := bytesField("infiniband.ieth", "RKey", FTBytes, func(p *Packet) ([]byte, bool) { return B(p).IETH.Contents, ieth(p) })
	iethF.second = iethF.get
	reserved := &Field{Name: "infiniband.reserved", Title: "Reserved", Type: FTBytes, get: func(p *Packet, v *Value) bool { return reservedNth(p, 0, v) }}
	reserved.parent = "infiniband.bth"
	reserved.nth = reservedNth
	vendor := bytesField("infiniband.vendor", "Unknown/Vendor Specific Data", FTBytes, func(p *Packet) ([]byte, bool) {
		b, ok := vendorBytes(p)
		return b[:min(len(b), 4)], ok
	})
	vendor.second = bytesField("", "", FTBytes, vendorBytes).get
	vcrc := uintField("infiniband.variant.crc", "Variant CRC", FTUint16, BaseHex, func(p *Packet) (uint64, bool) {
		v := L(p).VCRC
		// Wireshark counts the VCRC into the vendor data of opcodes it does
		// not parse, and shows none after a GRH that leads to no BTH.
		shown := bth(p) && showsICRC(p) || !bth(p) && L(p).LNH <= layers.LNHIPv6
		return uint64(v>>8 | v<<8), lrh(p) && L(p).HasVCRC && !errors.Is(p.Err, layers.ErrTruncated) && shown
	})
	// A raw packet's VCRC appears twice: after the carried packet, and
	// again where tshark shows every packet's CRCs.
	vcrcGet := vcrc.get
	vcrc.second = func(p *Packet, v *Value) bool { return !bth(p) && vcrcGet(p, v) }
	fs := []*Field{
		protoField("infiniband", "InfiniBand", func(p *Packet) bool { return p.has&(hasBTH|hasLRH|hasGRH) != 0 }),

		byHeaders(nodeField("infiniband.lrh", "Local Route Header", func(p *Packet) ([]byte, bool) { return L(p).Contents, lrh(p) })),
		uintField("infiniband.lrh.vl", "Virtual Lane", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(L(p).VL), lrh(p) }),
		uintField("infiniband.lrh.lver", "Link Version", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).LVer), lrh(p) }),
		uintField("infiniband.lrh.sl", "Service Level", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).SL), lrh(p) }),
		uintField("infiniband.lrh.reserved2", "Reserved (2 bits)", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).Reserved2), lrh(p) }),
		withNames(uintField("infiniband.lrh.lnh", "Link Next Header", FTUint8, BaseHex, func(p *Packet) (uint64, bool) { return uint64(L(p).LNH), lrh(p) }), lnhName, nil),
		uintField("infiniband.lrh.dlid", "Destination Local ID", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).DLID), lrh(p) }),
		uintField("infiniband.lrh.reserved5", "Reserved (5 bits)", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).Reserved5), lrh(p) }),
		uintField("infiniband.lrh.pktlen", "Packet Length", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).PktLen), lrh(p) }),
		uintField("infiniband.lrh.slid", "Source Local ID", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(L(p).SLID), lrh(p) }),

		byHeaders(nodeField("infiniband.grh", "Global Route Header", func(p *Packet) ([]byte, bool) { return G(p).Contents, grh(p) })),
		uintField("infiniband.grh.ipver", "IP Version", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).IPVer), grh(p) }),
		uintField("infiniband.grh.tclass", "Traffic Class", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).TClass), grh(p) }),
		uintField("infiniband.grh.flowlabel", "Flow Label", FTUint32, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).FlowLabel), grh(p) }),
		uintField("infiniband.grh.paylen", "Payload Length", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).PayLen), grh(p) }),
		uintField("infiniband.grh.nxthdr", "Next Header", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).NxtHdr), grh(p) }),
		uintField("infiniband.grh.hoplmt", "Hop Limit", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(G(p).HopLmt), grh(p) }),
		bytesField("infiniband.grh.sgid", "Source GID", FTIPv6, func(p *Packet) ([]byte, bool) { return G(p).SGID, grh(p) }),
		bytesField("infiniband.grh.dgid", "Destination GID", FTIPv6, func(p *Packet) ([]byte, bool) { return G(p).DGID, grh(p) }),

		byHeaders(nodeField("infiniband.bth", "Base Transport Header", func(p *Packet) ([]byte, bool) { return B(p).Contents, bth(p) })),
		opcode,
		spanned(SpanBTH, "SE/M/PadCnt/TVer", boolField("infiniband.bth.se", "Solicited Event", func(p *Packet) (bool, bool) { return B(p).SE, bth(p) })),
		spanned(SpanBTH, "SE/M/PadCnt/TVer", boolField("infiniband.bth.m", "MigReq", func(p *Packet) (bool, bool) { return B(p).MigReq, bth(p) })),
		spanned(SpanBTH, "SE/M/PadCnt/TVer", uintField("infiniband.bth.padcnt", "Pad Count", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).PadCount), bth(p) })),
		spanned(SpanBTH, "SE/M/PadCnt/TVer", uintField("infiniband.bth.tver", "Header Version", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).TVer), bth(p) })),
		spanned(SpanBTH, "P_Key", uintField("infiniband.bth.p_key", "Partition Key", FTUint16, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).PKey), bth(p) })),
		reserved,
		spanned(SpanBTH, "DestQP", uintField("infiniband.bth.destqp", "Destination Queue Pair", FTUint24, BaseHex, func(p *Packet) (uint64, bool) { return uint64(B(p).DestQP), bth(p) })),
		spanned(SpanBTH, "AckReq/Resv7", boolField("infiniband.bth.a", "Acknowledge Request", func(p *Packet) (bool, bool) { return B(p).AckReq, bth(p) })),
		spanned(SpanBTH, "AckReq/Resv7", uintField("infiniband.bth.reserved7", "Reserved (7 bits)", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).Resv7), bth(p) })),
		spanned(SpanBTH, "PSN", uintField("infiniband.bth.psn", "Packet Sequence Number", FTUint24, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).PSN), bth(p) })),

		ethNode("infiniband.rdeth", "RDETH - Reliable Datagram Extended Transport Header", layers.HdrRDETH, rdeth),
		uintField("infiniband.rdeth.eecnxt", "E2E Context", FTUint24, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).RDETH.EEContext), rdeth(p) }),
		ethNode("infiniband.deth", "DETH - Datagram Extended Transport Header", layers.HdrDETH, deth),
		uintField("infiniband.deth.q_key", "Queue Key", FTUint64, BaseHex, func(p *Packet) (uint64, bool) { return uint64(B(p).DETH.QKey), deth(p) }),
		uintField("infiniband.deth.srcqp", "Source Queue Pair", FTUint32, BaseHex, func(p *Packet) (uint64, bool) { return uint64(B(p).DETH.SrcQP), deth(p) }),
		ethNode("infiniband.reth", "RETH - RDMA Extended Transport Header", layers.HdrRETH, reth),
		va,
		rkey,
		byHeaders(uintField("infiniband.reth.dmalen", "DMA Length", FTUint32, BaseDecHex, func(p *Packet) (uint64, bool) { return uint64(B(p).RETH.DMALength), reth(p) })),
		ethNode("infiniband.atomiceth", "AtomicETH - Atomic Extended Transport Header", layers.HdrAtomicETH, atomic),
		uintField("infiniband.atomiceth.swapdt", "Swap (Or Add) Data", FTUint64, BaseDec, func(p *Packet) (uint64, bool) { return B(p).AtomicETH.SwapAddData, atomic(p) }),
		uintField("infiniband.atomiceth.cmpdt", "Compare Data", FTUint64, BaseDec, func(p *Packet) (uint64, bool) { return B(p).AtomicETH.CompareData, atomic(p) }),
		ethNode("infiniband.aeth", "AETH - ACK Extended Transport Header", layers.HdrAETH, aeth),
		uintField("infiniband.aeth.syndrome", "Syndrome", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p)), aeth(p) }),
		uintField("infiniband.aeth.syndrome.reserved", "Reserved", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p) >> 7), aeth(p) }),
		withNames(uintField("infiniband.aeth.syndrome.opcode", "OpCode", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p).Type()), aeth(p) }), aethTypeName, aethTypeByName),
		uintField("infiniband.aeth.syndrome.credit_count", "Credit Count", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p).Value()), isAck(p) }),
		withNames(uintField("infiniband.aeth.syndrome.timer", "Timer", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p).Value()), isRNR(p) }), rnrTimerName, nil),
		uintField("infiniband.aeth.syndrome.reserved_value", "Reserved", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p).Value()), isRsv(p) }),
		withNames(uintField("infiniband.aeth.syndrome.error_code", "Error Code", FTUint8, BaseDec, func(p *Packet) (uint64, bool) { return uint64(syn(p).Value()), isNak(p) }), nakName, nakByName),
		uintField("infiniband.aeth.msn", "Message Sequence Number", FTUint24, BaseDec, func(p *Packet) (uint64, bool) { return uint64(B(p).AETH.MSN), aeth(p) }),
		ethNode("infiniband.atomicacketh", "ATOMICACKETH - Atomic ACK Extended Transport Header", layers.HdrAtomicAckETH, ack),
		uintField("infiniband.atomicacketh.origremdt", "Original Remote Data", FTUint64, BaseDec, func(p *Packet) (uint64, bool) { return B(p).AtomicAckETH.OrigRemoteData, ack(p) }),
		immdt,
		iethF,
		vendor,
		uintField("infiniband.invariant.crc", "Invariant CRC", FTUint32, BaseHex, func(p *Packet) (uint64, bool) {
			// A cut packet has no trailer, whatever its last bytes are.
			return uint64(B(p).Trailer.ICRCWire()), bth(p) && showsICRC(p) && !errors.Is(p.Err, layers.ErrTruncated)
		}),
		vcrc,
	}
	// The raw packet's and the payload's fields come after the extended
	// headers, before the CRCs; EoIB is a protocol after InfiniBand.
	crcs := len(fs) - 2
	fs = append(fs[:crcs], append(rawFields(), fs[crcs:]...)...)
	return append(fs, eoibFields()...)
}

// ethNode is an extended header's node: its value is the header's bytes.
func ethNode(name, title string, k layers.HeaderKind, has func(p *Packet) bool) *Field {
	return byHeaders(nodeField(name, title, func(p *Packet) ([]byte, bool) {
		if !has(p) {
			return nil, false
		}
		return p.Headers.BTH.ETH(k).LayerContents(), true
	}))
}

// showsICRC: Wireshark shows no ICRC field for opcodes it does not parse.
func showsICRC(p *Packet) bool { return p.Headers.BTH.Info().WiresharkDissects() }

// vendorBytes is what Wireshark shows as infiniband.vendor: everything after
// the BTH of an opcode it does not parse, ICRC included.
func vendorBytes(p *Packet) ([]byte, bool) {
	if p.has&hasBTH == 0 || showsICRC(p) {
		return nil, false
	}
	b := &p.Headers.BTH
	off := cap(p.Data) - cap(b.Contents) // where the BTH starts in the frame
	end := off + len(b.Contents) + len(b.Payload) + len(b.Trailer.Contents)
	if p.has&hasLRH != 0 && p.Headers.LRH.HasVCRC {
		end += layers.VCRCLength // native IB: the VCRC follows and tshark shows it too
	}
	return p.Data[off+layers.BTHLength : min(end, len(p.Data))], true
}

func opcodeName(u uint64) (string, bool) {
	e := layers.Opcode(u).Info()
	if e.Wireshark != "" {
		return e.Wireshark, true
	}
	if e.Known {
		return e.Name, true
	}
	return "", false
}

func opcodeByName(s string) (uint64, bool) {
	op, ok := layers.OpcodeByName(s)
	return uint64(op), ok
}

func lnhName(u uint64) (string, bool) { return layers.LinkNextHeader(u).String(), u < 4 }

func aethTypeName(u uint64) (string, bool) { return layers.AETHType(u).String(), u < 4 }

func aethTypeByName(s string) (uint64, bool) {
	for t := layers.AETHType(0); t < 4; t++ {
		if t.String() == s {
			return uint64(t), true
		}
	}
	return 0, false
}

func rnrTimerName(u uint64) (string, bool) { return layers.RNRTimerCode(u).String(), true }

func nakName(u uint64) (string, bool) { return layers.NAKCode(u).String(), u < 5 }

func nakByName(s string) (uint64, bool) {
	for c := layers.NAKCode(0); c < 5; c++ {
		if c.String() == s || c.Key() == s {
			return uint64(c), true
		}
	}
	return 0, false
}
