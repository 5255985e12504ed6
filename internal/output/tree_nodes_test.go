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
