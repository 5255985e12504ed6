package parquetout

import (
	"encoding/binary"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// The packets table's own columns are read straight from the decoded
// packet by addFixed, one function for the whole row, instead of through
// a registry getter per cell (two indirect calls, a decode.Value and a
// type switch each, at 61 columns the export's largest cost once the
// pages were typed). The registry still names and types each column, and
// gives the values of the rare ones (VLAN, LRH, GRH, a malformed packet's
// error); TestDirectEqualsRegistry holds every column addFixed writes to
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

// shareFixedDefs makes the columns of cols (packetColumns' columns) that
// have a value exactly when another has share its definition levels: the
// BTH's fields, which every InfiniBand packet has, share opcode's; the
// addresses and ECN share DSCP's (an IP header's), frame_len and cap_len
// are always defined.
func shareFixedDefs(cols []*column) {
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
	cols[colLatencyOp].shareDefs(cols[colLatency])
	cols[colRNRTimer].shareDefs(cols[colRNRNAK])
}

// addFixed adds p's values of packetColumns to cols (in packetColumns'
// order); fcs are the columns' registry fields. A column left alone is
// null in this row.
func addFixed(p *decode.Packet, fcs []*fieldColumn, cols []*column, v *decode.Value) {
	cols = cols[:numFixedColumns]
	h := p.Headers
	cols[colFrameLen].putInt32(int32(p.Length))
	cols[colCapLen].putInt32(int32(len(p.Data)))
	if p.HasEthernet() {
		cols[colEthSrc].putAddr(fcs[colEthSrc].fields[0], h.Ethernet.SrcMAC)
		cols[colEthDst].putAddr(fcs[colEthDst].fields[0], h.Ethernet.DstMAC)
	}
	switch {
	case p.HasIPv4():
		cols[colSrc].putAddr(fcs[colSrc].fields[0], ipv4Bytes(h.IPv4.SrcIP))
		cols[colDst].putAddr(fcs[colDst].fields[0], ipv4Bytes(h.IPv4.DstIP))
		cols[colDSCP].putInt32(int32(h.IPv4.TOS >> 2))
		cols[colECN].putInt32(int32(h.IPv4.TOS & 3))
	case p.HasIPv6():
		cols[colSrc].putAddr(fcs[colSrc].fields[1], h.IPv6.SrcIP)
		cols[colDst].putAddr(fcs[colDst].fields[1], h.IPv6.DstIP)
		cols[colDSCP].putInt32(int32(h.IPv6.TrafficClass >> 2))
		cols[colECN].putInt32(int32(h.IPv6.TrafficClass & 3))
	}
	if p.HasUDP() {
		cols[colSport].putInt32(int32(h.UDP.SrcPort))
		cols[colDport].putInt32(int32(h.UDP.DstPort))
	}
	if g := gatesOf(p); g&(gateVLAN|gateLRH|gateGRH|gateErr) != 0 {
		for _, i := range [...]int{colVLAN, colPCP, colSLID, colDLID, colSL, colSGID, colDGID, colVCRC, colMalformed} {
			if fc := fcs[i]; fc.gate&g == fc.gate {
				fc.registry(p, v, cols[i])
			}
		}
	}
	if p.IsIB() {
		b := &h.BTH
		cols[colEncap].putEnum(int(p.Encapsulation), encapText)
		cols[colService].putEnum(int(b.Info().Service), serviceText)
		cols[colOpcode].putInt32(int32(b.Opcode))
		cols[colOpcodeName].putEnum(int(b.Opcode), opcodeText)
		cols[colSE].putBool(b.SE)
		cols[colMigReq].putBool(b.MigReq)
		cols[colPadCount].putInt32(int32(b.PadCount))
		cols[colTVer].putInt32(int32(b.TVer))
		cols[colPKey].putInt32(int32(b.PKey))
		cols[colFECN].putBool(b.FECN)
		cols[colBECN].putBool(b.BECN)
		cols[colDestQP].putInt32(int32(b.DestQP))
		cols[colAckReq].putBool(b.AckReq)
		cols[colPSN].putInt32(int32(b.PSN))
		switch {
		case b.HasETH(layers.HdrAtomicETH):
			cols[colRETHVA].putInt64(int64(b.AtomicETH.VA))
			cols[colRETHRKey].putInt32(int32(b.AtomicETH.RKey))
		case b.HasETH(layers.HdrRETH):
			cols[colRETHVA].putInt64(int64(b.RETH.VA))
			cols[colRETHRKey].putInt32(int32(b.RETH.RKey))
		}
		if b.HasETH(layers.HdrRETH) {
			cols[colRETHDMALen].putInt32(int32(b.RETH.DMALength))
		}
		if b.HasETH(layers.HdrAETH) {
			cols[colAETHSyndrome].putInt32(int32(b.AETH.Syndrome))
			cols[colAETHMSN].putInt32(int32(b.AETH.MSN))
		}
		if b.HasETH(layers.HdrDETH) {
			cols[colDETHQKey].putInt64(int64(b.DETH.QKey))
			cols[colDETHSrcQP].putInt32(int32(b.DETH.SrcQP))
		}
		if b.HasETH(layers.HdrImmDt) && b.ImmDt.Contents != nil {
			cols[colImmDt].putBytes(b.ImmDt.Contents)
		}
		if b.HasETH(layers.HdrIETH) && b.IETH.Contents != nil {
			cols[colIETH].putBytes(b.IETH.Contents)
		}
		cols[colPayloadLen].putInt32(int32(len(b.PacketPayload())))
		if p.Err == nil {
			cols[colICRC].putEnum(int(p.ICRC), crcText)
		}
	}
	a := &p.Analysis
	if a.Conv != 0 {
		cols[colConvID].putInt32(int32(a.Conv))
	}
	if a.Dir != 0 {
		cols[colDirection].putInt32(int32(a.Dir))
	}
	if a.Severity != decode.SevNone {
		cols[colSeverity].putEnum(int(a.Severity), severityText)
	}
	if a.Findings != 0 {
		flag := func(k decode.FindingKind, i int) {
			if a.Has(k) {
				cols[i].putBool(true)
			}
		}
		flag(decode.FindRetransmission, colRetransmission)
		if a.Has(decode.FindPSNGap) {
			cols[colPSNGap].putInt32(int32(a.GapPSNs))
		}
		flag(decode.FindDuplicate, colDuplicate)
		flag(decode.FindOutOfOrder, colOutOfOrder)
		if a.Has(decode.FindNAK) {
			cols[colNAK].putInt32(int32(h.BTH.AETH.Syndrome.NAKCode()))
		}
		if a.Has(decode.FindRNRNAK) {
			cols[colRNRNAK].putBool(true)
			cols[colRNRTimer].putInt64(int64(h.BTH.AETH.Syndrome.RNRTimer()))
		}
		flag(decode.FindCNP, colCNP)
		flag(decode.FindECNCE, colECNCE)
	}
	if a.Info != 0 {
		if a.Info&decode.InfoRetransmittedFrame != 0 && a.RetransmittedFrame != 0 {
			cols[colRetransmittedFrame].putInt32(int32(a.RetransmittedFrame))
		}
		if a.Info&decode.InfoRequest != 0 && a.RequestFrame != 0 {
			cols[colRequestFrame].putInt32(int32(a.RequestFrame))
		}
		if a.Info&decode.InfoLatency != 0 {
			cols[colLatency].putInt64(int64(a.Latency))
			cols[colLatencyOp].putEnum(int(a.Op), opClassText)
		}
		if a.Info&decode.InfoAckRTT != 0 {
			cols[colAckRTT].putInt64(int64(a.AckRTT))
		}
	}
}

// The texts of the enumerations putEnum adds, called for a row group's
// first sight of each number only.
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
func (c *column) putAddr(f *decode.Field, b []byte) {
	if b == nil {
		return // as bytesField: no bytes, no value
	}
	k, short := addrKeyOf(b)
	r := &c.recent
	if short {
		switch {
		case r.n > 0 && r.key[0] == k:
			c.putWord(r.idx[0])
			return
		case r.n > 1 && r.key[1] == k:
			c.putWord(r.idx[1])
			return
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

// putEnum adds the text of a small number n (an opcode, a status), keyed
// by the number: an array index instead of a map lookup; text gives the
// number's text.
func (c *column) putEnum(n int, text func(int) string) {
	if c.enum == nil {
		c.enum = new([256]int32)
	}
	if uint(n) < uint(len(c.enum)) {
		if i := c.enum[n]; i > 0 {
			c.putWord(i - 1)
			return
		}
	}
	s := text(n)
	i := c.word(s, func() []byte { return []byte(s) })
	if uint(n) < uint(len(c.enum)) {
		c.enum[n] = i + 1
	}
	c.putWord(i)
}
