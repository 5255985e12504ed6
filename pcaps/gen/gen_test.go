package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// corpusDir is where go generate writes the corpus.
const corpusDir = ".."

func mustBuild(t *testing.T) []file {
	t.Helper()
	files, err := build()
	require.NoError(t, err)
	return files
}

// TestCorpusUpToDate regenerates the corpus into a temporary directory and
// compares it byte for byte with the checked-in files: go generate is
// deterministic and nobody edited its output.
func TestCorpusUpToDate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, generate(dir))
	again := t.TempDir()
	require.NoError(t, generate(again))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	generated := map[string]bool{}
	for _, e := range entries {
		generated[e.Name()] = true
		want, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		second, err := os.ReadFile(filepath.Join(again, e.Name()))
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, second), "%s differs between two runs", e.Name())
		got, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		require.NoError(t, err, "run go generate ./pcaps")
		assert.True(t, bytes.Equal(want, got), "pcaps/%s is stale: run go generate ./pcaps", e.Name())
	}
	stale, err := filepath.Glob(filepath.Join(corpusDir, "*.pcap"))
	require.NoError(t, err)
	for _, p := range stale {
		assert.True(t, generated[filepath.Base(p)], "%s is not generated any more: delete it", p)
	}
}

// TestCoverage: every opcode of the table and every extended header in
// every encapsulation, every corruption and every finding somewhere.
func TestCoverage(t *testing.T) {
	files := mustBuild(t)
	ops := map[craft.Encap]map[layers.Opcode]bool{}
	hdrs := map[craft.Encap]map[layers.HeaderKind]bool{}
	corrupt := map[craft.CorruptKind]bool{}
	found := map[craft.FindingKind]bool{}
	for _, f := range files {
		if ops[f.encap] == nil {
			ops[f.encap], hdrs[f.encap] = map[layers.Opcode]bool{}, map[layers.HeaderKind]bool{}
		}
		p := layers.NewParser(f.encap.FirstLayer(), layers.ParserOptions{})
		for i, fr := range f.trace.Frames {
			corrupt[fr.Info.Corrupt] = true
			if fr.Info.Corrupt != craft.NoCorruption {
				continue
			}
			require.NoError(t, p.Decode(fr.Data), "%s frame %d", f.name, i+1)
			if fr.Info.Raw {
				continue // no IBA transport packet
			}
			if mixedEncap[f.name] {
				continue // the opcodes of each encapsulation are counted in its own files
			}
			require.Equal(t, f.encap.Layers(), p.Encapsulation(), "%s frame %d", f.name, i+1)
			ops[f.encap][p.BTH.Opcode] = true
			for _, h := range p.BTH.Info().HeaderList() {
				hdrs[f.encap][h] = true
			}
		}
		for _, fd := range f.trace.Findings {
			found[fd.Kind] = true
		}
	}
	for _, e := range craft.Encaps() {
		for _, op := range layers.KnownOpcodes() {
			assert.True(t, ops[e][op], "%v: no %v frame", e, op)
		}
		for h := layers.HdrRDETH; h <= layers.HdrCNP; h++ {
			assert.True(t, hdrs[e][h], "%v: no %v", e, h)
		}
	}
	for _, k := range craft.CorruptKinds() {
		assert.True(t, corrupt[k], "no %v frame", k)
	}
	for _, k := range []craft.FindingKind{craft.FindingPSNGap, craft.FindingRetransmission, craft.FindingAckTimeout,
		craft.FindingNAK, craft.FindingRNRNak, craft.FindingCNP, craft.FindingECNCE, craft.FindingFECN,
		craft.FindingICRCBad, craft.FindingVCRCBad, craft.FindingTruncated, craft.FindingMalformed,
		craft.FindingBadSequence, craft.FindingLengthMismatch, craft.FindingUnknownOpcode, craft.FindingDuplicate} {
		assert.True(t, found[k], "no %v finding", k)
	}
}

// TestFramesDecode: every frame decodes with good CRCs, except the ones
// broken on purpose, which give the error or the bad CRC their kind means.
func TestFramesDecode(t *testing.T) {
	for _, f := range mustBuild(t) {
		t.Run(f.name, func(t *testing.T) {
			fs := inspect(&f)
			for i, fr := range f.trace.Frames {
				got := fs[i]
				var de *layers.DecodeError
				switch fr.Info.Corrupt {
				case craft.NoCorruption, craft.BadSequence, craft.RETHMismatch, craft.UnknownOpcode:
					require.NoError(t, got.err, "frame %d", i+1)
					wantICRC := layers.CRCGood
					if fr.Info.Raw {
						wantICRC = layers.CRCAbsent // a raw packet has a VCRC only
					}
					assert.Equal(t, wantICRC, got.icrc, "frame %d", i+1)
					if f.encap.Native() {
						assert.Equal(t, layers.CRCGood, got.vcrc, "frame %d", i+1)
					}
				case craft.BadICRC:
					require.NoError(t, got.err, "frame %d", i+1)
					assert.Equal(t, layers.CRCBad, got.icrc, "frame %d", i+1)
				case craft.BadVCRC:
					require.NoError(t, got.err, "frame %d", i+1)
					assert.Equal(t, layers.CRCGood, got.icrc, "frame %d", i+1)
					assert.Equal(t, layers.CRCBad, got.vcrc, "frame %d", i+1)
				case craft.Truncated:
					require.True(t, errors.As(got.err, &de), "frame %d: %v", i+1, got.err)
					assert.ErrorIs(t, de, layers.ErrTruncated)
				case craft.WrongPad:
					if got.err != nil {
						require.True(t, errors.As(got.err, &de), "frame %d: %v", i+1, got.err)
						assert.ErrorIs(t, de, layers.ErrMalformed)
						assert.Equal(t, "PadCnt", de.Field)
					} else {
						assert.Equal(t, layers.CRCGood, got.icrc, "frame %d", i+1)
					}
				}
			}
		})
	}
}

// pyLine matches one count of icrc_check.py's output, e.g. ('v2', 'icrc_ok'): 12.
var pyLine = regexp.MustCompile(`\('[^']+', '(icrc_ok|icrc_BAD|vcrc_ok|vcrc_BAD)'\): (\d+)`)

// TestICRCCheckPy runs the independent Python checker over the checked-in
// corpus: it agrees with craft everywhere, and the frames broken on
// purpose, and only they, fail it.
func TestICRCCheckPy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	files := mustBuild(t)
	args := []string{filepath.Join("..", "..", "testdata", "vectors", "icrc_check.py")}
	for _, f := range files {
		args = append(args, filepath.Join(corpusDir, f.name))
	}
	out, err := exec.Command(py, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(files), "%s", out)
	for i, f := range files {
		line := lines[i]
		require.True(t, strings.HasPrefix(line, filepath.Join(corpusDir, f.name)+" "), line)
		var got pyCounts
		for _, m := range pyLine.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[2])
			switch m[1] {
			case "icrc_ok":
				got.icrcOK += n
			case "icrc_BAD":
				got.icrcBad += n
			case "vcrc_ok":
				got.vcrcOK += n
			case "vcrc_BAD":
				got.vcrcBad += n
			}
		}
		var want pyCounts
		badICRC, badVCRC, raw := 0, 0, 0
		for _, fr := range f.trace.Frames {
			if fr.Info.Raw {
				raw++ // no ICRC: the script skips raw packets
			}
			icrcCheck(fr.LinkType, fr.Data, &want)
			switch fr.Info.Corrupt {
			case craft.BadICRC, craft.Truncated:
				badICRC++
			case craft.BadVCRC:
				badVCRC++
			}
		}
		assert.Equal(t, want, got, "%s: %s", f.name, line)
		assert.Equal(t, badICRC, got.icrcBad, "%s: ICRC failures are the broken frames", f.name)
		assert.Equal(t, badVCRC, got.vcrcBad, "%s: VCRC failures are the broken frames", f.name)
		assert.Equal(t, len(f.trace.Frames)-raw, got.icrcOK+got.icrcBad, "%s: every frame but the raw ones checked", f.name)
		assert.Contains(t, line, "truncated_skipped=0")
	}
}

// TestSizeBudget keeps pcaps/ under 10 MB and the generated part well under
// what the real captures leave.
func TestSizeBudget(t *testing.T) {
	var generated, all int64
	err := filepath.Walk(corpusDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		all += info.Size()
		if filepath.Dir(path) == corpusDir && (strings.HasSuffix(path, ".pcap") || filepath.Base(path) == "MANIFEST.md") {
			generated += info.Size()
		}
		return nil
	})
	require.NoError(t, err)
	assert.Less(t, generated, int64(1<<20), "generated corpus")
	assert.Less(t, all, int64(10<<20), "pcaps/ in all")
}

// TestManifestNamesEveryFile: the manifest has a section per file with
// its facts.
func TestManifestNamesEveryFile(t *testing.T) {
	m, err := os.ReadFile(filepath.Join(corpusDir, "MANIFEST.md"))
	require.NoError(t, err)
	for _, f := range mustBuild(t) {
		assert.Contains(t, string(m), "\n## "+f.name+"\n", f.name)
	}
}
