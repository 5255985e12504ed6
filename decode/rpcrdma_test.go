package decode_test

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// TestRPCRDMAMatchesTshark compares every rpcordma.*, rpc.* and nfs.*
// field ibdump knows over nfs_rdma_v3_mount.pcap (the CM set-up, the
// mount's calls, a READDIRPLUS and GETACLs answered by RDMA_NOMSG in the
// reply chunk, a 4 KiB READ by a write chunk) with tshark 4.0.17's
// decoding (testdata/nfs_rdma_v3_mount.tshark.tsv, its command in its
// first line), apart from two divergences: the portmap and MOUNT calls
// over TCP (frames 6 ... 21), which ibdump does not decode, and the READ
// reply whose data came by the write chunk (frame 108), which tshark
// dissects twice (each value twice; its second RPC layer is flagged
// malformed): ibdump shows it once.
func TestRPCRDMAMatchesTshark(t *testing.T) {
	f, err := os.Open("testdata/nfs_rdma_v3_mount.tshark.tsv")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan()) // the command
	require.True(t, sc.Scan())
	names := strings.Split(sc.Text(), "\t")
	got := fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_mount.pcap", decode.AnalyzerOptions{}, names[1:])
	compared, tcp, twice := 0, 0, 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		frame, err := strconv.Atoi(cols[0])
		require.NoError(t, err)
		row := map[string]string{}
		for i, v := range cols[1:] {
			row[names[i+1]] = v
		}
		for name, want := range row {
			have := got[frame][name]
			switch {
			case want == "":
			case row["rpcordma.xid"] == "" && strings.HasPrefix(name, "rpc."):
				tcp++
				assert.Empty(t, have, "frame %d %s: RPC over TCP", frame, name)
				continue
			case frame == 108:
				if vs := strings.Split(want, ","); len(vs)%2 == 0 && strings.Join(vs[:len(vs)/2], ",") == strings.Join(vs[len(vs)/2:], ",") {
					twice++
					want = strings.Join(vs[:len(vs)/2], ",")
				}
			}
			if want != "" {
				compared++
			}
			assert.Equal(t, want, have, "frame %d %s", frame, name)
		}
	}
	assert.Greater(t, compared, 700)
	assert.Equal(t, 14, twice)
	assert.Greater(t, tcp, 50)
}

// fieldsAll is fieldValues with every occurrence of a field, joined by
// commas as tshark -T fields -E occurrence=a prints them.
func fieldsAll(t *testing.T, path string, opts decode.AnalyzerOptions, names []string) []map[string]string {
	rows, _ := fieldValues(t, path, opts, names, true)
	return rows
}

// sharedULP is the shared folder's real ULP capture, beside the checkout;
// the test skips when it is not there (pcaps/rxe keeps excerpts).
func sharedULP(t *testing.T, name string) string {
	path := filepath.Join("..", "..", "shared", "pcaps-ulp", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not beside the checkout", path)
	}
	return path
}

// TestRPCRDMACountsMatchManifest counts every RPC call of the whole
// nfs_rdma_v3.pcap by program, version and procedure, and the replies by
// transport procedure, and compares them with the independent counts in
// ../shared/pcaps-ulp/MANIFEST.md (its ground-truth section, read from
// the file): all 61 calls, each once; 50 replies in RDMA_MSG and 11 in
// RDMA_NOMSG; every one matched in -z rpc,srt; and every RDMA WRITE and
// READ of the capture tied to the call whose chunk it moves.
func TestRPCRDMACountsMatchManifest(t *testing.T) {
	path := sharedULP(t, "nfs_rdma_v3.pcap")
	manifest, err := os.ReadFile(filepath.Join(filepath.Dir(path), "MANIFEST.md"))
	require.NoError(t, err)
	section := string(manifest)[strings.Index(string(manifest), "== nfs_rdma_v3.pcap"):]
	section = section[:strings.Index(section, "```")]
	want := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^\s+call (\S+) v(\d) (\S+)\s+(\d+)$`).FindAllStringSubmatch(section, -1) {
		prog := map[string]string{"nfs": "NFS", "nfs_acl": "NFSACL"}[m[1]]
		n, _ := strconv.Atoi(m[4])
		want[prog+"v"+m[2]+" "+m[3]] = n
	}
	require.Len(t, want, 17, "MANIFEST lists 17 procedures")
	manifestCount := func(label string) int {
		m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(label) + `\s+(\d+)$`).FindStringSubmatch(section)
		require.NotNil(t, m, label)
		n, _ := strconv.Atoi(m[1])
		return n
	}

	rows := fieldsAll(t, path, decode.AnalyzerOptions{}, []string{"rpc.msgtyp", "rpcordma.msg_type", "ibwire.rpc.procedure",
		"ibwire.rpc.chunk", "infiniband.bth.opcode", "ibwire.rpc.latency"})
	calls := map[string]int{}
	replies := map[string]int{}
	chunkPackets, rdmaPackets := 0, 0
	for _, r := range rows {
		switch r["rpc.msgtyp"] {
		case "0":
			calls[r["ibwire.rpc.procedure"]]++
		case "1":
			replies[r["rpcordma.msg_type"]]++
			assert.NotEmpty(t, r["ibwire.rpc.latency"])
		}
		switch r["infiniband.bth.opcode"] {
		case "6", "7", "8", "10", "12", "13", "14", "15", "16": // RDMA WRITE, READ request and responses
			rdmaPackets++
			if r["ibwire.rpc.chunk"] != "" {
				chunkPackets++
			}
		}
	}
	assert.Equal(t, want, calls)
	assert.Equal(t, manifestCount("reply"), replies["0"])
	assert.Equal(t, manifestCount("RDMA_NOMSG v1 (server->client)"), replies["1"])
	assert.Equal(t, rdmaPackets, chunkPackets, "every RDMA WRITE and READ belongs to a chunk")
	assert.Positive(t, rdmaPackets)
}

// TestRPCRDMASRT: -z rpc,srt counts each call once, READ 12 where tshark
// 4.0's -z rpc,srt says 23 (MANIFEST.md), with latencies from the
// matching.
func TestRPCRDMASRT(t *testing.T) {
	path := sharedULP(t, "nfs_rdma_v3.pcap")
	res := analyze(t, path, decode.AnalyzerOptions{})
	total := 0
	for _, r := range res.a.RPCSRT().Rows() {
		total += r.Count()
		assert.LessOrEqual(t, r.Min(), r.Max())
		if r.Name == "NFSv3 READ" {
			assert.Equal(t, 12, r.Count())
		}
		assert.Zero(t, r.Errors, r.Name)
	}
	assert.Equal(t, 61, total)
	assert.Zero(t, res.count(decode.FindRPCNoReply))
	assert.Zero(t, res.count(decode.FindULPMalformed))
}

// TestRPCRDMAMidstream: an excerpt that starts after the set-up (frames
// 3981-4100 of nfs_rdma_v3.pcap: no CM exchange). Counted with tshark
// 4.0.17, whose rpcordma heuristic finds the protocol without the CM too
// (-T fields -e rpc.msgtyp -e rpcordma.msg_type): 21 calls, 14 replies in
// RDMA_MSG and 7 RDMA_NOMSG messages in which tshark shows no RPC reply
// (it has not followed the reply chunk). ibdump finds the protocol at the
// first call's reply and matches all 21 replies (the first call from its
// probe); told the QP, it decodes from the first packet; with detection
// off, nothing.
func TestRPCRDMAMidstream(t *testing.T) {
	names := []string{"rpc.msgtyp", "ibwire.rpc.latency", "rpcordma.xid", "ibwire.rpc.procedure"}
	rows := fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", decode.AnalyzerOptions{}, names)
	calls, matched := 0, 0
	for _, r := range rows {
		if r["rpc.msgtyp"] == "0" {
			calls++
		}
		if r["ibwire.rpc.latency"] != "" {
			matched++
		}
	}
	assert.Equal(t, 20, calls, "the first call is seen before its reply reveals the protocol")
	assert.Equal(t, 21, matched)
	assert.Equal(t, "NFSv3 LOOKUP", rows[4]["ibwire.rpc.procedure"])

	// A look-ahead over the start of the file finds the protocol by the
	// same evidence, so the pass that prints decodes the first call too,
	// as tshark's heuristic does (frame 2, XID 0x54c3b52a, a LOOKUP).
	la := decode.NewLookahead()
	fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", decode.AnalyzerOptions{Lookahead: la}, names)
	la.Done()
	rows = fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", decode.AnalyzerOptions{Lookahead: la}, names)
	calls = 0
	for _, r := range rows {
		if r["rpc.msgtyp"] == "0" {
			calls++
		}
	}
	assert.Equal(t, 21, calls)
	assert.Equal(t, map[string]string{"rpc.msgtyp": "0", "rpcordma.xid": "0x54c3b52a", "ibwire.rpc.procedure": "NFSv3 LOOKUP"}, rows[2])
	// Detection off, the look-ahead's finding is not used either.
	rows = fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", decode.AnalyzerOptions{Lookahead: la, NoRPCRDMADetect: true}, names)
	assert.Empty(t, rows[2])

	rows = fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", decode.AnalyzerOptions{RPCRDMAQPs: []uint32{0x11}, NoRPCRDMADetect: true}, names)
	assert.Equal(t, "0", rows[2]["rpc.msgtyp"])
	assert.Equal(t, "NFSv3 LOOKUP", rows[2]["ibwire.rpc.procedure"])

	for _, opts := range []decode.AnalyzerOptions{{NoRPCRDMADetect: true}, {NoRPCRDMA: true, RPCRDMAQPs: []uint32{0x11}}} {
		for i, r := range fieldsAll(t, "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", opts, names) {
			assert.Empty(t, r, "frame %d", i)
		}
	}
}

// TestRPCRDMANotGuessed: SENDs of other traffic, NVMe-oF's among them,
// real (pcaps/rxe) or crafted (pcaps), are not taken for RPC-over-RDMA.
func TestRPCRDMANotGuessed(t *testing.T) {
	files, err := filepath.Glob("../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	crafted, err := filepath.Glob("../pcaps/*.pcap")
	require.NoError(t, err)
	files = append(files, crafted...)
	for _, path := range files {
		if strings.Contains(path, "nfs_rdma") {
			continue
		}
		for i, r := range fieldsAll(t, path, decode.AnalyzerOptions{}, []string{"rpcordma", "ibwire.rpc"}) {
			assert.Empty(t, r, "%s frame %d", path, i)
		}
	}
}

// A SEND on an RPC-over-RDMA connection whose header does not decode is a
// malformed finding naming the layer and field, and decoding goes on:
// frame 32 (the FSINFO call) cut inside its RPC header, frame 56 (a
// GETACL call) cut inside its reply chunk. Their replies find no call;
// every other call still matches: tshark counts 17 replies in the
// excerpt (13 RDMA_MSG, 4 RDMA_NOMSG), so 15.
func TestRPCRDMAMalformed(t *testing.T) {
	cuts := map[int]cutPayload{
		32: {54, 28 + 20}, // Ethernet 14, IPv4 20, UDP 8, BTH 12: the transport header, 28 bytes, then the RPC call
		56: {54, 52},      // the reply chunk's second segment starts at byte 48
	}
	a, found := analyseCut(t, "../pcaps/rxe/nfs_rdma_v3_mount.pcap", cuts, func(p *decode.Packet) {
		if p.Number == 32 || p.Number == 56 {
			assert.True(t, p.Analysis.Has(decode.FindULPMalformed), "frame %d", p.Number)
			require.NotNil(t, p.Analysis.RPCRDMA)
			assert.Error(t, p.Analysis.RPCRDMA.Err)
		}
	})
	require.Len(t, found, 2)
	assert.Equal(t, "Malformed RPC-over-RDMA: rpc message header ends early or is impossible", found[0].Summary())
	assert.Equal(t, "Malformed RPC-over-RDMA: rpcordma header (chunk lists) ends early or holds an impossible count", found[1].Summary())
	total := 0
	for _, row := range a.RPCSRT().Rows() {
		total += row.Count()
	}
	assert.Equal(t, 15, total, "the 17 replies of the excerpt but the two whose calls were cut")
}

// Reading the RPC-over-RDMA fields of a packet allocates nothing.
func TestRPCRDMAFieldsDoNotAllocate(t *testing.T) {
	assertFieldsAllocateNothing(t, "../pcaps/rxe/nfs_rdma_v3_mount.pcap", 40, "rpc", "nfs", "ibwire.rpc")
}

// withPayload returns RoCEv2 frame data (Ethernet, IPv4 without options,
// UDP, BTH from byte 42, the payload from off, the ICRC) with its payload
// replaced, the IPv4 total length and UDP length to match (the ICRC no
// longer fits: decode with SkipCRC).
func withPayload(data []byte, off int, payload []byte) []byte {
	out := append(append(append([]byte(nil), data[:off]...), payload...), data[len(data)-4:]...)
	ipLen := len(out) - 14
	out[16], out[17] = byte(ipLen>>8), byte(ipLen)
	out[24], out[25] = 0, 0
	udpLen := ipLen - 20
	out[38], out[39] = byte(udpLen>>8), byte(udpLen)
	return out
}

// An NFSv4.1 COMPOUND over RPC-over-RDMA (none was captured: crafted per
// RFC 8881 into the mount excerpt's FSINFO call, frame 32, and its reply,
// frame 34, keeping their XID): the call names its operations in
// nfs.opcode and on the line's label; the reply is matched to it.
func TestRPCRDMACompound(t *testing.T) {
	xid := "2dc3b52a"
	hdr := func(credits string) string {
		return xid + "00000001" + credits + "00000000" + "000000000000000000000000"
	}
	auth := "00000000" + "00000000" // AUTH_NULL, empty
	call := mustHexBytes(t, hdr("00000080")+xid+"00000000"+"00000002"+"000186a3"+"00000004"+"00000001"+auth+auth+
		// tag "", minor version 1, 3 operations: SEQUENCE, PUTROOTFH, GETFH
		"00000000"+"00000001"+"00000003"+
		"00000035"+"0102030405060708090a0b0c0d0e0f10"+"00000001"+"00000000"+"00000000"+"00000000"+
		"00000018"+"0000000a")
	reply := mustHexBytes(t, hdr("00000040")+xid+"00000001"+"00000000"+auth+"00000000"+
		"00000000"+"00000000"+"00000000") // NFS4_OK, tag "", no results
	r, err := capture.Open("../pcaps/rxe/nfs_rdma_v3_mount.pcap")
	require.NoError(t, err)
	defer r.Close()
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	get := func(p *decode.Packet, name string) string {
		f := decode.MustLookup(name)
		var vals []string
		var v decode.Value
		for i := 0; f.GetOccurrence(p, i, &v); i++ {
			vals = append(vals, f.String(&v))
		}
		return strings.Join(vals, ",")
	}
	var cp capture.Packet
	seen := 0
	for r.NextInto(&cp) == nil {
		switch cp.Number {
		case 32:
			cp.Data = withPayload(cp.Data, 54, call)
		case 34:
			cp.Data = withPayload(cp.Data, 54, reply)
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		switch cp.Number {
		case 32:
			seen++
			assert.Equal(t, "1", get(p, "nfs.procedure_v4"))
			assert.Equal(t, "1", get(p, "nfs.minorversion"))
			assert.Equal(t, "53,24,10", get(p, "nfs.opcode"))
			assert.Equal(t, "NFSv4 COMPOUND", get(p, "ibwire.rpc.procedure"))
			require.NotNil(t, p.Analysis.RPCRDMA)
			assert.False(t, p.Analysis.RPCRDMA.Compound.Partial)
		case 34:
			seen++
			assert.Equal(t, "NFSv4 COMPOUND", get(p, "ibwire.rpc.procedure"))
			assert.Equal(t, "32", get(p, "rpc.repframe"))
			assert.Empty(t, get(p, "nfs.status3"), "an NFSv4 reply has no nfsstat3")
		}
	}
	assert.Equal(t, 2, seen)
}

func mustHexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// A call whose reply is not in the capture is reported at the end (the
// mount excerpt stops at frame 110, the LOOKUP call of `cat`, before its
// reply: tshark shows frame 110 as a call with no rpc.reqframe); a reply
// that is not "accepted, SUCCESS" is an rpc_error finding naming its call
// and counts as an error in -z rpc,srt (frame 34, the FSINFO reply,
// crafted to say PROC_UNAVAIL: accept_stat 3, RFC 5531 §9).
func TestRPCRDMAUnansweredAndErrors(t *testing.T) {
	res := analyze(t, "../pcaps/rxe/nfs_rdma_v3_mount.pcap", decode.AnalyzerOptions{})
	var frames []uint32
	for _, f := range res.findings {
		if f.Kind == decode.FindRPCNoReply {
			frames = append(frames, f.Frame)
		}
	}
	assert.Equal(t, []uint32{110}, frames)
	assert.Zero(t, res.count(decode.FindRPCError))

	r, err := capture.Open("../pcaps/rxe/nfs_rdma_v3_mount.pcap")
	require.NoError(t, err)
	defer r.Close()
	var found []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		if f.Kind == decode.FindRPCError {
			found = append(found, f)
		}
	}})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		if cp.Number == 34 {
			cp.Data = withPayload(cp.Data, 54, mustHexBytes(t, "2dc3b52a"+"00000001"+"00000040"+"00000000"+"000000000000000000000000"+
				"2dc3b52a"+"00000001"+"00000000"+"0000000000000000"+"00000003"))
		}
		p := dec.Decode(cp)
		a.Analyze(p)
	}
	a.Finish()
	require.Len(t, found, 1)
	assert.Equal(t, uint32(34), found[0].Frame)
	assert.Equal(t, uint32(32), found[0].Ref)
	fsinfo := 0
	for _, row := range a.RPCSRT().Rows() {
		if row.Name == "NFSv3 FSINFO" {
			fsinfo++
			assert.Equal(t, 1, row.Errors)
			assert.Equal(t, 2, row.Count(), "frames 32-34 and 48-50")
		}
	}
	assert.Equal(t, 1, fsinfo)
}

// An RDMA_ERROR (RFC 8166 §4.2.4) in place of the FSINFO reply (frame 34,
// same XID): the call it answers fails, once, and is not left unanswered.
func TestRPCRDMAErrorAnswersItsCall(t *testing.T) {
	r, err := capture.Open("../pcaps/rxe/nfs_rdma_v3_mount.pcap")
	require.NoError(t, err)
	defer r.Close()
	var errs, unanswered []decode.Finding
	a := decode.NewAnalyzer(decode.AnalyzerOptions{OnFinding: func(f decode.Finding) {
		switch f.Kind {
		case decode.FindRPCError:
			errs = append(errs, f)
		case decode.FindRPCNoReply:
			unanswered = append(unanswered, f)
		}
	}})
	dec := decode.NewDecoder(decode.Options{SkipCRC: true})
	var cp capture.Packet
	for r.NextInto(&cp) == nil {
		if cp.Number == 34 {
			// xid, vers 1, credits, RDMA_ERROR, ERR_VERS with versions 1..1
			cp.Data = withPayload(cp.Data, 54, mustHexBytes(t, "2dc3b52a"+"00000001"+"00000040"+"00000004"+"00000001"+"00000001"+"00000001"))
		}
		p := dec.Decode(cp)
		a.Analyze(p)
		if cp.Number == 34 {
			require.NotNil(t, p.Analysis.RPCRDMA)
			assert.NoError(t, p.Analysis.RPCRDMA.Err)
		}
	}
	a.Finish()
	require.Len(t, errs, 1)
	assert.Equal(t, uint32(34), errs[0].Frame)
	assert.Equal(t, uint32(32), errs[0].Ref)
	for _, f := range unanswered {
		assert.NotEqual(t, uint32(32), f.Frame, "the call the RDMA_ERROR answered")
	}
}
