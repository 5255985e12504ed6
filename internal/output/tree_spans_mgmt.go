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
var mgmtWire = []struct{ prefix, header string }{
	{"infiniband.nodeinfo.", layers.NodeInfoHeader},
	{"infiniband.portinfo.", layers.PortInfoHeader},
	{"infiniband.switchinfo.", layers.SwitchInfoHeader},
	{"infiniband.sminfo.", layers.SMInfoHeader},
	{"infiniband.pathrecord.", layers.PathRecordHeader},
	{"infiniband.mcmemberrecord.", layers.MCMemberRecordHeader},
	{"infiniband.portcounters.", layers.PortCountersHeader},
	{"infiniband.portcounters_ext.", layers.PortCountersExtendedHeader},
}

func init() {
	for _, f := range decode.Fields() {
		if _, ok := fieldWire[f.Name]; ok {
			continue
		}
		for _, w := range mgmtWire {
			if rest, ok := strings.CutPrefix(f.Name, w.prefix); ok {
				wires := []wireField{{w.header, f.Title}}
				if mask, bit, ok := strings.Cut(rest, "."); ok {
					wires = append(wires, wireField{w.header, layersMaskName(mask) + "." + bit})
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
