package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func TestMain(m *testing.M) {
	// Golden timestamps must not depend on the machine's time zone.
	time.Local = time.UTC
	os.Setenv("NO_COLOR", "1")
	os.Exit(m.Run())
}

// ibdump runs the command in-process and returns its standard output,
// standard error and exit status.
func ibdump(t testing.TB, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, bytes.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const (
	rping      = "../../pcaps/rxe/rping.pcap"
	writeLoss  = "../../pcaps/rxe/write_bw_loss.pcap"
	sendRNR    = "../../pcaps/rxe/send_bw_rnr.pcap"
	vectors    = "../../testdata/vectors/scapy-rocev2.pcap"
	badICRC    = "../../testdata/vectors/scapy-rocev2-bad-icrc.pcap"
	nativeIB   = "../../testdata/vectors/derived-ib-native-linktype247.pcap"
	uts        = "../../testdata/vectors/scapy-uts-known-answers.pcap"
	probes     = "../../testdata/vectors/scapy-rocev2-probes.pcap"
	vectorsIP6 = "../../testdata/vectors/scapy-rocev2-ipv6.pcap"
)

// TestGolden covers every output mode on the corpus; go test -update
// rewrites the files.
func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"summary-rping", []string{rping}, 0},
		{"summary-vectors", []string{vectors, vectorsIP6, uts, probes}, 0},
		{"summary-native", []string{nativeIB}, 0},
		{"summary-sll2-tcpdump-any", []string{"../../testdata/sll2-tcpdump-any.pcap"}, 0},
		{"summary-verbose-numbered", []string{"-vv", "-#", "-tttt", "-c", "12", rping}, 0},
		{"summary-ether-epoch", []string{"--ether", "-tt", "-c", "6", vectors}, 0},
		{"text-rping", []string{"-T", "text", rping}, 0},
		{"text-vectors", []string{"-T", "text", vectors}, 0},
		{"tree", []string{"-V", "-c", "8", rping}, 0},
		{"tree-only-infiniband", []string{"-V", "-O", "infiniband", vectors}, 0},
		{"tree-native", []string{"-V", "-c", "3", nativeIB}, 0},
		{"hex", []string{"-x", "-c", "3", vectors}, 0},
		{"hex-ascii-link", []string{"-XX", "-c", "3", vectors}, 0},
		{"tree-hex", []string{"-V", "-x", "-c", "2", vectors}, 0},
		{"ascii-payload", []string{"-A", "-c", "5", vectors}, 0},
		{"fields", []string{"-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "ip.src", "-e", "bth.opcode",
			"-e", "bth.destqp", "-e", "bth.psn", "-e", "reth.va", "-e", "aeth.syndrome", "-e", "immdt", "-e", "ibwire.icrc.status", vectors}, 0},
		{"fields-csv-quoted", []string{"-T", "fields", "-E", "separator=,", "-E", "quote=d", "-E", "occurrence=f", "-e", "frame.number", "-e", "immdt", "-e", "ieth", vectors}, 0},
		{"json", []string{"-T", "json", "-c", "2", vectors}, 0},
		{"jsonl", []string{"-T", "jsonl", "-c", "4", rping}, 0},
		{"ek", []string{"-T", "ek", "-c", "2", vectors}, 0},
		{"filter-naks", []string{"-Y", "aeth.syndrome.opcode == 3", writeLoss}, 0},
		{"filter-rnr-count", []string{"--count", "-Y", "aeth.syndrome.opcode == 1", sendRNR}, 0},
		{"conv-qp", []string{"-q", "-z", "conv,qp", rping}, 0},
		{"io-stat", []string{"-q", "-z", "io,stat,0.02", "-z", "io,stat,0,bth.opcode == 17,bth.opcode == RC_SEND_ONLY", rping}, 0},
		{"check-good", []string{"--check", "-q", rping}, 0},
		{"check-bad-icrc", []string{"--check", badICRC}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := ibdump(t, nil, tt.args...)
			require.Equal(t, tt.code, code, "stderr: %s", stderr)
			golden := filepath.Join("testdata", "golden", tt.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./cmd/ibdump -update to create it")
			assert.Equal(t, string(want), out)
		})
	}
}

func TestNoArgumentDecodesTheBundledSample(t *testing.T) {
	out, stderr, code := ibdump(t, nil)
	require.Zero(t, code)
	assert.Contains(t, stderr, "bundled sample")
	file, _, _ := ibdump(t, nil, rping)
	assert.Equal(t, file, out)
}

func TestStdinMatchesFile(t *testing.T) {
	data, err := os.ReadFile(writeLoss)
	require.NoError(t, err)
	fromFile, _, code := ibdump(t, nil, writeLoss)
	require.Zero(t, code)
	fromStdin, _, code := ibdump(t, data, "-r", "-")
	require.Zero(t, code)
	assert.Equal(t, fromFile, fromStdin)
}

// TestPcapAndPcapngAgree writes the capture as pcapng and reads it back.
func TestPcapAndPcapngAgree(t *testing.T) {
	ng := filepath.Join(t.TempDir(), "rping.pcapng")
	_, stderr, code := ibdump(t, nil, "-w", ng, "-F", "pcapng", rping)
	require.Zero(t, code, stderr)
	a, _, _ := ibdump(t, nil, "-T", "text", rping)
	b, _, code := ibdump(t, nil, "-T", "text", ng)
	require.Zero(t, code)
	assert.Equal(t, a, b)
}

// TestCorruptFile cuts a capture inside a record: everything before the
// damage is printed, then an error naming the file and packet, status 2.
func TestCorruptFile(t *testing.T) {
	data, err := os.ReadFile(rping)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	require.NoError(t, os.WriteFile(cut, data[:2000], 0o644))
	out, stderr, code := ibdump(t, nil, cut)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "cut.pcap")
	assert.Contains(t, stderr, "packet")
	full, _, _ := ibdump(t, nil, rping)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(full, out), "the packets before the damage are printed as usual")

	bad := filepath.Join(t.TempDir(), "bad.pcap")
	require.NoError(t, os.WriteFile(bad, []byte("this is not a capture"), 0o644))
	_, stderr, code = ibdump(t, nil, bad)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "bad.pcap")
}

func TestMalformedPacketIsShownAndDecodingGoesOn(t *testing.T) {
	out, _, code := ibdump(t, nil, "--check", "../../testdata/vectors/scapy-rocev2.pcap", badICRC)
	assert.Equal(t, exitFindings, code)
	assert.Contains(t, out, "bad ICRC")
	assert.Contains(t, out, "check FAILED: 30 packets")
}

func TestFlagErrors(t *testing.T) {
	tests := [][]string{
		{"-T", "pdml"},
		{"-Y", "bth.psnn == 3", rping},
		{"-e", "bth.psn", rping},
		{"-T", "fields", "-e", "nosuch.field", rping},
		{"-z", "conv,tcp", rping},
		{"-d", "udp.port==x,infiniband", rping},
		{"--color=sometimes", rping},
	}
	for _, args := range tests {
		_, stderr, code := ibdump(t, nil, args...)
		assert.Equal(t, exitError, code, "%v", args)
		assert.Contains(t, stderr, "ibdump:", "%v", args)
	}
}

func TestClusters(t *testing.T) {
	a, _, _ := ibdump(t, nil, "-nnvX", "-c", "2", vectors)
	b, _, _ := ibdump(t, nil, "-n", "-n", "-v", "-X", "-c", "2", vectors)
	assert.Equal(t, b, a)
}

func TestCompletionAndGlossary(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		out, _, code := ibdump(t, nil, "completion", sh)
		require.Zero(t, code)
		assert.Contains(t, out, "infiniband.bth.psn")
	}
	out, _, code := ibdump(t, nil, "-G", "fields")
	require.Zero(t, code)
	assert.Contains(t, out, "\tinfiniband.bth.psn\tFT_UINT24\t")
	out, _, code = ibdump(t, nil, "--version")
	require.Zero(t, code)
	assert.True(t, strings.HasPrefix(out, "ibdump "))
}

func TestHelpIsComplete(t *testing.T) {
	_, stderr, code := ibdump(t, nil, "-h")
	require.Zero(t, code)
	var o options
	fs := newFlagSet(&o, nil)
	fs.VisitAll(func(f *flag.Flag) { assert.Contains(t, stderr, "-"+f.Name, "help lists -%s", f.Name) })
	assert.Contains(t, stderr, "Exit status")
}
