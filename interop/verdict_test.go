package interop

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckData runs verdict.sh's check_data on a capture Linux rxe made
// (ib_write_bw, 4096-byte WRITEs): a buffer holding what the WRITEs carried
// passes, one with two bytes changed fails at the first of them, a missing
// dump fails. The buffer is built with ibpeer replay --image, the same
// command check_data runs, so the test checks the comparison, and the
// changed copy shows it can fail.
func TestCheckData(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "ibpeer"), "../cmd/ibpeer")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	const pcap = "../pcaps/rxe/write_bw.pcap"
	good := filepath.Join(dir, "good.bin")
	out, err = exec.Command(filepath.Join(dir, "ibpeer"), "replay", "--image", good, pcap).CombinedOutput()
	require.NoError(t, err, "%s", out)
	region, err := os.ReadFile(good)
	require.NoError(t, err)
	require.Len(t, region, 4096)
	// ibpeer's buffer is twice the message, as perftest's: the rest is its own.
	region = append(region, make([]byte, 4096)...)
	require.NoError(t, os.WriteFile(good, region, 0o644))
	bad := filepath.Join(dir, "bad.bin")
	changed := append([]byte(nil), region...)
	changed[2000] ^= 0xFF
	changed[2001] ^= 0x01
	require.NoError(t, os.WriteFile(bad, changed, 0o644))

	for _, tc := range []struct{ name, region, want string }{
		{"equal", good, "notes=data: the 4096 bytes the capture shows written equal ibpeer's buffer\n"},
		{"changed", bad, "why=data: the capture's bytes and ibpeer's buffer differ from byte 2001 of 4096 on\n"},
		{"no dump", filepath.Join(dir, "none.bin"), "why=data: ibpeer left no buffer dump"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			script := `BIN=$1; why=(); notes=(); . ./verdict.sh; check_data "$2" "$3" "$4"
for w in "${why[@]}"; do echo "why=$w"; done; for n in "${notes[@]}"; do echo "notes=$n"; done`
			out, err := exec.Command("bash", "-c", script, "bash", dir, pcap, tc.region, work).CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.True(t, strings.HasPrefix(string(out), tc.want), "got %q", out)
			assert.Equal(t, 1, strings.Count(string(out), "\n"), "one verdict line: %q", out)
		})
	}
}

// TestCheckDataStridedSmallMessages: perftest places messages under 4 KiB
// at 64-byte strides (100 bytes: one every 128), so in a real 100-byte run
// against ibpeer (testdata/peer_write_bw_100_gc) bytes 100-127 of every 128
// are never written and ibpeer's buffer keeps its own random bytes there.
// The check compares only the bytes the capture shows: the run passes, a
// changed byte between the messages does not matter, a changed byte of a
// message does; a whole-region comparison would have failed at byte 101.
func TestCheckDataStridedSmallMessages(t *testing.T) {
	bin := buildTools(t, "ibpeer")
	const pcap = "testdata/peer_write_bw_100_gc.pcap.gz"
	region, err := os.ReadFile("testdata/peer_write_bw_100_gc.region.bin")
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	good := write("good.bin", region)
	gap := append([]byte(nil), region...)
	gap[110] ^= 0xFF // between the first and second message: never written
	msg := append([]byte(nil), region...)
	msg[130] ^= 0x01 // the second message's third byte
	for _, tc := range []struct{ name, region, want string }{
		{"equal", good, "notes=data: the 3200 bytes the capture shows written equal ibpeer's buffer\n"},
		{"gap changed", write("gap.bin", gap), "notes=data: the 3200 bytes the capture shows written equal ibpeer's buffer\n"},
		{"message changed", write("msg.bin", msg), "why=data: the capture's bytes and ibpeer's buffer differ from byte 131 of 4068 on\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			out := runVerdict(t, bin, `check_data "$1" "$2" "$3"`, pcap, tc.region, work)
			assert.Equal(t, tc.want, out)
		})
	}
	// what the check compares against: the capture's image is zero where
	// no WRITE went, so comparing whole regions fails at the first gap
	work := t.TempDir()
	runVerdict(t, bin, `check_data "$1" "$2" "$3"`, pcap, good, work)
	img, err := os.ReadFile(filepath.Join(work, "capture-region.bin"))
	require.NoError(t, err)
	require.Len(t, img, 4068)
	first := -1
	for i := range img {
		if img[i] != region[i] {
			first = i
			break
		}
	}
	assert.Equal(t, 100, first, "a whole-region comparison fails at byte 101")
}

// TestCheckCapture feeds the capture verdict runs as the harness records
// them: the capture and the capture tool's log. A capture that dropped
// packets fails (inconclusive: run.sh retries once) whatever it shows; a
// loss scenario passes only with a retransmission in the capture; a refused
// test's capture must be empty.
func TestCheckCapture(t *testing.T) {
	bin := buildTools(t, "ibdump")
	const (
		lossy = "testdata/rxe_write_bw_loss.pcap.gz" // 2071 retransmissions
		clean = "testdata/rxe_rc_pingpong.pcap.gz"   // none
		// frame 103: the ACK of a duplicate SEND carrying the PSN of the READ after it
		ackNamesRead = "testdata/peer_rping_loss_gs_ack_names_read.pcap.gz"
	)
	ibdumpLog := func(dropped int) string {
		return "ibdump: listening on br0, link-type ETHERNET, snapshot length 262144 bytes\n3073 packets captured\n3099 packets received by filter\n" +
			strconv.Itoa(dropped) + " packets dropped by kernel\n"
	}
	const tcpdumpLog = "tcpdump: listening on br0\n3073 packets captured\n3080 packets received by filter\n2 packets dropped by kernel\n5 packets dropped by interface\n"
	for _, tc := range []struct {
		name, pcap, caplog, minRoce, loss, refused string
		want                                       []string // lines, in order
	}{
		{"complete", lossy, ibdumpLog(0), "1", "", "", []string{"roce=3073 drops=0 retrans=", "inconclusive="}},
		{"dropped by kernel", lossy, ibdumpLog(26), "1", "", "", []string{"roce=3073 drops=26 retrans=",
			"why=capture incomplete: 26 packets dropped by the capture; its checks need the whole conversation",
			"inconclusive=the capture dropped 26 packets"}},
		{"tcpdump's drops", lossy, tcpdumpLog, "1", "", "", []string{"roce=3073 drops=7 retrans=",
			"why=capture incomplete: 7 packets dropped by the capture; its checks need the whole conversation",
			"inconclusive=the capture dropped 7 packets"}},
		{"loss with retransmissions", lossy, ibdumpLog(0), "1", "2%", "", []string{"roce=3073 drops=0 retrans=2071",
			"notes=loss 2%: 2071 retransmitted packets", "inconclusive="}},
		{"loss without retransmission", clean, ibdumpLog(0), "1", "2%", "", []string{"roce=1000 drops=0 retrans=0",
			"why=loss 2%: the capture shows no retransmission, so the loss tested nothing", "inconclusive=loss 2% caused no retransmission"}},
		{"loss and drops", lossy, ibdumpLog(3), "1", "2%", "", []string{"roce=3073 drops=3 retrans=2071",
			"why=capture incomplete: 3 packets dropped by the capture; its checks need the whole conversation",
			"notes=loss 2%: 2071 retransmitted packets", "inconclusive=the capture dropped 3 packets"}},
		{"too few packets", clean, ibdumpLog(0), "2000", "", "", []string{"roce=1000 drops=0 retrans=",
			"why=capture holds 1000 RoCE packets, want >= 2000", "inconclusive="}},
		{"refused yet traffic", clean, ibdumpLog(0), "1", "", "1", []string{"roce=1000 drops=0 retrans=",
			"why=refused, yet the capture holds 1000 RoCE packets: the test half-ran", "inconclusive="}},
		// ibpeer before 21db4ee re-ACKed a duplicate SEND with the PSN of the READ after it
		{"ACK naming a READ", ackNamesRead, ibdumpLog(0), "1", "5%", "", []string{"roce=115 drops=0 retrans=3",
			"why=a plain ACK names a READ or atomic request's PSN (frames 103): the requester may complete the request without its data (rxe does)",
			"notes=loss 5%: 3 retransmitted packets", "inconclusive="}},
		{"READs answered by their responses", "testdata/rxe_read_lat.pcap.gz", ibdumpLog(0), "1", "", "", []string{"roce=400 drops=0 retrans=", "inconclusive="}},
		{"rxe's READs under loss", "testdata/rxe_read_bw_loss.pcap.gz", ibdumpLog(0), "1", "2%", "", []string{"roce=2844 drops=0 retrans=1865",
			"notes=loss 2%: 1865 retransmitted packets", "inconclusive="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			caplog := filepath.Join(work, "capture.log")
			require.NoError(t, os.WriteFile(caplog, []byte(tc.caplog), 0o644))
			out := runVerdict(t, bin, `check_capture "$1" "$2" "$3" "$4" "$5" "$6" >/dev/null
echo "roce=$roce drops=$drops retrans=$retrans"`, tc.pcap, caplog, work, tc.minRoce, tc.loss, tc.refused)
			assert.Equal(t, strings.Join(tc.want, "\n")+"\n", out)
			check, err := os.ReadFile(filepath.Join(work, "check.log"))
			require.NoError(t, err)
			assert.Contains(t, string(check), "check ok:")
		})
	}
}

// buildTools builds the named commands into a temporary directory, the
// $BIN the verdict functions run them from.
func buildTools(t *testing.T, names ...string) string {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	for _, n := range names {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, n), "../cmd/"+n).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	return dir
}

// runVerdict sources verdict.sh with BIN=bin, runs script with args as $1…,
// then prints what the functions left: why= and notes= lines, and
// inconclusive= when the script set it.
func runVerdict(t *testing.T, bin, script string, args ...string) string {
	t.Helper()
	full := `BIN=` + bin + `; why=(); notes=(); inconclusive=; . ./verdict.sh
` + script + `
for w in "${why[@]}"; do echo "why=$w"; done; for n in "${notes[@]}"; do echo "notes=$n"; done
[ -n "${MARK_INCONCLUSIVE:-}" ] && echo "inconclusive=$inconclusive"; true`
	cmd := exec.Command("bash", append([]string{"-c", full, "bash"}, args...)...)
	if strings.Contains(script, "check_capture") || strings.Contains(script, "check_points") {
		cmd.Env = append(os.Environ(), "MARK_INCONCLUSIVE=1")
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// TestCheckPoints runs verdict.sh's check_points on a kept two-point run
// (pcaps/multipoint_netem/20261126T060831Z: guest a seen before its netem, the
// bridge after):
// netem's count, the frames the bridge lacks and ibdump --correlate's losses
// on guest → bridge agree; a netem counter one higher, a bridge capture
// missing one frame netem did not drop, or a guest capture that dropped
// packets each fail it, and a missing guest capture says so.
func TestCheckPoints(t *testing.T) {
	for _, tool := range []string{"tshark", "tcpdump", "jq", "editcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	bin := buildTools(t, "ibdump")
	const kept = "../pcaps/multipoint_netem/20261126T060831Z"
	tc, err := os.ReadFile(filepath.Join(kept, "tc-qdisc.txt"))
	require.NoError(t, err)
	const ok = "notes=points: netem dropped 42 (42 RoCE, 0 other), ibdump --correlate: 42 lost guest → bridge"
	for _, tc := range []struct {
		name string
		tc   string // tc -s qdisc output
		// cut is a frame to remove from the bridge's capture (0: none):
		// frame 749, guest a's WRITE ONLY PSN 13750907, sent once, which crossed the bridge
		cut      int
		guestLog string
		noGuest  bool
		want     []string
	}{
		{name: "as kept", tc: string(tc), want: []string{ok, "inconclusive="}},
		{name: "netem counted one more", tc: strings.Replace(string(tc), "dropped 42,", "dropped 43,", 1), want: []string{
			"why=points: netem dropped 43, yet the bridge lacks 42 frames the guest point has from guest a",
			"notes=points: netem dropped 43 (42 RoCE, 0 other), ibdump --correlate: 42 lost guest → bridge", "inconclusive="}},
		{name: "the bridge capture missed a frame", tc: string(tc), cut: 749, want: []string{
			"why=points: netem dropped 42, yet the bridge lacks 43 frames the guest point has from guest a",
			"why=points: ibdump --correlate puts 42 losses on guest → bridge, the bridge lacks 43 RoCE packets the guest sent",
			"why=points: ibdump --correlate counts 1 capture drops; neither capture dropped any",
			"why=points: the packets ibdump --correlate lost on guest → bridge are not those tshark finds missing (diff in WORK/points-missing.txt, correlate-lost.txt)",
			"notes=points: netem dropped 42 (43 RoCE, 0 other), ibdump --correlate: 42 lost guest → bridge", "inconclusive="}},
		{name: "the guest capture dropped packets", tc: string(tc), guestLog: "4101 packets captured\n4110 packets received by filter\n9 packets dropped by kernel\n", want: []string{
			"why=points: the captures dropped packets (guest 9, bridge full 0): the counts cannot close", ok,
			"inconclusive=a point's capture dropped packets"}},
		{name: "no guest capture", tc: string(tc), noGuest: true, guestLog: "tcpdump: point0: No such device exists\n", want: []string{
			"why=points: guest a left no capture (tcpdump: point0: No such device exists)", "inconclusive="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			cp := func(from, to string) {
				b, err := os.ReadFile(from)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(work, to), b, 0o644))
			}
			if !tc.noGuest {
				gunzip(t, filepath.Join(kept, "guest.pcap.gz"), filepath.Join(work, "point-guest.pcap"))
			}
			bridge := filepath.Join(work, "bridge.pcap")
			gunzip(t, filepath.Join(kept, "bridge.pcap.gz"), bridge)
			if tc.cut > 0 {
				cut := filepath.Join(work, "cut.pcap")
				out, err := exec.Command("editcap", "-F", "pcap", bridge, cut, strconv.Itoa(tc.cut)).CombinedOutput()
				require.NoError(t, err, "%s", out)
				bridge = cut
			}
			// the bridge's RoCE capture (ibdump -i) and its full one (tcpdump): the full one serves as both
			cp(bridge, "capture.pcap")
			cp(bridge, "capture-full.pcap")
			require.NoError(t, os.WriteFile(filepath.Join(work, "tc-qdisc.txt"), []byte(tc.tc), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(work, "point-tcpdump.log"), []byte(tc.guestLog), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(work, "capture-full.log"), []byte("0 packets dropped by kernel\n"), 0o644))
			out := runVerdict(t, bin, `check_points "$1" 52:54:00:77:00:11 192.168.77.11 >/dev/null`, work)
			assert.Equal(t, strings.Join(tc.want, "\n")+"\n", strings.ReplaceAll(out, work, "WORK"))
		})
	}
}

// gunzip writes the decompressed content of the gzip file from to to.
func gunzip(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}
