package replaycmd

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/replay"
)

// TestWriteImageRefusesHugeRegion: a capture whose requests span more than
// replay builds in memory (two VAs a TiB apart) is refused with the span,
// and no file is written.
func TestWriteImageRefusesHugeRegion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "region.bin")
	err := writeImage(&replay.Plan{RegionLen: 1 << 40}, path, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--image: the requests span 1099511627776 bytes")
	assert.NoFileExists(t, path)
}

// TestRunWrites: a capture written back with a rule and without pacing
// says what it rewrote; with Quiet, nothing; the image alone is written
// for its conversation's responder.
func TestRunWrites(t *testing.T) {
	const rxe = "../../../pcaps/rxe/"
	dir := t.TempDir()
	rules := &replay.Rules{}
	require.NoError(t, rules.Add(replay.KindQPN, "0x11,0x123"))
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		// write_bw.pcap: the rule moves its 1000 RoCE frames (their ICRCs
		// recomputed) and the TCP segments whose set-up messages name
		// QPN 0x11 (the 1043 frames' other 10 rewritten).
		{"qpn rule", Config{Path: rxe + "write_bw.pcap", Rules: rules, Out: filepath.Join(dir, "moved.pcap")},
			"Wrote 1043 of 1043 frames to " + filepath.Join(dir, "moved.pcap") + ": 1010 rewritten, 1000 ICRCs and 0 VCRCs recomputed\n"},
		{"quiet", Config{Path: rxe + "write_bw.pcap", Rules: &replay.Rules{}, Out: filepath.Join(dir, "plain.pcap"), Quiet: true}, ""},
		{"first 200 frames", Config{Path: rxe + "write_bw.pcap", Rules: &replay.Rules{}, MaxFrames: 200, Out: filepath.Join(dir, "head.pcap")},
			"Wrote 200 of 200 frames to " + filepath.Join(dir, "head.pcap") + ": 0 rewritten, 0 ICRCs and 0 VCRCs recomputed\n"},
		{"image only", Config{Path: rxe + "atomic_fadd.pcap", Rules: &replay.Rules{}, ImageOut: filepath.Join(dir, "region.bin")},
			"Wrote the 4040-byte region of conversation 1's responder (va 0x55d423207000) to " + filepath.Join(dir, "region.bin") + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			require.NoError(t, Run(context.Background(), tc.cfg, &out))
			assert.Equal(t, tc.want, out.String())
		})
	}
}

// TestImageMask: --image-mask marks the bytes the capture shows. In
// write_bw.pcap every WRITE carries 4096 bytes to the start of the
// server's region, so all 4096 are shown; in atomic_fadd.pcap the
// FETCH_ADDs name 64 words at 64-byte strides (tshark: 64 distinct VAs in
// the AtomicETHs, 0x…7000 to 0x…7fc0), so 512 of the 4040 bytes are shown.
func TestImageMask(t *testing.T) {
	const rxe = "../../../pcaps/rxe/"
	for _, tc := range []struct {
		pcap        string
		size, shown int
	}{
		{"write_bw.pcap", 4096, 4096},
		{"atomic_fadd.pcap", 4040, 512},
	} {
		t.Run(tc.pcap, func(t *testing.T) {
			dir := t.TempDir()
			img, mask := filepath.Join(dir, "region.bin"), filepath.Join(dir, "region.mask")
			require.NoError(t, Run(context.Background(), Config{Path: rxe + tc.pcap, Rules: &replay.Rules{}, ImageOut: img, ImageMask: mask, Quiet: true}, io.Discard))
			m, err := os.ReadFile(mask)
			require.NoError(t, err)
			require.Len(t, m, tc.size)
			shown := 0
			for _, b := range m {
				require.Contains(t, []byte{0, 1}, b)
				shown += int(b)
			}
			assert.Equal(t, tc.shown, shown)
		})
	}
}
