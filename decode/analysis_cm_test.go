package decode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// cmKinds are the findings of the CM contract checks and CM exchanges.
var cmKinds = map[decode.FindingKind]bool{
	decode.FindCMReadsExceeded: true, decode.FindCMRetryExceeded: true, decode.FindCMRNRRetryExceeded: true,
	decode.FindCMMTUExceeded: true, decode.FindCMPathMismatch: true, decode.FindCMMRA: true,
	decode.FindCMMRAIgnored: true, decode.FindCMDREQUnanswered: true, decode.FindCMReject: true,
}

// cmWant is one expected CM finding: at frame, of kind (and sub-code),
// referring to the CM message ref; count is the outstanding requests or
// retries the packet's ibwire.analysis.cm.* fields give.
type cmWant struct {
	frame uint32
	kind  decode.FindingKind
	sub   uint8
	ref   uint32
	count uint8
}

// cmCrafted are the CM findings of the crafted captures, known from how
// pcaps/gen/cm_contract.go made them: the frame numbers follow from the
// CM exchange (REQ 1, REP 2, RTU 3 unless an MRA comes between) and the
// craft model's order of requests and responses.
var cmCrafted = map[string][]cmWant{
	// REP Responder Resources 2; READs at 4, 5, 6, 8; the first response
	// (7) completes the READ at 4 before the one at 8.
	"cm_contract_reads.pcap": {{6, decode.FindCMReadsExceeded, 0, 2, 3}, {8, decode.FindCMReadsExceeded, 0, 2, 3}},
	// REQ Retry Count 1; the SEND at 4, resent at 5 and 6 (its ACKs lost).
	"cm_contract_retries.pcap": {{6, decode.FindCMRetryExceeded, 0, 1, 2}},
	// REP RNR Retry Count 1 binds the active side; the SEND at 4, refused
	// at 5, 7, 9, resent at 6, 8, 10.
	"cm_contract_rnr.pcap": {{8, decode.FindCMRNRRetryExceeded, 0, 2, 2}, {10, decode.FindCMRNRRetryExceeded, 0, 2, 3}},
	"cm_contract_mtu.pcap": {{4, decode.FindCMMTUExceeded, 0, 1, 0}},
	// RoCEv2: the P_Key both ways, the traffic class of the active side.
	"cm_contract_path.pcap": {{4, decode.FindCMPathMismatch, decode.CMPathPKey, 1, 0}, {4, decode.FindCMPathMismatch, decode.CMPathTrafficClass, 1, 0},
		{5, decode.FindCMPathMismatch, decode.CMPathPKey, 1, 0}},
	// Native IB: SL and flow label both ways.
	"cm_contract_path_ib.pcap": {{4, decode.FindCMPathMismatch, decode.CMPathFlowLabel, 1, 0}, {4, decode.FindCMPathMismatch, decode.CMPathSL, 1, 0},
		{5, decode.FindCMPathMismatch, decode.CMPathFlowLabel, 1, 0}, {5, decode.FindCMPathMismatch, decode.CMPathSL, 1, 0}},
	"cm_mra.pcap":             {{2, decode.FindCMMRA, 0, 1, 0}, {3, decode.FindCMMRAIgnored, 0, 2, 0}},
	"cm_dreq_unanswered.pcap": {{6, decode.FindCMDREQUnanswered, 0, 0, 0}},
	// Reason 8 (Invalid Service ID) from the passive side; reason 28
	// (Consumer Reject) from the active side, of the REP at 2.
	"cm_reject.pcap":     {{2, decode.FindCMReject, 8, 1, 0}},
	"cm_reject_rep.pcap": {{3, decode.FindCMReject, 1<<6 | 28, 2, 0}},
}

// cmReal are the CM findings of real captures: rping on Linux rxe to a
// port nobody listens on, rejected by guest b's ib_cm (interop/testdata).
var cmReal = map[string][]cmWant{
	"../interop/testdata/rxe_rping_reject.pcap.gz": {{2, decode.FindCMReject, 8, 1, 0}},
	// pcaps/rxe (MANIFEST.md there has the guests' commands):
	// perftest's second REQ reaches the server before it listens again
	// (REJ Invalid Service ID), and the crashed client's DREQ is never answered.
	"../pcaps/rxe/read_lat_cm_rej_race.pcap": {{27, decode.FindCMReject, 8, 26, 0}, {28, decode.FindCMDREQUnanswered, 0, 0, 0}},
	// rping's server stopped: the kernel answers the resent REQ with an MRA.
	"../pcaps/rxe/rping_mra.pcap": {{5, decode.FindCMMRA, 0, 4, 0}},
	// ucmatose -c 2 against a server taking 1: both rejected by the server,
	// the second after its REP.
	"../pcaps/rxe/ucmatose_consumer_rej.pcap": {{6, decode.FindCMReject, 28, 4, 0}, {7, decode.FindCMReject, 28, 5, 0}},
	// rping and ucmatose to ports nobody listens on.
	"../pcaps/rxe/cm_rej_no_listener.pcap": {{4, decode.FindCMReject, 8, 3, 0}, {6, decode.FindCMReject, 8, 5, 0}},
}

// cmFindings lists the CM findings of r in order.
func cmFindings(r *analyzed) []cmWant {
	var got []cmWant
	for _, f := range r.findings {
		if cmKinds[f.Kind] {
			w := cmWant{f.Frame, f.Kind, f.Sub, f.Ref, 0}
			if int(f.Frame) < len(r.packets) {
				w.count = r.packets[f.Frame].CMCount
			}
			got = append(got, w)
		}
	}
	return got
}

func TestCMContractReal(t *testing.T) {
	for path, want := range cmReal {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := analyze(t, path, decode.AnalyzerOptions{})
			assert.ElementsMatch(t, want, cmFindings(r), r.dump())
			for _, w := range want {
				if w.kind == decode.FindCMReject {
					require.NotNil(t, r.packets[w.frame].CM)
					assert.Equal(t, "passive", r.packets[w.frame].CM.RejByName(), "frame %d", w.frame)
				}
			}
		})
	}
}

func TestCMContractCrafted(t *testing.T) {
	for name, want := range cmCrafted {
		t.Run(name, func(t *testing.T) {
			r := analyze(t, "../pcaps/"+name, decode.AnalyzerOptions{})
			assert.ElementsMatch(t, want, cmFindings(r), r.dump())
		})
	}
}

// TestCMContractNowhereElse: no capture but the crafted ones (and the real
// REJ of cmReal) breaks a CM contract or has an MRA, an unanswered DREQ or
// a REJ: not the rest of the corpus, not the real rxe captures (rping and
// ucmatose connect with RDMA CM), not the third-party captures of
// IBWIRE_EXTRA_PCAPS nor the rxe NVMe-oF and NFS/RDMA captures of
// IBWIRE_ULP_PCAPS (both read in place).
func TestCMContractNowhereElse(t *testing.T) {
	var files []string
	for _, pat := range []string{"../pcaps/*.pcap", "../pcaps/rxe/*.pcap", "../pcaps/rxe/interop/*.pcap", "../testdata/*.pcap*",
		"../testdata/vectors/*.pcap*", "../capture/testdata/*.pcap*", "../interop/testdata/*.pcap*"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	for _, env := range []string{"IBWIRE_EXTRA_PCAPS", "IBWIRE_ULP_PCAPS"} {
		if dir := os.Getenv(env); dir != "" {
			m, err := filepath.Glob(filepath.Join(dir, "*.pcap"))
			require.NoError(t, err)
			files = append(files, m...)
		}
	}
	require.Greater(t, len(files), 60)
	cmConnected := 0
	for _, f := range files {
		if _, crafted := cmCrafted[filepath.Base(f)]; crafted && strings.HasPrefix(f, "../pcaps/") {
			continue
		}
		if _, real := cmReal[f]; real {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := analyze(t, f, decode.AnalyzerOptions{})
			assert.Empty(t, cmFindings(r), r.dump())
			for _, p := range r.packets {
				if p.CM != nil && p.CM.REQFrame != 0 {
					cmConnected++
					break
				}
			}
		})
	}
	assert.GreaterOrEqual(t, cmConnected, 8, "captures whose connections the checks followed")
}

// TestCMContractSides checks which side each negotiated value binds: the
// REP's RNR Retry Count the active side, the REQ's the passive side; the
// REP's Responder Resources the active side's READs, its Initiator Depth
// the passive side's.
func TestCMContractSides(t *testing.T) {
	r := analyze(t, "../pcaps/cm_contract_rnr.pcap", decode.AnalyzerOptions{})
	k := r.packets[4].CM // the SEND, active side
	require.NotNil(t, k)
	assert.EqualValues(t, 1, r.packets[4].Dir, "the REQ's sender is A")
	assert.Equal(t, uint8(0), k.Active)
	assert.Equal(t, [2]uint8{1, 7}, k.RNRRetryCount, "REP's 1 for the active side, REQ's 7 for the passive")
	assert.EqualValues(t, 1, k.REQFrame)
	assert.EqualValues(t, 2, k.REPFrame)
	assert.Equal(t, 1024, k.PathMTU)

	r = analyze(t, "../pcaps/cm_contract_reads.pcap", decode.AnalyzerOptions{})
	k = r.packets[4].CM
	require.NotNil(t, k)
	assert.Equal(t, [2]uint8{2, 4}, k.MaxReads, "REP Responder Resources 2 for A, Initiator Depth 4 (MaxRdAtomic) for B")
	assert.Same(t, k, r.packets[7].CM, "the responses carry the same contract")
}

// TestCMRejectSummary names the reason and the side in -z expert.
func TestCMRejectSummary(t *testing.T) {
	for _, tc := range []struct {
		sub  uint8
		want string
	}{
		{8, "CM connection rejected: Invalid Service ID (by the passive side)"},
		{1<<6 | 28, "CM connection rejected: Consumer Reject (by the active side)"},
		{0, "CM connection rejected"},
	} {
		f := decode.Finding{Kind: decode.FindCMReject, Sub: tc.sub}
		assert.Equal(t, tc.want, f.Summary())
	}
	assert.Equal(t, "P_Key differs from the CM path", (&decode.Finding{Kind: decode.FindCMPathMismatch, Sub: decode.CMPathPKey}).Summary())
	assert.Equal(t, "Consumer Reject", layers.CMRejectReason(28).String())
}

// analyzeTrace writes a crafted trace to a capture and analyzes it.
func analyzeTrace(t *testing.T, e craft.Encap, tr craft.Trace) *analyzed {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.pcap")
	w, err := capture.Create(path, capture.FormatPcap, e.LinkType(), true)
	require.NoError(t, err)
	for _, f := range tr.Frames {
		require.NoError(t, w.WritePacket(capture.Packet{Data: f.Data, LinkType: f.LinkType, Time: f.Time, Length: len(f.Data)}))
	}
	require.NoError(t, w.Close())
	return analyze(t, path, decode.AnalyzerOptions{})
}

// TestCMMRAHonoured: a REQ sent again after the MRA's service timeout
// honoured it; before, it did not. A DREQ sent again is unanswered at the
// retransmission (and, with no DREP by the end, the first DREQ too); a
// DREP that comes after the retransmission still answers the end.
func TestCMMRAHonoured(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout uint8
		resend  time.Duration
		want    []cmWant
	}{
		{"before the timeout", 10, time.Millisecond, []cmWant{{2, decode.FindCMMRA, 0, 1, 0}, {3, decode.FindCMMRAIgnored, 0, 2, 0}}},
		{"after the timeout", 2, time.Millisecond, []cmWant{{2, decode.FindCMMRA, 0, 1, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := craft.New(craft.Config{})
			require.NoError(t, err)
			require.NoError(t, c.Connect(craft.CMOptions{MRA: &craft.CMMRA{ServiceTimeout: tc.timeout, Resend: tc.resend}}))
			require.NoError(t, c.Disconnect())
			assert.ElementsMatch(t, tc.want, cmFindings(analyzeTrace(t, craft.RoCEv2, c.Trace())))
		})
	}
	c, err := craft.New(craft.Config{})
	require.NoError(t, err)
	require.NoError(t, c.Connect(craft.CMOptions{}))
	require.NoError(t, c.DisconnectUnanswered(50*time.Millisecond))
	assert.ElementsMatch(t, []cmWant{{4, decode.FindCMDREQUnanswered, 0, 0, 0}, {5, decode.FindCMDREQUnanswered, 0, 4, 0}},
		cmFindings(analyzeTrace(t, craft.RoCEv2, c.Trace())))
}

// TestCMDisconnectCrossingDREQs: perftest's two sides disconnected one
// connection at the same moment (rxe, pcaps/rxe/read_lat_cm.pcap frames
// 95/96, both answered at 97/98): two connections end twice, not three
// times, and a crossing DREQ is no unanswered one.
func TestCMDisconnectCrossingDREQs(t *testing.T) {
	r := analyze(t, "../pcaps/rxe/read_lat_cm.pcap", decode.AnalyzerOptions{})
	var ends []uint32
	for _, f := range r.findings {
		switch f.Kind {
		case decode.FindCMDisconnect:
			ends = append(ends, f.Frame)
		case decode.FindCMDREQUnanswered:
			t.Errorf("frame %d: DREQ reported unanswered", f.Frame)
		}
	}
	assert.Equal(t, []uint32{94, 97}, ends)
}
