package capture

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadAtEveryRecord reads every record of a capture by its offset,
// last first, and compares it with the sequential read.
func TestReadAtEveryRecord(t *testing.T) {
	for _, path := range []string{"../pcaps/rxe/write_bw_loss.pcap", "../pcaps/rxe/rping_ipv6.pcap", "testdata/mixed.pcapng"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r, err := Open(path)
			require.NoError(t, err)
			want, _ := readAll(r)
			require.NoError(t, r.Close())
			require.NotEmpty(t, want)

			rr, err := OpenRecords(path)
			require.NoError(t, err)
			defer rr.Close()
			var p Packet
			for i := len(want) - 1; i >= 0; i-- {
				w := want[i]
				require.NoError(t, rr.ReadAt(w.Offset, w.Number, &p), "frame %d", w.Number)
				assert.Equal(t, w, Packet{Number: p.Number, Time: p.Time, Length: p.Length, LinkType: p.LinkType,
					Interface: p.Interface, Data: append([]byte(nil), p.Data...), File: p.File, Offset: p.Offset}, "frame %d", w.Number)
			}
		})
	}
}

func TestReadAtRefuses(t *testing.T) {
	dir := t.TempDir()
	ng, _ := threePackets(t, FormatPcapNG)
	gz := filepath.Join(dir, "f.pcapng.gz")
	require.NoError(t, os.WriteFile(gz, gzipped(t, ng), 0o644))
	_, err := OpenRecords(gz)
	assert.ErrorIs(t, err, ErrNotSeekable)
	assert.ErrorContains(t, err, "f.pcapng.gz")

	plain := filepath.Join(dir, "f.pcapng")
	require.NoError(t, os.WriteFile(plain, ng, 0o644))
	rr, err := OpenRecords(plain)
	require.NoError(t, err)
	defer rr.Close()
	var p Packet
	for _, tc := range []struct {
		name   string
		offset int64
		want   string
	}{
		{"the section header", 0, "packet 7 at byte 0: no packet record at this offset: a pcapng block that is not a packet"},
		{"past the end", int64(len(ng)), "no packet record at this offset: the file has"},
		{"negative", -1, "no packet record at this offset"},
	} {
		err := rr.ReadAt(tc.offset, 7, &p)
		assert.ErrorIs(t, err, ErrNoRecord, tc.name)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}

	// A pcap record has no block type: an offset inside a record or the
	// file header is told by a header no writer makes.
	pcap, _ := threePackets(t, FormatPcap)
	plain = filepath.Join(dir, "f.pcap")
	require.NoError(t, os.WriteFile(plain, pcap, 0o644))
	rp, err := OpenRecords(plain)
	require.NoError(t, err)
	defer rp.Close()
	require.NoError(t, rp.ReadAt(24, 1, &p), "the first record")
	for _, tc := range []struct {
		name   string
		offset int64
		want   string
	}{
		{"the file header", 0, "packet 7 at byte 0: no packet record at this offset: the file header"},
		{"inside the first record", 24 + 4, "no packet record at this offset:"},
		{"inside the first record's data", 24 + 16 + 2, "no packet record at this offset:"},
	} {
		err := rp.ReadAt(tc.offset, 7, &p)
		assert.ErrorIs(t, err, ErrNoRecord, tc.name)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}

// BenchmarkReadAt20 reads 20 records spread over a capture by their
// offsets; IBWIRE_BENCH_PCAP names a big one (bench/gencap -n 4000000).
func BenchmarkReadAt20(b *testing.B) {
	path := os.Getenv("IBWIRE_BENCH_PCAP")
	if path == "" {
		path = "../pcaps/rxe/send_bw_rnr.pcap"
	}
	// The offsets: a sequential read once, outside the timing.
	r, err := Open(path)
	require.NoError(b, err)
	var offsets []int64
	var p Packet
	for r.NextInto(&p) == nil {
		offsets = append(offsets, p.Offset)
	}
	r.Close()
	step := len(offsets) / 20
	var picked []int64
	for i := range 20 {
		picked = append(picked, offsets[i*step+step/2])
	}
	b.ResetTimer()
	for b.Loop() {
		rr, err := OpenRecords(path)
		if err != nil {
			b.Fatal(err)
		}
		for i, off := range picked {
			if err := rr.ReadAt(off, i+1, &p); err != nil {
				b.Fatal(err)
			}
		}
		rr.Close()
	}
	b.ReportMetric(float64(len(offsets)), "packets-in-file")
}

// FuzzReadAt reads a record at any offset of any file: it never panics,
// fails with a *FileError, and at an offset the sequential reader found a
// record at, returns that record.
func FuzzReadAt(f *testing.F) {
	pcap, _ := threePackets(f, FormatPcap)
	ng, _ := threePackets(f, FormatPcapNG)
	for _, seed := range [][]byte{pcapBigEndianSLL2, pcapLittleNanos, handPcapNG(binary.LittleEndian), handPcapNG(binary.BigEndian), pcap, ng} {
		f.Add(seed, int64(24))
		f.Add(seed, int64(len(seed)/2))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, offset int64) {
		path := filepath.Join(dir, "f")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		want := map[int64][]byte{}
		if r, err := NewReader(bytes.NewReader(data), path); err == nil {
			var p Packet
			for r.NextInto(&p) == nil {
				want[p.Offset] = append([]byte(nil), p.Data...)
			}
		}
		rr, err := OpenRecords(path)
		if err != nil {
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			return
		}
		defer rr.Close()
		var p Packet
		err = rr.ReadAt(offset, 1, &p)
		if err != nil {
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			_, found := want[offset]
			// A record no writer makes (recordFault) may be refused: at an
			// offset, it looks like no record's start.
			plausible := offset >= 0 && offset+16 <= int64(len(data)) && rr.r.recordFault(data[offset:offset+16]) == ""
			require.False(t, found && plausible && rr.r.format == FormatPcap, "offset %d holds a record the sequential read found: %v", offset, err)
			return
		}
		require.Equal(t, offset, p.Offset)
		require.LessOrEqual(t, len(p.Data), MaxCaplen)
		if w, ok := want[offset]; ok {
			// bytes.Equal: an empty record is the same whether its slice
			// is nil (the copy above) or empty (ReadAt's).
			require.True(t, bytes.Equal(w, p.Data), "offset %d: %x, the sequential read %x", offset, p.Data, w)
		}
	})
}
