package layers_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// isRoCE reports whether a frame claims to carry an IB transport packet, by
// its outer headers alone, so a decoder that fails on it is caught.
func isRoCE(p *layers.Parser) bool {
	return p.Has(layers.LayerTypeBTH) || p.Has(layers.LayerTypeGRH) || p.Has(layers.LayerTypeLRH)
}

// roundTrip serializes the parser's layers as they were decoded and returns the bytes.
func roundTrip(t testing.TB, p *layers.Parser) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, p.SerializableLayers()...))
	out := buf.Bytes()
	if p.Has(gplayers.LayerTypeIPv4) && len(p.IPv4.Padding) > 0 {
		out = append(out, p.IPv4.Padding...) // Ethernet trailer bytes beyond the IP length
	}
	return out
}

func TestRxeCapturesDecodeVerifyAndRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../pcaps/rxe/*.pcap")
	require.NoError(t, err)
	require.Len(t, files, 33, "pcaps/rxe holds the ten shared rxe captures, twelve RDMA CM ones, three NVMe-oF excerpts, five NFS-over-RDMA ones and three iSER ones (MANIFEST.md)")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			roce := 0
			p := layers.NewParser(gplayers.LayerTypeEthernet, layers.ParserOptions{})
			for i, f := range readPcap(t, path) {
				require.NoError(t, p.Decode(f.data), "frame %d", i+1)
				if !isRoCE(p) {
					continue
				}
				roce++
				st, want := p.CheckICRC()
				require.Equal(t, layers.CRCGood, st, "frame %d: ICRC %08x, computed %08x", i+1, p.BTH.Trailer.ICRC, want)
				requireSameBytes(t, f.data, roundTrip(t, p), "frame %d: decode then serialize", i+1)
			}
			assert.Equal(t, manifestRoCECount(t, filepath.Base(path)), roce)
		})
	}
}

// manifestRoCECount reads the RoCE packet count of a capture from
// pcaps/rxe/MANIFEST.md ("pkts (RoCE/TCP/ARP)" column).
func manifestRoCECount(t *testing.T, file string) int {
	f, err := os.Open("../pcaps/rxe/MANIFEST.md")
	require.NoError(t, err)
	defer f.Close()
	re := regexp.MustCompile(`\| \d+ \((\d+)/\d+/\d+\) \|`)
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "| "+file+" ") {
			m := re.FindStringSubmatch(s.Text())
			require.NotNil(t, m, file)
			n := 0
			for _, c := range m[1] {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	t.Fatalf("%s not in MANIFEST.md", file)
	return 0
}

func TestVectorsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.pcap"))
	require.NoError(t, err)
	for _, path := range files {
		for i, f := range readPcap(t, path) {
			p := layers.NewParser(firstLayer(f.linkType), layers.ParserOptions{})
			require.NoError(t, p.Decode(f.data))
			requireSameBytes(t, f.data, roundTrip(t, p), "%s frame %d", filepath.Base(path), i+1)
		}
	}
}

// TestExtraPcaps reads third-party captures named by IBWIRE_EXTRA_PCAPS (never
// copied into the project: they carry no licence). Every packet decodes
// without panic; ICRC results match SOURCES.md, whose "0/N verify" rows are
// the captures expected to fail.
func TestExtraPcaps(t *testing.T) {
	dir := os.Getenv("IBWIRE_EXTRA_PCAPS")
	if dir == "" {
		t.Skip("IBWIRE_EXTRA_PCAPS not set")
	}
	sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	require.NoError(t, err)
	failing := map[string]bool{}
	for _, line := range strings.Split(string(sources), "\n") {
		if strings.Contains(line, "**0/") {
			failing[strings.TrimSpace(strings.Split(line, "|")[1])] = true
		}
	}
	require.Len(t, failing, 5, "SOURCES.md marks five captures whose ICRCs do not verify")
	files, err := filepath.Glob(filepath.Join(dir, "*.pcap"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			var good, bad, malformed int
			frames := readPcap(t, path)
			p := layers.NewParser(firstLayer(frames[0].linkType), layers.ParserOptions{})
			for i, f := range frames {
				if err := p.Decode(f.data); err != nil {
					var de *layers.DecodeError
					require.True(t, errors.As(err, &de), "frame %d: %v", i+1, err)
					malformed++
					continue
				}
				switch st, _ := p.CheckICRC(); st {
				case layers.CRCGood:
					good++
				case layers.CRCBad:
					bad++
				}
				if p.Has(layers.LayerTypeLRH) {
					vst, _ := p.CheckVCRC()
					assert.Equal(t, layers.CRCGood, vst, "frame %d VCRC", i+1)
				}
			}
			t.Logf("%s: %d frames, ICRC good %d bad %d, malformed %d", name, len(frames), good, bad, malformed)
			if failing[name] {
				assert.Zero(t, good, "SOURCES.md says no ICRC verifies")
				assert.NotZero(t, bad+malformed)
			} else {
				assert.Zero(t, bad, "ICRC mismatches")
				assert.Zero(t, malformed)
				assert.NotZero(t, good)
			}
		})
	}
}

// requireSameBytes fails with the first differing offset instead of two dumps.
func requireSameBytes(t testing.TB, want, got []byte, msg string, args ...any) {
	t.Helper()
	if bytes.Equal(want, got) {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	t.Fatalf("%s: %d bytes, got %d; first difference at byte %d", fmt.Sprintf(msg, args...), len(want), len(got), i)
}
