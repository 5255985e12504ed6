package output

import (
	"strings"

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
	{"infiniband.switchinfo.", []string{layers.SwitchInfoHeader}},
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

func init() {
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
					}
				}
				fieldWire[f.Name] = wires
			}
		}
	}
}

// layersMaskName is the name layers gives a mask whose bits have fields of
// their own: PortInfo's "capabilitymask" is its "CapabilityMask".
func layersMaskName(mask string) string {
	if mask == "capabilitymask" {
		return "CapabilityMask"
	}
	return mask
}
