package layers

import (
	"slices"

	"github.com/google/gopacket"
)

// HeaderFields names the header of layer type t and lists its fields in wire
// order, each with its offset and size in the header: the table the decoder
// reads the header by and names a short header's missing field from. Bit
// fields are listed by the byte(s) holding them ("SE/M/PadCnt/TVer"). The
// slice is the caller's.
func HeaderFields(t gopacket.LayerType) (string, []FieldSpan) {
	name, spans := headerFields(t)
	return name, slices.Clone(spans)
}

// VCRCField names the LRH's variant CRC for FieldBytes: it follows the
// packet PktLen counts rather than sitting at an offset in the LRH.
const VCRCField = "VCRC"

// HeaderBytes returns where the header named header (as HeaderFields names
// it: "Ethernet", "IPv4", "BTH", "RETH", "ICRC" for the pad and ICRC, ...)
// lies in the last frame: bytes [lo, hi). ok is false when the frame has no
// such header.
func (p *Parser) HeaderBytes(header string) (lo, hi int, ok bool) {
	b := p.headerContents(header)
	if len(b) == 0 {
		return 0, 0, false
	}
	lo = offsetIn(p.frame, b)
	// A header not cut from this frame (a layer the frame left undecoded
	// keeps its last contents) has no place in it.
	if lo < 0 || lo+len(b) > len(p.frame) || &p.frame[lo] != &b[0] {
		return 0, 0, false
	}
	return lo, lo + len(b), true
}

// FieldBytes returns where field of the header named header lies in the last
// frame, by the header's field table (see HeaderFields): bytes [lo, hi), cut
// to the header's bytes when the frame cut the header. ok is false when the
// frame has no such header or no byte of the field.
func (p *Parser) FieldBytes(header, field string) (lo, hi int, ok bool) {
	hlo, hhi, ok := p.HeaderBytes(header)
	if !ok {
		return 0, 0, false
	}
	switch {
	case header == "LRH" && field == VCRCField:
		if !p.LRH.HasVCRC {
			return 0, 0, false
		}
		lo = hlo + int(p.LRH.PktLen)*4
		return lo, lo + VCRCLength, lo+VCRCLength <= len(p.frame)
	case header == trailerName:
		// The ICRC ends the trailer, after 0-3 pad bytes.
		return max(hhi-ICRCLength, hlo), hhi, field == "ICRC"
	}
	for _, b := range bitFields[header] {
		if b.name == field {
			lo, hi = hlo+b.from/8, min(hlo+(b.from+b.width+7)/8, hhi)
			return lo, hi, lo < hi
		}
	}
	_, spans := headerFields(p.layerNamed(header))
	if s, ok := payloadHeaderFields[header]; ok {
		spans = s
	}
	if header == "CM" {
		// Which fields a CM message has depends on its attribute.
		spans = cmFieldsOf(CMAttribute(p.MAD.AttributeID))
	}
	for _, f := range spans {
		if f.Name == field {
			lo, hi = hlo+f.Offset, min(hlo+f.Offset+f.Size, hhi)
			return lo, hi, lo < hi
		}
	}
	return 0, 0, false
}

// bitField places a field that shares its bytes with others: bits [from,
// from+width) of its header, counted from the most significant bit of the
// header's first byte.
type bitField struct {
	name        string
	from, width int
}

// bitFields are the bit fields whose bytes FieldBytes names more closely
// than the field tables do: those that straddle a byte boundary or share a
// multi-byte word (the tables list such words whole).
var bitFields = map[string][]bitField{
	"Dot1Q": {{"Priority", 0, 3}, {"DropEligible", 3, 1}, {"VLANIdentifier", 4, 12}},
	// A directed-route SMP's ClassSpecific is its hop pointer and hop count.
	"MAD":  {{"HopPointer", 48, 8}, {"HopCount", 56, 8}},
	"IPv4": {{"Flags", 48, 3}, {"FragOffset", 51, 13}},
	"IPv6": {{"Version", 0, 4}, {"TrafficClass", 4, 8}, {"DSCP", 4, 6}, {"ECN", 10, 2}, {"FlowLabel", 12, 20}},
	"LRH":  {{"Reserved5", 32, 5}, {"PktLen", 37, 11}},
	"GRH":  {{"IPVer", 0, 4}, {"TClass", 4, 8}, {"FlowLabel", 12, 20}},
	"EoIB": {{"Version", 2, 2}, {"TCPChecksum", 4, 2}, {"IPChecksum", 6, 2}, {"FCS", 9, 1}, {"MoreSegments", 10, 1},
		{"SegOffset", 11, 5}},
	// CM messages (IBTA Vol 1 §12.6), from the start of the message: the
	// fields that share a word, the IP CM service ID's parts and RDMA CM's
	// header in a REQ's private data (IPv4 addresses in the last 4 of 16).
	"CM": {
		{"REQ.ServiceID.Prefix", 64, 40},
		{"REQ.ServiceID.Protocol", 104, 8},
		{"REQ.ServiceID.Port", 112, 16},
		{"REQ.LocalQPN", 256, 24},
		{"REQ.ResponderResources", 280, 8},
		{"REQ.LocalEECN", 288, 24},
		{"REQ.InitiatorDepth", 312, 8},
		{"REQ.RemoteEECN", 320, 24},
		{"REQ.RemoteCMResponseTimeout", 344, 5},
		{"REQ.TransportServiceType", 349, 2},
		{"REQ.EndToEndFlowControl", 351, 1},
		{"REQ.StartingPSN", 352, 24},
		{"REQ.LocalCMResponseTimeout", 376, 5},
		{"REQ.RetryCount", 381, 3},
		{"REQ.PathMTU", 400, 4},
		{"REQ.RDCExists", 404, 1},
		{"REQ.RNRRetryCount", 405, 3},
		{"REQ.MaxCMRetries", 408, 4},
		{"REQ.SRQ", 412, 1},
		{"REQ.ExtendedTransportType", 413, 3},
		{"REQ.PrimaryLocalGIDIPv4", 544, 32},
		{"REQ.PrimaryRemoteGIDIPv4", 672, 32},
		{"REQ.PrimaryFlowLabel", 704, 20},
		{"REQ.PrimaryReserved0", 724, 6},
		{"REQ.PrimaryPacketRate", 730, 6},
		{"REQ.PrimarySL", 752, 4},
		{"REQ.PrimarySubnetLocal", 756, 1},
		{"REQ.PrimaryReserved1", 757, 3},
		{"REQ.PrimaryLocalACKTimeout", 760, 5},
		{"REQ.PrimaryReserved2", 765, 3},
		{"REQ.AlternateFlowLabel", 1056, 20},
		{"REQ.AlternateReserved0", 1076, 6},
		{"REQ.AlternatePacketRate", 1082, 6},
		{"REQ.AlternateSL", 1104, 4},
		{"REQ.AlternateSubnetLocal", 1108, 1},
		{"REQ.AlternateReserved1", 1109, 3},
		{"REQ.AlternateLocalACKTimeout", 1112, 5},
		{"REQ.AlternateReserved2", 1117, 3},
		{"REQ.IPCM.MajorVersion", 1120, 4},
		{"REQ.IPCM.MinorVersion", 1124, 4},
		{"REQ.IPCM.IPVersion", 1128, 4},
		{"REQ.IPCM.Reserved", 1132, 4},
		{"REQ.IPCM.SourcePort", 1136, 16},
		{"REQ.IPCM.SourceIP", 1152, 128},
		{"REQ.IPCM.SourceIPv4", 1248, 32},
		{"REQ.IPCM.DestinationIP", 1280, 128},
		{"REQ.IPCM.DestinationIPv4", 1376, 32},
		{"REQ.IPCM.PrivateData", 1408, 448},
		{"REP.LocalQPN", 96, 24},
		{"REP.LocalEECN", 128, 24},
		{"REP.StartingPSN", 160, 24},
		{"REP.TargetACKDelay", 208, 5},
		{"REP.FailoverAccepted", 213, 2},
		{"REP.EndToEndFlowControl", 215, 1},
		{"REP.RNRRetryCount", 216, 3},
		{"REP.SRQ", 219, 1},
		{"REP.Reserved", 220, 4},
		{"REJ.MessageRejected", 64, 2},
		{"REJ.Reserved0", 66, 6},
		{"REJ.RejectInfoLength", 72, 7},
		{"REJ.Reserved1", 79, 1},
		{"DREQ.RemoteQPN", 64, 24},
	},
}

// trailerName is how HeaderFields names the pad and ICRC.
const trailerName = "ICRC"

// layerNamed is the layer type of the last frame's header named name,
// LayerTypeZero when it has none.
func (p *Parser) layerNamed(name string) gopacket.LayerType {
	for _, t := range p.Decoded {
		if n, _ := headerFields(t); n == name {
			return t
		}
	}
	if p.Has(LayerTypeBTH) {
		for _, k := range p.BTH.Info().HeaderList() {
			if k.String() == name {
				return k.LayerType()
			}
		}
		if name == trailerName {
			return LayerTypeTrailer
		}
	}
	return gopacket.LayerTypeZero
}

// headerContents is the bytes of the header named name in the last frame,
// nil when the frame has none.
func (p *Parser) headerContents(name string) []byte {
	if b, ok := p.mgmtBody(name); ok {
		return b
	}
	if b, ok := p.payloadHeader(name); ok {
		return b
	}
	t := p.layerNamed(name)
	switch {
	case t == gopacket.LayerTypeZero:
		return nil
	case t == LayerTypeTrailer:
		return p.BTH.Trailer.Contents
	case t == LayerTypeBTH:
		return p.BTH.Contents
	case t == LayerTypeMAD:
		// The MAD's contents are cut to their length, so their capacity no
		// longer says where they start: the BTH's payload does.
		b, m := p.BTH.payload, p.MAD.Contents
		if len(m) == 0 || len(b) < len(m) || &b[0] != &m[0] {
			return nil
		}
		return b[:len(m)]
	case t == LayerTypeCM || t == LayerTypeSMP || t == LayerTypeSMPDirected || t == LayerTypeSA || t == LayerTypePerfMgt:
		// A class body (a CM message, an SMP ...) is the MAD's data, after
		// its common header.
		if m := p.headerContents("MAD"); len(m) == MADHeaderLength && len(p.BTH.payload) >= MADLength {
			return p.BTH.payload[MADHeaderLength:MADLength]
		}
		return nil
	}
	for _, k := range p.BTH.Info().HeaderList() {
		if k.LayerType() == t {
			return p.BTH.ETH(k).LayerContents()
		}
	}
	if l, ok := p.decodingLayer(t).(interface{ LayerContents() []byte }); ok {
		return l.LayerContents()
	}
	return nil
}
