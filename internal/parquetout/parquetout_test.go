package parquetout_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/parquetout"
)

// run is what the export was given: every frame's number, offset, file and
// connection as the reader and the analyzer saw them, the findings and
// the connections.
type run struct {
	frames   map[uint32]capture.Packet
	convs    map[uint32]uint32 // frame -> conv id
	findings []decode.Finding
	conns    []decode.Conversation
}

// export reads the captures as ibdump does, hands every packet to an
// Exporter and closes it.
func export(t *testing.T, o parquetout.Options, paths ...string) run {
	t.Helper()
	e, err := parquetout.New(o)
	require.NoError(t, err)
	res := run{frames: map[uint32]capture.Packet{}, convs: map[uint32]uint32{}}
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		res.findings = append(res.findings, f)
		e.Finding(f)
	}})
	dec := decode.NewDecoder(decode.Options{})
	r, err := capture.OpenMulti(paths...)
	require.NoError(t, err)
	defer r.Close()
	var cp capture.Packet
	for {
		err := r.NextInto(&cp)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		p := dec.Decode(cp)
		a.Analyze(p)
		res.frames[uint32(cp.Number)] = capture.Packet{Number: cp.Number, Time: cp.Time, File: cp.File, Offset: cp.Offset}
		res.convs[uint32(cp.Number)] = p.Analysis.Conv
		require.NoError(t, e.Packet(p))
	}
	a.Finish()
	res.conns = a.Conversations()
	require.NoError(t, e.Close(res.conns))
	return res
}

// readTable reads every row of every file of a table's folder.
func readTable(t *testing.T, dir string) (rows []map[string]any, files []*pq.File) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		st, err := f.Stat()
		require.NoError(t, err)
		pf, err := pq.OpenFile(f, st.Size())
		require.NoError(t, err)
		files = append(files, pf)
		r := pq.NewReader(pf)
		for {
			m := map[string]any{}
			if err := r.Read(&m); errors.Is(err, io.EOF) {
				break
			} else {
				require.NoError(t, err, path)
			}
			rows = append(rows, m)
		}
		return nil
	})
	require.NoError(t, err)
	return rows, files
}

func TestExportReadsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		paths  []string
		shards int
	}{
		{"one file", []string{"../../pcaps/rxe/write_bw_loss.pcap"}, 1},
		{"sharded", []string{"../../pcaps/rxe/send_bw_rnr.pcap"}, 3},
		{"two files", []string{"../../pcaps/rxe/rc_pingpong.pcap", "../../pcaps/rxe/rping_ipv6.pcap"}, 2},
		{"pcapng", []string{"../../capture/testdata/mixed.pcapng"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := parquetout.Options{Dir: dir, Name: "cap", Shards: tc.shards, RowGroupRows: 512,
				Labels: []parquetout.Label{{"host", "a17"}, {"date", "2026-11-26"}}, Extra: []string{"bth.psn", "frame.protocols"}}
			res := export(t, o, tc.paths...)

			packets, files := readTable(t, filepath.Join(dir, "packets"))
			require.Len(t, packets, len(res.frames))
			assert.Len(t, files, tc.shards)
			seen := map[uint32]bool{}
			for _, row := range packets {
				frame := row["frame"].(uint32)
				want, ok := res.frames[frame]
				require.True(t, ok, "frame %d", frame)
				require.False(t, seen[frame], "frame %d twice", frame)
				seen[frame] = true
				assert.Equal(t, want.Offset, row["byte_offset"], "frame %d", frame)
				assert.Equal(t, want.File, row["file"], "frame %d", frame)
				assert.Equal(t, want.Time.UnixNano(), row["time"].(int64), "frame %d", frame)
				assert.Equal(t, "a17", row["host"])
				assert.Equal(t, "2026-11-26", row["date"])
				if c := res.convs[frame]; c != 0 {
					assert.Equal(t, c, row["conv_id"], "frame %d", frame)
				}
				if row["psn"] != nil {
					assert.Equal(t, row["psn"], row["infiniband_bth_psn"], "frame %d: -e bth.psn is psn", frame)
				}
			}
			for _, f := range files {
				time, ok := f.Schema().Lookup("time")
				require.True(t, ok)
				lt := time.Node.Type().LogicalType()
				assert.Equal(t, "TIMESTAMP(isAdjustedToUTC=true,unit=NANOS)", lt.String())
				for _, g := range f.Metadata().RowGroups {
					for _, c := range g.Columns {
						assert.Equal(t, "ZSTD", c.MetaData.Codec.String())
					}
				}
			}

			conns, _ := readTable(t, filepath.Join(dir, "connections"))
			require.Len(t, conns, len(res.conns))
			var ids []uint32
			for _, row := range conns {
				ids = append(ids, row["conv_id"].(uint32))
				assert.Equal(t, "a17", row["host"])
				assert.NotEmpty(t, row["spans"], "connection %v", row["conv_id"])
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			var want []uint32
			for _, c := range res.conns {
				want = append(want, c.ID)
			}
			assert.ElementsMatch(t, want, ids)

			findings, _ := readTable(t, filepath.Join(dir, "findings"))
			require.Len(t, findings, len(res.findings))
			for i, row := range findings {
				assert.Equal(t, res.findings[i].Frame, row["frame"])
				assert.Equal(t, res.findings[i].Summary(), row["summary"])
				assert.Equal(t, res.frames[res.findings[i].Frame].File, row["file"])
			}
		})
	}
}

// TestRowGroupsSkip checks that a capture longer than a row group is cut
// into several, whose time statistics ascend without overlap: what lets an
// engine skip groups on a time filter. Fifteen groups and more take the
// footer's long list header.
func TestRowGroupsSkip(t *testing.T) {
	for _, tc := range []struct {
		rows, groups int
	}{
		{1024, 3}, // 2772 packets in groups of 1024
		{100, 28}, // and of 100
		{2772, 1}, // one group
	} {
		dir := t.TempDir()
		export(t, parquetout.Options{Dir: dir, Name: "cap", RowGroupRows: tc.rows}, "../../pcaps/rxe/send_bw_rnr.pcap")
		rows, files := readTable(t, filepath.Join(dir, "packets"))
		require.Len(t, files, 1)
		require.Len(t, rows, 2772)
		f := files[0]
		groups := f.Metadata().RowGroups
		require.Len(t, groups, tc.groups, "groups of %d rows", tc.rows)
		col, _ := f.Schema().Lookup("time")
		var prevMax int64
		for i, g := range groups {
			st := g.Columns[col.ColumnIndex].MetaData.Statistics
			require.NotEmpty(t, st.MinValue, "row group %d has time statistics", i)
			min := int64(leUint64(st.MinValue))
			max := int64(leUint64(st.MaxValue))
			assert.LessOrEqual(t, min, max)
			assert.Greater(t, min, prevMax, "row group %d starts after the previous one ends", i)
			assert.Equal(t, int16(i), g.Ordinal)
			prevMax = max
		}
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    parquetout.Options
		want string
	}{
		{"no folder", parquetout.Options{}, "needs -w DIR"},
		{"unknown field", parquetout.Options{Dir: "x", Extra: []string{"bth.nosuch"}}, `no field "bth.nosuch"`},
		{"label on a column", parquetout.Options{Dir: "x", Labels: []parquetout.Label{{"psn", "1"}}}, "a column has that name"},
		{"field twice", parquetout.Options{Dir: "x", Extra: []string{"frame.len", "frame.len"}}, "column frame_len twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Dir = filepath.Join(t.TempDir(), tc.o.Dir)
			if tc.name == "no folder" {
				tc.o.Dir = ""
			}
			_, err := parquetout.New(tc.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseLabelAndShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want parquetout.Label
		err  string
	}{
		{"host=a17", parquetout.Label{"host", "a17"}, ""},
		{"date=2026-11-26", parquetout.Label{"date", "2026-11-26"}, ""},
		{"host", parquetout.Label{}, "want key=value"},
		{"=a", parquetout.Label{}, "want key=value"},
		{"1host=a", parquetout.Label{}, "starts with a letter"},
		{"host=a/b", parquetout.Label{}, "no / or"},
		{"host=..", parquetout.Label{}, "no / or"},
	} {
		got, err := parquetout.ParseLabel(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
	for _, tc := range []struct {
		in   string
		want int
		err  string
	}{
		{"conv", 8, ""}, {"conv,4", 4, ""}, {"conv,1", 1, ""},
		{"qp", 0, "want conv"}, {"conv,0", 0, "from 1 to 1024"}, {"conv,x", 0, "from 1 to 1024"},
	} {
		got, err := parquetout.ParseShard(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
}

// A run that exports no packet still writes readable tables, with no rows.
func TestExportEmpty(t *testing.T) {
	dir := t.TempDir()
	e, err := parquetout.New(parquetout.Options{Dir: dir, Name: "none", Extra: []string{"bth.psn"}})
	require.NoError(t, err)
	require.NoError(t, e.Close(nil))
	for _, table := range []string{"packets", "connections", "findings"} {
		rows, files := readTable(t, filepath.Join(dir, table))
		require.Len(t, files, 1, table)
		assert.Empty(t, rows, table)
		assert.Zero(t, files[0].NumRows(), table)
	}
}

// A file's row groups written on a goroutine of its own, while the next
// group fills, are the bytes written in line: the swapped buffers carry
// every value, dictionary and level across.
func TestAsyncFlushWritesTheSameBytes(t *testing.T) {
	defer func(was int) { *parquetout.AsyncMinProcs = was }(*parquetout.AsyncMinProcs)
	paths := []string{"../../pcaps/rxe/send_bw_rnr.pcap", "../../pcaps/rxe/rping_ipv6.pcap", "../../capture/testdata/mixed.pcapng"}
	files := map[bool]map[string][]byte{}
	for _, async := range []bool{false, true} {
		*parquetout.AsyncMinProcs = 1 << 20
		if async {
			*parquetout.AsyncMinProcs = 1
		}
		dir := t.TempDir()
		export(t, parquetout.Options{Dir: dir, Name: "cap", Shards: 2, RowGroupRows: 100, Extra: []string{"frame.protocols"}}, paths...)
		files[async] = map[string][]byte{}
		m, err := filepath.Glob(filepath.Join(dir, "packets", "*.parquet"))
		require.NoError(t, err)
		require.Len(t, m, 2)
		for _, path := range m {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			files[async][filepath.Base(path)] = b
		}
	}
	for name, b := range files[false] {
		assert.True(t, bytes.Equal(b, files[true][name]), "%s differs between in-line and goroutine writes", name)
	}
	assert.Len(t, files[true], len(files[false]))
}
