package decode_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"
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

type pcapFrame struct {
	data     []byte
	ts       time.Time
	length   int
	linkType uint32
}

func readPcap(t testing.TB, path string) []pcapFrame {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	var out []pcapFrame
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, pcapFrame{data: data, ts: ci.Timestamp, length: ci.Length, linkType: uint32(r.LinkType())})
	}
}

// tsharkDivergences lists where ibwire's -T fields output differs from
// tshark 4.0's on purpose (PROTOCOL.md §1.12); each entry says why.
var tsharkDivergences = []struct {
	opcodes []uint64 // the packets it applies to (nil: all)
	fields  []string // the fields that differ (nil: all infiniband fields)
	why     string
}{
	{rangeOf(0x40, 0x5F), nil, "tshark parses every RD opcode as Mellanox DC (20-byte BTH); ibwire parses RD as the IBTA defines it (DC is an option)"},
	{notDissectedByTshark(), []string{"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
		"infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt", "infiniband.immdt", "infiniband.ieth",
		"infiniband.aeth.syndrome", "infiniband.aeth.syndrome.opcode", "infiniband.aeth.syndrome.credit_count",
		"infiniband.aeth.syndrome.timer", "infiniband.aeth.syndrome.error_code", "infiniband.aeth.msn",
		"infiniband.atomicacketh.origremdt", "infiniband.deth.q_key", "infiniband.deth.srcqp"},
		"tshark 4.0 does not parse the headers of XRC, FLUSH, ATOMIC WRITE and CNP packets (it shows them as infiniband.vendor); ibwire decodes them"},
}

func notDissectedByTshark() []uint64 {
	var ops []uint64
	for _, op := range layers.KnownOpcodes() {
		if !op.Info().WiresharkDissects() {
			ops = append(ops, uint64(op))
		}
	}
	return ops
}

func rangeOf(a, b uint64) []uint64 {
	var r []uint64
	for i := a; i <= b; i++ {
		r = append(r, i)
	}
	return r
}

func diverges(opcode uint64, field string) bool {
	for _, d := range tsharkDivergences {
		opOK := d.opcodes == nil
		for _, o := range d.opcodes {
			opOK = opOK || o == opcode
		}
		fieldOK := d.fields == nil && strings.HasPrefix(field, "infiniband.")
		for _, f := range d.fields {
			fieldOK = fieldOK || f == field
		}
		if opOK && fieldOK {
			return true
		}
	}
	return false
}

// TestVectorFieldsEqualTshark formats every registered field of every
// vector frame as -T fields does and compares with tshark's output for the
// same frames (testdata/vectors/*.tshark-fields.tsv).
func TestVectorFieldsEqualTshark(t *testing.T) {
	tsvs, err := filepath.Glob("../testdata/vectors/*.tshark-fields.tsv")
	require.NoError(t, err)
	require.NotEmpty(t, tsvs)
	compared := 0
	for _, tsv := range tsvs {
		pcap := strings.TrimSuffix(tsv, ".tshark-fields.tsv") + ".pcap"
		frames := readPcap(t, pcap)
		raw, err := os.ReadFile(tsv)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
		head := strings.Split(lines[0], "\t")
		require.Len(t, lines[1:], len(frames), tsv)
		d := decode.NewDecoder(decode.Options{})
		for i, line := range lines[1:] {
			lt := frames[i].linkType
			if lt == 147 { // the user DLT tshark was told to read as InfiniBand
				lt = decode.LinkTypeInfiniBand
			}
			p := d.Decode(decode.Input{Number: i + 1, Time: frames[i].ts, Length: frames[i].length, LinkType: lt, Data: frames[i].data})
			require.NoError(t, p.Err, "%s frame %d", filepath.Base(pcap), i+1)
			var opcode uint64
			if b := p.BTH(); b != nil {
				opcode = uint64(b.Opcode)
			}
			for j, want := range strings.Split(line, "\t") {
				fd, ok := decode.Lookup(head[j])
				if !ok || strings.HasPrefix(head[j], "_ws.") || diverges(opcode, head[j]) {
					continue
				}
				assert.Equal(t, want, formatField(fd, p), "%s frame %d field %s", filepath.Base(pcap), i+1, head[j])
				compared++
			}
		}
	}
	t.Logf("%d field values compared with tshark", compared)
	assert.Greater(t, compared, 1000)
}

// formatField renders a field as tshark -T fields does, occurrences joined by commas.
func formatField(fd *decode.Field, p *decode.Packet) string {
	var v decode.Value
	if !fd.Get(p, &v) {
		return ""
	}
	out := fd.String(&v)
	if fd.GetSecond(p, &v) {
		out += "," + fd.String(&v)
	}
	return out
}
