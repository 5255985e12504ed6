package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// expertSections are tshark's -z expert section titles, most severe first.
var expertSections = []struct {
	sev   decode.Severity
	title string
}{{decode.SevError, "Errors"}, {decode.SevWarn, "Warns"}, {decode.SevNote, "Notes"}, {decode.SevChat, "Chats"}}

// WriteExpert writes -z expert as tshark -z expert does: a section per
// severity (at least min) with its total, then a row per finding kind with
// its frequency, group, protocol and summary; ibdump adds the first frames
// of each row beneath it.
func WriteExpert(w io.Writer, rows []decode.ExpertRow, min decode.Severity) error {
	var b strings.Builder
	for _, s := range expertSections {
		if s.sev < min {
			continue
		}
		var total uint64
		for _, r := range rows {
			if r.Severity == s.sev {
				total += r.Count
			}
		}
		if total == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%d)\n=============\n", s.title, total)
		b.WriteString("   Frequency      Group           Protocol  Summary\n")
		for _, r := range rows {
			if r.Severity != s.sev {
				continue
			}
			fmt.Fprintf(&b, "%12d %10s %18s  %s\n", r.Count, r.Group, expertProtocol(r.Kind), r.Summary)
			b.WriteString(strings.Repeat(" ", 44))
			b.WriteString("frames ")
			for i, f := range r.Frames {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d", f)
			}
			if more := r.Count - uint64(len(r.Frames)); more > 0 {
				fmt.Fprintf(&b, " and %d more", more)
			}
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type expertJSON struct {
	Severity string   `json:"severity"`
	Group    string   `json:"group"`
	Protocol string   `json:"protocol"`
	Finding  string   `json:"finding"`
	Summary  string   `json:"summary"`
	Count    uint64   `json:"count"`
	Frames   []uint32 `json:"frames"`
}

// AppendExpertJSON appends -z expert as a JSON array, one object per row.
func AppendExpertJSON(buf []byte, rows []decode.ExpertRow, min decode.Severity) []byte {
	out := []expertJSON{}
	for _, r := range rows {
		if r.Severity >= min {
			out = append(out, expertJSON{Severity: strings.ToLower(r.Severity.String()), Group: r.Group, Protocol: expertProtocol(r.Kind),
				Finding: r.Kind.Name(), Summary: r.Summary, Count: r.Count, Frames: r.Frames})
		}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}

// expertProtocol is the protocol column of a finding: the frame it points
// at is a MAC Control frame for a pause storm, InfiniBand for the rest.
func expertProtocol(k decode.FindingKind) string {
	if k == decode.FindPFCStorm {
		return "MAC CTRL"
	}
	return "InfiniBand"
}
