package ibdumpcli

import (
	"runtime"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// ANSI colours for the summary line: problems in red, NAKs and RNR NAKs in
// yellow, CNPs and congestion marks in magenta.
const (
	ansiRed     = "\x1b[31m"
	ansiYellow  = "\x1b[33m"
	ansiMagenta = "\x1b[35m"
	ansiReset   = "\x1b[0m"
)

// colorize wraps the line that starts at buf[start:] in a colour that says
// what kind of packet it is.
func colorize(buf []byte, start int, p *decode.Packet) []byte {
	c := ""
	b := p.BTH()
	switch {
	case p.Err != nil || p.ICRC == layers.CRCBad || p.VCRC == layers.CRCBad:
		c = ansiRed
	case b == nil:
		return buf
	case b.Info().Has(layers.HdrAETH) && !b.AETH.Syndrome.IsAck():
		c = ansiYellow
	case b.Info().Service == layers.ServiceCNP || b.FECN || b.BECN:
		c = ansiMagenta
	default:
		return buf
	}
	line := append([]byte(nil), buf[start:]...)
	buf = append(buf[:start], c...)
	buf = append(buf, line...)
	return append(buf, ansiReset...)
}

func goVersion() string { return runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH }
