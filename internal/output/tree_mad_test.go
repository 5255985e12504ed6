package output_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/internal/output"
	"github.com/ibwire/ibwire/layers"
)

// TestTreeOfMADs: the MAD trees (bit masks, labels, subtrees, table
// entries, reserved items) allocate nothing once the buffer has grown, and
// the structured tree says what -V prints.
func TestTreeOfMADs(t *testing.T) {
	for _, file := range []string{"../../pcaps/mgmt_smp_sa_perf.pcap", "../../pcaps/cm_reject.pcap", "../../pcaps/rxe/rping.pcap"} {
		r, err := capture.Open(file)
		require.NoError(t, err)
		dec := decode.NewDecoder(decode.Options{})
		var tree output.Tree
		buf := make([]byte, 0, 1<<16)
		for {
			cp, err := r.Next()
			if err != nil {
				break
			}
			cp.Data = append([]byte(nil), cp.Data...)
			p := dec.Decode(cp)
			if !p.HasMAD() {
				continue
			}
			buf = tree.Append(buf[:0], p)
			// Two getters allocate on their own, whatever the tree does:
			// the RMPP header's (decode/fields_sa.go) and NodeString's (a
			// string made of the bytes).
			m := &p.Headers.MAD
			sa := m.MgmtClass == layers.MgmtClassSubnAdm
			nodeDesc := m.MgmtClass == layers.MgmtClassSubnLID && m.AttributeID == uint16(layers.SMPAttrNodeDescription)
			if !sa && !nodeDesc {
				allocs := testing.AllocsPerRun(5, func() { buf = tree.Append(buf[:0], p) })
				assert.Zero(t, allocs, "%s frame %d", file, cp.Number)
			}
			var b strings.Builder
			for _, n := range output.TreeNodes(p) {
				b.WriteString(strings.Repeat("    ", n.Depth) + n.Text + "\n")
			}
			assert.Equal(t, string(buf), b.String(), "%s frame %d", file, cp.Number)
		}
		r.Close()
	}
}
