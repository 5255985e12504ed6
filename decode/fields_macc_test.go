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

// TestMACCFieldsMatchTsharkGlossary checks that ibwire has every macc.*
// field of PAUSE and PFC that tshark 4.0.17 has, with its type, base and
// title (testdata/tshark-4.0.17-macc-fields.tsv, from tshark -G fields).
func TestMACCFieldsMatchTsharkGlossary(t *testing.T) {
	f, err := os.Open("testdata/tshark-4.0.17-macc-fields.tsv")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	checked := 0
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "#") {
			continue
		}
		c := strings.Split(s.Text(), "\t")
		name, typ, base, title := c[0], c[1], c[2], c[4]
		fd, ok := decode.Lookup(name)
		if !ok {
			// EPON's registration fields are not decoded.
			assert.True(t, strings.HasPrefix(name, "macc.reg"), "%s missing", name)
			continue
		}
		if typ == "FT_NONE" { // an expert item: present or not
			assert.Equal(t, decode.FTProtocol, fd.Type, name)
			assert.Equal(t, title, fd.Title, "%s title", name)
			checked++
			continue
		}
		assert.Equal(t, typ, fd.Type.String(), "%s type", name)
		if fd.Type.IsUnsigned() {
			assert.Equal(t, base, fd.Base.String(), "%s base", name)
		}
		assert.Equal(t, title, fd.Title, "%s title", name)
		checked++
	}
	assert.Equal(t, 23, checked)
}

// pfcFrame: PFC from 02:00:00:00:00:01, vector 0x0018, priority 3 paused
// 65535 quanta, priority 4 resumed; pauseFrame: 802.3x PAUSE 65535 quanta;
// cutFrame: PFC cut after its vector.
var (
	pfcFrame = pad60([]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x01, 0x01,
		0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff})
	pauseFrame = pad60([]byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x00, 0x01, 0xff, 0xff})
	cutFrame   = []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x08, 0x01, 0x01, 0x00, 0x08}
)

func pad60(b []byte) []byte { return append(b, make([]byte, 60-len(b))...) }

// TestMACCFieldValues compares with what tshark 4.0.17 -T fields prints for
// these frames (-e frame.protocols -e macc.opcode -e macc.pause_time -e
// macc.cbfc.enbv -e macc.cbfc.enbv.c3 -e macc.cbfc.enbv.c0 -e
// macc.cbfc.pause_time.c3 -e macc.cbfc.pause_time.c7).
func TestMACCFieldValues(t *testing.T) {
	names := []string{"frame.protocols", "macc.opcode", "macc.pause_time", "macc.cbfc.enbv", "macc.cbfc.enbv.c3",
		"macc.cbfc.enbv.c0", "macc.cbfc.pause_time.c3", "macc.cbfc.pause_time.c7"}
	d := decode.NewDecoder(decode.Options{})
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"pfc", pfcFrame, "eth:ethertype:macc	0x0101		0x0018	1	0	65535	0"},
		{"pause", pauseFrame, "eth:ethertype:macc	0x0001	65535					"},
		{"cut", cutFrame, "eth:ethertype:macc	0x0101		0x0008	1	0		"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := d.Decode(decode.Input{Number: 1, LinkType: layers.LinkTypeEthernet, Data: tc.frame, Length: len(tc.frame)})
			require.True(t, p.HasMACControl())
			var cells []string
			for _, n := range names {
				fd := decode.MustLookup(n)
				var v decode.Value
				cell := ""
				if fd.Get(p, &v) {
					cell = fd.String(&v)
				}
				cells = append(cells, cell)
			}
			assert.Equal(t, tc.want, strings.Join(cells, "\t"))
		})
	}
}

func TestMACCOpcodeNames(t *testing.T) {
	fd := decode.MustLookup("macc.opcode")
	for _, tc := range []struct {
		name string
		want uint64
	}{{"PFC", 0x0101}, {"pause", 0x0001}, {"Class Based Flow Control [CBFC] Pause", 0x0101}, {"Register Ack", 6}} {
		got, ok := fd.ByName(tc.name)
		assert.True(t, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, ok := fd.ByName("nosuch")
	assert.False(t, ok)
	name, ok := fd.Names(0x0101)
	assert.True(t, ok)
	assert.Equal(t, "Class Based Flow Control [CBFC] Pause", name)
}

func TestMACCGettersDoNotAllocate(t *testing.T) {
	d := decode.NewDecoder(decode.Options{})
	p := d.Decode(decode.Input{Number: 1, LinkType: layers.LinkTypeEthernet, Data: pfcFrame, Length: len(pfcFrame)})
	var fs []*decode.Field
	for _, fd := range decode.Fields() {
		if strings.HasPrefix(fd.Name, "macc") {
			fs = append(fs, fd)
		}
	}
	var v decode.Value
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		for _, fd := range fs {
			fd.Get(p, &v)
		}
	}))
}
