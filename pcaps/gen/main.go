// Command gen writes ibwire's generated capture corpus and its MANIFEST.md
// (run by `go generate ./pcaps`). Every capture is built with package craft
// from fixed values, seeds and start times, so running it again gives the
// same bytes.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

func main() {
	dir := flag.String("o", ".", "write the captures and MANIFEST.md into `dir`")
	flag.Parse()
	if err := generate(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// build makes every file of the corpus.
func build() ([]file, error) {
	var files []file
	for _, s := range specs() {
		e, tr, notes, err := s.build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		files = append(files, file{name: s.name + ".pcap", title: s.title, encap: e, trace: tr, notes: notes})
	}
	return files, nil
}

// generate writes the corpus and its manifest into dir.
func generate(dir string) error {
	files, err := build()
	if err != nil {
		return err
	}
	outputs, err := render(files)
	if err != nil {
		return err
	}
	for name, data := range outputs {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// render returns the bytes of every output file by name.
func render(files []file) (map[string][]byte, error) {
	out := make(map[string][]byte, len(files)+1)
	for _, f := range files {
		data, err := pcapBytes(f.trace.Frames)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		out[f.name] = data
	}
	m, err := manifest(files, out)
	if err != nil {
		return nil, err
	}
	out["MANIFEST.md"] = m
	return out, nil
}

// pcapBytes writes frames as a nanosecond pcap (icrc_check.py and tshark
// 4.0 read pcap; the link type is that of the frames).
func pcapBytes(frames []craft.Frame) ([]byte, error) {
	if len(frames) == 0 {
		return nil, fmt.Errorf("no frames")
	}
	var buf bytes.Buffer
	lt := layers.LinkType(frames[0].LinkType)
	w, err := capture.NewWriter(&buf, capture.FormatPcap, lt, true)
	if err != nil {
		return nil, err
	}
	for _, f := range frames {
		p := capture.Packet{Data: f.Data, LinkType: layers.LinkType(f.LinkType),
			Time: f.Time, Length: len(f.Data)}
		if err := w.WritePacket(p); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
