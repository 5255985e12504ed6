package correlate_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/correlate"
	"github.com/ibwire/ibwire/layers"
)

// netemSet is a run the interop harness kept (interop/keep-points.sh):
// one rxe run seen inside the sending guest before its netem qdisc and on the
// bridge after it, with netem's own counters and what tshark found missing.
type netemSet struct {
	dir   string
	facts map[string]string
	// missing are the RoCE packets the guest sent and the bridge lacks, as
	// tshark listed them: "destqp psn", one line per transmission.
	missing []string
}

func readNetemSet(t *testing.T, dir string) netemSet {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "MANIFEST.md"))
	require.NoError(t, err)
	defer f.Close()
	set := netemSet{dir: dir, facts: map[string]string{}}
	row := regexp.MustCompile(`^\| (0x[0-9a-f]{6}) \| ([0-9]+) \| [0-9]+ \| 0x[0-9a-f]{8} \|$`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": "); ok && strings.HasPrefix(line, "- ") {
			set.facts[k] = v
		}
		if m := row.FindStringSubmatch(line); m != nil {
			set.missing = append(set.missing, m[1]+" "+m[2])
		}
	}
	require.NoError(t, sc.Err())
	return set
}

func (s netemSet) count(t *testing.T, fact string) int {
	t.Helper()
	n, err := strconv.Atoi(s.facts[fact])
	require.NoError(t, err, "MANIFEST.md fact %q", fact)
	return n
}

// netemDropped reads netem's dropped counter from `tc -s qdisc show` output.
func netemDropped(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^qdisc netem .*\n Sent [0-9]+ bytes [0-9]+ pkt \(dropped ([0-9]+),`).FindSubmatch(b)
	require.NotNil(t, m, "no netem qdisc in %s", path)
	n, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	return n
}

// sentFrames returns the frames of a capture whose Ethernet source is mac,
// by content, each with its frame numbers (a frame sent twice byte for byte
// has two).
func sentFrames(t *testing.T, path string, mac []byte) map[string][]int {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	out := map[string][]int{}
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if len(p.Data) >= 12 && string(p.Data[6:12]) == string(mac) {
			out[string(p.Data)] = append(out[string(p.Data)], p.Number)
		}
	}
}

// TestNetemLossOnRealCaptures: on each kept harness run, every RoCE packet
// the guest sent and the bridge did not see is attributed to the guest →
// bridge hop, and their count is netem's own drop counter less the frames
// other than RoCE it dropped; nothing else is lost and no capture dropped
// anything. The known answers come from tools that are not ours: netem's
// counter (tc), the frames the guest point has and the bridge lacks
// (compared byte for byte here, which a bridge leaves unchanged), and
// tshark's list of them.
func TestNetemLossOnRealCaptures(t *testing.T) {
	const (
		guest = "52:54:00:77:00:11" // the sending guest's MAC and address
		ip    = "192.168.77.11"
		// A frame the TCG guest receives waits up to ~0.1 s before its
		// ingress hook sees it (104 ms in 20261126T060831Z), past
		// DefaultWindow.
		window = 200 * time.Millisecond
	)
	dirs, err := filepath.Glob("../pcaps/multipoint_netem/*/MANIFEST.md")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, m := range dirs {
		dir := filepath.Dir(m)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			set := readNetemSet(t, dir)
			require.Equal(t, guest, set.facts["guest MAC"])
			guestPath, bridgePath := filepath.Join(dir, "guest.pcap.gz"), filepath.Join(dir, "bridge.pcap.gz")

			// netem's count, and the frames behind it.
			dropped := netemDropped(t, filepath.Join(dir, "tc-qdisc.txt"))
			require.Equal(t, set.count(t, "netem dropped"), dropped)
			mac, err := net.ParseMAC(guest)
			require.NoError(t, err)
			atGuest, atBridge := sentFrames(t, guestPath, mac), sentFrames(t, bridgePath, mac)
			var lostFrames []int // guest point frame numbers the bridge lacks
			p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
			var lostRoCE []string
			wantFrames := map[int]string{}
			for data, frames := range atGuest {
				n := len(frames) - len(atBridge[data])
				if n <= 0 {
					continue
				}
				// which copies the bridge lacks cannot be told from bytes
				// alone; rxe gives each transmission its own IP ID, so a
				// frame sent once has one copy
				require.Len(t, frames, 1, "frame %d sent %d times byte for byte", frames[0], len(frames))
				lostFrames = append(lostFrames, frames[0])
				if p.Decode([]byte(data)) == nil && p.Has(layers.LayerTypeBTH) {
					id := fmt.Sprintf("0x%06x %d", p.BTH.DestQP, uint32(p.BTH.PSN))
					lostRoCE = append(lostRoCE, id)
					wantFrames[frames[0]] = id
				}
			}
			assert.Equal(t, dropped, len(lostFrames), "netem dropped %d, the bridge lacks %d frames of the guest's", dropped, len(lostFrames))
			assert.Equal(t, set.count(t, "RoCE packets missing at the bridge"), len(lostRoCE))
			assert.Equal(t, dropped-len(lostRoCE), set.count(t, "other frames missing at the bridge"))
			sort.Strings(lostRoCE)
			sort.Strings(set.missing)
			require.Equal(t, set.missing, lostRoCE, "tshark's list and the frames' own headers")

			// ibdump --correlate's answer.
			gotFrames := map[int]string{}
			rep, err := correlate.Run(context.Background(), correlate.Config{
				Points: []correlate.Point{{Name: "guest", Path: guestPath}, {Name: "bridge", Path: bridgePath}},
				Window: window,
				Packet: func(s *correlate.Sighting) {
					if s.LostOn == "" {
						return
					}
					assert.Equal(t, "guest → bridge", s.LostOn, "PSN %d copy %d, frames %v", s.PSN, s.Copy, s.Frames)
					gotFrames[s.Frames[0]] = fmt.Sprintf("0x%06x %d", s.Flow.DestQP, s.PSN)
				},
			})
			require.NoError(t, err)
			assert.Equal(t, wantFrames, gotFrames, "the guest point's frames lost on guest → bridge (frame: dest QP, PSN)")
			for _, pt := range rep.Points {
				assert.Zero(t, pt.CaptureDrops, "capture drops at %s", pt.Name)
				assert.Zero(t, pt.Errors, "decode errors at %s: %s", pt.Name, pt.FirstError)
			}
			require.NotEmpty(t, rep.Flows)
			// The clock estimate must respect every packet both ways: no
			// one-way delay below zero after the fix (a drift fitted to the
			// jitter of a TCG guest's delays once left 16 ACKs there).
			for _, fl := range rep.Flows {
				for _, h := range fl.Hops {
					assert.Zero(t, h.Negative, "%s → %s delays below zero (offset %v ± %v, drift %.2f ppm)", h.From, h.To,
						rep.Points[1].Clock.Offset, rep.Points[1].Clock.Uncertainty, rep.Points[1].Clock.DriftPPM)
				}
			}
			sent := false
			for _, fl := range rep.Flows {
				for _, seg := range fl.Segments {
					want := 0
					if fl.Src == ip && seg.Name == "guest → bridge" {
						want, sent = len(lostRoCE), true
					}
					assert.Equal(t, want, seg.Losses, "%s → %s QP %#x, segment %s", fl.Src, fl.Dst, fl.DestQP, seg.Name)
				}
				for i, n := range fl.CaptureDrops {
					assert.Zero(t, n, "%s → %s: capture drops at %s", fl.Src, fl.Dst, fl.Path[i])
				}
			}
			assert.True(t, sent, "no flow from %s along guest → bridge", ip)
		})
	}
}
