// Package fuzzseed turns the project's captures into fuzz seeds, so that a
// capture added to pcaps/ or testdata/ seeds every fuzz target at once.
package fuzzseed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/ibwire/ibwire/capture"
)

// Frame is one packet of a seed capture.
type Frame struct {
	LinkType uint32
	Data     []byte
}

// Root finds the repository root (the folder with go.mod) above the
// current directory, where go test runs.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("fuzzseed: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Captures lists every capture file under pcaps/ and testdata/ of the
// repository (and of each package's testdata/ folder).
func Captures() ([]string, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".pcap") || strings.HasSuffix(path, ".pcapng") || strings.HasSuffix(path, ".pcap.gz")) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "pcaps"+string(filepath.Separator)) || strings.Contains(rel, "testdata"+string(filepath.Separator)) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// Frames reads every packet of every capture, at most perFile from each, so
// seeding stays quick however large the corpus grows.
func Frames(perFile int) ([]Frame, error) {
	files, err := Captures()
	if err != nil {
		return nil, err
	}
	var out []Frame
	for _, f := range files {
		r, err := capture.Open(f)
		if err != nil {
			continue // a capture that is broken on purpose seeds the reader, not the decoders
		}
		for n := 0; n < perFile; n++ {
			p, err := r.Next()
			if err != nil {
				break // io.EOF, or damage that the reader's own fuzzer covers
			}
			out = append(out, Frame{LinkType: uint32(p.LinkType), Data: append([]byte(nil), p.Data...)})
		}
		r.Close()
	}
	return out, nil
}

// Files returns the bytes of every capture no larger than maxSize.
func Files(maxSize int64) ([][]byte, error) {
	files, err := Captures()
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() > maxSize {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
