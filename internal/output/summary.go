package output

import (
	"strconv"
	"time"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// TimeFormat selects the timestamp of the summary line, as tcpdump's -t flags do.
type TimeFormat uint8

// Timestamp formats.
const (
	TimeOfDay      TimeFormat = iota // default: 15:04:05.000000
	TimeNone                         // -t
	TimeEpoch                        // -tt: seconds since 1970
	TimeDelta                        // -ttt: since the previous packet
	TimeDate                         // -tttt: date and time of day
	TimeSinceFirst                   // -ttttt: since the first packet
)

// Summary renders ibdump's default line: tcpdump's shape with Wireshark's
// vocabulary, e.g.
//
//	22:13:20.000000 RoCEv2 10.0.0.1.49152 > 10.0.0.2.4791: RC RDMA Write Only QP 0x000011 PSN 100 A, RETH va 0x7f0000001000 rkey 0x1234 len 16, length 16
type Summary struct {
	Time     TimeFormat
	Nanos    bool           // nanosecond timestamps (--nano)
	Location *time.Location // time zone of TimeOfDay and TimeDate; nil is local time
	Number   bool           // -#: packet number first
	Verbose  int            // -v: IP TTL/TOS/ECN and the ICRC values
	Ether    bool           // --ether (tcpdump -e): link-level header

	// The clock part of a timestamp changes once a second; formatting it
	// once a second instead of once a packet halves the cost of a line.
	lastSec    int64
	lastPrefix []byte

	heads *lineCache // the IB part's heads (appendIB)
	num   counter    // the packet number (-#)
}

// Config returns s's options without its scratch state: a renderer of
// the same lines for another goroutine.
func (s *Summary) Config() Summary {
	return Summary{Time: s.Time, Nanos: s.Nanos, Location: s.Location, Number: s.Number, Verbose: s.Verbose, Ether: s.Ether}
}

// Append appends the line for p, without a newline.
func (s *Summary) Append(buf []byte, p *decode.Packet) []byte {
	if s.Number {
		buf = s.num.appendLeft(buf, p.Number, 5)
		buf = append(buf, "  "...)
	}
	buf = s.appendTime(buf, p)
	h := p.Headers
	if s.Ether && p.HasEthernet() {
		buf = appendMAC(buf, h.Ethernet.SrcMAC)
		buf = append(buf, " > "...)
		buf = appendMAC(buf, h.Ethernet.DstMAC)
		buf = append(buf, ", ethertype "...)
		buf = append(buf, h.Ethernet.EthernetType.String()...)
		buf = append(buf, " ("...)
		buf = appendHex(buf, uint64(h.Ethernet.EthernetType), 4)
		buf = append(buf, "), length "...)
		buf = appendInt(buf, int64(p.Length))
		buf = append(buf, ": "...)
	}
	if s.Verbose > 0 && p.HasIPv4() {
		ip := &h.IPv4
		buf = append(buf, "IP (tos "...)
		buf = append(buf, "0x"...)
		buf = strconv.AppendUint(buf, uint64(ip.TOS), 16)
		if ecn := ip.TOS & 3; ecn != 0 {
			buf = append(append(buf, ','), decode.ECNName(ecn)...)
		}
		buf = append(buf, ", ttl "...)
		buf = appendDec(buf, uint64(ip.TTL))
		buf = append(buf, ", id "...)
		buf = appendDec(buf, uint64(ip.Id))
		if ip.Flags&ipv4DontFragment != 0 {
			buf = append(buf, ", flags [DF]"...)
		}
		buf = append(buf, ", length "...)
		buf = appendDec(buf, uint64(ip.Length))
		buf = append(buf, ") "...)
	}
	switch {
	case p.IsIB():
		buf = s.appendIB(buf, p)
	case p.HasUDP() || p.HasTCP():
		buf = appendIPPorts(buf, p)
		if p.HasUDP() {
			buf = append(buf, ": UDP, length "...)
			buf = appendInt(buf, int64(len(h.UDP.Payload)))
		} else {
			buf = appendTCP(buf, p)
		}
	case p.HasARP():
		buf = appendARP(buf, p)
	case p.HasMACControl():
		buf = appendMAC(buf, h.Ethernet.SrcMAC)
		buf = append(buf, " > "...)
		buf = appendMAC(buf, h.Ethernet.DstMAC)
		buf = append(buf, ": "...)
		buf = AppendMACControl(buf, &h.MACControl)
	case p.HasIPv4() || p.HasIPv6():
		buf = append(buf, ipName(p)...)
		buf = append(buf, ' ')
		buf = AppendAddress(buf, p, true)
		buf = append(buf, " > "...)
		buf = AppendAddress(buf, p, false)
		buf = append(buf, ", length "...)
		buf = appendInt(buf, int64(p.Length))
	case p.HasLRH():
		// Native IB without IBA transport that ibdump does not decode
		// further: a raw packet of another EtherType, or a GRH leading
		// elsewhere than a BTH.
		buf = append(buf, "IB "...)
		buf = AppendAddress(buf, p, true)
		buf = append(buf, " > "...)
		buf = AppendAddress(buf, p, false)
		rest := h.LRH.Payload
		switch {
		case p.Has(layers.LayerTypeRWH):
			buf = append(buf, ": raw, ethertype "...)
			buf = appendHex(buf, uint64(h.RWH.EtherType), 4)
			rest = h.RWH.Payload
		case p.HasGRH():
			buf = append(buf, ": GRH next header "...)
			buf = appendDec(buf, uint64(h.GRH.NxtHdr))
			rest = h.GRH.Payload
		}
		buf = append(buf, ", length "...)
		buf = appendInt(buf, int64(len(rest)))
	case p.HasEthernet():
		buf = append(buf, "ethertype "...)
		buf = append(buf, h.Ethernet.EthernetType.String()...)
		buf = append(buf, " ("...)
		buf = appendHex(buf, uint64(h.Ethernet.EthernetType), 4)
		buf = append(buf, "), length "...)
		buf = appendInt(buf, int64(p.Length))
	default:
		buf = append(buf, "link type "...)
		buf = appendDec(buf, uint64(p.LinkType))
		buf = append(buf, ", length "...)
		buf = appendInt(buf, int64(p.Length))
	}
	switch {
	case p.Cut():
		// A snapshot length, not damage: say how much the capture kept,
		// as tcpdump's [|proto] does.
		buf = append(buf, " [captured "...)
		buf = appendInt(buf, int64(len(p.Data)))
		buf = append(buf, " of "...)
		buf = appendInt(buf, int64(p.Length))
		buf = append(buf, " bytes]"...)
	case p.Err != nil:
		buf = append(buf, " [malformed: "...)
		buf = append(buf, p.Err.Error()...)
		buf = append(buf, ']')
	}
	return buf
}

func ipName(p *decode.Packet) string {
	if p.HasIPv6() {
		return "IP6"
	}
	return "IP"
}

func appendIPPorts(buf []byte, p *decode.Packet) []byte {
	return appendEndpoints(append(append(buf, ipName(p)...), ' '), p)
}

// appendEndpoints appends "addr.port > addr.port".
func appendEndpoints(buf []byte, p *decode.Packet) []byte {
	h := p.Headers
	var sport, dport uint16
	if p.HasUDP() {
		sport, dport = uint16(h.UDP.SrcPort), uint16(h.UDP.DstPort)
	} else {
		sport, dport = uint16(h.TCP.SrcPort), uint16(h.TCP.DstPort)
	}
	buf = AppendAddress(buf, p, true)
	buf = append(buf, '.')
	buf = appendDec(buf, uint64(sport))
	buf = append(buf, " > "...)
	buf = AppendAddress(buf, p, false)
	buf = append(buf, '.')
	return appendDec(buf, uint64(dport))
}

func (s *Summary) appendTime(buf []byte, p *decode.Packet) []byte {
	prec := 6
	if s.Nanos {
		prec = 9
	}
	loc := s.Location
	if loc == nil {
		loc = time.Local
	}
	switch s.Time {
	case TimeNone:
		return buf
	case TimeEpoch:
		buf = appendFixedSeconds(buf, time.Duration(p.Time.UnixNano()), prec)
	case TimeDelta:
		buf = appendFixedSeconds(buf, p.DeltaTime, prec)
	case TimeSinceFirst:
		buf = appendFixedSeconds(buf, p.RelTime, prec)
	default: // TimeOfDay, TimeDate
		sec := p.Time.Unix()
		if s.lastPrefix == nil || sec != s.lastSec {
			layout := "15:04:05."
			if s.Time == TimeDate {
				layout = "2006-01-02 15:04:05."
			}
			s.lastSec, s.lastPrefix = sec, p.Time.In(loc).AppendFormat(s.lastPrefix[:0], layout)
		}
		buf = append(buf, s.lastPrefix...)
		buf = appendFraction(buf, uint32(p.Time.Nanosecond()), prec)
	}
	return append(buf, ' ')
}

// appendIB appends the IB part: encapsulation, endpoints, opcode, QP, PSN,
// flags, the extended headers, the payload length and CRC problems.
func (s *Summary) appendIB(buf []byte, p *decode.Packet) []byte {
	h := p.Headers
	b := &h.BTH
	e := b.Info()
	// The head, up to the PSN, is the same for every packet of one
	// direction of a UDP connection with one opcode and destination QP.
	var k lineKey
	kept := false
	keep := p.HasUDP() && k.setAddrs(p)
	if keep {
		k.ports = uint32(h.UDP.SrcPort)<<16 | uint32(h.UDP.DstPort)
		k.qp = b.DestQP&0xFFFFFF | uint32(b.Opcode)<<24
		k.encap = uint8(p.Encapsulation)
		if s.heads == nil {
			s.heads = new(lineCache)
		}
		buf, kept = s.heads.appendKept(buf, &k)
	}
	if !kept {
		start := len(buf)
		buf = appendIBHead(buf, p, b, e)
		if keep {
			s.heads.keep(&k, buf[start:])
		}
	}
	buf = appendDec(buf, uint64(b.PSN))
	if b.AckReq {
		buf = append(buf, " A"...)
	}
	if b.SE {
		buf = append(buf, " SE"...)
	}
	if b.MigReq {
		buf = append(buf, " M"...)
	}
	if b.FECN {
		buf = append(buf, " FECN"...)
	}
	if b.BECN {
		buf = append(buf, " BECN"...)
	}
	if b.PKey != 0xFFFF {
		buf = append(buf, " pkey "...)
		buf = appendHex(buf, uint64(b.PKey), 4)
	}
	for _, k := range e.HeaderList() {
		if b.HasETH(k) {
			buf = append(buf, ", "...)
			buf = appendETH(buf, b, k)
		}
	}
	if p.HasMAD() {
		buf = append(buf, ", "...)
		buf = appendMAD(buf, p)
	}
	r := p.Analysis.RPCRDMA
	if n := p.Analysis.NVMe; n != nil && (n.Kind == decode.NVMeCommand || n.Kind == decode.NVMeCompletion) {
		// The capsule says more than its length.
		buf = appendNVMe(buf, n)
	} else if r != nil && r.Kind == decode.RPCRDMAMessage {
		// So does an RPC-over-RDMA message.
		buf = appendRPCRDMA(buf, r)
	} else if s := p.Analysis.SMBDirect; s != nil && (s.HasMsg || s.Err != nil) {
		// And an SMB Direct one.
		buf = appendSMBDirect(buf, s)
	} else if i := p.Analysis.ISER; i != nil && i.Kind == decode.ISERMessage {
		// And an iSER message.
		buf = appendISER(buf, i)
	} else if p.Err == nil || p.Cut() {
		buf = append(buf, ", length "...)
		buf = appendInt(buf, int64(p.PayloadLength()))
		if r != nil && r.Kind == decode.RPCRDMAChunk {
			buf = appendRPCChunk(buf, r)
		}
		if i := p.Analysis.ISER; i != nil && i.Kind == decode.ISERData && i.HasTask {
			buf = appendISERData(buf, i)
		}
	}
	if note := p.GSONote(); note != "" {
		// Not damage: the ICRC is the last packet's, of a run the
		// capture saw before the kernel cut it into datagrams.
		buf = append(buf, " ["...)
		buf = append(buf, note...)
		buf = append(buf, ']')
	} else if p.ICRC == layers.CRCBad {
		buf = append(buf, " [bad ICRC "...)
		buf = appendHex(buf, uint64(b.Trailer.ICRC), 8)
		buf = append(buf, ", should be "...)
		buf = appendHex(buf, uint64(p.ICRCComputed), 8)
		buf = append(buf, ']')
	} else if s.Verbose > 0 && p.ICRC == layers.CRCGood {
		buf = append(buf, " [ICRC "...)
		buf = appendHex(buf, uint64(b.Trailer.ICRC), 8)
		buf = append(buf, " ok]"...)
	}
	if p.VCRC == layers.CRCBad {
		buf = append(buf, " [bad VCRC "...)
		buf = appendHex(buf, uint64(h.LRH.VCRC), 4)
		buf = append(buf, ", should be "...)
		buf = appendHex(buf, uint64(p.VCRCComputed), 4)
		buf = append(buf, ']')
	}
	return buf
}

// appendIBHead appends the IB part's head: encapsulation, endpoints,
// opcode, QP and the word PSN.
func appendIBHead(buf []byte, p *decode.Packet, b *layers.BTH, e *layers.OpcodeInfo) []byte {
	buf = append(buf, p.Encapsulation.String()...)
	buf = append(buf, ' ')
	if p.HasUDP() {
		buf = appendEndpoints(buf, p)
	} else {
		buf = AppendAddress(buf, p, true)
		buf = append(buf, " > "...)
		buf = AppendAddress(buf, p, false)
	}
	buf = append(buf, ": "...)
	if e.Known {
		if e.Info != "Unknown OpCode" {
			buf = append(buf, e.Info...)
		} else {
			buf = append(buf, e.Name...)
		}
	} else {
		buf = append(buf, "Unknown opcode "...)
		buf = appendHex(buf, uint64(b.Opcode), 2)
	}
	buf = append(buf, " QP "...)
	buf = appendHex(buf, uint64(b.DestQP), 6)
	return append(buf, " PSN "...)
}

// appendETH summarizes one extended header.
func appendETH(buf []byte, b *layers.BTH, k layers.HeaderKind) []byte {
	switch k {
	case layers.HdrRETH:
		buf = append(buf, "RETH va "...)
		buf = append(buf, "0x"...)
		buf = appendHexTrim(buf, b.RETH.VA)
		buf = append(buf, " rkey "...)
		buf = appendHex(buf, uint64(b.RETH.RKey), 8)
		buf = append(buf, " len "...)
		return appendDec(buf, uint64(b.RETH.DMALength))
	case layers.HdrAETH:
		buf = append(buf, "AETH "...)
		buf = append(buf, b.AETH.Syndrome.String()...)
		buf = append(buf, " MSN "...)
		return appendDec(buf, uint64(b.AETH.MSN))
	case layers.HdrAtomicETH:
		a := &b.AtomicETH
		buf = append(buf, "AtomicETH va 0x"...)
		buf = appendHexTrim(buf, a.VA)
		buf = append(buf, " rkey "...)
		buf = appendHex(buf, uint64(a.RKey), 8)
		if b.Info().Operation == layers.OpFetchAdd {
			buf = append(buf, " add "...)
			return appendDec(buf, a.SwapAddData)
		}
		buf = append(buf, " swap "...)
		buf = appendDec(buf, a.SwapAddData)
		buf = append(buf, " compare "...)
		return appendDec(buf, a.CompareData)
	case layers.HdrAtomicAckETH:
		buf = append(buf, "AtomicAckETH orig "...)
		return appendDec(buf, b.AtomicAckETH.OrigRemoteData)
	case layers.HdrImmDt:
		buf = append(buf, "ImmDt "...)
		return appendHex(buf, uint64(b.ImmDt.Value), 8)
	case layers.HdrIETH:
		buf = append(buf, "IETH rkey "...)
		return appendHex(buf, uint64(b.IETH.RKey), 8)
	case layers.HdrDETH:
		buf = append(buf, "DETH qkey "...)
		buf = appendHex(buf, uint64(b.DETH.QKey), 8)
		buf = append(buf, " srcqp "...)
		return appendHex(buf, uint64(b.DETH.SrcQP), 6)
	case layers.HdrRDETH:
		buf = append(buf, "RDETH eecnxt "...)
		return appendDec(buf, uint64(b.RDETH.EEContext))
	case layers.HdrXRCETH:
		buf = append(buf, "XRCETH srq "...)
		return appendHex(buf, uint64(b.XRCETH.XRCSRQ), 6)
	case layers.HdrFETH:
		buf = append(buf, "FETH sel "...)
		buf = appendDec(buf, uint64(b.FETH.SelectivityLevel))
		buf = append(buf, " plt "...)
		return appendDec(buf, uint64(b.FETH.PlacementType))
	case layers.HdrCNP:
		return append(buf, "CNP"...)
	}
	return append(buf, k.String()...)
}

// appendTCP appends tcpdump's TCP summary: flags, sequence numbers, window
// and length. The set-up exchanges of ibv_*_pingpong and perftest run over TCP.
func appendTCP(buf []byte, p *decode.Packet) []byte {
	t := &p.Headers.TCP
	buf = append(buf, ": Flags ["...)
	for _, f := range [...]struct {
		on bool
		c  byte
	}{{t.FIN, 'F'}, {t.SYN, 'S'}, {t.RST, 'R'}, {t.PSH, 'P'}, {t.URG, 'U'}, {t.ACK, '.'}} {
		if f.on {
			buf = append(buf, f.c)
		}
	}
	buf = append(buf, "], seq "...)
	buf = appendDec(buf, uint64(t.Seq))
	if t.ACK {
		buf = append(buf, ", ack "...)
		buf = appendDec(buf, uint64(t.Ack))
	}
	buf = append(buf, ", win "...)
	buf = appendDec(buf, uint64(t.Window))
	buf = append(buf, ", length "...)
	return appendInt(buf, int64(len(t.Payload)))
}

// appendARP appends tcpdump's ARP summary.
func appendARP(buf []byte, p *decode.Packet) []byte {
	a := &p.Headers.ARP
	switch a.Operation {
	case 1:
		buf = append(buf, "ARP, Request who-has "...)
		buf = appendIP(buf, a.DstProtAddress)
		buf = append(buf, " tell "...)
		buf = appendIP(buf, a.SourceProtAddress)
	case 2:
		buf = append(buf, "ARP, Reply "...)
		buf = appendIP(buf, a.SourceProtAddress)
		buf = append(buf, " is-at "...)
		buf = appendMAC(buf, a.SourceHwAddress)
	default:
		buf = append(buf, "ARP, operation "...)
		buf = appendDec(buf, uint64(a.Operation))
	}
	buf = append(buf, ", length "...)
	return appendInt(buf, int64(len(a.Contents)))
}

// appendMAD says what a MAD is, as tcpdump says what a packet is: a CM
// message with the identifiers that pair the connection it sets up (CM REQ
// lcid 0x08f82610 qpn 0x11 psn 0x244955 svc-port 7174), or the management
// method and attribute with where it goes (SubnGet(PortInfo) lid 3,
// SubnAdmGetTable(PathRecord), PerfGet(PortCounters) port 1) and the
// transaction ID that pairs a request with its response.
func appendMAD(buf []byte, p *decode.Packet) []byte {
	m := &p.Headers.MAD
	if m.MgmtClass == layers.MgmtClassCM {
		return appendCM(buf, &m.CM)
	}
	switch m.MgmtClass {
	case layers.MgmtClassPerf:
		buf = append(buf, "Perf"...)
		buf = append(buf, m.Method.String()...)
		buf = append(buf, '(')
		buf = append(buf, layers.PerfAttribute(m.AttributeID).String()...)
		buf = append(buf, ')')
		if pc, ok := m.PerfMgt.PortCounters(); ok {
			buf = append(buf, " port "...)
			buf = appendDec(buf, uint64(pc.PortSelect))
		}
	default: // SMPs and SA as Wireshark names them; other classes by class and method
		buf = append(buf, m.Info()...)
		switch {
		case m.MgmtClass == layers.MgmtClassSubnLID && p.HasLRH():
			buf = append(buf, " lid "...)
			buf = appendDec(buf, uint64(p.Headers.LRH.DLID))
		case m.MgmtClass == layers.MgmtClassSubnDirected:
			buf = append(buf, " hops "...)
			buf = appendDec(buf, uint64(m.SMPDirected.HopCount()))
		}
		buf = appendNotice(buf, p)
	}
	buf = append(buf, " tid "...)
	return appendHex(buf, m.TransactionID, 16)
}

// appendCM names a CM message by its IBTA abbreviation, with the
// communication IDs, QPNs and PSNs that tie it to its connection.
func appendCM(buf []byte, c *layers.CM) []byte {
	buf = append(buf, "CM "...)
	buf = append(buf, c.AttributeID.Abbrev()...)
	ids := func(buf []byte, local, remote uint32) []byte {
		buf = append(buf, " lcid "...)
		buf = appendHex(buf, uint64(local), 8)
		if remote != 0 {
			buf = append(buf, " rcid "...)
			buf = appendHex(buf, uint64(remote), 8)
		}
		return buf
	}
	qp := func(buf []byte, qpn uint32, psn layers.PSN) []byte {
		buf = append(buf, " qpn 0x"...)
		buf = strconv.AppendUint(buf, uint64(qpn), 16)
		buf = append(buf, " psn 0x"...)
		return strconv.AppendUint(buf, uint64(psn), 16)
	}
	service := func(buf []byte, sid layers.ServiceID) []byte {
		if sid.IsIPCM() {
			buf = append(buf, " svc-port "...)
			return appendDec(buf, uint64(sid.Port()))
		}
		buf = append(buf, " svc-id "...)
		return append(buf, sid.String()...)
	}
	switch c.AttributeID {
	case layers.CMAttrREQ:
		r := &c.REQ
		buf = ids(buf, r.LocalCommID, 0)
		buf = qp(buf, r.LocalQPN, r.StartingPSN)
		buf = service(buf, r.ServiceID)
	case layers.CMAttrREP:
		r := &c.REP
		buf = ids(buf, r.LocalCommID, r.RemoteCommID)
		buf = qp(buf, r.LocalQPN, r.StartingPSN)
	case layers.CMAttrRTU:
		buf = ids(buf, c.RTU.LocalCommID, c.RTU.RemoteCommID)
	case layers.CMAttrMRA:
		buf = ids(buf, c.MRA.LocalCommID, c.MRA.RemoteCommID)
	case layers.CMAttrREJ:
		buf = ids(buf, c.REJ.LocalCommID, c.REJ.RemoteCommID)
		buf = append(buf, " reason "...)
		buf = strconv.AppendQuote(buf, c.REJ.Reason.String())
	case layers.CMAttrDREQ:
		buf = ids(buf, c.DREQ.LocalCommID, c.DREQ.RemoteCommID)
	case layers.CMAttrDREP:
		buf = ids(buf, c.DREP.LocalCommID, c.DREP.RemoteCommID)
	case layers.CMAttrSIDRReq:
		buf = append(buf, " reqid "...)
		buf = appendHex(buf, uint64(c.SIDRReq.RequestID), 8)
		buf = service(buf, c.SIDRReq.ServiceID)
	case layers.CMAttrSIDRRep:
		r := &c.SIDRRep
		buf = append(buf, " reqid "...)
		buf = appendHex(buf, uint64(r.RequestID), 8)
		buf = append(buf, " status "...)
		buf = strconv.AppendQuote(buf, r.Status.String())
		buf = append(buf, " qpn 0x"...)
		buf = strconv.AppendUint(buf, uint64(r.QPN), 16)
		buf = append(buf, " qkey "...)
		buf = appendHex(buf, uint64(r.QKey), 8)
	}
	return buf
}
