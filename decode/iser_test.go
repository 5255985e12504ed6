package decode_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
)

const (
	iserLogin = "../pcaps/rxe/iser_login.pcap"
	iserMid   = "../pcaps/rxe/iser_midstream.pcap"
)

// TestISERMatchesTshark: the iSER and iSCSI fields of the excerpt with the
// CM set-up, as tshark 4.0.17 prints them (`-T fields -E occurrence=a`):
// the discovery Login (frame 6) and its response (8), the normal
// session's first INQUIRY with its Read STag (23) and response (26), the
// MAINTENANCE IN answered CHECK CONDITION with 96 bytes of sense (80), a
// 4 KiB WRITE whose SEND starts at frame 207 (a SEND FIRST: tshark
// decodes it there) and its response (213).
func TestISERMatchesTshark(t *testing.T) {
	names := []string{"iscsi.opcode", "iscsi.initiatortasktag", "iscsi.scsicommand.expecteddatatransferlength", "iscsi.cmdsn",
		"iscsi.statsn", "iscsi.scsiresponse.status", "iscsi.request_frame", "iscsi.time", "iser.flags", "iser.read_stag",
		"iser.write_stag", "iscsi.login.status", "iscsi.scsiresponse.senselength", "iscsi.keyvalue", "iscsi.isid", "iscsi.padding"}
	rows, _ := fieldValues(t, iserLogin, decode.AnalyzerOptions{}, names, true)
	want := map[int]map[string]string{
		6: {"iscsi.opcode": "0x03", "iscsi.initiatortasktag": "0x00000000", "iscsi.cmdsn": "1", "iser.flags": "0x10",
			"iser.read_stag": "0x00000000", "iser.write_stag": "0x00000000", "iscsi.isid": "00023d000001", "iscsi.padding": "000000",
			"iscsi.keyvalue": "InitiatorName=iqn.2024-01.lab.ulplab:initiator-a,InitiatorAlias=ulp-a,SessionType=Discovery,HeaderDigest=None," +
				"DataDigest=None,DefaultTime2Wait=2,DefaultTime2Retain=0,IFMarker=No,OFMarker=No,ErrorRecoveryLevel=0,MaxRecvDataSegmentLength=8192"},
		8: {"iscsi.opcode": "0x23", "iscsi.initiatortasktag": "0x00000000", "iscsi.statsn": "759153855", "iscsi.login.status": "0x0000",
			"iser.flags": "0x10", "iser.read_stag": "0x00000000", "iser.write_stag": "0x00000000", "iscsi.isid": "00023d000001", "iscsi.padding": "000000",
			"iscsi.keyvalue": "HeaderDigest=None,DataDigest=None,TargetAlias=LIO Target,TargetPortalGroupTag=1,MaxRecvDataSegmentLength=262144," +
				"DefaultTime2Wait=2,DefaultTime2Retain=0,ErrorRecoveryLevel=0,IFMarker=No,OFMarker=No"},
		23: {"iscsi.opcode": "0x01", "iscsi.initiatortasktag": "0x01000000", "iscsi.scsicommand.expecteddatatransferlength": "36",
			"iscsi.cmdsn": "0", "iser.flags": "0x14", "iser.read_stag": "0x0000153e", "iser.write_stag": "0x00000000"},
		26: {"iscsi.opcode": "0x21", "iscsi.initiatortasktag": "0x01000000", "iscsi.statsn": "2171001470", "iscsi.scsiresponse.status": "0x00",
			"iscsi.request_frame": "23", "iscsi.time": "0.003981000", "iser.flags": "0x10", "iser.read_stag": "0x00000000", "iser.write_stag": "0x00000000"},
		80: {"iscsi.opcode": "0x21", "iscsi.initiatortasktag": "0x0a000000", "iscsi.statsn": "2171001479", "iscsi.scsiresponse.status": "0x02",
			"iscsi.request_frame": "78", "iscsi.time": "0.001220000", "iser.flags": "0x10", "iser.read_stag": "0x00000000",
			"iser.write_stag": "0x00000000", "iscsi.scsiresponse.senselength": "96"},
		207: {"iscsi.opcode": "0x01", "iscsi.initiatortasktag": "0x1c000000", "iscsi.scsicommand.expecteddatatransferlength": "4096",
			"iscsi.cmdsn": "27", "iser.flags": "0x10", "iser.read_stag": "0x00000000", "iser.write_stag": "0x00000000"},
		213: {"iscsi.opcode": "0x21", "iscsi.initiatortasktag": "0x1c000000", "iscsi.statsn": "2171001497", "iscsi.scsiresponse.status": "0x00",
			"iscsi.request_frame": "207", "iscsi.time": "0.000737000", "iser.flags": "0x10", "iser.read_stag": "0x00000000", "iser.write_stag": "0x00000000"},
	}
	for frame, w := range want {
		assert.Equal(t, w, rows[frame], "frame %d", frame)
	}
	// The SEND's LAST packet carries the rest of the immediate data: no PDU.
	assert.Empty(t, rows[208]["iscsi.opcode"])
}

// TestISERCommands: each command counted once by iscsi.opcode, as tshark
// counts them (MANIFEST.md: Login 2, Text 1, SCSI Command 34, and their
// responses but the last WRITE's), each matched with its response, and
// the task's name on its response and on its RDMA data.
func TestISERCommands(t *testing.T) {
	rows, a := fieldValues(t, iserLogin, decode.AnalyzerOptions{},
		[]string{"iscsi.opcode", "ibwire.iscsi.command", "ibwire.iscsi.latency", "ibwire.iscsi.kind", "ibwire.iscsi.lba", "ibwire.iscsi.blocks"}, false)
	ops := map[string]int{}
	latencies := 0
	for _, r := range rows {
		if op := r["iscsi.opcode"]; op != "" {
			ops[op]++
		}
		if r["ibwire.iscsi.latency"] != "" {
			latencies++
		}
	}
	assert.Equal(t, map[string]int{"0x03": 2, "0x23": 2, "0x04": 1, "0x24": 1, "0x01": 34, "0x21": 33}, ops)
	assert.Equal(t, 36, latencies, "every response matched with its request")
	// The first partition-scan READ(10) (frame 116): LBA 0, 8 blocks, its
	// data in RDMA WRITEs to the Read STag.
	assert.Equal(t, "READ(10)", rows[116]["ibwire.iscsi.command"])
	assert.Equal(t, "0", rows[116]["ibwire.iscsi.lba"])
	assert.Equal(t, "8", rows[116]["ibwire.iscsi.blocks"])
	data := 0
	for f := 117; f < 130; f++ {
		if rows[f]["ibwire.iscsi.kind"] == "data" && rows[f]["ibwire.iscsi.command"] == "READ(10)" {
			data++
		}
	}
	assert.Positive(t, data, "the READ's RDMA WRITEs name it")

	byName := map[string]*decode.ISCSISRTRow{}
	for _, r := range a.ISCSISRT().Rows() {
		byName[r.Command] = r
	}
	require.Contains(t, byName, "WRITE(10)")
	assert.Len(t, byName["WRITE(10)"].Samples, 14, "the 15th WRITE's response is past the end")
	assert.Len(t, byName["READ(10)"].Samples, 3)
	assert.Len(t, byName["Login Command"].Samples, 2)
	assert.Equal(t, 1, byName["MAINTENANCE IN"].Errors, "CHECK CONDITION")
}

// TestISERFindings: the CHECK CONDITION is an iscsi_error naming its
// command's frame; the WRITE cut by the end of the excerpt has no response.
func TestISERFindings(t *testing.T) {
	res := analyze(t, iserLogin, decode.AnalyzerOptions{})
	var errs, open []uint32
	for _, f := range res.findings {
		switch f.Kind {
		case decode.FindISCSIError:
			errs = append(errs, f.Frame)
			assert.Equal(t, uint32(78), f.Ref)
		case decode.FindISCSINoResponse:
			open = append(open, f.Frame)
		}
	}
	assert.Equal(t, []uint32{80}, errs)
	assert.Equal(t, []uint32{255}, open)
}

// TestISERMidstream: the excerpt without the CM (tshark decodes no iSER
// in it). Over the same frames of the whole capture, tshark (which has the
// CM there) counts 15 SCSI Commands (13 READ(10), 2 WRITE(10)) and 14
// SCSI Responses (MANIFEST.md). One pass finds the protocol at the first
// response and decodes every PDU after the first command; a second pass
// (ibdump -2) decodes them all; -d names the QP; detection off, nothing.
func TestISERMidstream(t *testing.T) {
	names := []string{"iscsi.opcode", "ibwire.iscsi.command", "ibwire.iscsi.latency", "ibwire.iscsi.kind"}
	count := func(rows []map[string]string) (cmds, resps, matched int) {
		for _, r := range rows {
			switch r["iscsi.opcode"] {
			case "0x01":
				cmds++
			case "0x21":
				resps++
			}
			if r["ibwire.iscsi.latency"] != "" {
				matched++
			}
		}
		return
	}
	rows, a := fieldValues(t, iserMid, decode.AnalyzerOptions{}, names, false)
	cmds, resps, matched := count(rows)
	assert.Equal(t, []int{14, 14, 14}, []int{cmds, resps, matched})
	assert.Empty(t, rows[3]["iscsi.opcode"], "seen before its response revealed the protocol")
	// tshark over the whole capture: frame 2208, iscsi.time 0.004761000.
	assert.Equal(t, "0.004761000", rows[9]["ibwire.iscsi.latency"])
	// The 128 KiB WRITE: the target's RDMA READ of the Write STag and the
	// initiator's READ responses name it.
	assert.Equal(t, "WRITE(10)", rows[123]["ibwire.iscsi.command"])
	assert.Equal(t, "data", rows[134]["ibwire.iscsi.kind"])
	assert.Equal(t, "WRITE(10)", rows[134]["ibwire.iscsi.command"])
	srt := a.ISCSISRT().Rows()
	require.Len(t, srt, 2)
	assert.Equal(t, "READ(10)", srt[0].Command)
	assert.Len(t, srt[0].Samples, 13)
	assert.Equal(t, 26658*time.Microsecond, srt[1].Samples[0], "the WRITE(10) of 128 KiB: tshark says 0.026658000 (frame 2452)")

	links := decode.NewFrameLinks()
	_, _ = fieldValues(t, iserMid, decode.AnalyzerOptions{Links: links}, names, false)
	links.SecondPass()
	rows, _ = fieldValues(t, iserMid, decode.AnalyzerOptions{Links: links}, names, false)
	cmds, resps, matched = count(rows)
	assert.Equal(t, []int{15, 14, 14}, []int{cmds, resps, matched}, "tshark's count with the CM")

	rows, _ = fieldValues(t, iserMid, decode.AnalyzerOptions{ISERQPs: []uint32{0x12}, NoISERDetect: true}, names, false)
	cmds, _, _ = count(rows)
	assert.Equal(t, 15, cmds)

	for _, opts := range []decode.AnalyzerOptions{{NoISERDetect: true}, {NoISER: true, ISERQPs: []uint32{0x12}}} {
		rows, _ = fieldValues(t, iserMid, opts, names, false)
		for i, r := range rows {
			assert.Empty(t, r, "frame %d", i)
		}
	}
}

// TestISERNotGuessed: SENDs of other protocols and of perftest stay what
// they were.
func TestISERNotGuessed(t *testing.T) {
	for _, path := range []string{"../pcaps/rxe/send_bw_small.pcap", "../pcaps/rxe/rc_pingpong.pcap", "../pcaps/rxe/rping.pcap",
		"../pcaps/rxe/send_lat_cm.pcap", "../pcaps/rxe/nvme_rdma_midstream.pcap", "../pcaps/rxe/nvme_rdma_connect.pcap",
		"../pcaps/rxe/nfs_rdma_v3_mount.pcap", "../pcaps/rxe/nfs_rdma_v3_midstream.pcap"} {
		rows, _ := fieldValues(t, path, decode.AnalyzerOptions{}, []string{"iser", "ibwire.iscsi.kind"}, false)
		for i, r := range rows {
			assert.Empty(t, r, "%s frame %d", path, i)
		}
	}
}

// Reading the iSER fields of a packet allocates nothing.
func TestISERFieldsDoNotAllocate(t *testing.T) {
	assertFieldsAllocateNothing(t, iserLogin, 90, "iser", "iscsi", "ibwire.iscsi")
}

// TestISERCrafted: craft's iSER session (craft.ISERExample; tshark 4.0.17
// decodes its 12 PDUs as ibdump does, parity 288/288 values) decoded and
// matched: each response with its request, the READs' RDMA WRITEs and the
// WRITE's RDMA READ and READ responses with their command, the CHECK
// CONDITION a finding; and a Hello and HelloReply, which tshark does not
// show (it wants 76 bytes, an iSER header and a BHS, where RFC 7145's
// Hello has 28).
func TestISERCrafted(t *testing.T) {
	tr, err := craft.ISERExample(craft.Config{})
	require.NoError(t, err)
	path := writeTrace(t, tr)
	rows, a := fieldValues(t, path, decode.AnalyzerOptions{}, []string{"iscsi.opcode", "ibwire.iscsi.command", "ibwire.iscsi.kind",
		"iscsi.request_frame", "ibwire.iscsi.to_data"}, false)
	resps, data := 0, map[string]int{}
	for _, r := range rows {
		if r["iscsi.request_frame"] != "" {
			resps++
		}
		if r["ibwire.iscsi.kind"] == "data" {
			data[r["ibwire.iscsi.command"]]++
		}
	}
	assert.Equal(t, 4, resps, "the four SCSI Responses name their command")
	// READ(10): 4 + 4 + 1 RDMA WRITE packets; WRITE(10): the READ request
	// and 8 READ responses.
	assert.Equal(t, map[string]int{"READ(10)": 9, "WRITE(10)": 9}, data)
	srt := a.ISCSISRT().Rows()
	names := map[string]int{}
	for _, r := range srt {
		names[r.Command] = r.Count()
	}
	assert.Equal(t, map[string]int{"READ(10)": 3, "WRITE(10)": 1, "Login Command": 1, "Logout Command": 1}, names)
	res := analyze(t, path, decode.AnalyzerOptions{})
	assert.Equal(t, 1, res.count(decode.FindISCSIError))
	assert.Zero(t, res.count(decode.FindISCSINoResponse))

	s, err := craft.NewISER(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Connect())
	require.NoError(t, s.Hello(4, 8, true))
	rows, _ = fieldValues(t, writeTrace(t, s.Trace()), decode.AnalyzerOptions{},
		[]string{"iser.flags.opcode", "iser.ird", "iser.ord", "iser.flags.rej", "iscsi"}, false)
	assert.Equal(t, map[string]string{"iser.flags.opcode": "0x02", "iser.ird": "0x0004"}, rows[4])
	assert.Equal(t, map[string]string{"iser.flags.opcode": "0x03", "iser.ord": "0x0008", "iser.flags.rej": "1"}, rows[6])
}

// writeTrace writes a crafted trace to a capture in the test's directory.
func writeTrace(t *testing.T, tr craft.Trace) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.pcap")
	w, err := capture.Create(path, capture.FormatPcap, craft.RoCEv2.LinkType(), true)
	require.NoError(t, err)
	for _, f := range tr.Frames {
		require.NoError(t, w.WritePacket(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
	}
	require.NoError(t, w.Close())
	return path
}

// TestISERResentCommand: the ACK of a READ(10)'s SEND is lost, the
// initiator sends it again after its ACK timeout; the command counts
// once (ibwire.iscsi.request_frame, the analysis' match, on its first
// transmission only), its response matches it, and the latency runs from
// the first transmission. The copy shows the same PDU, as tshark 4.0.17
// does (with --disable-protocol rpcordma, whose heuristic throws on this
// SEND: the command on frames 4 and 5); tshark times the response from
// the copy: iscsi.time 0.000108000, iscsi.request_frame 5, where the
// initiator waited 67 ms.
func TestISERResentCommand(t *testing.T) {
	s, err := craft.NewISER(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Connect())
	s.NextFaults = craft.Faults{Loss: craft.Loss{Responses: []int{1}}}
	require.NoError(t, s.Read(0x20, 0, 512, craft.Pattern(1024, 9), 0))
	tr := s.Trace()
	rows, a := fieldValues(t, writeTrace(t, tr), decode.AnalyzerOptions{},
		[]string{"iscsi.opcode", "ibwire.analysis.retransmission", "iscsi.time", "ibwire.iscsi.request_frame"}, false)
	var shown, counted, resent []int
	for i, r := range rows {
		if r["iscsi.opcode"] == "0x01" {
			shown = append(shown, i)
			if r["ibwire.iscsi.request_frame"] != "" {
				counted = append(counted, i)
			}
		}
		if r["ibwire.analysis.retransmission"] != "" {
			resent = append(resent, i)
		}
	}
	require.Equal(t, []int{5}, resent, "the SEND went twice")
	assert.Equal(t, []int{4, 5}, shown, "both copies show the command")
	assert.Equal(t, []int{4}, counted, "counted once, at its first transmission")
	answered := 0
	for _, r := range rows[6:] {
		if r["ibwire.iscsi.request_frame"] == "4" && r["iscsi.time"] != "" {
			answered++
		}
	}
	assert.Equal(t, 1, answered, "the response answers the first transmission")
	srt := a.ISCSISRT().Rows()
	require.Len(t, srt, 1)
	require.Len(t, srt[0].Samples, 1)
	assert.Greater(t, srt[0].Samples[0], 60*time.Millisecond, "from the first transmission, before the ACK timeout")
}

// A SEND ONLY whose iSCSI data segment runs past it (frame 6 of
// iser_login.pcap, a Login with 241 bytes of key=value data, cut to 100
// bytes of payload: the iSER header, the BHS and 24 of its data) is a
// malformed finding naming the field; decoding goes on.
func TestISERShortDataSegmentIsMalformed(t *testing.T) {
	// Ethernet 14, IPv4 20, UDP 8, BTH 12, then 100 bytes.
	_, found := analyseCut(t, "../pcaps/rxe/iser_login.pcap", map[int]cutPayload{6: {54, 100}}, nil)
	require.Len(t, found, 1)
	assert.Equal(t, uint32(6), found[0].Frame)
	assert.Equal(t, "Malformed iSER: iscsi.ahs or iscsi.datasegmentlength runs past the SEND that carries the PDU", found[0].Summary())
}
