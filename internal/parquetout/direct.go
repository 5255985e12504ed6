package parquetout

import (
	"encoding/binary"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// The packets table's own columns are read straight from the decoded
// packet by fixedRow.add, one function for the whole row, instead of through
// a registry getter per cell (two indirect calls, a decode.Value and a
// type switch each, at 61 columns the export's largest cost once the
// pages were typed). The registry still names and types each column, and
// gives the values of the rare ones (VLAN, LRH, GRH, a malformed packet's
// error); TestDirectEqualsRegistry holds every column fixedRow.add writes to
// its registry fields on every capture in the tree.

// The indexes of packetColumns, in its order (TestPacketColumnIndexes).
const (
	colFrameLen = iota
	colCapLen
	colEncap
	colEthSrc
	colEthDst
	colVLAN
	colPCP
	colSrc
	colDst
	colDSCP
	colECN
	colSport
	colDport
	colSLID
	colDLID
	colSL
	colSGID
	colDGID
	colService
	colOpcode
	colOpcodeName
	colSE
	colMigReq
	colPadCount
	colTVer
	colPKey
	colFECN
	colBECN
	colDestQP
	colAckReq
	colPSN
	colRETHVA
	colRETHRKey
	colRETHDMALen
	colAETHSyndrome
	colAETHMSN
	colDETHQKey
	colDETHSrcQP
	colImmDt
	colIETH
	colPayloadLen
	colICRC
	colVCRC
	colMalformed
	colConvID
	colDirection
	colSeverity
	colRetransmission
	colRetransmittedFrame
	colPSNGap
	colDuplicate
	colOutOfOrder
	colNAK
	colRNRNAK
	colRNRTimer
	colCNP
	colECNCE
	colRequestFrame
	colLatency
	colLatencyOp
	colAckRTT
	numFixedColumns
)

// fixedLayout sets up cols (packetColumns' columns) for fixedRow.add. The
// columns that have a value exactly when another has share its
// definition levels: the BTH's fields, which every InfiniBand packet has,
// share opcode's; the addresses and ECN share DSCP's (an IP header's),
// and so on; frame_len and cap_len are always defined. The enumerations'
// texts are made from their numbers once per row group (finishEnum):
// opcode_name's and service's from opcode's numbers, so a row adds
// nothing for them.
func fixedLayout(cols []*column) {
	for _, i := range []int{colEncap, colService, colOpcodeName, colSE, colMigReq, colPadCount, colTVer, colPKey,
		colFECN, colBECN, colDestQP, colAckReq, colPSN, colPayloadLen} {
		cols[i].shareDefs(cols[colOpcode])
	}
	cols[colFrameLen].alwaysDefined()
	cols[colCapLen].alwaysDefined()
	cols[colEthDst].shareDefs(cols[colEthSrc])
	cols[colSrc].shareDefs(cols[colDSCP])
	cols[colDst].shareDefs(cols[colDSCP])
	cols[colECN].shareDefs(cols[colDSCP])
	cols[colDport].shareDefs(cols[colSport])
	cols[colRETHRKey].shareDefs(cols[colRETHVA])
	cols[colAETHMSN].shareDefs(cols[colAETHSyndrome])
	cols[colDETHSrcQP].shareDefs(cols[colDETHQKey])
	cols[colLatencyOp].shareDefs(cols[colLatency])
	cols[colRNRTimer].shareDefs(cols[colRNRNAK])

	enum := func(i int, text func(int) string) { cols[i].enumText = text }
	enum(colEncap, encapText)
	enum(colICRC, crcText)
	enum(colSeverity, severityText)
	enum(colLatencyOp, opClassText)
	enum(colOpcodeName, opcodeText)
	cols[colOpcodeName].enumOf = cols[colOpcode]
	enum(colService, serviceText)
	cols[colService].enumOf = cols[colOpcode]
	cols[colService].enumMap = func(op int32) int { return int(layers.Opcode(op).Info().Service) }
}

// fixedRow adds packetColumns' values of a packet to a file's columns.
type fixedRow struct {
	fcs   []*fieldColumn // the columns' registry fields
	cols  []*column      // in packetColumns' order, set up by fixedLayout
	v     decode.Value
	addrs addrCache
}

// reset forgets what refers to the row group's dictionaries, after a flush.
func (w *fixedRow) reset() { w.addrs = addrCache{} }

// add adds p's values of packetColumns; a column left alone is null in
// this row. TestDirectEqualsRegistry holds each to its registry fields.
func (w *fixedRow) add(p *decode.Packet) {
	cols := w.cols[:numFixedColumns]
	r := *cols[colFrameLen].row
	h := p.Headers
	cols[colFrameLen].appendInt32(int32(p.Length))
	cols[colCapLen].appendInt32(int32(len(p.Data)))
	w.addresses(p, r)
	if dscp, ok := p.DSCP(); ok {
		ecn, _ := p.ECN()
		cols[colDSCP].setInt32(r, int32(dscp))
		cols[colECN].appendInt32(int32(ecn))
	}
	if p.HasUDP() {
		cols[colSport].setInt32(r, int32(h.UDP.SrcPort))
		cols[colDport].appendInt32(int32(h.UDP.DstPort))
	}
	if g := gatesOf(p); g != 0 {
		for _, i := range [...]int{colVLAN, colPCP, colSLID, colDLID, colSL, colSGID, colDGID, colVCRC, colMalformed} {
			if fc := w.fcs[i]; fc.gate&g == fc.gate {
				fc.registry(p, &w.v, cols[i])
			}
		}
	}
	if p.IsIB() {
		b := &h.BTH
		cols[colOpcode].setInt32(r, int32(b.Opcode))
		cols[colEncap].appendInt32(int32(p.Encapsulation))
		cols[colSE].appendBool(b.SE)
		cols[colMigReq].appendBool(b.MigReq)
		cols[colPadCount].appendInt32(int32(b.PadCount))
		cols[colTVer].appendInt32(int32(b.TVer))
		cols[colPKey].appendInt32(int32(b.PKey))
		cols[colFECN].appendBool(b.FECN)
		cols[colBECN].appendBool(b.BECN)
		cols[colDestQP].appendInt32(int32(b.DestQP))
		cols[colAckReq].appendBool(b.AckReq)
		cols[colPSN].appendInt32(int32(b.PSN))
		cols[colPayloadLen].appendInt32(int32(len(b.PacketPayload())))
		if va, rkey, ok := p.RemoteAddress(); ok {
			cols[colRETHVA].setInt64(r, int64(va))
			cols[colRETHRKey].appendInt32(int32(rkey))
		}
		if b.HasETH(layers.HdrRETH) {
			cols[colRETHDMALen].setInt32(r, int32(b.RETH.DMALength))
		}
		if b.HasETH(layers.HdrAETH) {
			cols[colAETHSyndrome].setInt32(r, int32(b.AETH.Syndrome))
			cols[colAETHMSN].appendInt32(int32(b.AETH.MSN))
		}
		if b.HasETH(layers.HdrDETH) {
			cols[colDETHQKey].setInt64(r, int64(b.DETH.QKey))
			cols[colDETHSrcQP].appendInt32(int32(b.DETH.SrcQP))
		}
		// A header's Contents are set whenever the BTH lists it.
		if b.HasETH(layers.HdrImmDt) {
			cols[colImmDt].putBytes(b.ImmDt.Contents)
		}
		if b.HasETH(layers.HdrIETH) {
			cols[colIETH].putBytes(b.IETH.Contents)
		}
		if p.Err == nil {
			cols[colICRC].setInt32(r, int32(p.ICRC))
		}
	}
	a := &p.Analysis
	if a.Conv != 0 {
		cols[colConvID].setInt32(r, int32(a.Conv))
	}
	if a.Dir != 0 {
		cols[colDirection].setInt32(r, int32(a.Dir))
	}
	if a.Severity != decode.SevNone {
		cols[colSeverity].setInt32(r, int32(a.Severity))
	}
	if a.Findings != 0 {
		if a.Has(decode.FindRetransmission) {
			cols[colRetransmission].setBool(r, true)
		}
		if a.Has(decode.FindPSNGap) {
			cols[colPSNGap].setInt32(r, int32(a.GapPSNs))
		}
		if a.Has(decode.FindDuplicate) {
			cols[colDuplicate].setBool(r, true)
		}
		if a.Has(decode.FindOutOfOrder) {
			cols[colOutOfOrder].setBool(r, true)
		}
		if code, ok := p.NAK(); ok {
			cols[colNAK].setInt32(r, int32(code))
		}
		if timer, ok := p.RNRTimer(); ok {
			cols[colRNRNAK].setBool(r, true)
			cols[colRNRTimer].appendInt64(int64(timer))
		}
		if a.Has(decode.FindCNP) {
			cols[colCNP].setBool(r, true)
		}
		if a.Has(decode.FindECNCE) {
			cols[colECNCE].setBool(r, true)
		}
	}
	if a.Info != 0 {
		if a.Info&decode.InfoRetransmittedFrame != 0 && a.RetransmittedFrame != 0 {
			cols[colRetransmittedFrame].setInt32(r, int32(a.RetransmittedFrame))
		}
		if a.Info&decode.InfoRequest != 0 && a.RequestFrame != 0 {
			cols[colRequestFrame].setInt32(r, int32(a.RequestFrame))
		}
		if a.Info&decode.InfoLatency != 0 {
			cols[colLatency].setInt64(r, int64(a.Latency))
			cols[colLatencyOp].appendInt32(int32(a.Op))
		}
		if a.Info&decode.InfoAckRTT != 0 {
			cols[colAckRTT].setInt64(r, int64(a.AckRTT))
		}
	}
}

// addrCache holds the last two rows' Ethernet and IPv4 addresses and
// their four columns' dictionary indexes: a connection's packets
// alternate between its two ends, so most rows add four known indexes
// after comparing three numbers. key[i] holds the destination MAC and
// the source MAC's first two bytes, the source MAC's last four, and the
// source and destination IPv4 addresses.
type addrCache struct {
	key  [2][3]uint64
	idx  [2][4]int32
	n    int
	next int // the older entry's place
}

// addresses adds p's eth_src, eth_dst, src and dst. An IPv6 packet's,
// or one without Ethernet, go one by one (eachAddress).
func (w *fixedRow) addresses(p *decode.Packet, r int) {
	h := p.Headers
	es, ed := h.Ethernet.SrcMAC, h.Ethernet.DstMAC
	if !p.HasEthernet() || !p.HasIPv4() || len(es) != 6 || len(ed) != 6 {
		w.eachAddress(p)
		return
	}
	src, dst := ipv4Bytes(h.IPv4.SrcIP), ipv4Bytes(h.IPv4.DstIP)
	if len(src) != 4 || len(dst) != 4 {
		w.eachAddress(p)
		return
	}
	le := binary.LittleEndian
	k0 := uint64(le.Uint32(ed)) | uint64(le.Uint16(ed[4:]))<<32 | uint64(le.Uint16(es))<<48
	k1 := uint64(le.Uint32(es[2:]))
	k2 := uint64(le.Uint32(src)) | uint64(le.Uint32(dst))<<32
	c := &w.addrs
	e := 0
	switch {
	case c.n > 0 && c.key[0] == [3]uint64{k0, k1, k2}:
	case c.n > 1 && c.key[1] == [3]uint64{k0, k1, k2}:
		e = 1
	default:
		e = c.next
		c.next ^= 1
		c.n = min(c.n+1, 2)
		c.key[e] = [3]uint64{k0, k1, k2}
		f, cols := w.fcs, w.cols
		c.idx[e] = [4]int32{cols[colEthSrc].putAddr(f[colEthSrc].fields[0], es), cols[colEthDst].putAddr(f[colEthDst].fields[0], ed),
			cols[colSrc].putAddr(f[colSrc].fields[0], src), cols[colDst].putAddr(f[colDst].fields[0], dst)}
		return
	}
	i, cols := &c.idx[e], w.cols
	cols[colEthSrc].setWord(r, i[0])
	cols[colEthDst].appendWord(i[1])
	cols[colSrc].appendWord(i[2])
	cols[colDst].appendWord(i[3])
}

// eachAddress adds the addresses one by one.
func (w *fixedRow) eachAddress(p *decode.Packet) {
	h := p.Headers
	cols, f := w.cols, w.fcs
	if p.HasEthernet() {
		cols[colEthSrc].putAddr(f[colEthSrc].fields[0], h.Ethernet.SrcMAC)
		cols[colEthDst].putAddr(f[colEthDst].fields[0], h.Ethernet.DstMAC)
	}
	switch {
	case p.HasIPv4():
		cols[colSrc].putAddr(f[colSrc].fields[0], ipv4Bytes(h.IPv4.SrcIP))
		cols[colDst].putAddr(f[colDst].fields[0], ipv4Bytes(h.IPv4.DstIP))
	case p.HasIPv6():
		cols[colSrc].putAddr(f[colSrc].fields[1], h.IPv6.SrcIP)
		cols[colDst].putAddr(f[colDst].fields[1], h.IPv6.DstIP)
	}
}

// The texts of the enumeration columns (fixedLayout), made for a row
// group's first sight of each number only.
var (
	encapText    = func(n int) string { return layers.Encapsulation(n).String() }
	serviceText  = func(n int) string { return layers.ServiceType(n).String() }
	opcodeText   = func(n int) string { return layers.Opcode(n).String() }
	crcText      = func(n int) string { return layers.CRCStatus(n).String() }
	severityText = func(n int) string { return decode.Severity(n).String() }
	opClassText  = func(n int) string { return decode.OpClass(n).String() }
)

// ipv4Bytes is an IPv4 address's four bytes, as decode's ip.src gives them.
func ipv4Bytes(ip []byte) []byte {
	if len(ip) == 16 {
		return ip[12:]
	}
	return ip
}

// putAddr adds an address, keyed by its bytes, written as f writes it.
// The last two addresses are checked before the dictionary, as numbers: a
// connection's packets alternate between its two ends.
func (c *column) putAddr(f *decode.Field, b []byte) int32 {
	if b == nil {
		return -1 // as bytesField: no bytes, no value
	}
	k, short := addrKeyOf(b)
	r := &c.recent
	if short {
		switch {
		case r.n > 0 && r.key[0] == k:
			c.putWord(r.idx[0])
			return r.idx[0]
		case r.n > 1 && r.key[1] == k:
			c.putWord(r.idx[1])
			return r.idx[1]
		}
	}
	i, ok := c.dict[string(b)] // converts without allocating
	if !ok {
		i = c.word(string(b), func() []byte { return f.AppendValue(nil, &decode.Value{B: b}) })
	}
	if short { // the older of the two goes
		r.key[r.next], r.idx[r.next] = k, i
		r.next ^= 1
		r.n = min(r.n+1, 2)
	}
	c.putWord(i)
	return i
}

// addrKey is an address of 4, 6 or 16 bytes as two numbers and a length.
type addrKey struct {
	lo, hi uint64
	n      int
}

// addrKeyOf is b's addrKey; false for other lengths.
func addrKeyOf(b []byte) (addrKey, bool) {
	switch len(b) {
	case 4:
		return addrKey{lo: uint64(binary.LittleEndian.Uint32(b)), n: 4}, true
	case 6:
		return addrKey{lo: uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint16(b[4:]))<<32, n: 6}, true
	case 16:
		return addrKey{lo: binary.LittleEndian.Uint64(b), hi: binary.LittleEndian.Uint64(b[8:]), n: 16}, true
	}
	return addrKey{}, false
}
