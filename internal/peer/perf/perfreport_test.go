package perf

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The -update flag rewrites golden files; another test file of this
// package may have defined it already.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata")
	}
}

func perfUpdateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

var (
	perfGIDv4 = [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 77, 15: 11}
	perfGIDv6 = [16]byte{0: 0xfe, 1: 0x80, 15: 1}
)

// TestPerfFormatsMatchCPrintf prints the same values as
// testdata/perfreport/cprintf.c, which uses perftest's own format strings
// with C's printf, and compares the text byte for byte.
func TestPerfFormatsMatchCPrintf(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteDest(&b, "local", Dest{QPN: 0x11, PSN: 0x318da6, RDMA: true, RKey: 0x2f1, VAddr: 0x556ef83fa000, GID: perfGIDv4}))
	require.NoError(t, WriteDest(&b, "remote", Dest{LID: 1, QPN: 0x11, PSN: 0xd64cfe, OutReads: 0x80, RDMA: true, RKey: 0x2c6, VAddr: 0x56005f76d000, GID: perfGIDv6}))
	require.NoError(t, WriteDest(&b, "local", Dest{LID: 0x1234, QPN: 0xabcdef, GID: perfGIDv4}))
	var bw strings.Builder
	require.NoError(t, WriteBWTable(&bw, false, []BWRow{
		{4096, 200, 9.17340371228809, 8.092329080111265, 0.0020716362445084837},
		{65536, 5000, 12345.678, 0.004, 123.4567891},
	}))
	var lat strings.Builder
	require.NoError(t, WriteLatTable(&lat, []LatRow{
		{8, 1000, 1.5, 20.25, 1.75, 1.8125, 0.625, 3.5, 19.99},
		{1048576, 7, 1234.5, 123456.789, 0.0, 0.005, 0.015, 100.0, 1e6},
	}))
	// Keep only the rows of the tables: cprintf.c prints no headers.
	rows := func(s string) string {
		lines := strings.SplitAfter(s, "\n")
		return strings.Join(lines[2:len(lines)-2], "")
	}
	got := b.String() + rows(bw.String()) + rows(lat.String())
	want, err := os.ReadFile(filepath.Join("testdata", "perfreport", "cprintf.txt"))
	require.NoError(t, err)
	assert.Equal(t, string(want), got)
}

func TestCHexAlt(t *testing.T) {
	tests := []struct {
		v     uint64
		width int
		want  string
	}{
		{0, 4, "0000"},
		{0x11, 6, "0x0011"},
		{0x80, 4, "0x80"},
		{0x1234, 4, "0x1234"},
		{0x12345, 4, "0x12345"},
		{0x556ef83fa000, 16, "0x00556ef83fa000"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, cHexAlt(tt.v, tt.width), "%#x width %d", tt.v, tt.width)
	}
}

func TestPerfLatStats(t *testing.T) {
	samples := make([]float64, 1000)
	for i := range samples {
		samples[len(samples)-1-i] = float64(i + 1) // 1000 … 1, unsorted on purpose
	}
	got := LatStats(8, samples)
	assert.Equal(t, LatRow{Bytes: 8, Iterations: 1000, Min: 1, Max: 1000, Typical: 500.5, Avg: 500.5,
		Stdev: got.Stdev, P99: 991, P999: 1000}, got)
	assert.InDelta(t, 288.675, got.Stdev, 0.001)
	assert.Equal(t, float64(1000), samples[0], "the caller's samples stay unsorted")

	one := LatStats(64, []float64{2.5})
	assert.Equal(t, LatRow{Bytes: 64, Iterations: 1, Min: 2.5, Max: 2.5, Typical: 2.5, Avg: 2.5, P99: 2.5, P999: 2.5}, one)
	assert.Equal(t, LatRow{Bytes: 1}, LatStats(1, nil))
}

func TestPerfBWFigures(t *testing.T) {
	bw, rate := BWFigures(65536, 5000, 1.0, false)
	assert.InDelta(t, 65536*5000*8/1e9, bw, 1e-9)
	assert.InDelta(t, 0.005, rate, 1e-12)
	bw, _ = BWFigures(1<<20, 100, 2.0, true)
	assert.InDelta(t, 50.0, bw, 1e-9)
	bw, rate = BWFigures(1, 1, 0, false)
	assert.Zero(t, bw)
	assert.Zero(t, rate)
}

// TestPerfReportGolden renders whole reports as the tools print them; the
// golden files are checked against perftest's format strings by
// TestPerfFormatsMatchCPrintf for every line with numbers in it.
func TestPerfReportGolden(t *testing.T) {
	writeBW := TestInfo{Verb: "RDMA_Write", Device: "rxe0", QPs: 1, Transport: "IB", Connection: "RC",
		WRAPI: true, TXDepth: 128, CQModeration: 100, MTU: 1024, LinkType: "Ethernet", GIDIndex: 1}
	readBW := writeBW
	readBW.Verb, readBW.OutReads = "RDMA_Read", 128
	sendBWServer := TestInfo{Verb: "Send", Device: "ibpeer", QPs: 1, Transport: "IB", Connection: "RC",
		RXDepth: 512, CQModeration: 100, MTU: 4096, LinkType: "Ethernet", GIDIndex: -1, MaxInline: 0}
	writeLat := TestInfo{Verb: "RDMA_Write", Latency: true, Device: "rxe0", QPs: 1, Transport: "IB", Connection: "RC",
		PCIeRelaxed: true, TXDepth: 1, MTU: 1024, LinkType: "Ethernet", GIDIndex: 1, MaxInline: 220}
	local := Dest{QPN: 0x11, PSN: 0x318da6, RDMA: true, RKey: 0x2f1, VAddr: 0x556ef83fa000, GID: perfGIDv4}
	remote := Dest{QPN: 0x11, PSN: 0xd64cfe, RDMA: true, RKey: 0x2c6, VAddr: 0x56005f76d000, GID: [16]byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 77, 15: 12}}
	readLocal, readRemote := local, remote
	readLocal.OutReads, readRemote.OutReads = 0x80, 0x80
	sendLocal, sendRemote := local, remote
	sendLocal.RDMA, sendRemote.RDMA = false, false

	lat := LatStats(8, []float64{1.91, 1.87, 2.05, 1.88, 1.90, 3.41, 1.89, 1.92})
	tests := []struct {
		name          string
		info          TestInfo
		local, remote Dest
		bw            []BWRow
		lat           []LatRow
	}{
		{"write_bw", writeBW, local, remote, []BWRow{{4096, 200, 9.17340371228809, 8.092329080111265, 0.0020716362445084837}}, nil},
		{"read_bw", readBW, readLocal, readRemote, []BWRow{{4096, 200, 21.680036736050617, 14.293041256326882, 0.0036590185616196817}}, nil},
		{"send_bw_server", sendBWServer, sendLocal, sendRemote, []BWRow{{65536, 1000, 0, 3.21, 0.006123}}, nil},
		{"write_lat", writeLat, local, remote, nil, []LatRow{lat}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, WriteReport(&b, tt.info, tt.local, tt.remote, tt.bw, tt.lat))
			path := filepath.Join("testdata", "perfreport", tt.name+".golden")
			if perfUpdateGolden() {
				require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create it")
			assert.Equal(t, string(want), b.String())
		})
	}
}
