package main

import (
	"flag"
	"strings"

	"github.com/ibwire/ibwire/internal/peer/device"
)

// udpOffloadHelp is the --udp-offload entry of the subcommands whose help
// is written out rather than printed from their flags: the flag's own
// usage (device.UDPOffloadUsage), wrapped under its name.
var udpOffloadHelp = helpEntry("--udp-offload=MODE", strings.ReplaceAll(device.UDPOffloadUsage, "`", ""))

// helpEntry lays out one flag of a written-out help: the flag at two
// spaces, its text from column 22, wrapped before column 100.
func helpEntry(flagText, usage string) string {
	const indent, width = 22, 100
	var b strings.Builder
	line := "  " + flagText
	for len(line) < indent {
		line += " "
	}
	if len(line) > indent {
		line += " "
	}
	for _, word := range strings.Fields(usage) {
		if len(line)+len(word) > width && strings.TrimSpace(line) != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = strings.Repeat(" ", indent)
		}
		line += word + " "
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
	return b.String()
}

// udpOffloadOf returns the value of fs's --udp-offload (device.UDPOffloadFlag).
func udpOffloadOf(fs *flag.FlagSet) device.UDPOffload {
	return fs.Lookup("udp-offload").Value.(flag.Getter).Get().(device.UDPOffload)
}
