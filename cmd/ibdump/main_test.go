package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/internal/ibdumpcli"
	"github.com/ibwire/ibwire/layers"
)

// The exit statuses, under the names the tests were written with.
const (
	exitFindings = ibdumpcli.ExitFindings
	exitError    = ibdumpcli.ExitError
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
	code := ibdumpcli.Run(context.Background(), "ibdump", args, bytes.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

const (
	rping      = "../../pcaps/rxe/rping.pcap"
	writeLoss  = "../../pcaps/rxe/write_bw_loss.pcap"
	sendRNR    = "../../pcaps/rxe/send_bw_rnr.pcap"
	readBW     = "../../pcaps/rxe/read_bw.pcap"
	pingpong   = "../../pcaps/rxe/rc_pingpong.pcap"
	brokenERF  = "../../pcaps/broken_erf.pcap"
	cnpECN     = "../../pcaps/rc_cnp_ecn.pcap"
	vectors    = "../../testdata/vectors/scapy-rocev2.pcap"
	badICRC    = "../../testdata/vectors/scapy-rocev2-bad-icrc.pcap"
	nativeIB   = "../../testdata/vectors/derived-ib-native-linktype247.pcap"
	uts        = "../../testdata/vectors/scapy-uts-known-answers.pcap"
	probes     = "../../testdata/vectors/scapy-rocev2-probes.pcap"
	vectorsIP6 = "../../testdata/vectors/scapy-rocev2-ipv6.pcap"
	// One conversation captured at three points (pcaps/gen/multipoint.go).
	multipointA = "../../pcaps/multipoint_a.pcap"
	multipointB = "../../pcaps/multipoint_b.pcap"
	multipointC = "../../pcaps/multipoint_c.pcap"
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
		{"correlate", []string{"--point", "a=" + multipointA, "--point", "b=" + multipointB, "--point", "c=" + multipointC}, 0},
		{"correlate-fields-lost-dropped", []string{"--point", "a=" + multipointA, "--point", "b=" + multipointB, "--point", "c=" + multipointC,
			"-Y", "ibwire.correlate.lost_on || ibwire.correlate.dropped", "-T", "fields", "-E", "header=y", "-e", "frame.number",
			"-e", "ibwire.correlate.point", "-e", "bth.psn", "-e", "ibwire.correlate.copy", "-e", "ibwire.correlate.seen",
			"-e", "ibwire.correlate.dropped", "-e", "ibwire.correlate.lost_on", "-e", "ibwire.correlate.delay"}, 0},
		{"correlate-json-raw-clocks", []string{"--correlate", "--no-clock-fix", "-T", "json", multipointA, multipointC}, 0},
		{"filter-naks", []string{"-Y", "aeth.syndrome.opcode == 3", writeLoss}, 0},
		{"filter-rnr-count", []string{"--count", "-Y", "aeth.syndrome.opcode == 1", sendRNR}, 0},
		{"conv-qp", []string{"-q", "-z", "conv,qp", rping}, 0},
		{"io-stat", []string{"-q", "-z", "io,stat,0.02", "-z", "io,stat,0,bth.opcode == 17,bth.opcode == RC_SEND_ONLY", rping}, 0},
		{"conv-qp-json", []string{"-q", "-z", "conv,qp", "-T", "json", rping, writeLoss}, 0},
		{"conv-qp-loss", []string{"-q", "-z", "conv,qp", sendRNR, writeLoss}, 0},
		{"expert", []string{"-q", "-z", "expert", writeLoss}, 0},
		{"expert-json", []string{"-q", "-z", "expert", "-T", "json", sendRNR}, 0},
		{"expert-crc", []string{"-q", "-v", "-z", "expert,note", brokenERF}, 0},
		{"expert-filtered", []string{"-q", "-Y", "ibwire.analysis.nak", "-z", "expert", writeLoss}, 0},
		{"latency", []string{"-q", "-z", "latency", readBW, rping}, 0},
		{"latency-json", []string{"-q", "-z", "latency", "-T", "json", rping}, 0},
		{"opcodes", []string{"-q", "-z", "opcodes", rping}, 0},
		{"endpoints", []string{"-q", "-z", "endpoints,gid", rping, cnpECN}, 0},
		{"io-stat-func", []string{"-q", "-z", "io,stat,0.05,COUNT(ibwire.analysis.retransmission)ibwire.analysis.retransmission,SUM(infiniband.reth.dmalen),MAX(ibwire.analysis.ack_rtt)", writeLoss}, 0},
		{"follow-hex", []string{"-q", "-z", "follow,qp,hex,bth.destqp == 0x11", "-c", "30", rping}, 0},
		{"follow-ascii", []string{"-q", "-z", "follow,qp,ascii,bth.opcode == 4", "-c", "14", pingpong}, 0},
		{"two-pass", []string{"-2", "-c", "24", rping}, 0},
		{"filter-first-copy-lost", []string{"-Y", "ibwire.analysis.retransmission && !ibwire.analysis.retransmitted_frame", writeLoss}, 0},
		{"fields-analysis", []string{"-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "ibwire.analysis.conv_id",
			"-e", "ibwire.analysis.direction", "-e", "ibwire.analysis.request_frame", "-e", "ibwire.analysis.ack_rtt",
			"-e", "ibwire.analysis.read_latency", "-e", "ibwire.analysis.message_size", "-c", "24", rping}, 0},
		{"summary-cnp-ecn", []string{"-v", cnpECN}, 0},
		{"dcqcn", []string{"-q", "-z", "dcqcn", "../../pcaps/dcqcn_paper.pcap"}, 0},
		{"dcqcn-json", []string{"-q", "-z", "dcqcn,200us", "-T", "json", "../../pcaps/dcqcn_byte_counter.pcap"}, 0},
		{"dcqcn-none", []string{"-q", "-z", "dcqcn", rping}, 0},
		{"summary-dcqcn", []string{"-2", "-#", "-Y", "ibwire.analysis.dcqcn.reaction_time || ibwire.analysis.dcqcn.victim || ibwire.analysis.cnp", "../../pcaps/dcqcn_paper.pcap"}, 0},
		{"doctor", []string{"--doctor", "../../pcaps/doctor_cnp_class.pcap"}, 1},
		{"doctor-notes-only", []string{"--doctor", rping}, 0},
		{"doctor-clean", []string{"--doctor", "../../pcaps/rc_send.pcap"}, 0},
		{"doctor-json", []string{"-q", "-z", "doctor", "-T", "json", "../../pcaps/doctor_udp_source_port.pcap"}, 1},
		{"fields-dcqcn", []string{"-T", "fields", "-E", "header=y", "-e", "frame.number", "-e", "ibwire.analysis.dcqcn.cnp_frame",
			"-e", "ibwire.analysis.dcqcn.reaction_time", "-e", "ibwire.analysis.dcqcn.rate",
			"-Y", "ibwire.analysis.dcqcn.reaction_time || ibwire.analysis.dcqcn.cnp_spacing", "../../pcaps/dcqcn_fast_timer.pcap"}, 0},
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
		{"-B", "-1", "-i", "lo"},
		{"-Y", "bth.psnn == 3", rping},
		{"-e", "bth.psn", rping},
		{"-T", "fields", "-e", "nosuch.field", rping},
		{"-z", "conv,tcp", rping},
		{"-z", "expert,loud", rping},
		{"-z", "follow,qp,raw,bth.psn == 1", rping},
		{"-z", "io,stat,1,SUM(nosuch.field)", rping},
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
	for _, name := range ibdumpcli.FlagNames() {
		assert.Contains(t, stderr, "-"+name, "help lists -%s", name)
	}
	assert.Contains(t, stderr, "Exit status")
}

// TestConvJSONKeys pins the keys of -z conv,qp -T json: scripts depend on
// them.
func TestConvJSONKeys(t *testing.T) {
	out, stderr, code := ibdump(t, nil, "-q", "-z", "conv,qp", "-T", "json", rping, writeLoss, sendRNR)
	require.Zero(t, code, stderr)
	var convs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &convs))
	require.Len(t, convs, 4)
	want := []string{"a", "b", "qpn_ab", "qpn_ba", "service", "paired_by", "packets_ab", "packets_ba", "bytes_ab",
		"bytes_ba", "messages", "ops", "retransmissions", "duplicates", "psn_gaps", "out_of_order", "naks", "rnr_naks",
		"cnps", "ecn_ce", "icrc_errors", "start", "duration", "goodput_ab_bps", "goodput_ba_bps", "latency_us"}
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		return ks
	}
	for _, c := range convs {
		assert.ElementsMatch(t, want, keys(c))
		var naks, lat map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(c["naks"], &naks))
		assert.ElementsMatch(t, []string{"psn_seq_err", "invalid_req", "remote_access_err", "remote_op_err", "invalid_rd_req"}, keys(naks))
		require.NoError(t, json.Unmarshal(c["latency_us"], &lat))
		assert.ElementsMatch(t, []string{"p50", "p90", "p99", "max", "count"}, keys(lat))
	}
	// The key order follows the list too.
	first := strings.Index(out, `"a"`)
	for _, k := range want[1:] {
		i := strings.Index(out, `"`+k+`"`)
		assert.Greater(t, i, first, k)
		first = i
	}
	var typed []struct {
		PairedBy string             `json:"paired_by"`
		Service  string             `json:"service"`
		Retr     int                `json:"retransmissions"`
		NAKs     map[string]int     `json:"naks"`
		RNR      int                `json:"rnr_naks"`
		Ops      map[string]int     `json:"ops"`
		Latency  map[string]float64 `json:"latency_us"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &typed))
	assert.Equal(t, "cm", typed[1].PairedBy, "rping")
	assert.Equal(t, "oob", typed[2].PairedBy, "write_bw_loss")
	assert.Equal(t, 13, typed[2].NAKs["psn_seq_err"])
	assert.Equal(t, 1204, typed[2].Retr)
	assert.Equal(t, 49, typed[3].RNR, "send_bw_rnr")
	assert.Equal(t, 2444, typed[3].Retr)
	assert.EqualValues(t, 100, typed[3].Latency["count"])
}

// TestGraphSVG draws the PSN graph of a lossy connection: a golden for the
// generated capture, marker counts for the rxe one.
func TestGraphSVG(t *testing.T) {
	draw := func(args ...string) string {
		t.Helper()
		file := filepath.Join(t.TempDir(), "psn.svg")
		_, stderr, code := ibdump(t, nil, append([]string{"-q", "--graph", "psn:" + file}, args...)...)
		require.Zero(t, code, stderr)
		got, err := os.ReadFile(file)
		require.NoError(t, err)
		return string(got)
	}
	got := draw("../../pcaps/rc_loss_random.pcap")
	golden := filepath.Join("testdata", "golden", "graph-psn.svg")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.True(t, string(want) == got, "graph-psn.svg differs: run go test ./cmd/ibdump -run GraphSVG -update and review it")
	assert.True(t, strings.HasPrefix(got, "<?xml"))
	assert.Equal(t, 2, strings.Count(got, "l8 8m0 -8l-8 8"), "a marker per NAK")

	got = draw("-Y", "bth.destqp == 0x11", writeLoss)
	assert.Equal(t, 13, strings.Count(got, "l8 8m0 -8l-8 8"), "a marker per NAK")
	assert.Equal(t, 1204, strings.Count(got, `stroke="#d22"/>`)-13, "a red tick per retransmission")
	assert.True(t, strings.Contains(got, "192.168.77.11 QP 0x000011 &lt;-&gt; 192.168.77.12 QP 0x000011"))

	_, stderr, code := ibdump(t, nil, "--graph", "tcptrace:x.svg", writeLoss)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "psn:FILE.svg")
}

// TestGraphSVGDrawsInsideThePlot: a NAK and retransmissions of a PSN
// before the first request drawn (frame 1 is malformed, so the graph starts
// at PSN 257) sit inside the plot, not below it, out of the picture.
func TestGraphSVGDrawsInsideThePlot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "psn.svg")
	_, stderr, code := ibdump(t, nil, "-q", "--graph", "psn:"+file, "../../pcaps/broken_truncated.pcap")
	require.Zero(t, code, stderr)
	got, err := os.ReadFile(file)
	require.NoError(t, err)
	const top, bottom = 50, 470 // the plot's frame
	marks := regexp.MustCompile(`<path d="M[\d.]+ ([\d.]+)l8 8|<line x1="[\d.]+" y1="([\d.]+)" x2="[\d.]+" y2="[\d.]+" stroke=`).
		FindAllStringSubmatch(string(got), -1)
	require.NotEmpty(t, marks)
	for _, m := range marks {
		y, err := strconv.ParseFloat(m[1]+m[2], 64)
		require.NoError(t, err)
		assert.True(t, y >= top-8 && y <= bottom+8, "a marker at y=%v, outside the plot (%d to %d): %s", y, top, bottom, m[0])
	}
}

// TestTwoPassNeedsAFile: -2 reads the capture twice.
func TestTwoPassNeedsAFile(t *testing.T) {
	data, err := os.ReadFile(rping)
	require.NoError(t, err)
	_, stderr, code := ibdump(t, data, "-2", "-r", "-")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "-2")
	out, _, code := ibdump(t, nil, "-2", "-Y", "ibwire.analysis.response_frame", "-T", "fields", "-e", "frame.number",
		"-e", "ibwire.analysis.response_frame", readBW)
	require.Zero(t, code)
	assert.Equal(t, 200, strings.Count(out, "\n"), "every READ request names its first response")
}

// TestCRCCheckedWhenAsked: plain runs skip the CRC checks, but anything that
// reads a CRC status (-v, a filter, a -T fields column) gets it verified.
func TestCRCCheckedWhenAsked(t *testing.T) {
	plain, _, _ := ibdump(t, nil, badICRC)
	assert.NotContains(t, plain, "bad ICRC")
	verbose, _, _ := ibdump(t, nil, "-v", badICRC)
	assert.Contains(t, verbose, "bad ICRC")
	count, _, _ := ibdump(t, nil, "--count", "-Y", `ibwire.icrc.status == "bad"`, badICRC)
	assert.Equal(t, "1 packets\n", count)
	field, _, _ := ibdump(t, nil, "-T", "fields", "-e", "ibwire.icrc.status", badICRC)
	assert.Equal(t, "bad\n", field)
}

// TestSnaplenCapture reads a capture taken with a snapshot length (as
// tcpdump -s 64 or editcap -s 64 makes them): each packet says how much
// was captured instead of calling it malformed, its RETH is shown only
// when captured, its length is the payload it had on the wire, the fields
// tshark shows for the headers captured are there, and --check passes,
// saying how many ICRCs it could not check.
func TestSnaplenCapture(t *testing.T) {
	r, err := capture.Open("../../pcaps/rxe/read_bw.pcap")
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "read_bw_s64.pcap")
	w, err := capture.Create(cut, capture.FormatPcap, layers.LinkTypeEthernet, false)
	require.NoError(t, err)
	var p capture.Packet
	for r.NextInto(&p) == nil {
		if len(p.Data) > 64 {
			p.Data = p.Data[:64]
		}
		require.NoError(t, w.WritePacket(p))
	}
	r.Close()
	require.NoError(t, w.Close())

	out, _, code := ibdump(t, nil, "-Y", "frame.number in {22 55 56}", cut)
	require.Zero(t, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "RC RDMA Read Request QP 0x000011 PSN 11292704 A, length 0 [captured 64 of 74 bytes]")
	assert.NotContains(t, lines[0], "RETH", "the RETH was not captured")
	assert.Contains(t, lines[1], "RC RDMA Read Response First QP 0x000011 PSN 11292704, AETH ACK credits=unlimited MSN 1, length 1024 [captured 64 of 1086 bytes]")
	assert.Contains(t, lines[2], "Read Response Middle")

	// tshark 4.0.17 -T fields on the same cut frames: BTH and AETH fields, no RETH, no ICRC.
	out, _, code = ibdump(t, nil, "-T", "fields", "-e", "bth.opcode", "-e", "bth.psn", "-e", "reth.dmalen", "-e", "aeth.syndrome",
		"-e", "infiniband.invariant.crc", "-Y", "frame.number in {22 55}", cut)
	require.Zero(t, code)
	assert.Equal(t, "12\t11292704\t\t\t\n13\t11292704\t\t31\t\n", out)

	out, _, code = ibdump(t, nil, "--check", "-q", cut)
	assert.Zero(t, code)
	assert.Contains(t, out, "check ok: 1042 packets, 1000 RoCE/IB, 0 bad ICRC, 0 bad VCRC, 0 malformed, 1000 cut by the snapshot length (their ICRC not captured)")
}

// TestMADLines: the default line names management MADs as tcpdump would,
// for classes the corpus's real captures lack (PerfMgt here; the CM, SMP
// and SA lines are in the summary goldens).
func TestMADLines(t *testing.T) {
	pc := layers.PortCounters{PortSelect: 1, CounterSelect: 0xFFFF}
	m := layers.NewMAD(layers.MgmtClassPerf, layers.MethodGet, uint16(layers.PerfAttrPortCounters), 0x2a)
	m.PerfMgt.Data = make([]byte, layers.PerfMgtDataLength)
	require.NoError(t, pc.MarshalTo(m.PerfMgt.Data))
	mad, err := m.Bytes()
	require.NoError(t, err)
	b, err := craft.NewBuilder(craft.Config{Service: layers.ServiceUD})
	require.NoError(t, err)
	op, _ := layers.OpcodeByName("UD_SEND_ONLY")
	f, err := b.Build(craft.Packet{Payload: mad, BTH: layers.BTH{Opcode: op, PKey: 0xFFFF, DestQP: 1,
		DETH: layers.DETH{QKey: layers.GSIQKey, SrcQP: 1}}}, craft.DefaultStart)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "perf.pcap")
	w, err := capture.Create(path, capture.FormatPcap, f.LinkType, false)
	require.NoError(t, err)
	require.NoError(t, w.WritePacket(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
	require.NoError(t, w.Close())
	out, _, code := ibdump(t, nil, path)
	require.Zero(t, code)
	assert.Contains(t, out, ", PerfGet(PortCounters) port 1 tid 0x000000000000002a, length 256")
}

// TestCorrelateUsageErrors: --correlate refuses what it cannot line up,
// saying why, with exit status 2.
func TestCorrelateUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--correlate", multipointA}, "want at least two captures, got 1"},
		{[]string{"--correlate", multipointA, "-"}, "standard input cannot be correlated"},
		{[]string{"--point", "a", multipointA}, "--point a: want NAME=FILE"},
		{[]string{"--point", "a=" + multipointA, "--point", "a=" + multipointB}, `two capture points are named "a"`},
		{[]string{"--correlate", "-z", "conv,qp", multipointA, multipointB}, "-z conv,qp: with --correlate, -z path (the report) only"},
		{[]string{"--correlate", "-z", "path", "-T", "fields", "-e", "bth.psn", multipointA, multipointB}, "the report and the packets would mix"},
		{[]string{"--correlate", "-Y", "bth.psn ==", multipointA, multipointB}, "-Y"},
		{[]string{"--correlate", multipointA, "../../pcaps/no-such.pcap"}, "no-such.pcap"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, code := ibdump(t, nil, tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, errOut, "ibdump: --correlate: ")
			assert.Contains(t, errOut, tt.want)
		})
	}
}

// TestCorrelateMerged: -w with --correlate writes every frame of every
// point into one pcapng, one interface per point named after it, in the
// order of the corrected clocks (b's clock runs 250 ms ahead: merged, its
// copies follow a's by the hop's few microseconds).
func TestCorrelateMerged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "merged.pcapng")
	_, errOut, code := ibdump(t, nil, "-q", "-w", path, "--point", "a="+multipointA, "--point", "b="+multipointB)
	require.Zero(t, code, errOut)
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	perPoint := map[int]int{}
	var last time.Time
	var firstB, firstA time.Time
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		perPoint[p.Interface]++
		assert.False(t, p.Time.Before(last), "frame %d goes back in time", p.Number)
		last = p.Time
		if p.Interface == 0 && firstA.IsZero() {
			firstA = p.Time
		}
		if p.Interface == 1 && firstB.IsZero() {
			firstB = p.Time
		}
	}
	assert.Equal(t, map[int]int{0: 97, 1: 89}, perPoint, "the frames of multipoint_a and multipoint_b")
	assert.InDelta(t, 3*time.Microsecond, firstB.Sub(firstA), float64(500*time.Nanosecond), "b's first copy 3 µs after a's")

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	ng, err := pcapgo.NewNgReader(f, pcapgo.NgReaderOptions{})
	require.NoError(t, err)
	for err == nil { // the reader meets the interface blocks as it reads
		_, _, err = ng.ReadPacketData()
	}
	require.ErrorIs(t, err, io.EOF)
	for i, name := range []string{"a", "b"} {
		ifc, err := ng.Interface(i)
		require.NoError(t, err)
		assert.Equal(t, name, ifc.Name)
	}
}

// TestCorrelateFieldsAgreeWithReport: the packets -Y finds by their
// ibwire.correlate.* fields are the report's losses (less those before the
// first point, which no point saw) and capture drops.
func TestCorrelateFieldsAgreeWithReport(t *testing.T) {
	points := []string{"--point", "a=" + multipointA, "--point", "b=" + multipointB, "--point", "c=" + multipointC}
	out, errOut, code := ibdump(t, nil, append([]string{"-T", "json"}, points...)...)
	require.Zero(t, code, errOut)
	var rep struct {
		Points []struct {
			CaptureDrops int `json:"capture_drops"`
		}
		Flows []struct {
			Segments []struct {
				Name   string
				Losses int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	lost, drops := 0, 0
	for _, f := range rep.Flows {
		for _, s := range f.Segments[1:] {
			lost += s.Losses
		}
	}
	for _, p := range rep.Points {
		drops += p.CaptureDrops
	}
	require.NotZero(t, lost)
	require.NotZero(t, drops)
	count := func(filter string) int {
		out, errOut, code := ibdump(t, nil, append([]string{"--count", "-Y", filter}, points...)...)
		require.Zero(t, code, errOut)
		n, err := strconv.Atoi(strings.Fields(out)[0])
		require.NoError(t, err, out)
		return n
	}
	assert.Equal(t, lost, count("ibwire.correlate.lost_on"))
	out, errOut, code = ibdump(t, nil, append([]string{"-Y", "ibwire.correlate.dropped", "-T", "fields", "-e", "ibwire.correlate.dropped"}, points...)...)
	require.Zero(t, code, errOut)
	n := 0
	for _, line := range strings.Fields(out) {
		n += len(strings.Split(line, ","))
	}
	assert.Equal(t, drops, n, "one name per point that dropped a packet")
}

// TestCorrelateCancelled: --correlate stops when its context is cancelled
// (Ctrl-C), in the report mode and in the per-packet mode alike, and says
// so instead of printing a report of what it did not read.
func TestCorrelateCancelled(t *testing.T) {
	for _, args := range [][]string{
		{"--correlate", multipointA, multipointB},
		{"--correlate", "-T", "fields", "-e", "ibwire.correlate.seen", multipointA, multipointB},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var out, errOut bytes.Buffer
			code := ibdumpcli.Run(ctx, "ibdump", args, nil, &out, &errOut)
			assert.Equal(t, 2, code)
			assert.Regexp(t, `^ibdump: (--correlate: )?context canceled\n$`, errOut.String())
			assert.NotContains(t, out.String(), "Capture points")
		})
	}
}

// TestCorrelateMergedWriteError: a merged capture that cannot be written
// is named, and so are the capture point and the file whose frame failed.
func TestCorrelateMergedWriteError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	_, errOut, code := ibdump(t, nil, "-q", "-w", "/dev/full", "--point", "host="+writeLoss, "--point", "switch="+writeLoss)
	assert.Equal(t, 2, code)
	assert.Regexp(t, `^ibdump: --correlate: point (host|switch) \(`+regexp.QuoteMeta(writeLoss)+`\), packet \d+: -w /dev/full: .*no space left on device\n$`, errOut)
}

// TestGSORunOnLoopback: a capture on lo taken while ibpeer segmented its
// sends holds runs of packets in one datagram. Each line says so instead of
// reporting a bad ICRC, with or without -v, and --check counts the runs
// apart: they are how the capture saw the traffic, not damage.
func TestGSORunOnLoopback(t *testing.T) {
	const capture = "../../decode/testdata/gso_lo_write.pcap"
	const note = "[UDP GSO run of 2 segments of 1056 bytes captured before segmentation (a capture on loopback); capture with ibpeer --udp-offload=off to see each packet]"
	for _, args := range [][]string{{capture}, {"-v", capture}, {"-j", "1", capture}} {
		out, _, code := ibdump(t, nil, args...)
		require.Zero(t, code, "%v", args)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 3, "%v", args)
		assert.Contains(t, lines[0], note, "%v", args)
		assert.Contains(t, lines[1], "[UDP GSO run of 6 segments of 1040 bytes", "%v", args)
		assert.NotContains(t, out, "bad ICRC", "%v", args)
	}
	out, _, code := ibdump(t, nil, "--check", capture)
	assert.Zero(t, code)
	assert.Contains(t, out, "frame 1: UDP GSO run of 2 segments of 1056 bytes")
	assert.Contains(t, out, "check ok: 3 packets, 3 RoCE/IB, 0 bad ICRC, 0 bad VCRC, 0 malformed, 2 UDP GSO runs captured before segmentation (not damage)")
}
