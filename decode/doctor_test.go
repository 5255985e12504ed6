package decode_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
)

// doctorExpected lists, for the captures that show a misconfiguration,
// the checks at warning level or above the doctor must report, with why.
// Every other capture is clean: nothing at warning level or above.
var doctorExpected = map[string]struct {
	checks []decode.DoctorCheck
	why    string
}{
	"pcaps/doctor_not_ect.pcap":                     {[]decode.DoctorCheck{decode.DoctorNotECT}, "one connection Not-ECT beside an ECN-capable one"},
	"pcaps/doctor_cnp_class.pcap":                   {[]decode.DoctorCheck{decode.DoctorCNPClass}, "CNPs on DSCP 48, data on 26"},
	"pcaps/doctor_ack_class.pcap":                   {[]decode.DoctorCheck{decode.DoctorACKClass}, "ACKs on DSCP 0, WRITEs on 26"},
	"pcaps/doctor_priority0.pcap":                   {[]decode.DoctorCheck{decode.DoctorPriority0}, "PFC on priority 3, RoCE untagged on priority 0"},
	"pcaps/doctor_mixed_dscp.pcap":                  {[]decode.DoctorCheck{decode.DoctorMixedDSCP}, "requests on DSCP 26 and 10"},
	"pcaps/doctor_small_mtu.pcap":                   {[]decode.DoctorCheck{decode.DoctorSmallMTU}, "a QP at MTU 1024 beside one at 4096"},
	"pcaps/doctor_udp_source_port.pcap":             {[]decode.DoctorCheck{decode.DoctorSourcePort}, "three QPs on one source port"},
	"pcaps/doctor_roce_v1_v2.pcap":                  {[]decode.DoctorCheck{decode.DoctorRoCEMixed}, "a RoCEv1 and a RoCEv2 connection"},
	"pcaps/doctor_gid_ip.pcap":                      {[]decode.DoctorCheck{decode.DoctorGIDMismatch}, "a REQ naming a local GID other than its IP source"},
	"pcaps/rc_mtu_segmentation.pcap":                {[]decode.DoctorCheck{decode.DoctorSmallMTU}, "one QP per path MTU from 256 to 4096 from one sender: the four below 4096 are small"},
	"pcaps/broken_bad_icrc.pcap":                    {[]decode.DoctorCheck{decode.DoctorICRC}, "a flipped payload bit"},
	"pcaps/broken_bad_vcrc.pcap":                    {[]decode.DoctorCheck{decode.DoctorICRC}, "a flipped VCRC bit"},
	"pcaps/broken_erf.pcap":                         {[]decode.DoctorCheck{decode.DoctorICRC}, "a bad ICRC and a bad VCRC"},
	"pcaps/cm_contract_mtu.pcap":                    {[]decode.DoctorCheck{decode.DoctorCMContract}, "a payload above the REQ's MTU"},
	"pcaps/cm_contract_path.pcap":                   {[]decode.DoctorCheck{decode.DoctorCMContract}, "traffic off the REQ's path"},
	"pcaps/cm_contract_path_ib.pcap":                {[]decode.DoctorCheck{decode.DoctorCMContract}, "traffic off the REQ's path, native IB"},
	"pcaps/cm_contract_reads.pcap":                  {[]decode.DoctorCheck{decode.DoctorCMContract}, "more READs outstanding than the REP allows"},
	"pcaps/cm_contract_retries.pcap":                {[]decode.DoctorCheck{decode.DoctorCMContract}, "more retries than the REQ's Retry Count"},
	"pcaps/cm_contract_rnr.pcap":                    {[]decode.DoctorCheck{decode.DoctorCMContract}, "more RNR retries than allowed"},
	"pcaps/cm_mra.pcap":                             {[]decode.DoctorCheck{decode.DoctorCMContract}, "a REP sent again before the MRA's timeout"},
	"pcaps/rc_cnp_ecn.pcap":                         {[]decode.DoctorCheck{decode.DoctorNoCCReaction}, "craft's RC sender does not slow down for its CNPs"},
	"pcaps/ib_fecn_cnp.pcap":                        {[]decode.DoctorCheck{decode.DoctorNoCCReaction}, "the same over native IB"},
	"testdata/sll2-tcpdump-any.pcap":                {[]decode.DoctorCheck{decode.DoctorICRC}, "payloads re-sent from other addresses: every ICRC is wrong (testdata/README.md)"},
	"testdata/vectors/scapy-rocev2-bad-icrc.pcap":   {[]decode.DoctorCheck{decode.DoctorICRC}, "the negative vector"},
	"testdata/vectors/scapy-uts-known-answers.pcap": {[]decode.DoctorCheck{decode.DoctorRoCEMixed}, "known answers of both RoCE versions in one file"},
}

// doctor runs the Analyzer and the doctor over a capture, ICRCs checked.
func doctor(t *testing.T, path string) []decode.DoctorFinding {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	doc := decode.NewDoctor()
	dec := decode.NewDecoder(decode.Options{})
	var cp capture.Packet
	for {
		err := r.NextInto(&cp)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		p := dec.Decode(cp)
		a.Analyze(p)
		doc.Add(p)
	}
	a.Finish()
	return doc.Report(a)
}

// TestDoctorCorpus runs the doctor over every capture of the repository:
// each file made to show a misconfiguration gets exactly its checks at
// warning level or above, every other file none; every check is shown by
// some file. Notes are allowed: rxe sends Not-ECT with no ECN or PFC in
// sight, which the doctor mentions without warning.
func TestDoctorCorpus(t *testing.T) {
	var files []string
	for _, pattern := range []string{"pcaps/*.pcap", "pcaps/rxe/*.pcap", "pcaps/rxe/*/*.pcap", "testdata/*.pcap", "testdata/vectors/*.pcap"} {
		m, err := filepath.Glob(filepath.Join("..", pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 90)
	shown := map[decode.DoctorCheck]bool{}
	for _, f := range files {
		name := strings.TrimPrefix(filepath.ToSlash(f), "../")
		t.Run(name, func(t *testing.T) {
			var got []decode.DoctorCheck
			for _, fd := range doctor(t, f) {
				assert.NotEmpty(t, fd.Frames, "%s: evidence", fd.Check)
				assert.NotEmpty(t, fd.Fix, "%s: fix", fd.Check)
				if fd.Severity >= decode.SevWarn {
					if len(got) == 0 || got[len(got)-1] != fd.Check {
						got = append(got, fd.Check)
					}
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			want := doctorExpected[name]
			assert.Equal(t, want.checks, got, "%s", want.why)
			for _, c := range got {
				shown[c] = true
			}
		})
	}
	for _, c := range []decode.DoctorCheck{decode.DoctorNotECT, decode.DoctorCNPClass, decode.DoctorACKClass, decode.DoctorPriority0,
		decode.DoctorMixedDSCP, decode.DoctorSmallMTU, decode.DoctorSourcePort, decode.DoctorRoCEMixed, decode.DoctorICRC,
		decode.DoctorCMContract, decode.DoctorNoCCReaction, decode.DoctorGIDMismatch} {
		assert.True(t, shown[c], "no capture shows %s", c)
	}
	_, err := os.Stat("../pcaps/doctor_not_ect.pcap")
	require.NoError(t, err)
}

// TestDoctorNotECTSeverity: Not-ECT data is a warning beside ECN-capable
// traffic and a note where nothing uses ECN or PFC (rxe).
func TestDoctorNotECTSeverity(t *testing.T) {
	for _, tt := range []struct {
		file string
		sev  decode.Severity
	}{{"../pcaps/doctor_not_ect.pcap", decode.SevWarn}, {"../pcaps/rxe/rping.pcap", decode.SevNote}} {
		fs := doctor(t, tt.file)
		require.Len(t, fs, 1, tt.file)
		assert.Equal(t, decode.DoctorNotECT, fs[0].Check)
		assert.Equal(t, tt.sev, fs[0].Severity, tt.file)
	}
}
