package output

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// WriteDoctor writes the doctor's findings: for each its severity, check
// and what it saw, the frames that show it and the usual fix; then a
// verdict line.
func WriteDoctor(w io.Writer, fs []decode.DoctorFinding) error {
	var b strings.Builder
	b.WriteString(ruler80 + "\nRoCE configuration doctor\n")
	worst := decode.SevNone
	for i, f := range fs {
		worst = max(worst, f.Severity)
		fmt.Fprintf(&b, "%d. [%s] %s: %s\n", i+1, f.Severity, f.Check, f.What)
		frames := make([]string, len(f.Frames))
		for j, n := range f.Frames {
			frames[j] = strconv.FormatUint(uint64(n), 10)
		}
		fmt.Fprintf(&b, "   evidence: frame %s\n", strings.Join(frames, ", "))
		fmt.Fprintf(&b, "   fix: %s\n", f.Fix)
	}
	switch {
	case len(fs) == 0:
		b.WriteString("No configuration problem found.\n")
	case worst >= decode.SevWarn:
		fmt.Fprintf(&b, "%d findings, the worst %s: exit status 1.\n", len(fs), worst)
	default:
		fmt.Fprintf(&b, "%d findings, notes only.\n", len(fs))
	}
	b.WriteString(ruler80 + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// AppendDoctorJSON appends the doctor's findings as JSON.
func AppendDoctorJSON(buf []byte, fs []decode.DoctorFinding) []byte {
	buf = append(buf, `{"doctor": [`...)
	for i, f := range fs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, "\n  {\"check\": "...)
		buf = strconv.AppendQuote(buf, string(f.Check))
		buf = append(buf, ", \"severity\": "...)
		buf = strconv.AppendQuote(buf, f.Severity.String())
		buf = append(buf, ", \"what\": "...)
		buf = strconv.AppendQuote(buf, f.What)
		buf = append(buf, ", \"frames\": ["...)
		for j, n := range f.Frames {
			if j > 0 {
				buf = append(buf, ", "...)
			}
			buf = strconv.AppendUint(buf, uint64(n), 10)
		}
		buf = append(buf, "], \"fix\": "...)
		buf = strconv.AppendQuote(buf, f.Fix)
		buf = append(buf, '}')
	}
	return append(buf, "\n]}\n"...)
}
