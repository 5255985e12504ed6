package decode_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// TestFieldsMatchTsharkGlossary checks the type and base of every
// infiniband.* field against tshark 4.0.17's -G fields output, checked in as
// testdata/tshark-4.0.17-infiniband-fields.tsv.
func TestFieldsMatchTsharkGlossary(t *testing.T) {
	f, err := os.Open("testdata/tshark-4.0.17-infiniband-fields.tsv")
	require.NoError(t, err)
	defer f.Close()
	glossary := map[string][2]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "#") {
			continue
		}
		c := strings.Split(s.Text(), "\t")
		glossary[c[0]] = [2]string{c[1], c[2]}
	}
	checked := 0
	for _, fd := range decode.Fields() {
		if !strings.HasPrefix(fd.Name, "infiniband.") {
			continue
		}
		g, ok := glossary[fd.Name]
		require.True(t, ok, "%s is not a tshark 4.0 field: ibwire's own fields go under ibwire.*", fd.Name)
		wantType, wantBase := g[0], g[1]
		switch {
		case fd.Type == decode.FTProtocol:
			assert.Contains(t, []string{"FT_PROTOCOL", "FT_BYTES", "FT_NONE"}, wantType, fd.Name)
		default:
			assert.Equal(t, wantType, fd.Type.String(), "%s type", fd.Name)
			if fd.Type.IsUnsigned() {
				assert.Equal(t, wantBase, fd.Base.String(), "%s base", fd.Name)
			}
		}
		checked++
	}
	assert.Greater(t, checked, 60)
}

func TestLookupShorthand(t *testing.T) {
	f, ok := decode.Lookup("bth.psn")
	require.True(t, ok)
	assert.Equal(t, "infiniband.bth.psn", f.Name)
	_, ok = decode.Lookup("nosuch.field")
	assert.False(t, ok)
}

// TestEveryFieldIsSafeOnEveryPacket gets every field from packets that lack
// most headers (ARP, TCP, a cut frame, an empty frame) and from IB packets
// of every encapsulation: no getter may touch a header the packet lacks.
func TestEveryFieldIsSafeOnEveryPacket(t *testing.T) {
	frames := [][]byte{
		{},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1},
		{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 40, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			0x48, 0x33, 0x48, 0x33, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0},
		{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
			0xc0, 0, 0x12, 0xb7, 0, 40, 0, 0, 0x0a},
	}
	d := decode.NewDecoder(decode.Options{})
	for i, f := range frames {
		p := d.Decode(decode.Input{Number: i + 1, LinkType: layers.LinkTypeEthernet, Data: f, Length: len(f)})
		for _, fd := range decode.Fields() {
			var v decode.Value
			require.NotPanics(t, func() { fd.Get(p, &v); fd.GetSecond(p, &v) }, "frame %d field %s", i+1, fd.Name)
		}
	}
}

// InTreeOf answers from bits what InTree answers from names, for every
// field against every protocol and header.
func TestInTreeOfAgreesWithInTree(t *testing.T) {
	all := decode.FieldsInWireOrder()
	protos := 0
	for _, p := range all {
		if p.Type != decode.FTProtocol {
			continue
		}
		protos++
		for _, f := range all {
			assert.Equal(t, f.InTree(p.Name), f.InTreeOf(p), "%s under %s", f.Name, p.Name)
		}
	}
	require.Greater(t, protos, 10)
}
