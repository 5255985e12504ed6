package decode_test

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// nvmeRun is fieldValues with each field's first occurrence, and the
// analyzer.
func nvmeRun(t *testing.T, path string, opts decode.AnalyzerOptions, names []string) ([]map[string]string, *decode.Analyzer) {
	return fieldValues(t, path, opts, names, false)
}

// fieldValues decodes and analyzes a capture and returns, for every frame,
// the values of the named fields as tshark -T fields prints them: the first
// occurrence, or all of them joined by commas (-E occurrence=a).
func fieldValues(t *testing.T, path string, opts decode.AnalyzerOptions, names []string, all bool) ([]map[string]string, *decode.Analyzer) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	a := decode.NewAnalyzer(opts)
	dec := decode.NewDecoder(decode.Options{})
	var fs []*decode.Field
	for _, n := range names {
		fs = append(fs, decode.MustLookup(n))
	}
	rows := []map[string]string{nil}
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		p := dec.Decode(cp)
		a.Analyze(p)
		row := map[string]string{}
		for _, f := range fs {
			var vals []string
			var v decode.Value
			for i := 0; f.GetOccurrence(p, i, &v) && (all || i == 0); i++ {
				vals = append(vals, f.String(&v))
			}
			if len(vals) > 0 {
				row[f.Name] = strings.Join(vals, ",")
			}
		}
		rows = append(rows, row)
	}
	a.Finish()
	return rows, a
}

// TestNVMeMatchesTshark compares the NVMe-oF fields of the excerpt of
// nvme_rdma.pcap that holds the CM set-up, the discovery controller, the
// connect of the I/O controller, three 4 KiB Reads and five 4 KiB Writes
// with in-capsule data with tshark 4.0.17's decoding of the same fields
// (testdata/nvme_rdma_connect.tshark.tsv, its command in its first line).
func TestNVMeMatchesTshark(t *testing.T) {
	f, err := os.Open("testdata/nvme_rdma_connect.tshark.tsv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan()) // the command
	require.True(t, sc.Scan())
	names := strings.Split(sc.Text(), "\t")
	got, _ := nvmeRun(t, "../pcaps/rxe/nvme_rdma_connect.pcap", decode.AnalyzerOptions{},
		append(names[1:], "nvme-rdma.cm.req.qid", "nvme-rdma.cm.req.hrqsize", "nvme-rdma.cm.req.hsqsize", "nvme-rdma.cm.req.recfmt"))
	compared := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		frame, err := strconv.Atoi(cols[0])
		require.NoError(t, err)
		for i, want := range cols[1:] {
			name := names[i+1]
			have := got[frame][name]
			if frame >= 289 || frame == 171 || frame == 173 {
				// Capsules of more than one packet (SEND FIRST ... LAST):
				// the I/O queue's Connect with its 1 KiB of data (171) and
				// the Writes with in-capsule data (293 ...). tshark 4.0
				// does not reassemble them and misses them and their
				// completions; ibdump decodes them (below).
				continue
			}
			if want != "" {
				compared++
			}
			assert.Equal(t, want, have, "frame %d %s", frame, name)
		}
	}
	assert.Greater(t, compared, 400)

	// The I/O queue's Connect, SEND FIRST (170) and LAST (171), and its
	// completion; the values as the guest set them (MANIFEST.md: nvme
	// connect -n nqn.2024-01.lab.ulplab:nvme-ram0, queue 1 of 128 entries).
	assert.Equal(t, "0x01", got[171]["nvme.fabrics.cmd.fctype"])
	assert.Equal(t, "1", got[171]["nvme.fabrics.cmd.connect.qid"])
	assert.Equal(t, "127", got[171]["nvme.fabrics.cmd.connect.sqsize"])
	assert.Equal(t, "nqn.2024-01.lab.ulplab:nvme-ram0", got[171]["nvme.fabrics.cmd.connect.data.subnqn"])
	assert.Equal(t, got[94]["nvme.fabrics.cmd.connect.data.hostnqn"], got[171]["nvme.fabrics.cmd.connect.data.hostnqn"])
	assert.Equal(t, "0x0001", got[171]["nvme-rdma.cmd.qid"])
	assert.Equal(t, "171", got[173]["nvme.fabrics.cmd_pkt"])
	assert.Equal(t, "0x0000", got[173]["nvme.cqe.status"])

	// The CM REQs' NVMe-oF private data, which tshark 4.0 does not show
	// (it shows the REPs', compared above): the admin queue of 32 entries
	// twice (discovery, then the subsystem), then I/O queue 1 of 128
	// (MANIFEST.md); HSQSIZE is 0-based, as NVMe's queue sizes are.
	for _, q := range []struct {
		frame                 int
		qid, hrqsize, hsqsize string
	}{{3, "0", "32", "31"}, {88, "0", "32", "31"}, {167, "1", "128", "127"}} {
		assert.Equal(t, q.qid, got[q.frame]["nvme-rdma.cm.req.qid"], "frame %d", q.frame)
		assert.Equal(t, q.hrqsize, got[q.frame]["nvme-rdma.cm.req.hrqsize"], "frame %d", q.frame)
		assert.Equal(t, q.hsqsize, got[q.frame]["nvme-rdma.cm.req.hsqsize"], "frame %d", q.frame)
		assert.Equal(t, "0", got[q.frame]["nvme-rdma.cm.req.recfmt"], "frame %d", q.frame)
	}

	// The five in-capsule Writes tshark misses, counted from the capture by
	// hand: SEND FIRST, 3 MIDDLE, LAST (4160 bytes: the SQE and 4 KiB),
	// each answered by a SEND ONLY CQE; a sixth is cut by the excerpt.
	for i, frame := range []int{293, 301, 309, 317, 325} {
		assert.Equal(t, "0x01", got[frame]["nvme.cmd.opc"], "frame %d", frame)
		assert.Equal(t, fmt.Sprintf("0x%04x", 0x44+i), got[frame]["nvme.cmd.cid"], "frame %d", frame)
		assert.Equal(t, fmt.Sprintf("0x%016x", 8*i), got[frame]["nvme.cmd.slba"], "frame %d", frame)
		assert.Equal(t, "8", got[frame]["nvme.cmd.nlb"])
		assert.Equal(t, got[frame]["nvme.cmd.cid"], got[frame+2]["nvme.cqe.cid"], "frame %d", frame+2)
		assert.NotEmpty(t, got[frame+2]["nvme.cmd_latency"])
	}
}

// TestNVMeInCapsuleBytes: a command's bytes are its whole in-capsule data
// even when the capsule came in several packets and the analysis keeps
// only its start. Counted by hand from nvme_rdma_connect.pcap: each Write
// capsule is SEND FIRST, 3 MIDDLE, LAST of 1024+1024+1024+1024+64 bytes
// (4160: the SQE and 4 KiB); the I/O queue's Connect (171) is SEND FIRST
// and LAST of 1088 bytes (the SQE and 1 KiB of Connect data).
func TestNVMeInCapsuleBytes(t *testing.T) {
	rows, _ := nvmeRun(t, "../pcaps/rxe/nvme_rdma_connect.pcap", decode.AnalyzerOptions{}, []string{"ibwire.nvme.bytes", "ibwire.nvme.kind"})
	for _, tc := range []struct {
		frame int
		bytes string
	}{{293, "4096"}, {295, "4096"}, {301, "4096"}, {325, "4096"}, {327, "4096"}, {171, "1024"}, {173, "1024"}} {
		assert.Equal(t, tc.bytes, rows[tc.frame]["ibwire.nvme.bytes"], "frame %d (%s)", tc.frame, rows[tc.frame]["ibwire.nvme.kind"])
	}
}

// TestNVMeDataMatchesTshark compares the fields of the data structures an
// admin command's RDMA WRITEs carry (Identify Controller and Namespace, the
// namespace list, the Discovery, SMART, Commands Supported and Effects and
// ANA logs), Set Features' dwords and a Connect's attributes, every
// occurrence, with tshark 4.0.17's (testdata/nvme_rdma_connect.data.tshark.tsv,
// its command in its first line).
func TestNVMeDataMatchesTshark(t *testing.T) {
	f, err := os.Open("testdata/nvme_rdma_connect.data.tshark.tsv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	require.True(t, sc.Scan()) // the command
	require.True(t, sc.Scan())
	names := strings.Split(sc.Text(), "\t")
	got, _ := fieldValues(t, "../pcaps/rxe/nvme_rdma_connect.pcap", decode.AnalyzerOptions{}, names[1:], true)
	// The Commands Supported and Effects log (frames 136-139, a WRITE of 4
	// KiB): tshark 4.0 reads the packets after the first 4 bytes off, past
	// their ends (it calls them malformed), and shows the reserved second
	// half as entries; ibdump shows the I/O commands' entries where they are
	// and no entry in the reserved bytes (below).
	effects := func(frame int, name string) bool {
		return frame >= 137 && frame <= 139 && strings.HasPrefix(name, "nvme.cmd.get_logpage.cmd_and_eff.")
	}
	compared, rows := 0, 0
	for sc.Scan() {
		rows++
		cols := strings.Split(sc.Text(), "\t")
		frame, err := strconv.Atoi(cols[0])
		require.NoError(t, err)
		for i, want := range cols[1:] {
			name := names[i+1]
			if effects(frame, name) {
				continue
			}
			if want != "" {
				compared++
			}
			assert.Equal(t, want, got[frame][name], "frame %d %s", frame, name)
		}
	}
	assert.Equal(t, 60, rows)
	assert.Greater(t, compared, 1000)

	// The effects log: ACS0-255 in frame 136, IOCS0-255 in 137 (its first
	// entries as the target sets them: Flush, Write, Read), nothing in the
	// reserved 2 KiB after.
	cs := strings.Split(got[137]["nvme.cmd.get_logpage.cmd_and_eff.cseds.csupp"], ",")
	require.Len(t, cs, 256)
	assert.Equal(t, []string{"1", "1", "1"}, cs[:3])
	assert.Len(t, strings.Split(got[136]["nvme.cmd.get_logpage.cmd_and_eff.cs"], ","), 256)
	for _, frame := range []int{138, 139} {
		assert.Empty(t, got[frame]["nvme.cmd.get_logpage.cmd_and_eff.cs"], "frame %d", frame)
		assert.NotEmpty(t, got[frame]["nvme.data"], "frame %d", frame)
	}
}

// TestNVMeDataAfterLoss: when a packet of an Identify's data is not in the
// capture (frame 43, the second of four), the packets after it are still
// the command's data, but where they sit in the structure is not known, so
// they show none of its fields; the next Identify reads whole again.
func TestNVMeDataAfterLoss(t *testing.T) {
	r, err := capture.Open("../pcaps/rxe/nvme_rdma_connect.pcap")
	require.NoError(t, err)
	defer r.Close()
	a, dec := decode.NewAnalyzer(decode.AnalyzerOptions{}), decode.NewDecoder(decode.Options{})
	cmdPkt, psd := decode.MustLookup("nvme.fabrics.cmd_pkt"), decode.MustLookup("nvme.cmd.identify.ctrl.psds.psd.mp")
	got := map[int][2]bool{}
	var cp capture.Packet
	var v decode.Value
	for r.NextInto(&cp) == nil {
		if cp.Number == 43 {
			continue
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		got[p.Number] = [2]bool{cmdPkt.Get(p, &v), psd.Get(p, &v)}
	}
	assert.Equal(t, [2]bool{true, false}, got[44], "the power states' packet, after the gap")
	assert.Equal(t, [2]bool{true, false}, got[45])
	assert.Equal(t, [2]bool{true, true}, got[59], "the next Identify Controller's")
}

// TestNVMeReadResponsePrev: the packets of the RDMA READ responses that
// bring a Write's data from the host name the previous one
// (nvme-rdma.read_from_host_prev). testdata/nvme_rdma_write_read_responses.pcap
// is frames 2467-2490 of ../shared/pcaps-ulp/nvme_rdma.pcap: a Write's
// capsule, the READ request (frame 3) and the first 21 responses; on the
// whole capture tshark 4.0 gives frames 2471-2486 (here 5-20) the previous
// frame and the 16th response after the first no more (its table of a
// transfer's packets holds 16): ibdump goes on.
func TestNVMeReadResponsePrev(t *testing.T) {
	rows, _ := fieldValues(t, "testdata/nvme_rdma_write_read_responses.pcap", decode.AnalyzerOptions{NVMeQPs: []uint32{0x13}},
		[]string{"nvme-rdma.read_from_host_prev", "nvme.fabrics.data_req", "nvme.cmd.opc"}, true)
	require.Len(t, rows, 25)
	assert.Equal(t, "0x01", rows[1]["nvme.cmd.opc"])
	assert.Equal(t, "3", rows[4]["nvme.fabrics.data_req"])
	assert.Empty(t, rows[4]["nvme-rdma.read_from_host_prev"], "the first response")
	for frame := 5; frame <= 24; frame++ {
		assert.Equal(t, strconv.Itoa(frame-1), rows[frame]["nvme-rdma.read_from_host_prev"], "frame %d", frame)
		assert.Equal(t, "3", rows[frame]["nvme.fabrics.data_req"], "frame %d", frame)
	}
}

// TestNVMeMidstream: an excerpt of the I/O queue that starts after its CM
// exchange (the 4 KiB Reads of dd). Counted by hand from the opcodes and
// lengths: 12 Read capsules (64-byte SEND ONLY, frames 3, 12 ... 102), 12
// completions (16-byte SEND ONLY with Invalidate, frames 10, 18 ... 108).
// tshark 4.0 decodes none of it as NVMe (it needs the CM REQ); ibdump
// finds the protocol at the first command's completion and matches all 12.
func TestNVMeMidstream(t *testing.T) {
	names := []string{"nvme.cmd.opc", "nvme.cqe.cid", "ibwire.nvme.latency", "nvme-rdma.cmd.qid", "ibwire.nvme.opcode"}
	rows, a := nvmeRun(t, "../pcaps/rxe/nvme_rdma_midstream.pcap", decode.AnalyzerOptions{}, names)
	cmds, done := 0, 0
	for _, r := range rows {
		if r["nvme.cmd.opc"] != "" {
			cmds++
		}
		if r["ibwire.nvme.latency"] != "" {
			done++
			assert.Equal(t, "Read", r["ibwire.nvme.opcode"])
			assert.Equal(t, "0x0001", r["nvme-rdma.cmd.qid"])
		}
	}
	assert.Equal(t, 12, done, "completions matched")
	// The first command is seen before its completion reveals the protocol.
	assert.Equal(t, 11, cmds, "commands decoded in one pass")
	assert.Equal(t, "0x4044", rows[10]["nvme.cqe.cid"])
	assert.Equal(t, "0.002957000", rows[10]["ibwire.nvme.latency"])
	rowsSRT := a.NVMeSRT().Rows()
	require.Len(t, rowsSRT, 1)
	assert.Equal(t, "Read", rowsSRT[0].Command)
	assert.Len(t, rowsSRT[0].Samples, 12)
	assert.Equal(t, 413*time.Microsecond, rowsSRT[0].Samples[1])

	// Told which QP carries NVMe-oF, ibdump decodes from the first packet:
	// frame 1 is the completion of a Write sent before the excerpt.
	rows, _ = nvmeRun(t, "../pcaps/rxe/nvme_rdma_midstream.pcap", decode.AnalyzerOptions{NVMeQPs: []uint32{0x13}, NoULPDetect: true}, names)
	assert.Equal(t, "0x02", rows[3]["nvme.cmd.opc"])
	assert.NotEmpty(t, rows[1]["nvme.cqe.cid"])
	assert.Empty(t, rows[1]["ibwire.nvme.latency"], "its command is not in the file")

	// Detection off: nothing.
	for _, opts := range []decode.AnalyzerOptions{{NoULPDetect: true}, {NoULP: true, NVMeQPs: []uint32{0x13}}} {
		rows, _ = nvmeRun(t, "../pcaps/rxe/nvme_rdma_midstream.pcap", opts, names)
		for i, r := range rows {
			assert.Empty(t, r, "frame %d", i)
		}
	}
}

// TestNVMeNotGuessed: 64-byte SENDs and their answers that are not NVMe-oF
// stay plain SENDs.
func TestNVMeNotGuessed(t *testing.T) {
	for _, path := range []string{"../pcaps/rxe/send_bw_small.pcap", "../pcaps/rxe/rc_pingpong.pcap", "../pcaps/rxe/rping.pcap",
		"../pcaps/rxe/send_lat_cm.pcap"} {
		rows, _ := nvmeRun(t, path, decode.AnalyzerOptions{}, []string{"nvme-rdma", "ibwire.nvme.kind"})
		for i, r := range rows {
			assert.Empty(t, r, "%s frame %d", path, i)
		}
	}
}

// TestNVMeUnansweredAndErrors: a command whose completion is not in the
// capture is reported at the end.
func TestNVMeUnanswered(t *testing.T) {
	res := analyze(t, "../pcaps/rxe/nvme_rdma_connect.pcap", decode.AnalyzerOptions{})
	// The Asynchronous Event Requests (frames 53 and 179) wait for an event
	// that never comes; nothing else is outstanding at frame 330.
	var frames []uint32
	for _, f := range res.findings {
		if f.Kind == decode.FindNVMeNoCompletion {
			frames = append(frames, f.Frame)
		}
	}
	assert.Equal(t, []uint32{53, 179}, frames)
	assert.Zero(t, res.count(decode.FindNVMeError))
}

// Reading the NVMe-oF fields of a packet allocates nothing.
func TestNVMeFieldsDoNotAllocate(t *testing.T) {
	assertFieldsAllocateNothing(t, "../pcaps/rxe/nvme_rdma_connect.pcap", 90, "nvme", "ibwire.nvme")
}

// assertFieldsAllocateNothing reads every occurrence (up to 8) of the
// fields named with one of prefixes, at least min of them, on every packet
// of a capture, and requires no allocation.
func assertFieldsAllocateNothing(t *testing.T, path string, min int, prefixes ...string) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	dec := decode.NewDecoder(decode.Options{})
	var fs []*decode.Field
	for _, f := range decode.Fields() {
		for _, pre := range prefixes {
			if strings.HasPrefix(f.Name, pre) {
				fs = append(fs, f)
				break
			}
		}
	}
	require.Greater(t, len(fs), min)
	var cp capture.Packet
	var v decode.Value
	for r.NextInto(&cp) == nil {
		p := dec.Decode(cp)
		a.Analyze(p)
		assert.Zero(t, testing.AllocsPerRun(5, func() {
			for _, f := range fs {
				for i := 0; i < 8 && f.GetOccurrence(p, i, &v); i++ {
				}
			}
		}), "frame %d", p.Number)
	}
}

// An error status is a finding, names its command, and counts in -z
// nvme,srt: frame 232 (the first Read's CQE) rewritten to say LBA Out of
// Range (SCT 0, SC 0x80: status field 0x0100) and Do Not Retry.
func TestNVMeErrorStatus(t *testing.T) {
	r, err := capture.Open("../pcaps/rxe/nvme_rdma_connect.pcap")
	require.NoError(t, err)
	defer r.Close()
	var found []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindNVMeError {
			found = append(found, f)
		}
	}})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true}) // the ICRC no longer fits
	status := decode.MustLookup("ibwire.nvme.status")
	sc := decode.MustLookup("nvme.cqe.status.sc")
	var cp capture.Packet
	var v decode.Value
	for r.NextInto(&cp) == nil {
		if cp.Number == 232 {
			data := append([]byte(nil), cp.Data...)
			// Ethernet 14, IPv4 20, UDP 8, BTH 12, IETH 4: the CQE, then the ICRC.
			cqe := data[14+20+8+12+4:]
			cqe[14], cqe[15] = 0x00, 0x81 // 0x8100: DNR, SC 0x80
			cp.Data = data
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		if p.Number == 232 {
			require.True(t, status.Get(p, &v))
			assert.Equal(t, "LBA Out of Range", v.S)
			require.True(t, sc.Get(p, &v))
			assert.Equal(t, "0x0080", sc.String(&v))
		}
	}
	a.Finish()
	require.Len(t, found, 1)
	assert.Equal(t, uint32(232), found[0].Frame)
	assert.Equal(t, uint32(226), found[0].Ref)
	for _, row := range a.NVMeSRT().Rows() {
		if row.Command == "Read" {
			assert.Equal(t, 1, row.Errors)
			assert.Equal(t, 3, row.Count())
		}
	}
}

// shortenRoCEv2 returns frame data (Ethernet, IPv4 without options, UDP,
// BTH, the payload from off, the ICRC) with the payload cut to keep bytes,
// and the IPv4 total length and UDP length to match; the ICRC no longer
// fits, so the decoder that reads it must skip the check.
// cutPayload cuts a RoCEv2 frame's transport payload to keep bytes: hdr
// is the length of the headers before it (Ethernet, IP, UDP, BTH and any
// extended header).
type cutPayload struct{ hdr, keep int }

// analyseCut decodes and analyses the capture at path with the frames cuts
// names shortened, hands each packet to each (nil: none) after its
// analysis, and returns the analyzer, finished, and the upper-layer
// malformed findings it reported, in order.
func analyseCut(t *testing.T, path string, cuts map[int]cutPayload, each func(*decode.Packet)) (*decode.Analyzer, []decode.Finding) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var found []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindULPMalformed {
			found = append(found, f)
		}
	}})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		if c, ok := cuts[cp.Number]; ok {
			cp.Data = shortenRoCEv2(cp.Data, c.hdr, c.keep)
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		if each != nil {
			each(p)
		}
	}
	a.Finish()
	return a, found
}

func shortenRoCEv2(data []byte, off, keep int) []byte {
	out := append([]byte(nil), data[:off+keep]...)
	out = append(out, data[len(data)-4:]...) // the ICRC
	ipLen := len(out) - 14
	out[14+2], out[14+3] = byte(ipLen>>8), byte(ipLen)
	out[14+10], out[14+11] = 0, 0 // no IPv4 checksum to check
	udpLen := ipLen - 20
	out[34+4], out[34+5] = byte(udpLen>>8), byte(udpLen)
	return out
}

// A SEND on an NVMe-oF connection too short to be a capsule is a
// malformed finding that names the layer and the field, and decoding goes
// on: frame 226 (the first Read's command, 64 bytes) cut to 40 bytes and
// frame 232 (a CQE, 16 bytes) cut to 10. The other two Reads of the
// excerpt and everything after still decode and match.
func TestNVMeShortCapsuleIsMalformed(t *testing.T) {
	opc := decode.MustLookup("nvme.cmd.opc")
	var v decode.Value
	laterCommands := 0
	cuts := map[int]cutPayload{
		226: {54, 40}, // Ethernet 14, IPv4 20, UDP 8, BTH 12: the SQE
		232: {58, 10}, // and IETH 4: the CQE
	}
	a, found := analyseCut(t, "../pcaps/rxe/nvme_rdma_connect.pcap", cuts, func(p *decode.Packet) {
		switch {
		case p.Number == 226 || p.Number == 232:
			assert.True(t, p.Analysis.Has(decode.FindULPMalformed), "frame %d", p.Number)
			assert.False(t, opc.Get(p, &v), "frame %d", p.Number)
		case p.Number > 232 && opc.Get(p, &v):
			laterCommands++
		}
	})
	require.Len(t, found, 2)
	assert.Equal(t, uint32(226), found[0].Frame)
	assert.Equal(t, "Malformed nvme-rdma command capsule: nvme.cmd (SQE) needs 64 bytes, the SEND carries fewer", found[0].Summary())
	assert.Equal(t, uint32(232), found[1].Frame)
	assert.Equal(t, "Malformed nvme-rdma response capsule: nvme.cqe (CQE) needs 16 bytes, the SEND carries fewer", found[1].Summary())
	assert.Equal(t, decode.SevError, found[1].Severity)
	assert.Greater(t, laterCommands, 5, "decoding goes on")
	reads := 0
	for _, row := range a.NVMeSRT().Rows() {
		if row.Command == "Read" {
			reads = row.Count()
		}
	}
	assert.Equal(t, 2, reads, "the two Reads left are matched with their completions")
}
