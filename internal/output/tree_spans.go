package output

import (
	"strconv"

	"github.com/ibwire/ibwire/decode"
)

// Span is the bytes [Lo, Hi) of a frame that a tree line shows; empty when
// Lo == Hi.
type Span struct{ Lo, Hi int }

// Empty reports whether the span holds no byte.
func (s Span) Empty() bool { return s.Hi <= s.Lo }

// Has reports whether byte i is in the span.
func (s Span) Has(i int) bool { return i >= s.Lo && i < s.Hi }

// Len is the number of bytes in the span.
func (s Span) Len() int { return max(s.Hi-s.Lo, 0) }

// Union is the smallest span holding both.
func (s Span) Union(o Span) Span {
	switch {
	case s.Empty():
		return o
	case o.Empty():
		return s
	}
	return Span{min(s.Lo, o.Lo), max(s.Hi, o.Hi)}
}

// wireField names where a registry field is decoded from: a header, as
// layers names it, and the entry of that header's field table (a bit field
// by the byte or bytes that hold it).
type wireField struct{ header, field string }

// fieldWire says, for each registry field read from a header's field table,
// which entry: the tree highlights what the decoder read. Fields whose value
// is a slice of the frame (addresses, payloads) are located by that slice;
// fields the decoder computes (lengths of payloads, analysis, the frame's
// metadata) have no bytes, as in Wireshark. reth.va and reth.r_key serve the
// AtomicETH too, so they list both.
var fieldWire = map[string][]wireField{
	"eth.src": {{"Ethernet", "SrcMAC"}}, "eth.dst": {{"Ethernet", "DstMAC"}}, "eth.type": {{"Ethernet", "EthernetType"}},

	"vlan.id": {{"Dot1Q", "VLANIdentifier"}}, "vlan.priority": {{"Dot1Q", "Priority"}},

	"ip.version": {{"IPv4", "Version/IHL"}}, "ip.hdr_len": {{"IPv4", "Version/IHL"}},
	"ip.dsfield": {{"IPv4", "TOS"}}, "ip.dsfield.dscp": {{"IPv4", "TOS"}}, "ip.dsfield.ecn": {{"IPv4", "TOS"}},
	"ip.len": {{"IPv4", "Length"}}, "ip.id": {{"IPv4", "Id"}}, "ip.flags.df": {{"IPv4", "Flags"}},
	"ip.ttl": {{"IPv4", "TTL"}}, "ip.proto": {{"IPv4", "Protocol"}}, "ip.checksum": {{"IPv4", "Checksum"}},
	"ip.src": {{"IPv4", "SrcIP"}}, "ip.dst": {{"IPv4", "DstIP"}},

	"ipv6.tclass": {{"IPv6", "TrafficClass"}}, "ipv6.tclass.dscp": {{"IPv6", "DSCP"}},
	"ipv6.tclass.ecn": {{"IPv6", "ECN"}}, "ipv6.flow": {{"IPv6", "FlowLabel"}},
	"ipv6.plen": {{"IPv6", "Length"}}, "ipv6.nxt": {{"IPv6", "NextHeader"}}, "ipv6.hlim": {{"IPv6", "HopLimit"}},
	"ipv6.src": {{"IPv6", "SrcIP"}}, "ipv6.dst": {{"IPv6", "DstIP"}},

	"udp.srcport": {{"UDP", "SrcPort"}}, "udp.dstport": {{"UDP", "DstPort"}}, "udp.length": {{"UDP", "Length"}},
	"udp.checksum": {{"UDP", "Checksum"}},

	"tcp.srcport": {{"TCP", "SrcPort"}}, "tcp.dstport": {{"TCP", "DstPort"}}, "tcp.seq": {{"TCP", "Seq"}},

	"infiniband.lrh.vl": {{"LRH", "VL/LVer"}}, "infiniband.lrh.lver": {{"LRH", "VL/LVer"}},
	"infiniband.lrh.sl": {{"LRH", "SL/LNH"}}, "infiniband.lrh.reserved2": {{"LRH", "SL/LNH"}}, "infiniband.lrh.lnh": {{"LRH", "SL/LNH"}},
	"infiniband.lrh.dlid": {{"LRH", "DLID"}}, "infiniband.lrh.reserved5": {{"LRH", "Reserved5"}}, "infiniband.lrh.pktlen": {{"LRH", "PktLen"}},
	"infiniband.lrh.slid": {{"LRH", "SLID"}}, "infiniband.variant.crc": {{"LRH", "VCRC"}},

	"infiniband.grh.ipver": {{"GRH", "IPVer"}}, "infiniband.grh.tclass": {{"GRH", "TClass"}},
	"infiniband.grh.flowlabel": {{"GRH", "FlowLabel"}}, "infiniband.grh.paylen": {{"GRH", "PayLen"}},
	"infiniband.grh.nxthdr": {{"GRH", "NxtHdr"}}, "infiniband.grh.hoplmt": {{"GRH", "HopLmt"}},
	"infiniband.grh.sgid": {{"GRH", "SGID"}}, "infiniband.grh.dgid": {{"GRH", "DGID"}},

	"infiniband.bth.opcode": {{"BTH", "OpCode"}}, "infiniband.bth.se": {{"BTH", "SE/M/PadCnt/TVer"}},
	"infiniband.bth.m": {{"BTH", "SE/M/PadCnt/TVer"}}, "infiniband.bth.padcnt": {{"BTH", "SE/M/PadCnt/TVer"}},
	"infiniband.bth.tver": {{"BTH", "SE/M/PadCnt/TVer"}}, "infiniband.bth.p_key": {{"BTH", "P_Key"}},
	"infiniband.reserved": {{"BTH", "FECN/BECN/Resv6"}}, "infiniband.bth.destqp": {{"BTH", "DestQP"}},
	"infiniband.bth.a": {{"BTH", "AckReq/Resv7"}}, "infiniband.bth.reserved7": {{"BTH", "AckReq/Resv7"}},
	"infiniband.bth.psn": {{"BTH", "PSN"}},
	"ibwire.fecn":        {{"BTH", "FECN/BECN/Resv6"}}, "ibwire.becn": {{"BTH", "FECN/BECN/Resv6"}},
	"ibwire.opcode": {{"BTH", "OpCode"}}, "ibwire.service": {{"BTH", "OpCode"}},

	"infiniband.rdeth.eecnxt": {{"RDETH", "EEContext"}},
	"infiniband.deth.q_key":   {{"DETH", "Q_Key"}}, "infiniband.deth.srcqp": {{"DETH", "SrcQP"}},
	"infiniband.reth.va": {{"RETH", "VA"}, {"AtomicETH", "VA"}}, "infiniband.reth.r_key": {{"RETH", "R_Key"}, {"AtomicETH", "R_Key"}},
	"infiniband.reth.dmalen":      {{"RETH", "DMALength"}},
	"infiniband.atomiceth.swapdt": {{"AtomicETH", "SwapAddData"}}, "infiniband.atomiceth.cmpdt": {{"AtomicETH", "CompareData"}},
	"infiniband.aeth.syndrome": {{"AETH", "Syndrome"}}, "infiniband.aeth.syndrome.reserved": {{"AETH", "Syndrome"}},
	"infiniband.aeth.syndrome.opcode": {{"AETH", "Syndrome"}}, "infiniband.aeth.syndrome.credit_count": {{"AETH", "Syndrome"}},
	"infiniband.aeth.syndrome.timer": {{"AETH", "Syndrome"}}, "infiniband.aeth.syndrome.reserved_value": {{"AETH", "Syndrome"}},
	"infiniband.aeth.syndrome.error_code": {{"AETH", "Syndrome"}}, "infiniband.aeth.msn": {{"AETH", "MSN"}},
	"infiniband.atomicacketh.origremdt": {{"AtomicAckETH", "OrigRemoteData"}},
	"infiniband.immdt":                  {{"ImmDt", "ImmediateData"}}, "infiniband.ieth": {{"IETH", "R_Key"}},
	"infiniband.invariant.crc": {{"ICRC", "ICRC"}},

	// A raw packet's RWH, and the headers payload heuristics find.
	"infiniband.rwh.etype":          {{"RWH", "EtherType"}, {"IPoIB", "EtherType"}},
	"infiniband.eoib.version":       {{"EoIB", "Version"}},
	"infiniband.eoib.tcp_chk":       {{"EoIB", "TCPChecksum"}},
	"infiniband.eoib.ip_chk":        {{"EoIB", "IPChecksum"}},
	"infiniband.eoib.fcs":           {{"EoIB", "FCS"}},
	"infiniband.eoib.ms":            {{"EoIB", "MoreSegments"}},
	"infiniband.eoib.ip_seg_offset": {{"EoIB", "SegOffset"}},
	"infiniband.eoib.ip_seg_id":     {{"EoIB", "SegID"}},

	"infiniband.mad.baseversion": {{"MAD", "BaseVersion"}}, "infiniband.mad.mgmtclass": {{"MAD", "MgmtClass"}},
	"infiniband.mad.classversion": {{"MAD", "ClassVersion"}}, "infiniband.mad.method": {{"MAD", "Method"}},
	"infiniband.mad.status": {{"MAD", "Status"}}, "infiniband.mad.classspecific": {{"MAD", "ClassSpecific"}},
	"infiniband.mad.transactionid": {{"MAD", "TransactionID"}}, "infiniband.mad.attributeid": {{"MAD", "AttributeID"}},
	"infiniband.mad.attributemodifier": {{"MAD", "AttributeModifier"}},

	// CM messages: the message's field table, or the bits layers places
	// (the CM's bit fields, the IP CM service ID's parts, RDMA CM's header
	// in a REQ's private data).
	"infiniband.cm.dreq.localcommid":        {{"CM", "DREQ.LocalCommID"}},
	"infiniband.cm.dreq.private":            {{"CM", "DREQ.PrivateData"}},
	"infiniband.cm.dreq.remotecommid":       {{"CM", "DREQ.RemoteCommID"}},
	"infiniband.cm.drsp.localcommid":        {{"CM", "DREP.LocalCommID"}},
	"infiniband.cm.drsp.private":            {{"CM", "DREP.PrivateData"}},
	"infiniband.cm.drsp.remotecommid":       {{"CM", "DREP.RemoteCommID"}},
	"infiniband.cm.rej.ari":                 {{"CM", "REJ.ARI"}},
	"infiniband.cm.rej.localcommid":         {{"CM", "REJ.LocalCommID"}},
	"infiniband.cm.rej.msgrej":              {{"CM", "REJ.MessageRejected"}},
	"infiniband.cm.rej.private":             {{"CM", "REJ.PrivateData"}},
	"infiniband.cm.rej.reason":              {{"CM", "REJ.Reason"}},
	"infiniband.cm.rej.rejinfolen":          {{"CM", "REJ.RejectInfoLength"}},
	"infiniband.cm.rej.remotecommid":        {{"CM", "REJ.RemoteCommID"}},
	"infiniband.cm.rej.reserved0":           {{"CM", "REJ.Reserved0"}},
	"infiniband.cm.rej.reserved1":           {{"CM", "REJ.Reserved1"}},
	"infiniband.cm.rep":                     {{"CM", "REP.LocalCommID"}},
	"infiniband.cm.rep.e2eflowctrl":         {{"CM", "REP.EndToEndFlowControl"}},
	"infiniband.cm.rep.failoveracc":         {{"CM", "REP.FailoverAccepted"}},
	"infiniband.cm.rep.initdepth":           {{"CM", "REP.InitiatorDepth"}},
	"infiniband.cm.rep.localcaguid":         {{"CM", "REP.LocalCAGUID"}},
	"infiniband.cm.rep.localeecn":           {{"CM", "REP.LocalEECN"}},
	"infiniband.cm.rep.localqkey":           {{"CM", "REP.LocalQKey"}},
	"infiniband.cm.rep.localqpn":            {{"CM", "REP.LocalQPN"}},
	"infiniband.cm.rep.private":             {{"CM", "REP.PrivateData"}},
	"infiniband.cm.rep.remotecommid":        {{"CM", "REP.RemoteCommID"}},
	"infiniband.cm.rep.reserved":            {{"CM", "REP.Reserved"}},
	"infiniband.cm.rep.respres":             {{"CM", "REP.ResponderResources"}},
	"infiniband.cm.rep.rnrretrcount":        {{"CM", "REP.RNRRetryCount"}},
	"infiniband.cm.rep.srq":                 {{"CM", "REP.SRQ"}},
	"infiniband.cm.rep.startpsn":            {{"CM", "REP.StartingPSN"}},
	"infiniband.cm.rep.tgtackdelay":         {{"CM", "REP.TargetACKDelay"}},
	"infiniband.cm.req":                     {{"CM", "REQ.LocalCommID"}},
	"infiniband.cm.req.alt_flowlabel":       {{"CM", "REQ.AlternateFlowLabel"}},
	"infiniband.cm.req.alt_hoplim":          {{"CM", "REQ.AlternateHopLimit"}},
	"infiniband.cm.req.alt_localacktout":    {{"CM", "REQ.AlternateLocalACKTimeout"}},
	"infiniband.cm.req.alt_localgid":        {{"CM", "REQ.AlternateLocalGID"}},
	"infiniband.cm.req.alt_locallid":        {{"CM", "REQ.AlternateLocalLID"}},
	"infiniband.cm.req.alt_pktrate":         {{"CM", "REQ.AlternatePacketRate"}},
	"infiniband.cm.req.alt_remotegid":       {{"CM", "REQ.AlternateRemoteGID"}},
	"infiniband.cm.req.alt_remotelid":       {{"CM", "REQ.AlternateRemoteLID"}},
	"infiniband.cm.req.alt_reserved0":       {{"CM", "REQ.AlternateReserved0"}},
	"infiniband.cm.req.alt_reserved1":       {{"CM", "REQ.AlternateReserved1"}},
	"infiniband.cm.req.alt_sl":              {{"CM", "REQ.AlternateSL"}},
	"infiniband.cm.req.alt_subnetlocal":     {{"CM", "REQ.AlternateSubnetLocal"}},
	"infiniband.cm.req.alt_tfcclass":        {{"CM", "REQ.AlternateTrafficClass"}},
	"infiniband.cm.req.e2eflowctrl":         {{"CM", "REQ.EndToEndFlowControl"}},
	"infiniband.cm.req.ext_transport":       {{"CM", "REQ.ExtendedTransportType"}},
	"infiniband.cm.req.initdepth":           {{"CM", "REQ.InitiatorDepth"}},
	"infiniband.cm.req.ip_cm":               {{"CM", "REQ.PrivateData"}},
	"infiniband.cm.req.ip_cm.dip4":          {{"CM", "REQ.IPCM.DestinationIPv4"}},
	"infiniband.cm.req.ip_cm.dip6":          {{"CM", "REQ.IPCM.DestinationIP"}},
	"infiniband.cm.req.ip_cm.ipv":           {{"CM", "REQ.IPCM.IPVersion"}},
	"infiniband.cm.req.ip_cm.majv":          {{"CM", "REQ.IPCM.MajorVersion"}},
	"infiniband.cm.req.ip_cm.minv":          {{"CM", "REQ.IPCM.MinorVersion"}},
	"infiniband.cm.req.ip_cm.private":       {{"CM", "REQ.IPCM.PrivateData"}},
	"infiniband.cm.req.ip_cm.reserved":      {{"CM", "REQ.IPCM.Reserved"}},
	"infiniband.cm.req.ip_cm.sip4":          {{"CM", "REQ.IPCM.SourceIPv4"}},
	"infiniband.cm.req.ip_cm.sip6":          {{"CM", "REQ.IPCM.SourceIP"}},
	"infiniband.cm.req.ip_cm.sport":         {{"CM", "REQ.IPCM.SourcePort"}},
	"infiniband.cm.req.localcaguid":         {{"CM", "REQ.LocalCAGUID"}},
	"infiniband.cm.req.localeecn":           {{"CM", "REQ.LocalEECN"}},
	"infiniband.cm.req.localqkey":           {{"CM", "REQ.LocalQKey"}},
	"infiniband.cm.req.localqpn":            {{"CM", "REQ.LocalQPN"}},
	"infiniband.cm.req.localresptout":       {{"CM", "REQ.LocalCMResponseTimeout"}},
	"infiniband.cm.req.maxcmretr":           {{"CM", "REQ.MaxCMRetries"}},
	"infiniband.cm.req.pkey":                {{"CM", "REQ.P_Key"}},
	"infiniband.cm.req.pppmtu":              {{"CM", "REQ.PathMTU"}},
	"infiniband.cm.req.prim_flowlabel":      {{"CM", "REQ.PrimaryFlowLabel"}},
	"infiniband.cm.req.prim_hoplim":         {{"CM", "REQ.PrimaryHopLimit"}},
	"infiniband.cm.req.prim_localacktout":   {{"CM", "REQ.PrimaryLocalACKTimeout"}},
	"infiniband.cm.req.prim_localgid":       {{"CM", "REQ.PrimaryLocalGID"}},
	"infiniband.cm.req.prim_localgid_ipv4":  {{"CM", "REQ.PrimaryLocalGIDIPv4"}},
	"infiniband.cm.req.prim_locallid":       {{"CM", "REQ.PrimaryLocalLID"}},
	"infiniband.cm.req.prim_pktrate":        {{"CM", "REQ.PrimaryPacketRate"}},
	"infiniband.cm.req.prim_remotegid":      {{"CM", "REQ.PrimaryRemoteGID"}},
	"infiniband.cm.req.prim_remotegid_ipv4": {{"CM", "REQ.PrimaryRemoteGIDIPv4"}},
	"infiniband.cm.req.prim_remotelid":      {{"CM", "REQ.PrimaryRemoteLID"}},
	"infiniband.cm.req.prim_reserved0":      {{"CM", "REQ.PrimaryReserved0"}},
	"infiniband.cm.req.prim_reserved1":      {{"CM", "REQ.PrimaryReserved1"}},
	"infiniband.cm.req.prim_reserved2":      {{"CM", "REQ.PrimaryReserved2"}},
	"infiniband.cm.req.prim_sl":             {{"CM", "REQ.PrimarySL"}},
	"infiniband.cm.req.prim_subnetlocal":    {{"CM", "REQ.PrimarySubnetLocal"}},
	"infiniband.cm.req.prim_tfcclass":       {{"CM", "REQ.PrimaryTrafficClass"}},
	"infiniband.cm.req.private":             {{"CM", "REQ.PrivateData"}},
	"infiniband.cm.req.rdcexist":            {{"CM", "REQ.RDCExists"}},
	"infiniband.cm.req.remoteeecn":          {{"CM", "REQ.RemoteEECN"}},
	"infiniband.cm.req.remoteqpneecn":       {{"CM", "DREQ.RemoteQPN"}}, // tshark files the DREQ's under the REQ
	"infiniband.cm.req.remoteresptout":      {{"CM", "REQ.RemoteCMResponseTimeout"}},
	"infiniband.cm.req.responderres":        {{"CM", "REQ.ResponderResources"}},
	"infiniband.cm.req.retrcount":           {{"CM", "REQ.RetryCount"}},
	"infiniband.cm.req.rnrretrcount":        {{"CM", "REQ.RNRRetryCount"}},
	"infiniband.cm.req.serviceid":           {{"CM", "REQ.ServiceID"}},
	"infiniband.cm.req.serviceid.dport":     {{"CM", "REQ.ServiceID.Port"}},
	"infiniband.cm.req.serviceid.prefix":    {{"CM", "REQ.ServiceID.Prefix"}},
	"infiniband.cm.req.serviceid.protocol":  {{"CM", "REQ.ServiceID.Protocol"}},
	"infiniband.cm.req.srq":                 {{"CM", "REQ.SRQ"}},
	"infiniband.cm.req.startpsn":            {{"CM", "REQ.StartingPSN"}},
	"infiniband.cm.req.transpsvctype":       {{"CM", "REQ.TransportServiceType"}},
	"infiniband.cm.rtu.localcommid":         {{"CM", "RTU.LocalCommID"}},
	"infiniband.cm.rtu.private":             {{"CM", "RTU.PrivateData"}},
	"infiniband.cm.rtu.remotecommid":        {{"CM", "RTU.RemoteCommID"}},

	// The SMP, SA and RMPP headers; the directed-route SMP's status, hop
	// pointer and hop count are the MAD header's Status and ClassSpecific.
	// Its D bit has no bytes: tshark 4.0 reads it where it is always 0.
	"infiniband.smplid.mkey":            {{"SMP", "M_Key"}, {"SMPDirected", "M_Key"}},
	"infiniband.smpdirected.smpstatus":  {{"MAD", "Status"}},
	"infiniband.smpdirected.hoppointer": {{"MAD", "HopPointer"}},
	"infiniband.smpdirected.hopcount":   {{"MAD", "HopCount"}},
	"infiniband.smpdirected.drslid":     {{"SMPDirected", "DrSLID"}},
	"infiniband.smpdirected.drdlid":     {{"SMPDirected", "DrDLID"}},
	"infiniband.sa.smkey":               {{"SA", "SM_Key"}},
	"infiniband.sa.attributeoffset":     {{"SA", "AttributeOffset"}},
	"infiniband.sa.componentmask":       {{"SA", "ComponentMask"}},
	"infiniband.rmpp.rmppversion":       {{"SA", "RMPPVersion"}},
	"infiniband.rmpp.rmpptype":          {{"SA", "RMPPType"}},
	"infiniband.rmpp.rresptime":         {{"SA", "RRespTime/RMPPFlags"}},
	"infiniband.rmpp.rmppflags":         {{"SA", "RRespTime/RMPPFlags"}},
	"infiniband.rmpp.rmppstatus":        {{"SA", "RMPPStatus"}},
	"infiniband.rmpp.data1":             {{"SA", "Data1"}},
	"infiniband.rmpp.segmentnumber":     {{"SA", "Data1"}},
	"infiniband.rmpp.data2":             {{"SA", "Data2"}},
	"infiniband.rmpp.payloadlength":     {{"SA", "Data2"}},
	"infiniband.rmpp.newwindowlast":     {{"SA", "Data2"}},
}

// treeOnlyWire places the tree-only items that are not slices of the
// frame: the second value of infiniband.cm.req.alt_reserved1.
var treeOnlyWire = map[string][]wireField{
	"infiniband.cm.req.alt_reserved1": {{"CM", "REQ.AlternateReserved2"}},
}

func init() {
	// MAC Control (PAUSE, PFC): every class bit lives in the vector.
	fieldWire["macc.opcode"] = []wireField{{"MACControl", "Opcode"}}
	fieldWire["macc.pause_time"] = []wireField{{"MACControl", "PauseTime"}}
	fieldWire["macc.timestamp"] = []wireField{{"MACControl", "Timestamp"}}
	fieldWire["macc.cbfc.enbv"] = []wireField{{"MACControl", "ClassEnableVector"}}
	for i := range 8 {
		c := strconv.Itoa(i)
		fieldWire["macc.cbfc.enbv.c"+c] = []wireField{{"MACControl", "ClassEnableBits"}}
		fieldWire["macc.cbfc.pause_time.c"+c] = []wireField{{"MACControl", "PauseTime" + c}}
	}
	protocolHeader["macc"] = "MACControl"
}

// protocolHeader is the header each protocol or header line of the tree
// stands for; a line with none (frame, infiniband, ibwire) covers the
// bytes of what it holds.
var protocolHeader = map[string]string{
	"eth": "Ethernet", "vlan": "Dot1Q", "ip": "IPv4", "ipv6": "IPv6", "udp": "UDP", "tcp": "TCP",
	"infiniband.lrh": "LRH", "infiniband.grh": "GRH", "infiniband.bth": "BTH", "infiniband.rdeth": "RDETH",
	"infiniband.deth": "DETH", "infiniband.reth": "RETH", "infiniband.atomiceth": "AtomicETH",
	"infiniband.aeth": "AETH", "infiniband.atomicacketh": "AtomicAckETH", "infiniband.mad": "MAD",
	"infiniband.rwh": "RWH", "infiniband.eoib": "EoIB",
}

// fieldSpan is where in p's frame the tree line of f, whose value is v,
// was decoded from.
func fieldSpan(p *decode.Packet, f *decode.Field, v *decode.Value) Span {
	placeMgmtFields()
	if f.TreeOnly() {
		// An item at its place: its bytes are its own, not those of the
		// field its name shares.
		if f.Type == decode.FTBytes {
			return sliceSpan(p.Data, v.B)
		}
		for _, w := range treeOnlyWire[f.Name] {
			if lo, hi, ok := p.Headers.FieldBytes(w.header, w.field); ok {
				return Span{lo, hi}
			}
		}
		return Span{}
	}
	for _, w := range fieldWire[f.Name] {
		if lo, hi, ok := p.Headers.FieldBytes(w.header, w.field); ok {
			return Span{lo, hi}
		}
	}
	switch f.Type {
	case decode.FTBytes, decode.FTEther, decode.FTIPv4, decode.FTIPv6:
		return sliceSpan(p.Data, v.B)
	}
	return Span{}
}

// protocolSpan is the bytes of the header a protocol line stands for, empty
// when it stands for none.
func protocolSpan(p *decode.Packet, f *decode.Field) Span {
	placeMgmtFields()
	if h, ok := protocolHeader[f.Name]; ok {
		if lo, hi, ok := p.Headers.HeaderBytes(h); ok {
			return Span{lo, hi}
		}
	}
	return Span{}
}

// sliceSpan is where b, a slice of frame, lies in it: empty when b is not
// cut from frame (a value the decoder built).
func sliceSpan(frame, b []byte) Span {
	if len(b) == 0 {
		return Span{}
	}
	off := cap(frame) - cap(b)
	if off < 0 || off+len(b) > len(frame) || &frame[off] != &b[0] {
		// A slice whose capacity its decoder cut (a header's Contents):
		// find it by address. Only the detail pane's one frame pays.
		for off = 0; off+len(b) <= len(frame) && &frame[off] != &b[0]; off++ {
		}
		if off+len(b) > len(frame) {
			return Span{}
		}
	}
	return Span{off, off + len(b)}
}
