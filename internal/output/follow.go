package output

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibwire/ibwire/decode"
)

// Follow prints -z follow,qp: the messages of one connection as
// decode.Follower gathers them.
type Follow struct {
	*decode.Follower
	filter string
	hex    bool
}

// NewFollow returns a follower for the connection of the first packet
// match accepts; hexDump chooses hex over ASCII.
func NewFollow(match func(*decode.Packet) bool, filter string, hexDump bool) *Follow {
	return &Follow{Follower: decode.NewFollower(match), filter: filter, hex: hexDump}
}

// Write prints the messages as tshark's follow does: a header naming the
// two nodes, then each message (B→A ones indented by a tab in hex mode).
func (f *Follow) Write(w io.Writer) error {
	var b strings.Builder
	mode := "ascii"
	if f.hex {
		mode = "hex"
	}
	rule := strings.Repeat("=", 67)
	fmt.Fprintf(&b, "\n%s\nFollow: qp,%s\nFilter: %s\nNode 0: %s\nNode 1: %s\n", rule, mode, f.filter, f.Nodes()[0], f.Nodes()[1])
	for _, m := range f.Messages() {
		indent := ""
		if m.Dir == 2 {
			indent = "\t"
		}
		arrow := "A>B"
		if m.Dir == 2 {
			arrow = "B>A"
		}
		fmt.Fprintf(&b, "%sframes %d-%d %s %s, %d bytes\n", indent, m.First, m.Last, arrow, m.Op, m.Size)
		switch {
		case len(m.Data) == 0:
		case f.hex:
			for off := 0; off < len(m.Data); off += 16 {
				row := m.Data[off:min(off+16, len(m.Data))]
				fmt.Fprintf(&b, "%s%08x  ", indent, off)
				for i := range 16 {
					if i < len(row) {
						fmt.Fprintf(&b, "%02x ", row[i])
					} else {
						b.WriteString("   ")
					}
					if i == 7 {
						b.WriteByte(' ')
					}
				}
				b.WriteString(" ")
				b.WriteString(printable(row))
				b.WriteByte('\n')
			}
		default:
			b.WriteString(indent + printable(m.Data) + "\n")
		}
	}
	b.WriteString(rule + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func printable(data []byte) string {
	out := make([]byte, len(data))
	for i, c := range data {
		if c >= 0x20 && c < 0x7F {
			out[i] = c
		} else {
			out[i] = '.'
		}
	}
	return string(out)
}

type followJSON struct {
	Direction  string `json:"direction"`
	Op         string `json:"op"`
	FirstFrame uint32 `json:"first_frame"`
	LastFrame  uint32 `json:"last_frame"`
	Size       uint32 `json:"size"`
	Data       string `json:"data"`
}

// AppendJSON appends the messages as a JSON array (data in hex).
func (f *Follow) AppendJSON(buf []byte) []byte {
	out := []followJSON{}
	for _, m := range f.Messages() {
		dir := "a>b"
		if m.Dir == 2 {
			dir = "b>a"
		}
		out = append(out, followJSON{dir, m.Op, m.First, m.Last, m.Size, hex.EncodeToString(m.Data)})
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return append(append(buf, b...), '\n')
}
