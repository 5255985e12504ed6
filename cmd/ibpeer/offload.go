package main

import (
	"flag"

	"github.com/ibwire/ibwire/internal/peer/device"
)

// udpOffloadHelp is the --udp-offload line of the subcommands whose help
// is written out rather than printed from their flags.
const udpOffloadHelp = `  --udp-offload=MODE  auto (the default: on loopback addresses the kernel segments a run of
                      packets sent as one) or off (one datagram per packet). A capture on lo
                      (ibdump -i lo, tcpdump -i lo) is taken before segmentation and sees a run
                      as one large datagram: turn it off to watch the traffic packet by packet.
`

// udpOffloadOf returns the value of fs's --udp-offload (device.UDPOffloadFlag).
func udpOffloadOf(fs *flag.FlagSet) device.UDPOffload {
	return fs.Lookup("udp-offload").Value.(flag.Getter).Get().(device.UDPOffload)
}
