package decode_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// allOccurrences formats every occurrence of a field as tshark -T fields
// -E occurrence=a does, comma-separated.
func allOccurrences(f *decode.Field, p *decode.Packet) string {
	var parts []string
	var v decode.Value
	for i := 0; f.GetOccurrence(p, i, &v); i++ {
		parts = append(parts, f.String(&v))
	}
	return strings.Join(parts, ",")
}

// TestRawAndPayloadFieldsAsTshark: the raw packet, IBA payload, EoIB and
// RMPP error fields of pcaps/ib_raw_eoib.pcap as tshark 4.0.17 prints them
// (-T fields -E occurrence=a, on the file's user-DLT 147 copy, every payload
// heuristic enabled).
func TestRawAndPayloadFieldsAsTshark(t *testing.T) {
	want := map[int]map[string]string{
		1: {"infiniband.rwh": "00000800", "infiniband.rwh.etype": "0x0800", "infiniband.variant.crc": "0xe0a5,0xe0a5", "infiniband.reserved": "0000"},
		3: {"infiniband.rwh": "00000806", "infiniband.rwh.etype": "0x0806", "infiniband.variant.crc": "0x7b18,0x7b18", "infiniband.reserved": "0000"},
		4: {"infiniband.rwh": "", "infiniband.rwh.etype": "", "infiniband.variant.crc": "0xc655,0xc655", "infiniband.reserved": ""},
		5: {"infiniband.rwh.etype": "0x88b5", "infiniband.payload": ""},
		6: {"infiniband.rwh": "", "infiniband.rwh.etype": "0x0800", "infiniband.reserved": "00,00,0000", "infiniband.variant.crc": "0xe193",
			"infiniband.payload": "080000004500003400024000400126c50a0000010a00000208001a2917020002303132333435363738393a3b3c3d3e3f4041"},
		7: {"infiniband.rwh.etype": "0x86dd", "infiniband.reserved": "00,0000",
			"infiniband.payload": "86dd000060000000001d3a40fe800000000000000202c9fffe000001fe800000000000000202c9fffe000002800043542b020001303132333435363738393a3b3c3d3e3f4041"},
		8: {"infiniband.eoib": "infiniband.eoib", "infiniband.eoib.version": "0x0000", "infiniband.eoib.tcp_chk": "0x0000", "infiniband.eoib.ip_chk": "0x0000",
			"infiniband.eoib.fcs": "0", "infiniband.eoib.ms": "0", "infiniband.eoib.ip_seg_offset": "0", "infiniband.eoib.ip_seg_id": "0",
			"infiniband.rwh.etype": "", "infiniband.payload": "", "infiniband.reserved": "00,00"},
		9: {"infiniband.eoib": "infiniband.eoib", "infiniband.eoib.version": "0x0000", "infiniband.eoib.tcp_chk": "0x0002", "infiniband.eoib.ip_chk": "0x0001",
			"infiniband.eoib.fcs": "1", "infiniband.eoib.ms": "1", "infiniband.eoib.ip_seg_offset": "3", "infiniband.eoib.ip_seg_id": "4660"},
		10: {"infiniband.eoib": "", "infiniband.rwh.etype": "", "infiniband.rmpp.extendederrordata": byteSeqHex(220, 0x01),
			"infiniband.reserved": "00,00,0000,00000000,00000000,0b0c,15161718191a1b1c", "infiniband.rmpp.data1": "", "infiniband.rmpp.data2": ""},
		11: {"infiniband.rmpp.extendederrordata": byteSeqHex(220, 0x41)},
	}
	r, err := capture.Open("../pcaps/ib_raw_eoib.pcap")
	require.NoError(t, err)
	defer r.Close()
	d := decode.NewDecoder(decode.Options{})
	seen := 0
	var rec capture.Packet
	for r.NextInto(&rec) == nil {
		p := d.Decode(rec)
		for name, v := range want[rec.Number] {
			assert.Equal(t, v, allOccurrences(decode.MustLookup(name), p), "frame %d %s", rec.Number, name)
			seen++
		}
	}
	assert.Equal(t, 48, seen, "every expected value was compared")
}

func byteSeqHex(n int, first byte) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := first + byte(i)
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	}
	return b.String()
}

// TestRawFieldGettersDoNotAllocate: every field's every occurrence, on
// every frame of pcaps/ib_raw_eoib.pcap, reads without allocating.
func TestRawFieldGettersDoNotAllocate(t *testing.T) {
	r, err := capture.Open("../pcaps/ib_raw_eoib.pcap")
	require.NoError(t, err)
	defer r.Close()
	d := decode.NewDecoder(decode.Options{})
	var rec capture.Packet
	for r.NextInto(&rec) == nil {
		p := d.Decode(rec)
		var v decode.Value
		for _, f := range decode.Fields() {
			if strings.HasPrefix(f.Name, "frame.protocols") {
				continue // built once per combination of layers, then kept
			}
			allocs := testing.AllocsPerRun(5, func() {
				for i := 0; i < 8 && f.GetOccurrence(p, i, &v); i++ {
				}
			})
			assert.Zero(t, allocs, "frame %d %s", rec.Number, f.Name)
		}
	}
}
