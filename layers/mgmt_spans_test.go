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
		ClassPortInfoHeader:        func(d []byte) any { return DecodeClassPortInfo(d) },
	}
	decoders[InformInfoHeader] = func(d []byte) any { return DecodeInformInfo(d) }
	decoders[InformInfoRecordHeader] = func(d []byte) any { return DecodeInformInfoRecord(d) }
	decoders[LinkRecordHeader] = func(d []byte) any { return DecodeLinkRecord(d) }
	decoders[ServiceRecordHeader] = func(d []byte) any { return DecodeServiceRecord(d) }
	decoders[TraceRecordHeader] = func(d []byte) any { return DecodeTraceRecord(d) }
	decoders[MultiPathRecordHeader] = func(d []byte) any { return DecodeMultiPathRecord(d) }
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
	for header, table := range mgmtBitFields {
		t.Run(header, func(t *testing.T) {
			dec := decoders[header]
			zero := reflect.ValueOf(dec(make([]byte, 256)))
			byName := map[string]int{}
			for i := range zero.NumField() {
				byName[norm(zero.Type().Field(i).Name)] = i
			}
			named := map[int]bool{}
			for _, f := range table {
				if i, ok := byName[norm(f.name)]; ok {
					named[i] = true
				}
			}
			matched := 0
			for j, f := range table {
				d := make([]byte, 256)
				for b := f.from; b < f.from+f.width; b++ {
					d[b/8] |= 0x80 >> (b % 8)
				}
				got := reflect.ValueOf(dec(d))
				i, ok := byName[norm(f.name)]
				if mask, _, isBit := strings.Cut(f.name, "."); isBit {
					i, ok = byName[norm(mask)] // a mask's bit changes the mask
				}
				for k := range zero.NumField() {
					same := reflect.DeepEqual(zero.Field(k).Interface(), got.Field(k).Interface())
					switch {
					case ok && k == i:
						assert.False(t, same, "%s: setting its bits changes nothing", f.name)
					case named[k]:
						assert.True(t, same, "%s: its bits change %s", f.name, zero.Type().Field(k).Name)
					}
				}
				if ok {
					matched++
				}
				for _, g := range table[j+1:] {
					mask := strings.HasPrefix(g.name, f.name+".") || strings.HasPrefix(f.name, g.name+".")
					if !mask {
						assert.True(t, f.from+f.width <= g.from || g.from+g.width <= f.from, "%s and %s share bits", f.name, g.name)
					}
				}
			}
			assert.Greater(t, matched, len(table)/2, "most entries name a field of the decoded struct")
		})
	}
}
