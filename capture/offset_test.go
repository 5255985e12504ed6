package capture

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordOffsets checks each record's File and Offset against the file's
// own bytes: at the offset sits the pcap record header (or the pcapng
// packet block) whose data the reader returned.
func TestRecordOffsets(t *testing.T) {
	for _, tc := range []struct {
		path       string
		firstAt    int64 // the first record's offset: after the 24-byte pcap header, or the pcapng SHB and IDBs
		wantFormat Format
	}{
		{"../pcaps/rxe/write_bw.pcap", 24, FormatPcap},
		{"../pcaps/rxe/rping_ipv6.pcap", 24, FormatPcap},
		{"testdata/mixed.pcapng", -1, FormatPcapNG},
	} {
		t.Run(tc.path, func(t *testing.T) {
			raw, err := os.ReadFile(tc.path)
			require.NoError(t, err)
			r, err := Open(tc.path)
			require.NoError(t, err)
			defer r.Close()
			require.Equal(t, tc.wantFormat, r.Format())
			order := binary.ByteOrder(binary.LittleEndian)
			if r.order != nil {
				order = r.order
			}
			var p Packet
			var prev int64 = -1
			n := 0
			for r.NextInto(&p) == nil {
				n++
				require.Equal(t, tc.path, p.File)
				require.Greater(t, p.Offset, prev, "frame %d", p.Number)
				prev = p.Offset
				if n == 1 && tc.firstAt >= 0 {
					assert.Equal(t, tc.firstAt, p.Offset)
				}
				rec := raw[p.Offset:]
				switch tc.wantFormat {
				case FormatPcap:
					caplen := order.Uint32(rec[8:])
					require.Equal(t, len(p.Data), int(caplen), "frame %d", p.Number)
					require.True(t, bytes.Equal(p.Data, rec[16:16+caplen]), "frame %d", p.Number)
				case FormatPcapNG:
					typ := order.Uint32(rec)
					require.Contains(t, []uint32{blockEPB, blockSPB, blockOPB}, typ, "frame %d", p.Number)
					if typ == blockEPB {
						require.True(t, bytes.Equal(p.Data, rec[28:28+len(p.Data)]), "frame %d", p.Number)
					}
				}
			}
			require.Positive(t, n)
		})
	}
}

// TestRecordFileAcrossFiles checks that OpenMulti names each record's own
// file and restarts offsets with each.
func TestRecordFileAcrossFiles(t *testing.T) {
	a, b := "../pcaps/rxe/rc_pingpong.pcap", "../pcaps/rxe/ud_pingpong.pcap"
	r, err := OpenMulti(a, b)
	require.NoError(t, err)
	defer r.Close()
	files := map[string]int{}
	var p Packet
	for r.NextInto(&p) == nil {
		files[p.File]++
		if files[p.File] == 1 {
			assert.Equal(t, int64(24), p.Offset, "%s's first record", p.File)
		}
	}
	assert.Len(t, files, 2)
	assert.Positive(t, files[a])
	assert.Positive(t, files[b])
}
