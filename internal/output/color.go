package output

import (
	"fmt"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// UseColor is the colour policy of every command: --color=always colours,
// --color=never does not, and --color=auto colours a terminal unless
// NO_COLOR is set and non-empty or TERM is dumb. getenv reads the
// environment (os.Getenv); tty says whether the output is a terminal.
func UseColor(mode string, tty bool, getenv func(string) string) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		return tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb", nil
	}
	return false, fmt.Errorf("--color=%s: want auto, always or never", mode)
}

// PacketClass is what a packet's colour says: ibdump's coloured lines and
// ibtui's packet list draw it, each in its own colours.
type PacketClass uint8

const (
	ClassNormal     PacketClass = iota
	ClassBad                    // malformed, a bad ICRC or VCRC, an error finding
	ClassWarn                   // a NAK or RNR NAK, a warning finding
	ClassCongestion             // a CNP, FECN or BECN
)

// ClassOf classes p by what the decoder and the analysis found, the worst
// first: a packet with an error is bad whatever else it is.
func ClassOf(p *decode.Packet) PacketClass {
	b := p.BTH()
	switch {
	case p.Err != nil || p.ICRC == layers.CRCBad || p.VCRC == layers.CRCBad || p.Analysis.Severity >= decode.SevError:
		return ClassBad
	case b != nil && b.Info().Has(layers.HdrAETH) && !b.AETH.Syndrome.IsAck(), p.Analysis.Severity == decode.SevWarn:
		return ClassWarn
	case b != nil && (b.Info().Service == layers.ServiceCNP || b.FECN || b.BECN):
		return ClassCongestion
	}
	return ClassNormal
}
