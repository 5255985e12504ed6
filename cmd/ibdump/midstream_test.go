package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// smbdMidstreamWrite writes a crafted SMB Direct conversation captured
// from after its set-up and negotiate, whose first request, a WRITE with
// 3000 bytes of data, spans a SEND FIRST, MIDDLE and LAST (MTU 1024): one
// pass, which reads an SMB2 header only from a SEND ONLY, finds the
// protocol at its response (frame 5). Then a READ and a CLOSE, each
// answered: 3 requests, 3 responses.
func smbdMidstreamWrite(t *testing.T) string {
	t.Helper()
	hdr := func(cmd layers.SMB2Command, id uint64, server bool) layers.SMB2Header {
		h := layers.SMB2Header{Command: cmd, MessageID: id, Credits: 16, TreeID: 1, SessionID: 0x4400000000001}
		if server {
			h.Flags = layers.SMB2FlagServerToRedir
		}
		return h
	}
	msg := func(h layers.SMB2Header, body int) []byte {
		m := layers.AppendSMB2Header(nil, &h)
		m = append(m, craft.Pattern(body, byte(h.Command))...)
		return layers.AppendSMBDirect(nil, &layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer, CreditsRequested: 255, CreditsGranted: 1, Data: m})
	}
	steps := []struct {
		server bool
		data   []byte
	}{
		{false, msg(hdr(layers.SMB2Write, 6, false), 3000)},
		{true, msg(hdr(layers.SMB2Write, 6, true), 16)},
		{false, msg(hdr(layers.SMB2Read, 7, false), 48)},
		{true, msg(hdr(layers.SMB2Read, 7, true), 200)},
		{false, msg(hdr(layers.SMB2Close, 8, false), 24)},
		{true, msg(hdr(layers.SMB2Close, 8, true), 60)},
	}
	client, err := craft.New(craft.Config{})
	require.NoError(t, err)
	cfg := client.Config()
	server, err := craft.New(craft.Config{Requester: cfg.Responder, Responder: cfg.Requester})
	require.NoError(t, err)
	at := client.Now()
	for _, st := range steps {
		c := client
		if st.server {
			c = server
		}
		c.Wait(at.Sub(c.Now()))
		require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpSend, Data: st.data, Wait: true}}, craft.Faults{}))
		at = c.Now().Add(20 * time.Microsecond)
	}
	frames := craft.Merge(client.Trace(), server.Trace()).Frames
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.FormatPcap, frames[0].LinkType, true)
	require.NoError(t, err)
	for _, f := range frames {
		require.NoError(t, w.WritePacket(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
	}
	require.NoError(t, w.Flush())
	path := filepath.Join(t.TempDir(), "smbdirect_midstream_write.pcap")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// midstreamCase is a capture that starts after its connection's set-up,
// whose first command comes before the evidence of its protocol.
type midstreamCase struct {
	name, heuristic string
	path            string
	// fields are the upper layer's, those one pass can fill (not the
	// response frame a request names, which only -2 knows); first is the
	// frame of the first command, request its request field, whose value
	// there names the command; srt is the -z table and srtRow the regexp
	// of its row for the first command's kind with every command counted.
	fields           []string
	first            int
	request, command string
	srt, srtRow      string
	srtRowOnePass    string
}

func midstreamCases(t *testing.T) []midstreamCase {
	return []midstreamCase{
		// pcaps/rxe/MANIFEST.md: 12 Read commands (frames 3, 12 ... 102),
		// 12 completions.
		{"nvme", "nvme-rdma", nvmeMid,
			[]string{"nvme.cmd.opc", "nvme-rdma.cmd.qid", "nvme.cmd.cid", "nvme.cqe.cid", "ibwire.nvme.kind", "ibwire.nvme.cmd_frame",
				"ibwire.nvme.latency", "ibwire.nvme.data_latency", "nvme.cmd_pkt", "nvme.cmd_latency", "ibwire.nvme.outstanding"},
			3, "nvme.cmd.opc", "0x02", "nvme,srt", `I/O +0x2 Read +12 +0 `, `I/O +0x2 Read +12 +0 `},
		// pcaps/rxe/MANIFEST.md: SCSI Command 15 (READ(10) 13, WRITE(10)
		// 2), SCSI Response 14.
		{"iser", "iser", iserMid,
			[]string{"iscsi.opcode", "iscsi.initiatortasktag", "ibwire.iscsi.kind", "ibwire.iscsi.command", "ibwire.iscsi.request_frame",
				"ibwire.iscsi.latency", "ibwire.iscsi.to_data", "ibwire.iscsi.outstanding", "iser.flags", "iser.read_stag"},
			3, "iscsi.opcode", "0x01", "iscsi,srt", `0x1 +0x28 READ\(10\) +13 +0 `, `0x1 +0x28 READ\(10\) +13 +0 `},
		// The crafted conversation: WRITE, READ, CLOSE, each answered.
		{"smb_direct", "smb_direct", smbdMidstreamWrite(t),
			[]string{"smb_direct.data_length", "smb_direct.remaining_length", "ibwire.smb2.command", "ibwire.smb2.msg_id",
				"ibwire.smb2.response", "ibwire.smb2.request_frame", "ibwire.smb2.latency", "ibwire.smb2.outstanding"},
			1, "ibwire.smb2.command", "WRITE", "smb2,srt", `WRITE +1 +0 `, `READ +1 +0 `},
	}
}

// fieldRows runs ibdump with args and -T fields of fields, one row a frame.
func fieldRows(t *testing.T, stdin []byte, fields []string, args ...string) []string {
	t.Helper()
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, errOut, code := ibdump(t, stdin, append(args, "-T", "fields")...)
	require.Zero(t, code, errOut)
	return strings.Split(strings.TrimRight(out, "\n"), "\n")
}

// A capture read from a file that starts mid-stream (no CM exchange) is
// decoded from its first packet in one pass: a look-ahead over the start
// of the file finds the evidence of each connection's protocol (the
// completion, response or SEND ONLY that shows it), so the first command,
// sent before it, is decoded and matched exactly as ibdump -2 does it, and
// every command is counted once. Read from a pipe (once), the first command
// is seen before the evidence; with detection off, the look-ahead's
// finding is not used.
func TestMidstreamLookahead(t *testing.T) {
	for _, tt := range midstreamCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			one := fieldRows(t, nil, tt.fields, "-r", tt.path)
			two := fieldRows(t, nil, tt.fields, "-2", "-r", tt.path)
			assert.Equal(t, two, one, "one pass with the look-ahead, as -2")
			col := func(rows []string, frame int, field string) string {
				for i, f := range tt.fields {
					if f == field {
						return strings.Split(rows[frame-1], "\t")[i]
					}
				}
				t.Fatalf("no field %s", field)
				return ""
			}
			assert.Equal(t, tt.command, col(one, tt.first, tt.request), "the first command")

			pcap, err := os.ReadFile(tt.path)
			require.NoError(t, err)
			piped := fieldRows(t, pcap, tt.fields, "-r", "-")
			require.Len(t, piped, len(one))
			assert.Empty(t, strings.Trim(piped[tt.first-1], "\t"), "read once: seen before the evidence")
			assert.Equal(t, one[len(one)-1], piped[len(piped)-1], "decoded after it")

			for _, rows := range [][]string{
				fieldRows(t, nil, tt.fields, "-r", tt.path, "--disable-heuristic", tt.heuristic),
				fieldRows(t, nil, tt.fields, "-2", "-r", tt.path, "--disable-heuristic", tt.heuristic),
			} {
				for i, r := range rows {
					assert.Empty(t, strings.Trim(r, "\t"), "frame %d", i+1)
				}
			}

			out, errOut, code := ibdump(t, nil, "-q", "-r", tt.path, "-z", tt.srt)
			require.Zero(t, code, errOut)
			assert.Regexp(t, tt.srtRow, out)
			out2, errOut, code := ibdump(t, nil, "-q", "-2", "-r", tt.path, "-z", tt.srt)
			require.Zero(t, code, errOut)
			assert.Equal(t, out2, out)
			out, errOut, code = ibdump(t, pcap, "-q", "-r", "-", "-z", tt.srt)
			require.Zero(t, code, errOut)
			assert.Regexp(t, tt.srtRowOnePass, out)
		})
	}
}

// The commands of the real captures that start mid-stream, read from the
// file in one pass with Wireshark's field names, each once (by its
// destination QP and PSN, or its XID), by opcode or procedure, are the
// counts in pcaps/rxe/MANIFEST.md: nvme_rdma_midstream 12 Reads and 12
// completions; iser_midstream 15 SCSI Commands (READ(10) 13, WRITE(10) 2)
// and 14 Responses (tshark's over the same frames of the capture with
// the CM); nfs_rdma_v3_midstream and nfs_rdma_v41_midstream 21 calls,
// each answered.
func TestMidstreamCommandCounts(t *testing.T) {
	for _, tt := range []struct {
		name, path string
		key        []string // what makes a line one command
		fields     []string
		filter     string
		want       map[string]int
	}{
		{"nvme", nvmeMid, []string{"infiniband.bth.destqp", "infiniband.bth.psn"}, []string{"nvme-rdma.cmd.qid", "nvme.cmd.opc", "nvme.cqe.cid"},
			"nvme.cmd.opc || nvme.cmd_latency", map[string]int{"0x0001\t0x02\t": 12, "0x0001\t\tcqe": 12}},
		{"iser", iserMid, []string{"infiniband.bth.destqp", "infiniband.bth.psn"}, []string{"iscsi.opcode", "ibwire.iscsi.command"},
			"iscsi.opcode == 0x01 || iscsi.opcode == 0x21", map[string]int{"0x01\tREAD(10)": 13, "0x01\tWRITE(10)": 2, "0x21\tREAD(10)": 13, "0x21\tWRITE(10)": 1}},
		{"nfs3", nfsMid, []string{"rpc.xid"}, []string{"rpc.msgtyp"}, "rpc.msgtyp", map[string]int{"0": 21, "1": 21}},
		{"nfs41", nfs41Mid, []string{"rpc.xid"}, []string{"rpc.msgtyp"}, "rpc.msgtyp", map[string]int{"0": 21, "1": 21}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := fieldRows(t, nil, append(tt.key, tt.fields...), "-r", tt.path, "-Y", tt.filter)
			seen := map[string]int{}
			got := map[string]int{}
			for _, r := range rows {
				c := strings.Split(r, "\t")
				seen[strings.Join(c, "\t")]++
				rest := c[len(tt.key):]
				if tt.name == "nvme" && rest[2] != "" {
					rest[2] = "cqe" // the completion's cid, one per command
				}
				got[strings.Join(rest, "\t")]++
			}
			for l, n := range seen {
				assert.Equal(t, 1, n, "%q counted twice", l)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
