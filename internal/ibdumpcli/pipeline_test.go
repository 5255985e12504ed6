package ibdumpcli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/capture"
)

// runIbdump runs ibdump's command line and returns stdout, stderr and the
// exit status.
func runIbdump(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), "ibdump", args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// cutCapture writes src's packets cut to snap bytes, as tcpdump -s does.
func cutCapture(t *testing.T, src string, snap int) string {
	t.Helper()
	r, err := capture.Open(src)
	require.NoError(t, err)
	defer r.Close()
	path := filepath.Join(t.TempDir(), "cut.pcap")
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := capture.NewWriter(f, capture.FormatPcap, r.LinkType(), false)
	require.NoError(t, err)
	var p capture.Packet
	for {
		err := r.NextInto(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(p.Data) > snap {
			p.Data = p.Data[:snap]
		}
		require.NoError(t, w.WritePacket(p))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
	return path
}

// The pipeline (-j 3: three workers taking batches in turn, in batches of
// 3 packets so every capture crosses batch boundaries) writes
// byte for byte what one goroutine (-j 1) writes, with the same messages
// and exit status, for every capture of the corpus in every output mode,
// and for a packet cut by a snapshot length, a file cut in the middle of a
// record, -c, -Y and -w.
func TestPipelineMatchesDirect(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer func(n int) { batchPackets = n }(batchPackets)
	batchPackets = 3
	// -j takes at most the cores: three workers on any machine.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(3, runtime.GOMAXPROCS(0))))

	paths, err := filepath.Glob("../../pcaps/*.pcap")
	require.NoError(t, err)
	rxe, err := filepath.Glob("../../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	paths = append(paths, rxe...)
	require.Greater(t, len(paths), 80)
	rping := "../../pcaps/rxe/rping.pcap"
	data, err := os.ReadFile(rping)
	require.NoError(t, err)
	broken := filepath.Join(t.TempDir(), "broken.pcap")
	require.NoError(t, os.WriteFile(broken, data[:2000], 0o644)) // ends inside a record
	paths = append(paths, cutCapture(t, "../../pcaps/rxe/write_bw.pcap", 64), cutCapture(t, rping, 60), broken)

	modes := [][]string{
		nil,
		{"-v", "-#", "-ttttt"},
		{"-T", "text"},
		{"-V"},
		{"-T", "fields", "-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp",
			"-e", "infiniband.bth.psn", "-e", "ip.src", "-e", "ibwire.analysis.conv_id"},
		{"-q", "-z", "conv,qp", "-z", "expert", "-z", "latency"},
		{"-q", "--check"},
		{"-T", "json"},
		{"-T", "jsonl"},
		{"-x", "-A"},
		{"-Y", "infiniband.bth.psn > 3 || arp", "-z", "conv,qp"},
		{"-V", "-Y", "infiniband.bth.opcode == 4"},
		{"-c", "7", "-T", "text"},
		{"-c", "5", "-q", "-z", "conv,qp"},
		{"--count"},
		// A sink's error ends the run at that packet: one message, and
		// the statistics of the packets before it only.
		{"-w", "/dev/full", "-z", "conv,qp"},
	}
	for _, path := range paths {
		for _, mode := range modes {
			args := append(append([]string(nil), mode...), path)
			name := filepath.Base(path) + " " + strings.Join(mode, " ")
			wantOut, wantErr, wantCode := runIbdump(append([]string{"-j", "1"}, args...)...)
			gotOut, gotErr, gotCode := runIbdump(append([]string{"-j", "3"}, args...)...)
			require.Equal(t, wantCode, gotCode, name)
			require.Equal(t, wantErr, gotErr, name)
			require.True(t, wantOut == gotOut, "%s: the pipeline's output differs", name)
		}
		// -w: the same records written.
		dir := t.TempDir()
		_, _, code1 := runIbdump("-j", "1", "-Y", "infiniband", "-w", filepath.Join(dir, "1.pcap"), path)
		_, _, code3 := runIbdump("-j", "3", "-Y", "infiniband", "-w", filepath.Join(dir, "3.pcap"), path)
		assert.Equal(t, code1, code3, path)
		one, err := os.ReadFile(filepath.Join(dir, "1.pcap"))
		require.NoError(t, err)
		three, err := os.ReadFile(filepath.Join(dir, "3.pcap"))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(one, three), "%s: -w wrote other records", path)
		// -T parquet: the same packets and findings. (The connections
		// table is left out: internal/parquetout writes its opcode lists
		// in map order, which differs between two runs of -j 1 as well.)
		_, _, code1 = runIbdump("-j", "1", "-T", "parquet", "-w", filepath.Join(dir, "pq1"), path)
		_, _, code3 = runIbdump("-j", "3", "-T", "parquet", "-w", filepath.Join(dir, "pq3"), path)
		assert.Equal(t, code1, code3, path)
		for _, table := range []string{"packets", "findings"} {
			files, err := filepath.Glob(filepath.Join(dir, "pq1", table, "*.parquet"))
			require.NoError(t, err)
			for _, f := range files {
				one, err := os.ReadFile(f)
				require.NoError(t, err)
				three, err := os.ReadFile(filepath.Join(dir, "pq3", table, filepath.Base(f)))
				require.NoError(t, err)
				assert.True(t, bytes.Equal(one, three), "%s: -T parquet wrote another %s table", path, table)
			}
		}
	}
}

// A run cancelled (SIGINT) before the workers start analyses nothing,
// prints its statistics and stops every worker before Run returns, as -c
// and a read error do (TestPipelineMatchesDirect).
func TestPipelineStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer func(n int) { batchPackets = n }(batchPackets)
	batchPackets = 2
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := Run(ctx, "ibdump", []string{"-j", "2", "--count", "-z", "conv,qp", "../../pcaps/rxe/write_bw.pcap"}, nil, &out, &errOut)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errOut.String())
	assert.Contains(t, out.String(), "0 packets\n", "nothing is analysed after the cancel")
	assert.Contains(t, out.String(), "QP Conversations", "the statistics are printed")
}
