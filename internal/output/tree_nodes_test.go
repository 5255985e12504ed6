package output_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
)

// TestTreeNodesMatchTree checks that the structured tree says exactly what
// -V prints, line for line, on every packet of a real capture.
func TestTreeNodesMatchTree(t *testing.T) {
	r, err := capture.Open("../../pcaps/rxe/write_bw_loss.pcap")
	require.NoError(t, err)
	defer r.Close()
	dec := decode.NewDecoder(decode.Options{})
	var tree output.Tree
	for i := 0; i < 40; i++ {
		cp, err := r.Next()
		require.NoError(t, err)
		p := dec.Decode(cp)
		var b strings.Builder
		for _, n := range output.TreeNodes(p) {
			b.WriteString(strings.Repeat("    ", n.Depth) + n.Text + "\n")
			require.NotNil(t, n.Field)
		}
		require.Equal(t, string(tree.Append(nil, p)), b.String(), "frame %d", cp.Number)
	}
}

// BenchmarkTree is the -V text tree of write_bw_loss.pcap's first 200
// packets, and BenchmarkTreeNodes the same tree as nodes with their bytes
// (ibtui's detail pane):
//
//	go test -run '^$' -bench Tree -benchmem ./internal/output/
func BenchmarkTree(b *testing.B) {
	ps := benchPackets(b, 200)
	var t output.Tree
	var buf []byte
	for b.Loop() {
		for _, p := range ps {
			buf = t.Append(buf[:0], p)
		}
	}
}

func BenchmarkTreeNodes(b *testing.B) {
	ps := benchPackets(b, 200)
	for b.Loop() {
		for _, p := range ps {
			output.TreeNodes(p)
		}
	}
}

// benchPackets decodes the first n packets of write_bw_loss.pcap, each with
// its own decoder so that each keeps its headers.
func benchPackets(b *testing.B, n int) []*decode.Packet {
	r, err := capture.Open("../../pcaps/rxe/write_bw_loss.pcap")
	require.NoError(b, err)
	defer r.Close()
	var ps []*decode.Packet
	for range n {
		cp, err := r.Next()
		require.NoError(b, err)
		cp.Data = append([]byte(nil), cp.Data...)
		ps = append(ps, decode.NewDecoder(decode.Options{}).Decode(cp))
	}
	return ps
}

// TestTreeReusedMatchesFresh checks that a Tree drawing packet after packet
// (which copies a line from the last packet's when its value repeats) draws
// each as a Tree that drew nothing before does, over captures whose values
// repeat and change: a WRITE stream with loss, CM set-up and MADs.
func TestTreeReusedMatchesFresh(t *testing.T) {
	for _, name := range []string{"rxe/write_bw_loss.pcap", "rc_psn_wrap.pcap", "mgmt_smp_sa_perf.pcap", "cm_reject.pcap", "opcodes_ib_grh.pcap"} {
		t.Run(name, func(t *testing.T) {
			r, err := capture.Open("../../pcaps/" + name)
			require.NoError(t, err)
			defer r.Close()
			dec := decode.NewDecoder(decode.Options{})
			var reused output.Tree
			for {
				cp, err := r.Next()
				if err != nil {
					break
				}
				p := dec.Decode(cp)
				var fresh output.Tree
				require.Equal(t, string(fresh.Append(nil, p)), string(reused.Append(nil, p)), "frame %d", cp.Number)
			}
		})
	}
}
