package ibdumpcli

import (
	"runtime"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// ANSI colours for the summary line.
const (
	ansiRed     = "\x1b[31m"
	ansiYellow  = "\x1b[33m"
	ansiMagenta = "\x1b[35m"
	ansiReset   = "\x1b[0m"
)

// classColors are the summary line's colours by output.ClassOf: problems
// in red, NAKs and warnings in yellow, congestion in magenta.
var classColors = [...]string{output.ClassBad: ansiRed, output.ClassWarn: ansiYellow, output.ClassCongestion: ansiMagenta}

// colorize wraps the line that starts at buf[start:] in a colour that says
// what kind of packet it is.
func colorize(buf []byte, start int, p *decode.Packet) []byte {
	c := classColors[output.ClassOf(p)]
	if c == "" {
		return buf
	}
	line := append([]byte(nil), buf[start:]...)
	buf = append(buf[:start], c...)
	buf = append(buf, line...)
	return append(buf, ansiReset...)
}

func goVersion() string { return runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH }
