// Repository policy, enforced by go test (in the manner of wireguard-go's
// format_test.go): every Go file is gofmt-clean, packages import only in the
// direction ARCHITECTURE.md draws, only layers registers with gopacket, and
// generated files say so.
package ibwire_test

import (
	"bytes"
	"encoding/json"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/ibwire/ibwire"

// goFiles lists the Go files of the repository, skipping testdata.
func goFiles(t *testing.T) []string {
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

func TestGofmt(t *testing.T) {
	for _, path := range goFiles(t) {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		formatted, err := format.Source(src)
		require.NoError(t, err, path)
		assert.True(t, bytes.Equal(src, formatted), "%s is not gofmt-clean: run gofmt -w %s", path, path)
	}
}

// allowedImports lists, for each package of ours, the packages of ours and
// the third-party packages it may import (ARCHITECTURE.md). The standard
// library is always allowed. A package missing from the table may import
// nothing of ours.
var allowedImports = map[string][]string{
	"layers":             {"github.com/google/gopacket"},
	"capture":            {"layers", "github.com/google/gopacket", "golang.org/x/net/bpf", "golang.org/x/sys/unix"},
	"decode":             {"capture", "layers", "setup", "github.com/google/gopacket"},
	"dfilter":            {"decode", "layers"},
	"internal/output":    {"correlate", "decode", "dfilter", "layers", "golang.org/x/term"},
	"internal/ibdumpcli": {"capture", "correlate", "decode", "dfilter", "internal/output", "internal/parquetout", "layers", "pcaps", "github.com/google/gopacket", "golang.org/x/term"},
	// internal/parquetout: the only package that imports the Parquet library;
	// it writes its pages' zstd itself and reads the decoded headers (layers)
	// straight into typed columns, as internal/output's renderers read them.
	"internal/parquetout": {"decode", "internal/output", "layers", "github.com/parquet-go/parquet-go", "github.com/klauspost/compress/zstd"},
	"internal/tui":        {"decode", "dfilter", "capture", "internal/output", "layers", "github.com/rivo/tview", "github.com/gdamore/tcell/v2"},
	"craft":               {"layers", "github.com/google/gopacket"},
	// correlate: several captures of the same traffic matched packet by packet.
	"correlate": {"capture", "decode", "layers"},
	// endpoint: gopacket only for the SerializeBuffer type layers' SerializeTo takes.
	"endpoint":          {"layers", "golang.org/x/net/ipv4", "golang.org/x/net/ipv6", "golang.org/x/sys/unix", "github.com/google/gopacket"},
	"endpoint/wiretest": {"endpoint", "layers"},
	// replay: internal/peer/exchange for ibpeer serve's region message and
	// perftest -R's RDMA CM steps, which its set-ups share with ibpeer.
	"replay": {"capture", "craft", "layers", "decode", "endpoint", "setup", "internal/peer/exchange", "github.com/google/gopacket"},
	// setup: the tools' set-up messages and steps, a leaf beside layers.
	"setup":             {"layers"},
	"fuzz":              {"capture", "decode", "internal/output", "endpoint", "layers", "dfilter", "craft", "github.com/google/gopacket"},
	"pcaps":             {"craft", "layers", "capture", "github.com/google/gopacket"},
	"internal/fuzzseed": {"capture"},
	"internal/looptest": {"golang.org/x/sys/unix"},
	// internal/peer: ibpeer's programs, one package each, and what they share.
	"internal/peer/device":          {"capture", "endpoint", "layers", "github.com/google/gopacket"},
	"internal/peer/perf":            {"endpoint"},
	"internal/peer/craftcmd":        {"capture", "craft", "layers"},
	"internal/peer/rping":           {"endpoint", "internal/peer/device", "layers"},
	"internal/peer/peertest":        {"capture", "endpoint", "internal/looptest"},
	"internal/peer/pingpong":        {"endpoint", "internal/peer/device", "layers", "setup"},
	"internal/peer/ucmatose":        {"endpoint", "internal/peer/device", "layers"},
	"internal/peer/udaddy":          {"endpoint", "internal/peer/device", "layers"},
	"internal/peer/serve":           {"endpoint", "internal/peer/device", "internal/peer/exchange", "layers", "setup"},
	"internal/peer/bw":              {"endpoint", "internal/peer/device", "internal/peer/exchange", "internal/peer/perf", "layers", "setup"},
	"internal/peer/exchange":        {"endpoint", "layers"},
	"internal/peer/perftest":        {"endpoint", "internal/peer/device", "internal/peer/exchange", "internal/peer/perf", "layers", "setup"},
	"internal/peer/replaycmd":       {"capture", "decode", "dfilter", "endpoint", "internal/peer/device", "internal/peer/exchange", "internal/peer/perf", "layers", "replay", "setup"},
	"internal/peer/serve/servetest": {"internal/peer/peertest", "internal/peer/serve"},
	"cmd/":                          {"*"},
	"interop":                       {"*"},
	"bench":                         {"*"},
}

// packetLibraries may not be imported by a command's own code: a command
// parses flags, builds a package's Config and turns its result into an
// exit status; frames are the packages' business (layers, craft, replay,
// endpoint...). Its tests may decode what it wrote.
var packetLibraries = []string{"github.com/google/gopacket"}

// uiToolkits may be imported by internal/tui alone, tests included, whatever
// allowedImports says of a package (cmd/ may import anything else).
var uiToolkits = []string{"github.com/rivo/tview", "github.com/gdamore/tcell"}

// parquetLibraries may be imported by internal/parquetout alone, tests
// included: one package owns the Parquet format.
var parquetLibraries = []string{"github.com/parquet-go/parquet-go"}

type listedPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Standard     bool
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-json", "./...").Output()
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else {
			require.NoError(t, err)
		}
		if p.Standard || !strings.HasPrefix(p.ImportPath, module) || p.ImportPath == module {
			continue
		}
		rel := strings.TrimPrefix(p.ImportPath, module+"/")
		allowed, ok := rulesFor(rel)
		require.True(t, ok, "package %s has no entry in policy_test.go's allowedImports: add one that follows ARCHITECTURE.md", rel)
		for _, imp := range p.Imports {
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				continue // standard library
			}
			assert.True(t, importAllowed(imp, allowed), "%s must not import %s (ARCHITECTURE.md)", rel, imp)
		}
		if strings.HasPrefix(rel, "cmd/") {
			for _, imp := range p.Imports {
				assert.False(t, importAllowed(imp, packetLibraries), "%s must not import %s: a command builds a package's Config and runs it; the package handles frames", rel, imp)
			}
		}
		if rel != "internal/tui" {
			for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
				assert.False(t, importAllowed(imp, uiToolkits), "%s must not import %s: only internal/tui imports tview and tcell (ARCHITECTURE.md)", rel, imp)
			}
		}
		if rel != "internal/parquetout" {
			for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
				assert.False(t, importAllowed(imp, parquetLibraries), "%s must not import %s: only internal/parquetout writes Parquet", rel, imp)
			}
		}
		checked++
	}
	assert.NotZero(t, checked)
}

// rulesFor returns the rules of the longest entry that names rel or a
// folder above it.
func rulesFor(rel string) ([]string, bool) {
	best, found := "", false
	for key := range allowedImports {
		k := strings.TrimSuffix(key, "/")
		if (rel == k || strings.HasPrefix(rel, k+"/")) && len(key) >= len(best) {
			best, found = key, true
		}
	}
	return allowedImports[best], found
}

func importAllowed(imp string, allowed []string) bool {
	for _, a := range allowed {
		if a == "*" {
			return true
		}
		full := a
		if !strings.Contains(strings.SplitN(a, "/", 2)[0], ".") {
			full = module + "/" + a
		}
		if imp == full || strings.HasPrefix(imp, full+"/") {
			return true
		}
	}
	return false
}

// TestOnlyLayersRegisters keeps gopacket's global registration hooks in one
// file of one package, so no other package can change how frames decode.
func TestOnlyLayersRegisters(t *testing.T) {
	hook := regexp.MustCompile(`gopacket\.RegisterLayerType|RegisterUDPPortLayerType|RegisterTCPPortLayerType|EthernetTypeMetadata\[|LinkTypeMetadata\[|gopacket\.RegisterEndpointType`)
	for _, path := range goFiles(t) {
		if strings.HasSuffix(path, "_test.go") || path == filepath.Join("layers", "register.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.False(t, hook.Match(src), "%s calls a gopacket registration hook: only layers/register.go may", path)
	}
}

func TestGeneratedFilesSaySo(t *testing.T) {
	header := regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)
	for _, path := range goFiles(t) {
		if !strings.Contains(filepath.Base(path), "generated") && !strings.HasSuffix(path, "_string.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, header.Match(src), "%s looks generated but lacks the // Code generated … DO NOT EDIT. header", path)
	}
}

// TestEveryFuzzTargetRunsInCI: .ci/run fuzzes what the Makefile's
// FUZZ_TARGETS lists, so a new fuzz target that is not listed would never
// run outside its seed corpus.
func TestEveryFuzzTargetRunsInCI(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\./([\w/]+):(Fuzz\w+)`).FindAllStringSubmatch(string(makefile), -1) {
		listed[m[1]+":"+m[2]] = true
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	for _, path := range goFiles(t) {
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			target := filepath.ToSlash(filepath.Dir(path)) + ":" + m[1]
			assert.True(t, listed[target], "%s (in %s) is missing from FUZZ_TARGETS in the Makefile", target, path)
		}
	}
}

// TestReadmePackageTable keeps the README's package table the map this file
// enforces: each row's "may import, of ours" column names exactly the
// packages of ours that allowedImports lets the row's packages import
// (other than each other), and every package of the module has a row.
func TestReadmePackageTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "## Packages\n")
	require.True(t, start >= 0, "README has no Packages section")
	text = text[start:]
	if end := strings.Index(text[1:], "\n## "); end >= 0 {
		text = text[:end+1]
	}
	ticked := regexp.MustCompile("`([^`]+)`")
	covered := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(text, "\n") {
		cols := strings.Split(line, " | ")
		if len(cols) != 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		var pkgs []string
		for _, m := range ticked.FindAllStringSubmatch(cols[0], -1) {
			name := strings.TrimSuffix(m[1], "/")
			if prefix, ok := strings.CutSuffix(name, "/..."); ok {
				for k := range allowedImports {
					if strings.HasPrefix(k, prefix+"/") {
						pkgs = append(pkgs, k)
					}
				}
				continue
			}
			pkgs = append(pkgs, name)
		}
		want := map[string]bool{}
		anything := false
		for _, p := range pkgs {
			covered[p] = true
			allowed, ok := rulesFor(p)
			require.True(t, ok, "README row %q: %s has no entry in allowedImports", cols[0], p)
			for _, imp := range allowed {
				switch {
				case imp == "*":
					anything = true
				case !strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					want[imp] = true
				}
			}
		}
		for _, p := range pkgs {
			delete(want, p)
		}
		got := map[string]bool{}
		for _, m := range ticked.FindAllStringSubmatch(cols[2], -1) {
			got[m[1]] = true
		}
		if anything {
			assert.Contains(t, cols[2], "anything", "README row %q", cols[0])
			continue
		}
		assert.Equal(t, want, got, "README row %q: its imports column disagrees with allowedImports", cols[0])
	}
	assert.Greater(t, rows, 10, "the README's package table was not found")
	out, err := exec.Command("go", "list", "./...").Output()
	require.NoError(t, err)
	for _, path := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if rel == "" || strings.HasPrefix(rel, "bench") || strings.HasPrefix(rel, "pcaps") || rel == "fuzz" ||
			rel == "internal/fuzzseed" || strings.HasSuffix(rel, "test") {
			continue // the root, tools and test support have no row
		}
		inRow := covered[rel]
		for c := range covered {
			inRow = inRow || strings.HasPrefix(rel, c+"/") && strings.HasPrefix(c, "cmd")
		}
		assert.True(t, inRow || strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "interop"), "package %s has no row in the README's package table", rel)
	}
}
