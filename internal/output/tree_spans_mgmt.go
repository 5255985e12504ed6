package output

import (
	"strings"
	"sync"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// mgmtWire places the lines of the management attributes and records (an
// SMP's PortInfo, an SA PathRecord, PerfMgt's PortCounters ...): a field
// under one of these prefixes is the entry of its attribute's table in
// layers named by the field's title, as the tree shows it ("LID"), or, for
// a bit of a mask, by the mask and the field's last name
// ("CapabilityMask.issm").
var mgmtWire = []struct {
	prefix  string
	headers []string
}{
	{"infiniband.nodeinfo.", []string{layers.NodeInfoHeader}},
	{"infiniband.portinfo.", []string{layers.PortInfoHeader}},
	{"infiniband.switchinfo.", []string{layers.SwitchInfoHeader, "GUIDInfo"}}, // GUIDInfo's GUIDs too
	{"infiniband.nodedescription.", []string{"NodeDescription"}},
	{"infiniband.p_keytable.", []string{"P_KeyTable"}},
	{"infiniband.sltovlmappingtable.", []string{"SLtoVLMappingTable"}},
	{"infiniband.vlarbitrationtable.", []string{"VLArbitrationTable"}},
	{"infiniband.linearforwardingtable.", []string{"LinearForwardingTable"}},
	{"infiniband.randomforwardingtable.", []string{"RandomForwardingTable"}},
	{"infiniband.multicastforwardingtable.", []string{"MulticastForwardingTable"}},
	{"infiniband.linkspeedwidthpairstable.", []string{"LinkSpeedWidthPairsTable"}},
	{"infiniband.vendordiag.", []string{"VendorDiag"}},
	{"infiniband.ledinfo.", []string{"LedInfo"}},
	{"infiniband.sminfo.", []string{layers.SMInfoHeader}},
	{"infiniband.pathrecord.", []string{layers.PathRecordHeader}},
	{"infiniband.mcmemberrecord.", []string{layers.MCMemberRecordHeader}},
	{"infiniband.portcounters.", []string{layers.PortCountersHeader}},
	{"infiniband.portcounters_ext.", []string{layers.PortCountersExtendedHeader}},
	{"infiniband.notice.", []string{layers.NoticeHeader}},
	{"infiniband.classportinfo.", []string{layers.ClassPortInfoHeader}},
	{"infiniband.trap.", trapHeaders()},
	{"infiniband.informinfo.", []string{layers.InformInfoHeader}},
	{"infiniband.informinforecord.", []string{layers.InformInfoRecordHeader}},
	// tshark files the ServiceRecord's fields under linkrecord.
	{"infiniband.linkrecord.", []string{layers.LinkRecordHeader, layers.ServiceRecordHeader}},
	{"infiniband.tracerecord.", []string{layers.TraceRecordHeader}},
	{"infiniband.multipathrecord.", []string{layers.MultiPathRecordHeader}},
	{"infiniband.serviceassociationrecord.", []string{layers.ServiceAssocRecordHeader}},
	// A record's RID (the SA header's own fields are placed by fieldWire).
	{"infiniband.sa.", layers.RIDHeaders()},
}

// trapHeaders are the DataDetails of every trap number layers places
// fields for: a trap field is placed by the one the packet's Notice has.
func trapHeaders() []string {
	var hs []string
	for t := range layers.TrapNumber(1024) {
		if t.Known() {
			hs = append(hs, layers.TrapHeader(t))
		}
	}
	return hs
}

// placeMgmtFields adds the management classes' fields to the tables
// that place fields and protocols in the frame (fieldWire,
// protocolHeader ...), from mgmtWire: once, when the first span is asked
// for (a pass over the whole registry for each prefix, which a run that
// shows no bytes does not need).
var placeMgmtFields = sync.OnceFunc(func() {
	// The items that stand for a whole attribute or part of one: a
	// ClassPortInfo's title line (its fields are its siblings), a Notice's
	// DataDetails (its trap's fields under it, none for a vendor's).
	mgmtNodeHeader["infiniband.classportinfo"] = layers.ClassPortInfoHeader
	protocolHeader["infiniband.trap"] = layers.NoticeDetailsHeader
	mgmtNodeHeader["infiniband.trap"] = layers.NoticeDetailsHeader // a line of its own when it holds none
	// ClassPortInfo's byte 64 (TrapHL), which the tree shows as a second
	// Reserved.
	treeOnlyWire["infiniband.classportinfo.reserved"] = []wireField{{layers.ClassPortInfoHeader, "TrapHL"}}
	for _, f := range decode.Fields() {
		if _, ok := fieldWire[f.Name]; ok {
			continue
		}
		for _, w := range mgmtWire {
			if rest, ok := strings.CutPrefix(f.Name, w.prefix); ok {
				var wires []wireField
				for _, h := range w.headers {
					wires = append(wires, wireField{h, f.Title})
					if mask, bit, ok := strings.Cut(rest, "."); ok {
						wires = append(wires, wireField{h, layersMaskName(mask) + "." + bit})
					} else if rest != f.Title {
						wires = append(wires, wireField{h, rest}) // titles two fields share
					}
				}
				fieldWire[f.Name] = wires
				mgmtFields[f] = true
			}
		}
	}
})

// layersMaskName is the name layers gives a mask whose bits have fields of
// their own: PortInfo's "capabilitymask" is its "CapabilityMask".
func layersMaskName(mask string) string {
	if mask == "capabilitymask" {
		return "CapabilityMask"
	}
	return mask
}

// mgmtNodeHeader are the lines that show a whole attribute's bytes.
var mgmtNodeHeader = map[string]string{}

// mgmtFields are the fields mgmtWire places.
var mgmtFields = map[*decode.Field]bool{}

// fieldSpanAt is fieldSpan for occurrence occ of the field: a management
// table's entry occ is its own bytes (layers names it
// layers.OccurrenceName), never the first entry's.
func fieldSpanAt(p *decode.Packet, f *decode.Field, v *decode.Value, occ int) Span {
	placeMgmtFields()
	if h, ok := mgmtNodeHeader[f.Name]; ok {
		if lo, hi, ok := p.Headers.HeaderBytes(h); ok {
			return Span{lo, hi}
		}
	}
	if occ == 0 || !mgmtFields[f] || f.TreeOnly() {
		s := fieldSpan(p, f, v)
		if mgmtFields[f] && f.Type == decode.FTString && !s.Empty() {
			// A NUL-padded string (NodeDescription, a service name): its
			// characters and the NUL that ends them.
			s.Hi = min(s.Hi, s.Lo+len(v.S)+1)
		}
		return s
	}
	for _, w := range fieldWire[f.Name] {
		if lo, hi, ok := p.Headers.FieldBytes(w.header, layers.OccurrenceName(w.field, occ)); ok {
			return Span{lo, hi}
		}
	}
	if f.Type == decode.FTBytes || f.Type == decode.FTIPv6 {
		return sliceSpan(p.Data, v.B)
	}
	return Span{}
}
