package replay_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ibwire/ibwire/replay"
)

// A mapping file moves the rxe lab's two guests onto loopback and
// renumbers their QPs; the rewrite fixes every ICRC it touches (ARP and the
// TCP set-up frames are rewritten too, with no ICRC to fix).
func Example() {
	var rules replay.Rules
	err := replay.ParseRules(strings.NewReader(`
ip  192.168.77.11 -> 127.0.0.1
ip  192.168.77.12 -> 127.0.0.2
qpn 0x11 -> 0x123
psn-base qpn=0x11 +1000
`), "lab.map", &rules)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := replay.Load("../pcaps/rxe/read_bw.pcap", replay.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := c.Rewrite(&rules, c.Decode)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, %d rewritten, %d ICRCs recomputed\n", st.Frames, st.Changed, st.ICRCs)
	inv, _ := rules.Inverse()
	inv.Format(os.Stdout)
	// Output:
	// 1042 frames, 1042 rewritten, 1000 ICRCs recomputed
	// ip 127.0.0.1 -> 192.168.77.11
	// ip 127.0.0.2 -> 192.168.77.12
	// qpn 0x123 -> 0x11
	// psn-base qpn=0x123 -1000
}
