package main

import (
	"bytes"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/peertest"
	"github.com/ibwire/ibwire/layers"
	"github.com/ibwire/ibwire/replay"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files in testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const rxe = "../../pcaps/rxe/"

func TestReplayCommandLine(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", []string{"replay", "-h"}, exitOK, "psn-base qpn=0x11 +1000", ""},
		{"help lists flags", []string{"help", "replay"}, exitOK, "-allow-remote", ""},
		{"psn-base help", []string{"replay", "-h"}, exitOK, "-psn-base value\n    \t'qpn=QPN ±N' as in the mapping file, or QPN,±N", ""},
		{"psn-base as in the file", []string{"replay", "--psn-base", "qpn=0x11 +1000", "-w", "x", rxe + "write_bw.pcap"}, exitOK, ": 1010 rewritten", ""},
		{"psn-base with a comma", []string{"replay", "--psn-base", "0x11,-5", "-w", "x", rxe + "write_bw.pcap"}, exitOK, ": 1010 rewritten", ""},
		{"psn-base unsigned", []string{"replay", "--psn-base", "qpn=0x11 1000", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "want a signed shift"},
		{"no file", []string{"replay", "-w", "x"}, exitUsage, "", "no capture: give FILE"},
		{"no destination", []string{"replay", rxe + "write_bw.pcap"}, exitUsage, "", "no destination"},
		{"image only", []string{"replay", "--image", "x", rxe + "atomic_fadd.pcap"}, exitOK, "Wrote the 4040-byte region of conversation 1's responder (va 0x55d423207000) to", ""},
		{"two destinations", []string{"replay", "-w", "x", "--to", "127.0.0.1", rxe + "write_bw.pcap"}, exitUsage, "", "exclude each other"},
		{"remote target", []string{"replay", "--to", "192.168.77.12", rxe + "write_bw.pcap"}, exitUsage, "", "192.168.77.12 is not a loopback address: sending elsewhere needs --allow-remote"},
		{"compare without target", []string{"replay", "--compare", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "--compare needs --to HOST"},
		{"bad filter", []string{"replay", "-Y", "bth.opcode ==", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "-Y:"},
		{"conn without filter", []string{"replay", "--conn", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "--conn needs -Y"},
		{"bad rule", []string{"replay", "--qpn", "0x11", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", `--qpn "0x11": want FROM->TO`},
		{"bad map", []string{"replay", "--map", "/nonexistent.map", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "--map: open /nonexistent.map"},
		{"pacing a file", []string{"replay", "--pps", "10", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "-w writes a file at once"},
		{"two pacings", []string{"replay", "--pps", "10", "--top", "--to", "127.0.0.1", rxe + "write_bw.pcap"}, exitUsage, "", "exclude each other"},
		{"bad format", []string{"replay", "-F", "erf", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", `-F "erf"`},
		{"not invertible", []string{"replay", "--reverse", "--qpn", "4,3", "--qpn", "2,3", "-w", "x", rxe + "write_bw.pcap"}, exitUsage, "", "cannot invert"},
		{"bad setup", []string{"replay", "--compare", "--to", "127.0.0.1", "--setup", "rping", rxe + "write_bw.pcap"}, exitUsage, "", `--setup "rping": want perftest, pingpong, cm or manual`},
		{"cm picks the QPN", []string{"replay", "--compare", "--to", "127.0.0.1", "--setup", "cm", "--local-qpn", "0x99", rxe + "write_bw.pcap"}, exitUsage, "", "RDMA CM picks the QPN and first PSN"},
		{"cm on another host", []string{"replay", "--compare", "--to", "127.0.0.1", "--setup", "cm", "--oob", "127.0.0.3:7000", rxe + "write_bw.pcap"}, exitUsage, "", "the RDMA CM runs on --to's address 127.0.0.1; give :PORT"},
		{"cm bad port", []string{"replay", "--compare", "--to", "127.0.0.1", "--setup", "cm", "--oob", ":x", rxe + "write_bw.pcap"}, exitUsage, "", `--oob ":x": want :PORT`},
		{"manual needs qpn", []string{"replay", "--compare", "--to", "127.0.0.1", "--setup", "manual", rxe + "write_bw.pcap"}, exitUsage, "", "needs --peer-qpn"},
		{"compare with rules", []string{"replay", "--compare", "--to", "127.0.0.1", "--qpn", "4,2", rxe + "write_bw.pcap"}, exitUsage, "", "leave out the rewrite rules"},
		{"bad loop", []string{"replay", "--loop", "0", "--to", "127.0.0.1", rxe + "write_bw.pcap"}, exitUsage, "", "--loop 0"},
		{"missing file", []string{"replay", "-w", "x", "/nonexistent.pcap"}, exitError, "", "/nonexistent.pcap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, a := range tt.args {
				if a == "x" {
					tt.args[i] = filepath.Join(dir, "x.pcap")
				}
			}
			code, stdout, stderr := ibpeer(tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			assert.Contains(t, stdout, tt.stdout)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}

// TestReplayRewriteAndBack rewrites with a mapping file and undoes it with
// --reverse: the result is the file ibpeer writes without any rule.
func TestReplayRewriteAndBack(t *testing.T) {
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "lab.map")
	require.NoError(t, os.WriteFile(mapFile, []byte(`# rxe lab to loopback
mac 52:54:00:00:00:0b -> 02:00:00:00:00:0b
ip 192.168.77.11 -> 127.0.0.1
ip 192.168.77.12 -> 127.0.0.2
port 49441 -> 50000
qpn 0x11 -> 0x123
rkey 0x2c6 -> 0xabcd
va 0x56005f76d000 -> 0x1000 len 0x1000
psn-base qpn=0x11 +1000
`), 0o644))
	plain, moved, back := filepath.Join(dir, "plain.pcap"), filepath.Join(dir, "moved.pcap"), filepath.Join(dir, "back.pcap")
	code, _, stderr := ibpeer("replay", "-w", plain, rxe+"write_bw.pcap")
	require.Equal(t, exitOK, code, stderr)
	code, stdout, stderr := ibpeer("replay", "--map", mapFile, "-w", moved, rxe+"write_bw.pcap")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, fmt.Sprintf("Wrote 1043 of 1043 frames to %s: 1043 rewritten, 1000 ICRCs and 0 VCRCs recomputed\n", moved), stdout)
	code, _, stderr = ibpeer("replay", "--map", mapFile, "--reverse", "-w", back, moved)
	require.Equal(t, exitOK, code, stderr)
	a, err := os.ReadFile(plain)
	require.NoError(t, err)
	b, err := os.ReadFile(back)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "rewriting back gives the same file")

	// The moved capture decodes with the new values and every ICRC verifies.
	r, err := capture.Open(moved)
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	qpns := map[uint32]int{}
	for {
		p, err := r.Next()
		if err != nil {
			break
		}
		pk := dec.Decode(decode.Input{Number: p.Number, LinkType: p.LinkType, Data: p.Data})
		if b := pk.BTH(); b != nil {
			qpns[b.DestQP]++
			assert.Equal(t, layers.CRCGood, pk.ICRC, "frame %d", p.Number)
			if b.Opcode.Info().Has(layers.HdrRETH) {
				assert.Equal(t, uint32(0xabcd), b.RETH.RKey)
				assert.Equal(t, uint64(0x1000), b.RETH.VA)
			}
		}
	}
	assert.Equal(t, map[uint32]int{0x123: 1000}, qpns)
}

// TestReplayRewriteVCRC moves a LID in native IB captures: every VCRC is
// recomputed, the good ones verify afterwards, and the one a capture had
// wrong on purpose stays wrong.
func TestReplayRewriteVCRC(t *testing.T) {
	vcrcs := func(path string) (good, bad int, lids map[uint16]int) {
		r, err := capture.Open(path)
		require.NoError(t, err)
		defer r.Close()
		dec := decode.NewDecoder(decode.Options{})
		lids = map[uint16]int{}
		for {
			p, err := r.Next()
			if err != nil {
				break
			}
			pk := dec.Decode(decode.Input{Number: p.Number, LinkType: p.LinkType, Data: p.Data})
			switch pk.VCRC {
			case layers.CRCGood:
				good++
			case layers.CRCBad:
				bad++
			}
			if pk.Headers.Has(layers.LayerTypeLRH) {
				lids[pk.Headers.LRH.SLID]++
				lids[pk.Headers.LRH.DLID]++
			}
		}
		return good, bad, lids
	}
	tests := []struct {
		file, summary string
		good, bad     int
	}{
		{"conv_ib.pcap", ": 23 rewritten, 23 ICRCs and 23 VCRCs recomputed\n", 23, 0},
		{"broken_bad_vcrc.pcap", ": 12 rewritten, 12 ICRCs and 12 VCRCs recomputed\n", 11, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "moved.pcap")
			code, stdout, stderr := ibpeer("replay", "--lid", "1,7", "-w", out, "../../pcaps/"+tt.file)
			require.Equal(t, exitOK, code, stderr)
			assert.True(t, strings.HasSuffix(stdout, tt.summary), stdout)
			good, bad, lids := vcrcs("../../pcaps/" + tt.file)
			require.Equal(t, [2]int{tt.good, tt.bad}, [2]int{good, bad}, "the capture as it is")
			require.NotZero(t, lids[1])
			good, bad, moved := vcrcs(out)
			assert.Equal(t, [2]int{tt.good, tt.bad}, [2]int{good, bad}, "good and bad VCRCs after the rewrite")
			assert.Zero(t, moved[1], "LID 1 is gone")
			assert.Equal(t, lids[1], moved[7])
		})
	}
}

func TestReplaySelect(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sel.pcapng")
	code, stdout, stderr := ibpeer("replay", "-Y", "bth.opcode == 17", "-F", "pcapng", "-w", out, rxe+"write_bw.pcap")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Wrote 200 of 1043 frames")
	ps := peertest.ReadFrames(t, out)
	assert.Len(t, ps, 200)
	code, stdout, stderr = ibpeer("replay", "-Y", "bth.opcode == 17", "--conn", "-w", out, rxe+"write_bw.pcap")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Wrote 1000 of 1043 frames", "the whole connection, not its TCP set-up")
}

// TestReplayToUDP sends a capture to a UDP wire on loopback and reads it.
func TestReplayToUDP(t *testing.T) {
	rx, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.5:0"))
	require.NoError(t, err)
	defer rx.Close()
	code, stdout, stderr := ibpeer("replay", "--to", rx.LocalAddr().String(), "--from", "127.0.0.6", "--pps", "20000", "--loop", "2", rxe+"rc_pingpong.pcap")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Actual: 160 packets (")
	assert.Contains(t, stdout, "20000.0 pps asked")
	assert.Contains(t, stdout, "Skipped: 26 frames the sender cannot carry")
	assert.Regexp(t, regexp.MustCompile(`Pacing error: p50 \S+ p90 \S+ p99 \S+ max \S+`), stdout)
	dgs := make([]endpoint.Datagram, 32)
	got := 0
	for got < 160 {
		for i := range dgs {
			dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
		}
		n, err := rx.ReadBatch(dgs)
		require.NoError(t, err)
		for _, d := range dgs[:n] {
			assert.Equal(t, endpoint.ICRCGood, d.ICRC)
			assert.Equal(t, netip.MustParseAddr("127.0.0.6"), d.Src.Addr())
		}
		got += n
	}
}

// captureResponder answers requests by replaying the captured responses
// that follow each request in plan, through a UDP wire. With coalesce, of
// the plain ACKs that follow one request only the last is sent, as a
// responder that acknowledges a receive burst with one ACK does.
func captureResponder(t *testing.T, w endpoint.Wire, plan *replay.Plan, peerQPN uint32, coalesce bool, mutate func(n int, dg []byte) []byte) chan struct{} {
	after := map[layers.PSN][]*replay.Frame{}
	var last layers.PSN
	var b layers.BTH
	for _, s := range plan.Steps {
		require.NoError(t, b.DecodeFromBytes(s.Frame.Datagram(), gopacket.NilDecodeFeedback))
		if s.Request {
			last = b.PSN
			continue
		}
		after[last] = append(after[last], s.Frame)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		dgs := []endpoint.Datagram{{Payload: make([]byte, 0, endpoint.MaxDatagram)}}
		n := 0
		for {
			dgs[0].Payload = dgs[0].Payload[:0]
			if _, err := w.ReadBatch(dgs); err != nil {
				return
			}
			var rb layers.BTH
			if rb.DecodeFromBytes(dgs[0].Payload, gopacket.NilDecodeFeedback) != nil || rb.DestQP != peerQPN {
				continue
			}
			burst := after[rb.PSN]
			for k, f := range burst {
				if coalesce && k+1 < len(burst) && plainACKFrame(f) && plainACKFrame(burst[k+1]) {
					continue
				}
				n++
				dg := append([]byte(nil), f.Datagram()...)
				if mutate != nil {
					if dg = mutate(n, dg); dg == nil {
						continue
					}
				}
				if _, err := w.WriteBatch([]endpoint.Datagram{{Src: w.LocalAddr(), Dst: dgs[0].Src, Payload: dg}}); err != nil {
					return
				}
			}
		}
	}()
	return done
}

// TestReplayCompare runs compare mode against a responder that plays the
// captured responses back over UDP, once faithfully and once with one
// wrong syndrome (golden diff, exit status 1).
func TestReplayCompare(t *testing.T) {
	c, err := replay.Load(rxe+"write_bw.pcap", replay.LoadOptions{})
	require.NoError(t, err)
	plan, err := replay.NewPlan(c, 0, 0)
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		code   int
		mutate func(int, []byte) []byte
	}{
		{"same", exitOK, nil},
		{"nak", exitError, func(n int, dg []byte) []byte {
			if n == 10 {
				dg[12] = byte(layers.MakeNakSyndrome(layers.NAKInvalidRequest))
			}
			return dg
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.7:0"))
			require.NoError(t, err)
			done := captureResponder(t, w, plan, 0x4242, false, tt.mutate)
			code, stdout, stderr := ibpeer("replay", "--compare", "--to", w.LocalAddr().String(), "--from", "127.0.0.8:0",
				"--setup", "manual", "--peer-qpn", "0x4242", "--peer-rkey", "0x99", "--peer-va", "0x2000",
				"--timeout", "2s", rxe+"write_bw.pcap")
			require.NoError(t, w.Close())
			<-done
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			got := regexp.MustCompile(`127\.0\.0\.7:\d+`).ReplaceAllString(stdout, "127.0.0.7:PORT")
			golden := filepath.Join("testdata", "replay_compare_"+tt.name+".golden")
			if updating() {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got)
		})
	}
}

// TestReplayCompareCoalescedACKs: a responder that acknowledges two
// messages with one ACK differs only under --strict-acks; --image writes
// the region the capture shows.
//
// The counts do not depend on --timeout as long as the responder answers
// within it: in the bursts cases every wait ends when the ACK it waits
// for arrives (strict or not, a covered ACK is not waited for), and in
// the last case the one wait that runs out is the one the peer never
// answers, after which the last wait ends when the last ACK arrives. So
// the timeout is long (2 s): on a loaded machine the responder goroutine
// can fall 100 ms behind, and with 100 ms that was a stall, or the end
// of the play before it had read the requests; only the last case, whose
// one stall is by design, takes the whole timeout.
func TestReplayCompareCoalescedACKs(t *testing.T) {
	c, err := replay.Load(rxe+"write_bw.pcap", replay.LoadOptions{})
	require.NoError(t, err)
	plan, err := replay.NewPlan(c, 0, 0)
	require.NoError(t, err)
	onlyLast := func(n int, dg []byte) []byte {
		if n < 200 {
			return nil
		}
		return dg
	}
	for _, tt := range []struct {
		name, flag string
		coalesce   bool
		mutate     func(int, []byte) []byte
		summary    []string
		code       int
	}{
		{"bursts", "--strict-acks=false", true, nil, []string{"200 responses captured, 116 received; no differences\n" +
			"compare: 116 received responses matched captured ones; the peer coalesced 84 captured ACKs into later ones (a difference only with --strict-acks)\n"}, exitOK},
		{"bursts strict", "--strict-acks", true, nil, []string{"200 responses captured, 116 received; 33 differences (84 captured and 0 live responses not matched)"}, exitError},
		// A peer that answers nothing but the last message: its one ACK
		// covers all, but the player waited for the first in vain.
		{"only the last ACK", "--strict-acks=false", false, onlyLast, []string{"200 responses captured, 1 received; the responses agree\n",
			"the peer coalesced 199 captured ACKs", "compare: the peer had not answered as far as the capture within the timeout 1 time (first before frame 104)\n"}, exitError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.7:0"))
			require.NoError(t, err)
			done := captureResponder(t, w, plan, 0x4242, tt.coalesce, tt.mutate)
			image := filepath.Join(t.TempDir(), "region")
			code, stdout, stderr := ibpeer("replay", "--compare", "--to", w.LocalAddr().String(), "--from", "127.0.0.8:0",
				"--setup", "manual", "--peer-qpn", "0x4242", "--peer-rkey", "0x99", "--peer-va", "0x2000",
				"--timeout", "2s", "--image", image, tt.flag, rxe+"write_bw.pcap")
			require.NoError(t, w.Close())
			<-done
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			for _, s := range tt.summary {
				assert.Contains(t, stdout, s)
			}
			region, err := os.ReadFile(image)
			require.NoError(t, err)
			assert.Equal(t, plan.Image(), region)
		})
	}
}

// plainACKFrame reports a captured ACKNOWLEDGE with an ACK syndrome.
func plainACKFrame(f *replay.Frame) bool {
	var b layers.BTH
	return b.DecodeFromBytes(f.Datagram(), gopacket.NilDecodeFeedback) == nil &&
		b.Opcode.Info().Operation == layers.OpAcknowledge && b.AETH.Syndrome.IsAck()
}

// ackSummary checks a compare report whose responses all matched: every
// received response matched a captured one, and the captured ones it
// lacks are ACKs the peer coalesced into later ones, never ACKs it held
// back until a wait ran out. It returns the number received.
func ackSummary(t *testing.T, report string, captured int) int {
	t.Helper()
	m := regexp.MustCompile(`compare: (\d+) responses captured, (\d+) received; no differences\n`).FindStringSubmatch(report)
	require.NotNil(t, m, "no clean summary in:\n%s", summaryLines(report))
	assert.Equal(t, strconv.Itoa(captured), m[1])
	received, _ := strconv.Atoi(m[2])
	c := regexp.MustCompile(`compare: (\d+) received responses? matched captured ones; the peer coalesced (\d+) captured ACKs? into later ones`).FindStringSubmatch(report)
	if received == captured {
		assert.Nil(t, c)
	} else if assert.NotNil(t, c, "%d of %d received without a word on coalescing", received, captured) {
		matched, _ := strconv.Atoi(c[1])
		coalesced, _ := strconv.Atoi(c[2])
		assert.Equal(t, received, matched, "every received response matched a captured one")
		assert.Equal(t, captured, matched+coalesced)
	}
	assert.NotContains(t, report, "had not answered as far as the capture")
	assert.NotContains(t, report, "\n+live")
	return received
}

// nonLoopbackInterface names an interface that is not loopback, or skips.
func nonLoopbackInterface(t *testing.T) string {
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagLoopback == 0 {
			return ifi.Name
		}
	}
	t.Skip("no interface but loopback here")
	return ""
}

// TestReplayRefusesRemoteInterface: -i with an interface that is not
// loopback is refused, before anything is sent, unless --allow-remote.
func TestReplayRefusesRemoteInterface(t *testing.T) {
	iface := nonLoopbackInterface(t)
	for _, args := range [][]string{
		{"replay", "-i", iface, rxe + "rc_pingpong.pcap"},
		{"replay", "-i", iface, "--top", "--allow-remote=false", rxe + "rc_pingpong.pcap"},
	} {
		code, stdout, stderr := ibpeer(args...)
		assert.Equal(t, exitUsage, code, "%v", args)
		assert.Contains(t, stderr, "-i: interface "+iface+" is not a loopback device: sending out of it needs --allow-remote")
		assert.Empty(t, stdout, "nothing was sent")
	}
}

// TestReplayToInterface sends whole frames out of lo (AF_PACKET, root).
func TestReplayToInterface(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("AF_PACKET needs root")
	}
	code, stdout, stderr := ibpeer("replay", "-i", "lo", "--pps", "20000", rxe+"rc_pingpong.pcap")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Replayed "+rxe+"rc_pingpong.pcap to lo\nActual: 93 packets (46695 bytes)")
	code, _, stderr = ibpeer("replay", "-i", "nonexistent0", rxe+"rc_pingpong.pcap")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "interface nonexistent0")
}
