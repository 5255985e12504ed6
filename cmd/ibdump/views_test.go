package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The issue-17 rxe captures (interop/testdata, from the interop harness:
// Linux 6.1 rdma_rxe to rdma_rxe, 2% netem loss on both guests, MTU 1024).
// Their counts come from interop/testdata/truth.txt, tshark fields read by
// truth.py, not from ibwire.
const (
	readLoss = "../../interop/testdata/rxe_read_bw_loss.pcap.gz"
	sendLoss = "../../interop/testdata/rxe_send_bw_loss.pcap.gz"
	reruns   = "../../interop/testdata/rxe_perftest_reruns.pcap.gz"
)

// TestViewsAgreeOnLossyRuns: on a lossy ib_read_bw and ib_send_bw run whose
// tools both succeeded, every view (conv,qp text and JSON, expert, latency
// text and JSON, follow) gives the same message, gap, NAK, retransmission
// and latency counts, those of the tshark ground truth, and no finding is
// an Error.
func TestViewsAgreeOnLossyRuns(t *testing.T) {
	tests := []struct {
		file, op                 string
		msgs, gaps, naks, retran int
	}{
		// truth.txt: 200 distinct READs, all with their LAST; request gaps
		// 2 + response gaps 20; NAK_PSN_SEQ 2; requests resent 401,
		// responses repeating a PSN 1443 plus 21 filling the 20 gaps.
		{readLoss, "RDMA_READ", 200, 22, 2, 401 + 1443 + 21},
		// truth.txt: 200 SEND messages; gaps 16; NAK_PSN_SEQ 16; 1207
		// resent (1191 repeat a PSN, 16 fill gaps).
		{sendLoss, "SEND", 200, 16, 16, 1207},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			// conv,qp text: one row.
			out, errOut, code := ibdump(t, nil, "-q", "-z", "conv,qp", tt.file)
			require.Contains(t, []int{0, exitFindings}, code, errOut)
			var rows [][]string
			for _, l := range strings.Split(out, "\n") {
				if f := strings.Split(l, "|"); len(f) > 6 && !strings.HasPrefix(l, "A ") {
					rows = append(rows, f)
				}
			}
			require.Len(t, rows, 1, out)
			row := rows[0]
			msgs, err := strconv.Atoi(strings.TrimSpace(row[4]))
			require.NoError(t, err)
			counters := strings.Fields(row[5]) // Retr Gaps NAKs RNR CNP CE
			assert.Equal(t, tt.msgs, msgs, "conv,qp Msgs")
			assert.Equal(t, strconv.Itoa(tt.retran), counters[0], "conv,qp Retr")
			assert.Equal(t, strconv.Itoa(tt.gaps), counters[1], "conv,qp Gaps")
			assert.Equal(t, strconv.Itoa(tt.naks), counters[2], "conv,qp NAKs")

			// conv,qp JSON.
			out, _, _ = ibdump(t, nil, "-q", "-z", "conv,qp", "-T", "json", tt.file)
			var convs []struct {
				Messages        int            `json:"messages"`
				Ops             map[string]int `json:"ops"`
				Retransmissions int            `json:"retransmissions"`
				PSNGaps         int            `json:"psn_gaps"`
				NAKs            struct {
					PSNSeqErr int `json:"psn_seq_err"`
				} `json:"naks"`
				Latency struct {
					P50   float64 `json:"p50"`
					Count int     `json:"count"`
				} `json:"latency_us"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &convs))
			require.Len(t, convs, 1)
			cj := convs[0]
			assert.Equal(t, tt.msgs, cj.Messages, "conv JSON messages")
			assert.Equal(t, map[string]int{tt.op: tt.msgs}, cj.Ops, "conv JSON ops")
			assert.Equal(t, tt.retran, cj.Retransmissions, "conv JSON retransmissions")
			assert.Equal(t, tt.gaps, cj.PSNGaps, "conv JSON psn_gaps")
			assert.Equal(t, tt.naks, cj.NAKs.PSNSeqErr, "conv JSON naks")
			assert.Equal(t, tt.msgs, cj.Latency.Count, "conv JSON latency count: one per message")

			// expert JSON: the same counts, no Error.
			out, _, _ = ibdump(t, nil, "-q", "-z", "expert", "-T", "json", tt.file)
			var expert []struct {
				Severity, Finding string
				Count             int
			}
			require.NoError(t, json.Unmarshal([]byte(out), &expert))
			found := map[string]int{}
			for _, r := range expert {
				assert.NotEqual(t, "error", r.Severity, "%+v on a run that succeeded", r)
				found[r.Finding] += r.Count
			}
			assert.Equal(t, tt.gaps, found["psn_gap"], "expert psn_gap")
			assert.Equal(t, tt.naks, found["nak"], "expert nak")
			assert.Equal(t, tt.retran, found["retransmission"], "expert retransmission")
			out, _, _ = ibdump(t, nil, "-q", "-z", "expert", tt.file)
			assert.NotContains(t, out, "Errors")

			// latency text and JSON: one sample per message, the p50 of
			// the conversation.
			out, _, _ = ibdump(t, nil, "-q", "-z", "latency", tt.file)
			m := regexp.MustCompile(`(?m)^` + tt.op + `\s+(\d+)\s+\S+\s+(\S+)`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			assert.Equal(t, strconv.Itoa(tt.msgs), m[1], "latency count")
			p50, err := strconv.ParseFloat(m[2], 64)
			require.NoError(t, err)
			assert.InDelta(t, cj.Latency.P50, p50, 0.0005, "latency p50 = conv JSON p50")
			out, _, _ = ibdump(t, nil, "-q", "-z", "latency", "-T", "json", tt.file)
			var lat []struct {
				Operation string  `json:"operation"`
				Count     int     `json:"count"`
				P50       float64 `json:"p50_us"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &lat))
			require.NotEmpty(t, lat)
			assert.Equal(t, tt.op, lat[0].Operation)
			assert.Equal(t, tt.msgs, lat[0].Count, "latency JSON count")
			assert.Equal(t, cj.Latency.P50, lat[0].P50, "latency JSON p50 = conv JSON p50")

			// follow: one entry per message.
			out, _, _ = ibdump(t, nil, "-q", "-z", "follow,qp,ascii,", tt.file)
			n := len(regexp.MustCompile(`(?m)^\t?frames \d+-\d+ `).FindAllString(out, -1))
			assert.Equal(t, tt.msgs, n, "follow messages")
			full := len(regexp.MustCompile(`(?m)^\t?frames \d+-\d+ \S+ \S+, 4096 bytes$`).FindAllString(out, -1))
			assert.Equal(t, tt.msgs, full, "every message 4096 bytes")
		})
	}
}

// TestQPNReuseStartsNewConnections: three ib_write_bw runs on the same QP
// numbers with no set-up traffic in the capture (ibdump -i) are three
// connections, numbered, each with its 50 messages and nothing lost or
// resent (truth.txt: 3 instances of 0x11<->0x11, 50 WRITEs each).
func TestQPNReuseStartsNewConnections(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-q", "-z", "conv,qp", "-T", "json", reruns)
	require.Equal(t, 0, code, errOut)
	var convs []struct {
		QPNAB           uint32         `json:"qpn_ab"`
		Messages        int            `json:"messages"`
		Ops             map[string]int `json:"ops"`
		Retransmissions int            `json:"retransmissions"`
		Duplicates      int            `json:"duplicates"`
		PSNGaps         int            `json:"psn_gaps"`
		Start           float64        `json:"start"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &convs))
	require.Len(t, convs, 3, out)
	for i, c := range convs {
		assert.EqualValues(t, 0x11, c.QPNAB, "run %d", i+1)
		assert.Equal(t, map[string]int{"RDMA_WRITE": 50}, c.Ops, "run %d", i+1)
		assert.Zero(t, c.Retransmissions+c.Duplicates+c.PSNGaps, "run %d", i+1)
	}
	assert.InDelta(t, 4.655, convs[1].Start, 0.001)
	assert.InDelta(t, 9.393, convs[2].Start, 0.001)
	// The same runs on QPNs 0x11, 0x12, 0x13 (rxe0 not re-added): three
	// connections as before, nothing split further.
	out, _, _ = ibdump(t, nil, "-q", "-z", "conv,qp", "-T", "json", "../../interop/testdata/rxe_perftest_reruns_nextqp.pcap.gz")
	convs = nil
	require.NoError(t, json.Unmarshal([]byte(out), &convs))
	require.Len(t, convs, 3, out)
	for i, c := range convs {
		assert.EqualValues(t, 0x11+i, c.QPNAB)
		assert.Equal(t, map[string]int{"RDMA_WRITE": 50}, c.Ops, "run %d", i+1)
	}
	out, _, _ = ibdump(t, nil, "-q", "-z", "expert", reruns)
	assert.NotContains(t, out, "Retransmission")
	assert.NotContains(t, out, "PSN gap")
	out, _, _ = ibdump(t, nil, "-T", "fields", "-e", "frame.number", "-e", "ibwire.analysis.conv_id", reruns)
	ids := [3]map[string]int{{}, {}, {}} // runs: frames 1-250, 251-500, 501-750
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		require.Len(t, f, 2, l)
		n, err := strconv.Atoi(f[0])
		require.NoError(t, err)
		ids[(n-1)/250][f[1]]++
	}
	seen := map[string]bool{}
	for i, m := range ids {
		require.Len(t, m, 1, "run %d is one connection: %v", i+1, m)
		for id := range m {
			assert.False(t, seen[id], "run %d has a connection id of its own (%s)", i+1, id)
			seen[id] = true
		}
	}
}

// TestVerboseLongBytes: -V shows a long byte field as tshark -V does: the
// first 36 bytes in hex and "…" (tshark 4.0 on the same frame prints
// "Data: 649c1d23…8e83…"); -x shows them all.
func TestVerboseLongBytes(t *testing.T) {
	out, errOut, code := ibdump(t, nil, "-V", "-c", "1", sendLoss)
	require.Equal(t, 0, code, errOut)
	m := regexp.MustCompile(`(?m)^    Payload: (.*)$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Equal(t, "649c1d23e72dc371771cc09821b843637c2d81f0e910c76889903d8606ff716b9b8e8e83…", m[1])
	for _, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, len(l), 160, "a -V line: %.80s...", l)
	}
}

// TestNotInfiniBandIsNotMalformedIB: empty frames and a cut ARP are not
// malformed InfiniBand: no InfiniBand expert finding, and --check passes
// (it lists them as not InfiniBand); a RoCEv2 frame cut in its BTH still
// fails it.
func TestNotInfiniBandIsNotMalformedIB(t *testing.T) {
	roce, err := os.ReadFile(vectors)
	require.NoError(t, err)
	first := roce[24+16 : 24+16+int(binary.LittleEndian.Uint32(roce[24+8:]))] // the first record of the vectors
	arp := append(bytes.Repeat([]byte{0xff}, 6), 0x52, 0x54, 0, 0x77, 0, 0x11, 0x08, 0x06, 0, 1)
	write := func(frames ...[]byte) string {
		var b bytes.Buffer
		b.Write([]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0})
		for i, f := range frames {
			var h [16]byte
			binary.LittleEndian.PutUint32(h[0:], uint32(i))
			binary.LittleEndian.PutUint32(h[8:], uint32(len(f)))
			binary.LittleEndian.PutUint32(h[12:], uint32(len(f)))
			b.Write(h[:])
			b.Write(f)
		}
		path := filepath.Join(t.TempDir(), "x.pcap")
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		return path
	}
	other := write(nil, arp, nil)
	out, _, code := ibdump(t, nil, "-q", "--check", other)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "check ok: 3 packets, 0 RoCE/IB, 0 bad ICRC, 0 bad VCRC, 0 malformed")
	assert.Contains(t, out, "frame 1: not InfiniBand, malformed:")
	out, _, _ = ibdump(t, nil, "-q", "-z", "expert", other)
	assert.NotContains(t, out, "InfiniBand")

	cut := write(first[:14+20+8+6])
	out, _, code = ibdump(t, nil, "-q", "--check", cut)
	assert.Equal(t, exitFindings, code, out)
	assert.Contains(t, out, "1 malformed")
	out, _, _ = ibdump(t, nil, "-q", "-z", "expert", cut)
	assert.Contains(t, out, "InfiniBand  Truncated packet")
}
