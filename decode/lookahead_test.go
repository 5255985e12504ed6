package decode_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
)

// lookaheadFields are the upper layers' fields one pass can fill: a
// command or message and what answers it, not the later frame a request
// names (which only a second pass knows).
var lookaheadFields = []string{
	"nvme.cmd.opc", "nvme.cqe.cid", "nvme-rdma.cmd.qid", "ibwire.nvme.kind", "ibwire.nvme.cmd_frame", "ibwire.nvme.latency", "ibwire.nvme.outstanding",
	"iscsi.opcode", "ibwire.iscsi.kind", "ibwire.iscsi.command", "ibwire.iscsi.request_frame", "ibwire.iscsi.latency",
	"rpcordma.xid", "rpc.msgtyp", "ibwire.rpc.procedure", "ibwire.rpc.latency",
	"smb_direct.data_length", "ibwire.smb2.command", "ibwire.smb2.request_frame", "ibwire.smb2.latency",
}

// lookaheadRun analyses path once as a look-ahead, then again reading it
// back, with opts.
func lookaheadRun(t *testing.T, path string, opts decode.AnalyzerOptions) []map[string]string {
	t.Helper()
	opts.Lookahead = decode.NewLookahead()
	fieldsAll(t, path, opts, lookaheadFields)
	opts.Lookahead.Done()
	return fieldsAll(t, path, opts, lookaheadFields)
}

// twoPassRun analyses path as ibdump -2 does.
func twoPassRun(t *testing.T, path string, opts decode.AnalyzerOptions) []map[string]string {
	t.Helper()
	opts.Links = decode.NewFrameLinks()
	fieldsAll(t, path, opts, lookaheadFields)
	opts.Links.SecondPass()
	return fieldsAll(t, path, opts, lookaheadFields)
}

// On every capture of the corpus, real and crafted, one pass after a
// look-ahead over the whole file decodes and matches the upper layers
// exactly as two passes do: the look-ahead labels the connections the
// content showed and nothing else.
func TestLookaheadAsTwoPasses(t *testing.T) {
	real, err := filepath.Glob("../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	crafted, err := filepath.Glob("../pcaps/*.pcap")
	require.NoError(t, err)
	for _, path := range append(real, crafted...) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			assert.Equal(t, twoPassRun(t, path, decode.AnalyzerOptions{}), lookaheadRun(t, path, decode.AnalyzerOptions{}))
		})
	}
}

// On the captures that start mid-stream the first command comes before
// the evidence: one pass alone misses it, one pass after the look-ahead
// decodes it; with the protocol's detection by content off, the
// look-ahead's finding is not used (and told the QP, it is decoded).
func TestLookaheadMidstream(t *testing.T) {
	for _, tt := range []struct {
		name       string
		path       string
		first      int
		field, val string
		off        decode.AnalyzerOptions
	}{
		{"nvme", "../pcaps/rxe/nvme_rdma_midstream.pcap", 3, "nvme.cmd.opc", "0x02", decode.AnalyzerOptions{NoULPDetect: true}},
		{"iser", "../pcaps/rxe/iser_midstream.pcap", 3, "iscsi.opcode", "0x01", decode.AnalyzerOptions{NoISERDetect: true}},
		{"rpcrdma", "../pcaps/rxe/nfs_rdma_v3_midstream.pcap", 2, "rpc.msgtyp", "0", decode.AnalyzerOptions{NoRPCRDMADetect: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Empty(t, fieldsAll(t, tt.path, decode.AnalyzerOptions{}, lookaheadFields)[tt.first][tt.field], "one pass alone")
			rows := lookaheadRun(t, tt.path, decode.AnalyzerOptions{})
			assert.Equal(t, tt.val, rows[tt.first][tt.field])
			for i, r := range lookaheadRun(t, tt.path, tt.off) {
				assert.Empty(t, r, "detection off: frame %d", i)
			}
		})
	}
}
