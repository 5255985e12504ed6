package pcaps_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	gplayers "github.com/google/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// manifestFile is one section of MANIFEST.md, as a reader of the manifest
// (the analysis tests) sees it.
type manifestFile struct {
	name     string
	facts    map[string]string
	frames   [][]string // cells of the frame table
	findings [][]string // cells of the findings table
}

// readManifest parses MANIFEST.md: "## file" sections, "- key: value"
// facts, then a frame table and a findings table.
func readManifest(t *testing.T) []*manifestFile {
	f, err := os.Open("MANIFEST.md")
	require.NoError(t, err)
	defer f.Close()
	var files []*manifestFile
	var cur *manifestFile
	var table *[][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			cur = &manifestFile{name: strings.TrimPrefix(line, "## "), facts: map[string]string{}}
			files = append(files, cur)
			table = nil
		case cur == nil:
		case strings.HasPrefix(line, "- "):
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			require.True(t, ok, line)
			cur.facts[k] = v
		case strings.HasPrefix(line, "| # |"):
			table = &cur.frames
		case strings.HasPrefix(line, "| frame |"):
			table = &cur.findings
		case strings.HasPrefix(line, "| ---"):
		case strings.HasPrefix(line, "| ") && table != nil:
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			*table = append(*table, cells)
		}
	}
	require.NoError(t, sc.Err())
	return files
}

// firstLayer is the layer frames of a link type start with.
var firstLayer = map[layers.LinkType]gopacket.LayerType{
	1: gplayers.LayerTypeEthernet, 197: layers.LayerTypeERF, 247: layers.LayerTypeLRH}

// TestManifestDescribesFiles reads MANIFEST.md as a consumer would and
// checks it against the captures: frame counts, link types, how each frame
// decodes, and that findings name frames that exist.
func TestManifestDescribesFiles(t *testing.T) {
	files := readManifest(t)
	require.NotEmpty(t, files)
	for _, mf := range files {
		t.Run(mf.name, func(t *testing.T) {
			r, err := capture.Open(mf.name)
			require.NoError(t, err)
			defer r.Close()
			lt := r.LinkType()
			assert.Equal(t, mf.facts["link type"], fmt.Sprintf("%d (%s)", uint32(lt), map[layers.LinkType]string{
				1: "Ethernet", 197: "ERF", 247: "InfiniBand"}[lt]))
			p := layers.NewParser(firstLayer[lt], layers.ParserOptions{})
			n := 0
			for {
				pkt, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				require.Less(t, n, len(mf.frames), "more frames than the manifest lists")
				row := mf.frames[n]
				n++
				require.Equal(t, strconv.Itoa(n), row[0])
				assert.Equal(t, pkt.Length, len(pkt.Data), "frames are whole")
				derr := p.Decode(pkt.Data)
				want := row[6]
				var de *layers.DecodeError
				switch {
				case errors.As(derr, &de):
					assert.Equal(t, fmt.Sprintf("error: %s.%s %v", de.Layer, de.Field, de.Err), want, "frame %d", n)
				default:
					require.NoError(t, derr)
					icrc, _ := p.CheckICRC()
					vcrc, _ := p.CheckVCRC()
					var got []string
					if icrc == layers.CRCBad {
						got = append(got, "icrc bad")
					}
					if vcrc == layers.CRCBad {
						got = append(got, "vcrc bad")
					}
					if len(got) == 0 {
						got = []string{"ok"}
					}
					assert.Equal(t, strings.Join(got, ", "), want, "frame %d", n)
					if !p.Has(layers.LayerTypeBTH) { // a raw packet
						assert.Equal(t, []string{"raw", "-"}, row[3:5], "frame %d", n)
						continue
					}
					assert.Equal(t, p.BTH.Opcode.String(), row[3], "frame %d", n)
					assert.Equal(t, p.BTH.PSN.String(), row[4], "frame %d", n)
				}
			}
			assert.Equal(t, len(mf.frames), n)
			assert.Equal(t, strconv.Itoa(n), mf.facts["frames"])
			for _, fd := range mf.findings {
				frame, err := strconv.Atoi(fd[0])
				require.NoError(t, err)
				ref, err := strconv.Atoi(fd[2])
				require.NoError(t, err)
				assert.True(t, frame >= 1 && frame <= n && ref >= 0 && ref <= n, "finding %v", fd)
			}
		})
	}
	// Every generated capture has a section.
	pcaps, err := filepath.Glob("*.pcap")
	require.NoError(t, err)
	assert.Len(t, files, len(pcaps))
}
