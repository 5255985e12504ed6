package layers

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMgmtBitFieldsMatchDecoders checks the management attributes' span
// tables against the decoders that read the same attributes: with only an
// entry's bits set in data that is otherwise zero, the decoded struct
// differs from the zero data's in the field of that name (underscores
// dropped, case ignored) and in no other field the table names. Entries
// no struct field answers to (the PortInfo enforcement bits, a mask's bits)
// must lie inside the table's bytes all the same; no two entries share a
// bit, apart from a mask's bits within the mask.
func TestMgmtBitFieldsMatchDecoders(t *testing.T) {
	decoders := map[string]func(d []byte) any{
		NodeInfoHeader:             func(d []byte) any { return SMPData(d).NodeInfo() },
		PortInfoHeader:             func(d []byte) any { return SMPData(d).PortInfo() },
		SwitchInfoHeader:           func(d []byte) any { return SMPData(d).SwitchInfo() },
		SMInfoHeader:               func(d []byte) any { return SMPData(d).SMInfo() },
		PathRecordHeader:           func(d []byte) any { return DecodePathRecord(d) },
		MCMemberRecordHeader:       func(d []byte) any { return DecodeMCMemberRecord(d) },
		PortCountersHeader:         func(d []byte) any { return DecodePortCounters(d) },
		PortCountersExtendedHeader: func(d []byte) any { return DecodePortCountersExtended(d) },
		NoticeHeader:               func(d []byte) any { return DecodeNotice(d) },
		NoticeDetailsHeader: func(d []byte) any {
			return map[string]any{"DataDetails": DecodeNotice(append(make([]byte, 10), d...)).DataDetails}
		},
		ClassPortInfoHeader: func(d []byte) any { return DecodeClassPortInfo(d) },
	}
	decoders[InformInfoHeader] = func(d []byte) any { return DecodeInformInfo(d) }
	decoders[InformInfoRecordHeader] = func(d []byte) any { return DecodeInformInfoRecord(d) }
	decoders[LinkRecordHeader] = func(d []byte) any { return DecodeLinkRecord(d) }
	decoders[ServiceRecordHeader] = func(d []byte) any { return DecodeServiceRecord(d) }
	decoders[TraceRecordHeader] = func(d []byte) any { return DecodeTraceRecord(d) }
	decoders[MultiPathRecordHeader] = func(d []byte) any { return DecodeMultiPathRecord(d) }
	decoders[ServiceAssocRecordHeader] = func(d []byte) any { return DecodeServiceAssociationRecord(d) }
	for a := range smpTableBits {
		decoders[a.String()] = smpTableDecoder(a)
	}
	for r := range ridBits() {
		decoders[RIDHeader(r)] = func(d []byte) any { id, _ := r.DecodeTableRID(d); return id }
	}
	for t := range trapBits() {
		decoders[TrapHeader(t)] = func(d []byte) any { n := DecodeNotice(d); return n.DetailsAs(t) }
	}
	require.Len(t, decoders, len(mgmtBitFields))
	// Wireshark's titles for the fields DecodeTableRID calls BlockNum and LID.
	alias := map[string]string{"BlockNum_EightBit": "BlockNum", "BlockNum_NineBit": "BlockNum",
		"BlockNum_SixteenBit": "BlockNum", "EndportLID": "LID"}
	norm := func(s string) string {
		if a, ok := alias[s]; ok {
			s = a
		}
		return strings.ToLower(strings.ReplaceAll(s, "_", ""))
	}
	// fields are a decoded value's fields by normalized name: a struct's,
	// or a map's (smpTableDecoder).
	fields := func(v any) map[string]any {
		out := map[string]any{}
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				out[norm(k)] = x
			}
			return out
		}
		r := reflect.ValueOf(v)
		for i := range r.NumField() {
			out[norm(r.Type().Field(i).Name)] = r.Field(i).Interface()
		}
		return out
	}
	for header, table := range mgmtBitFields {
		t.Run(header, func(t *testing.T) {
			dec := decoders[header]
			zero := fields(dec(make([]byte, 256)))
			named := map[string]bool{}
			for _, f := range table {
				if _, ok := zero[norm(f.name)]; ok {
					named[norm(f.name)] = true
				}
			}
			matched := 0
			for j, f := range table {
				d := make([]byte, 256)
				for b := f.from; b < f.from+f.width; b++ {
					d[b/8] |= 0x80 >> (b % 8)
				}
				got := fields(dec(d))
				own := norm(f.name)
				if mask, _, isBit := strings.Cut(f.name, "."); isBit {
					own = norm(mask) // a mask's bit changes the mask
				}
				_, ok := zero[own]
				for k, z := range zero {
					same := reflect.DeepEqual(z, got[k])
					switch {
					case ok && k == own:
						assert.False(t, same, "%s: setting its bits changes nothing", f.name)
					case named[k] && !(sharedBits[f.name] && sharedBits[k]):
						assert.True(t, same, "%s: its bits change %s", f.name, k)
					}
				}
				if ok {
					matched++
				}
				for _, g := range table[j+1:] {
					mask := strings.HasPrefix(g.name, f.name+".") || strings.HasPrefix(f.name, g.name+".")
					if !mask && !(sharedBits[f.name] && sharedBits[g.name]) {
						assert.True(t, f.from+f.width <= g.from || g.from+g.width <= f.from, "%s and %s share bits", f.name, g.name)
					}
				}
			}
			assert.Greater(t, matched, len(table)/2, "most entries name a field of the decoded value")
		})
	}
}

// smpTableDecoder decodes an SMP table attribute with the SMPData
// accessors into a value per table entry name (GUID, GUID#1 ...), for the
// check above.
func smpTableDecoder(a SMPAttribute) func(d []byte) any {
	return func(d []byte) any {
		sd := SMPData(d[:SMPDataLength])
		v := map[string]any{}
		switch a {
		case SMPAttrGUIDInfo:
			for i := range GUIDBlockEntries {
				v[OccurrenceName("GUID", i)] = sd.GUID(i)
			}
		case SMPAttrPKeyTable:
			for i := range PKeyBlockEntries {
				full, base := sd.PKey(i)
				v[OccurrenceName("MembershipType", i)], v[OccurrenceName("P_KeyBase", i)] = full, base
			}
		case SMPAttrSLtoVLMappingTable:
			for i := range SLtoVLEntries / 2 {
				v[OccurrenceName("sltovlhighbits", i)], v[OccurrenceName("sltovllowbits", i)] = sd.SLtoVL(2*i), sd.SLtoVL(2*i+1)
			}
		case SMPAttrVLArbitrationTable:
			for i := range VLArbEntries {
				vl, w := sd.VLArb(i)
				v[OccurrenceName("VL", i)], v[OccurrenceName("Weight", i)] = vl, w
			}
		case SMPAttrLinearFDB:
			for i := range LinearFDBEntries {
				v[OccurrenceName("Port", i)] = sd.LinearFDBPort(i)
			}
		case SMPAttrRandomFDB:
			for i := range RandomFDBEntries {
				e := sd.RandomFDB(i)
				v[OccurrenceName("LID", i)], v[OccurrenceName("Valid", i)] = e.LID, e.Valid
				v[OccurrenceName("LMC", i)], v[OccurrenceName("Port", i)] = e.LMC, e.Port
			}
		case SMPAttrMulticastFDB:
			for i := range MulticastFDBEntries {
				v[OccurrenceName("PortMask", i)] = sd.MulticastFDBPortMask(i)
			}
		case SMPAttrLinkSpeedWidthPairsTable:
			l := sd.LinkSpeedWidthPairs()
			v["NumTables"], v["PortMask"] = l.NumTables, l.PortMask
			for _, n := range []string{"speedtwofive", "speedfive", "speedten"} {
				v[n] = l.SpeedFlags >> 7
			}
		case SMPAttrVendorDiag:
			n, b := sd.VendorDiag()
			v["NextIndex"], v["DiagData"] = n, b
		case SMPAttrLedInfo:
			v["LedMask"] = sd.LedMask()
		case SMPAttrNodeDescription:
			v["NodeString"] = string(sd) // whole: the check sets no NUL
		}
		return v
	}
}
