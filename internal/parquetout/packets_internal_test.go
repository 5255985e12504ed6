package parquetout

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// A text column whose value is held as bytes (an address) copies nothing
// per row once the text is in the row group's dictionary: the lookup
// converts the bytes without allocating, and a row adds only its index.
func TestFieldColumnKnownTextAllocatesNothing(t *testing.T) {
	r, err := capture.Open("../../pcaps/cm_reject.pcap")
	require.NoError(t, err)
	defer r.Close()
	var cp capture.Packet
	require.NoError(t, r.NextInto(&cp))
	p := decode.NewDecoder(decode.Options{}).Decode(cp)

	for _, name := range []string{"eth.src", "ip.src"} {
		c, err := newFieldColumn(name, []string{name})
		require.NoError(t, err)
		require.Equal(t, kindString, c.kind, name)
		col := newColumn(name, c.kind, false)
		col.reserve(0, 16)
		var v decode.Value
		c.registry(p, &v, col)
		require.Len(t, col.words, 1, name)
		allocs := testing.AllocsPerRun(100, func() { col.idx = col.idx[:0]; c.registry(p, &v, col) })
		assert.Zero(t, allocs, name)
		assert.Equal(t, []int32{0}, col.idx, name)
		assert.Len(t, col.words, 1, name)
	}
}

// texts are a text column's values row by row ("" for null).
func texts(c *column) []string {
	if c.kind != kindString {
		return nil
	}
	var out []string
	j := 0
	for _, d := range c.levels() {
		if d == 0 {
			out = append(out, "")
			continue
		}
		out = append(out, string(c.words[c.idx[j]]))
		j++
	}
	return out
}

// The column indexes fixedRow.add writes name packetColumns' columns.
func TestPacketColumnIndexes(t *testing.T) {
	want := map[int]string{
		colFrameLen:           "frame_len",
		colCapLen:             "cap_len",
		colEncap:              "encap",
		colEthSrc:             "eth_src",
		colEthDst:             "eth_dst",
		colVLAN:               "vlan",
		colPCP:                "pcp",
		colSrc:                "src",
		colDst:                "dst",
		colDSCP:               "dscp",
		colECN:                "ecn",
		colSport:              "sport",
		colDport:              "dport",
		colSLID:               "slid",
		colDLID:               "dlid",
		colSL:                 "sl",
		colSGID:               "sgid",
		colDGID:               "dgid",
		colService:            "service",
		colOpcode:             "opcode",
		colOpcodeName:         "opcode_name",
		colSE:                 "se",
		colMigReq:             "migreq",
		colPadCount:           "pad_count",
		colTVer:               "tver",
		colPKey:               "p_key",
		colFECN:               "fecn",
		colBECN:               "becn",
		colDestQP:             "dest_qp",
		colAckReq:             "ack_req",
		colPSN:                "psn",
		colRETHVA:             "reth_va",
		colRETHRKey:           "reth_r_key",
		colRETHDMALen:         "reth_dma_len",
		colAETHSyndrome:       "aeth_syndrome",
		colAETHMSN:            "aeth_msn",
		colDETHQKey:           "deth_q_key",
		colDETHSrcQP:          "deth_src_qp",
		colImmDt:              "immdt",
		colIETH:               "ieth",
		colPayloadLen:         "payload_len",
		colICRC:               "icrc",
		colVCRC:               "vcrc",
		colMalformed:          "malformed",
		colConvID:             "conv_id",
		colDirection:          "direction",
		colSeverity:           "severity",
		colRetransmission:     "retransmission",
		colRetransmittedFrame: "retransmitted_frame",
		colPSNGap:             "psn_gap",
		colDuplicate:          "duplicate",
		colOutOfOrder:         "out_of_order",
		colNAK:                "nak",
		colRNRNAK:             "rnr_nak",
		colRNRTimer:           "rnr_timer",
		colCNP:                "cnp",
		colECNCE:              "ecn_ce",
		colRequestFrame:       "request_frame",
		colLatency:            "latency",
		colLatencyOp:          "latency_op",
		colAckRTT:             "ack_rtt",
	}
	require.Len(t, packetColumns, numFixedColumns)
	require.Len(t, want, numFixedColumns)
	for i, name := range want {
		assert.Equal(t, name, packetColumns[i].name, "column %d", i)
	}
}

// fixedRow.add writes each column as its registry fields give it, packet for
// packet, over every capture in the tree: the registry stays the one
// definition of each value.
func TestDirectEqualsRegistry(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../../pcaps/*.pcap*", "../../pcaps/*/*.pcap*", "../../capture/testdata/*.pcap*"} {
		m, err := filepath.Glob(glob)
		require.NoError(t, err)
		paths = append(paths, m...)
	}
	require.NotEmpty(t, paths)
	var fcs []*fieldColumn
	for _, pc := range packetColumns {
		c, err := newFieldColumn(pc.name, pc.fields)
		require.NoError(t, err)
		c.gate = pc.gate
		fcs = append(fcs, c)
	}
	checked := 0
	seen := make([]int, len(fcs)) // values per column over all captures
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			continue // a capture the tests keep to be refused
		}
		dec := decode.NewDecoder(decode.Options{})
		a := decode.NewAnalyzer(decode.AnalyzerOptions{})
		via := make([]*column, len(fcs))
		got := make([]*column, len(fcs))
		row := 0
		for i, c := range fcs {
			via[i], got[i] = newColumn(c.name, c.kind, false), newColumn(c.name, c.kind, false)
			via[i].row, got[i].row = &row, &row
			via[i].reserve(0, maxRowGroupRows)
			got[i].reserve(0, maxRowGroupRows)
		}
		fixedLayout(got)
		w := fixedRow{fcs: fcs, cols: got}
		var cp capture.Packet
		var v decode.Value
		for r.NextInto(&cp) == nil {
			p := dec.Decode(cp)
			a.Analyze(p)
			w.add(p)
			for i, c := range fcs {
				c.registry(p, &v, via[i])
			}
			checked++
			row++
		}
		r.Close()
		for i := range fcs {
			got[i].finishEnum()
		}
		for i, c := range fcs {
			name := path + ": " + c.name
			require.Equal(t, via[i].levels(), got[i].levels(), name)
			if got[i].enumText != nil {
				assert.Empty(t, got[i].i32, name) // the numbers became texts
			} else {
				assert.Equal(t, via[i].i32, got[i].i32, name)
			}
			assert.Equal(t, via[i].bools, got[i].bools, name)
			assert.Equal(t, via[i].i64, got[i].i64, name)
			assert.Equal(t, via[i].raw, got[i].raw, name)
			assert.Equal(t, texts(via[i]), texts(got[i]), name)
			seen[i] += row - via[i].nulls()
		}
	}
	assert.Greater(t, checked, 10000, "packets compared")
	for i, n := range seen {
		switch i {
		case colVLAN, colPCP, colDETHQKey, colDETHSrcQP, colIETH, colMalformed, colOutOfOrder:
			// rare enough that the tree may lack them
		default:
			assert.NotZero(t, n, "no capture has a value of %s: the comparison proves nothing", fcs[i].name)
		}
	}
}

// packBools packs as a bit-by-bit loop does, the first value lowest.
func TestPackBools(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 16, 23, 64, 100} {
		v := make([]bool, n)
		for i := range v {
			v[i] = (i*7+i/3)%3 == 0
		}
		want := make([]byte, (n+7)/8)
		for i, x := range v {
			if x {
				want[i/8] |= 1 << (i % 8)
			}
		}
		got := packBools(nil, v)
		if n == 0 {
			got = []byte{}
		}
		assert.Equal(t, want, got, "%d bools", n)
	}
}

// Column-chunk bounds compare as the column's type does: unsigned for
// UINT columns, signed for durations.
func TestStatisticsBounds(t *testing.T) {
	le32 := func(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
	le64 := func(v int64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(uint64(v) >> (8 * i))
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		kind     kind
		i32      []int32
		i64      []int64
		min, max []byte
	}{
		{"uint32", kindUint32, []int32{5, -16, 7}, nil, le32(5), le32(0xFFFFFFF0)},
		{"uint32 one", kindUint32, []int32{9}, nil, le32(9), le32(9)},
		{"uint64", kindUint64, nil, []int64{3, -1}, le64(3), le64(-1)},
		{"nanos", kindNanos, nil, []int64{4, -3, 2}, le64(-3), le64(4)},
		{"timestamp", kindTimestamp, nil, []int64{1700000000000000000, 1600000000000000000}, le64(1600000000000000000), le64(1700000000000000000)},
	} {
		c := newColumn(tc.name, tc.kind, true)
		c.i32, c.i64 = tc.i32, tc.i64
		s := c.statistics()
		assert.Equal(t, tc.min, s.MinValue, tc.name)
		assert.Equal(t, tc.max, s.MaxValue, tc.name)
	}
}
