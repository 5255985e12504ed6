package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pcapBigEndianSLL2 is a big-endian microsecond pcap with the 32-bit link
// type 276, which gopacket v1.1.19 would truncate to 20.
var pcapBigEndianSLL2 = []byte{
	0xa1, 0xb2, 0xc3, 0xd4, 0x00, 0x02, 0x00, 0x04, // magic (µs, big-endian), version 2.4
	0, 0, 0, 0, 0, 0, 0, 0, // thiszone, sigfigs
	0x00, 0x00, 0xff, 0xff, // snaplen 65535
	0x00, 0x00, 0x01, 0x14, // link type 276
	0x65, 0x53, 0xf1, 0x00, 0x00, 0x01, 0xe2, 0x40, // 1700000000.123456
	0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x3c, // caplen 4, len 60
	0xde, 0xad, 0xbe, 0xef,
	0x65, 0x53, 0xf1, 0x01, 0x00, 0x00, 0x00, 0x00, // 1700000001.000000
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // empty record
}

// pcapLittleNanos is a little-endian nanosecond pcap, link type Ethernet.
var pcapLittleNanos = []byte{
	0x4d, 0x3c, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00, // magic (ns, little-endian)
	0, 0, 0, 0, 0, 0, 0, 0,
	0x00, 0x00, 0x04, 0x00, // snaplen 262144
	0x01, 0x00, 0x00, 0x00, // link type 1
	0x00, 0xf1, 0x53, 0x65, 0xff, 0xc9, 0x9a, 0x3b, // 1700000000.999999999
	0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0xca, 0xfe,
}

// order is what the builders need of binary.LittleEndian and BigEndian.
type order interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// ngBlock frames a pcapng block around body parts.
func ngBlock(o order, typ uint32, parts ...[]byte) []byte {
	body := bytes.Join(parts, nil)
	body = append(body, make([]byte, -len(body)&3)...)
	n := uint32(12 + len(body))
	b := o.AppendUint32(nil, typ)
	b = o.AppendUint32(b, n)
	return o.AppendUint32(append(b, body...), n)
}

// handPcapNG is a section with two interfaces: Ethernet in microseconds,
// LINKTYPE_INFINIBAND in nanoseconds with a 10 s offset; a name resolution
// block to skip; then an enhanced, an obsolete and a simple packet block.
func handPcapNG(o order) []byte {
	u16, u32 := o.AppendUint16, o.AppendUint32
	shb := ngBlock(o, blockSHB, u32(nil, 0x1a2b3c4d), u16(nil, 1), u16(nil, 0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	idb0 := ngBlock(o, blockIDB, u16(nil, 1), u16(nil, 0), u32(nil, 0))
	idb1 := ngBlock(o, blockIDB, u16(nil, 247), u16(nil, 0), u32(nil, 0),
		u16(nil, 9), u16(nil, 1), []byte{9, 0, 0, 0}, // if_tsresol 10^-9
		u16(nil, 14), u16(nil, 8), o.AppendUint64(nil, 10), // if_tsoffset 10 s
		u16(nil, 8), u16(nil, 8), o.AppendUint64(nil, 100_000_000_000), // if_speed 100 Gb/s
		u16(nil, 0), u16(nil, 0))
	nrb := ngBlock(o, 4, u16(nil, 0), u16(nil, 0))
	epb := ngBlock(o, blockEPB, u32(nil, 1), u32(nil, 0x17979cfe), u32(nil, 0x362a0001), // 1700000000000000001 ns
		u32(nil, 3), u32(nil, 3), []byte{1, 2, 3})
	opb := ngBlock(o, blockOPB, u16(nil, 0), u16(nil, 0), u32(nil, 0), u32(nil, 5), // 5 µs
		u32(nil, 2), u32(nil, 9), []byte{4, 5})
	spb := ngBlock(o, blockSPB, u32(nil, 1), []byte{6})
	return bytes.Join([][]byte{shb, idb0, idb1, nrb, epb, opb, spb}, nil)
}

type want struct {
	data     []byte
	ts       time.Time
	length   int
	linkType layers.LinkType
	iface    int
}

func readAll(r *Reader) ([]Packet, error) {
	var out []Packet
	for {
		p, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
}

func TestReaderKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte
		lt    layers.LinkType
		nanos bool
		want  []want
	}{
		{"pcap big-endian µs SLL2", pcapBigEndianSLL2, layers.LinkTypeLinuxSLL2, false, []want{
			{[]byte{0xde, 0xad, 0xbe, 0xef}, time.Unix(1700000000, 123456000), 60, layers.LinkTypeLinuxSLL2, 0},
			{[]byte{}, time.Unix(1700000001, 0), 0, layers.LinkTypeLinuxSLL2, 0},
		}},
		{"pcap little-endian ns", pcapLittleNanos, layers.LinkTypeEthernet, true, []want{
			{[]byte{0xca, 0xfe}, time.Unix(1700000000, 999999999), 2, layers.LinkTypeEthernet, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), "hand.pcap")
			require.NoError(t, err)
			assert.Equal(t, FormatPcap, r.Format())
			assert.Equal(t, tc.lt, r.LinkType())
			assert.Equal(t, tc.nanos, r.Nanos())
			checkPackets(t, r, tc.want)
		})
	}
}

func checkPackets(t *testing.T, r *Reader, ws []want) {
	t.Helper()
	got, err := readAll(r)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, len(ws))
	for i, w := range ws {
		p := got[i]
		assert.Equal(t, w.data, p.Data, "packet %d", i+1)
		assert.True(t, w.ts.Equal(p.Time), "packet %d: timestamp %v, want %v", i+1, p.Time, w.ts)
		assert.Equal(t, len(w.data), len(p.Data))
		assert.Equal(t, w.length, p.Length)
		assert.Equal(t, w.linkType, p.LinkType)
		assert.Equal(t, w.iface, p.Interface)
		assert.Equal(t, i+1, p.Number)
	}
}

func TestReaderPcapNG(t *testing.T) {
	ws := []want{
		{[]byte{1, 2, 3}, time.Unix(1700000010, 1), 3, layers.LinkTypeInfiniBand, 1},
		{[]byte{4, 5}, time.Unix(0, 5000), 9, layers.LinkTypeEthernet, 0},
		{[]byte{6}, time.Unix(0, 0), 1, layers.LinkTypeEthernet, 0},
	}
	for _, o := range []order{binary.LittleEndian, binary.BigEndian} {
		t.Run(o.String(), func(t *testing.T) {
			data := handPcapNG(o)
			// A second section restarts interface numbering and byte order.
			data = append(data, handPcapNG(binary.LittleEndian)...)
			r, err := NewReader(bytes.NewReader(data), "hand.pcapng")
			require.NoError(t, err)
			assert.Equal(t, FormatPcapNG, r.Format())
			all := append(append([]want(nil), ws...), ws...)
			checkPackets(t, r, all)
		})
	}
}

// TestReaderAgainstTshark reads a pcapng written by mergecap (two
// interfaces, link types 1 and 147, section options) and compares with
// tshark's reading of it, checked in beside it.
func TestReaderAgainstTshark(t *testing.T) {
	tsv, err := os.ReadFile("testdata/mixed.tshark-fields.tsv")
	require.NoError(t, err)
	r, err := Open("testdata/mixed.pcapng")
	require.NoError(t, err)
	defer r.Close()
	got, err := readAll(r)
	require.ErrorIs(t, err, io.EOF)
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		if !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	require.Len(t, got, len(rows))
	for i, row := range rows {
		p := got[i]
		sec, frac, _ := strings.Cut(row[2], ".")
		assert.Equal(t, row[0], strconv.Itoa(p.Number))
		assert.Equal(t, row[1], strconv.Itoa(p.Interface))
		assert.Equal(t, sec+"."+frac, fmt.Sprintf("%d.%09d", p.Time.Unix(), p.Time.Nanosecond()))
		assert.Equal(t, row[3], strconv.Itoa(p.Length))
		assert.Equal(t, row[4], strconv.Itoa(len(p.Data)))
		assert.Equal(t, map[string]layers.LinkType{"0": layers.LinkTypeEthernet, "1": 147}[row[1]], p.LinkType)
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestReaderStreams reads every format gzip-compressed and through a
// reader that is not seekable and returns one byte per call, as a pipe
// may.
func TestReaderStreams(t *testing.T) {
	mixed, err := os.ReadFile("testdata/mixed.pcapng")
	require.NoError(t, err)
	for name, data := range map[string][]byte{"be": pcapBigEndianSLL2, "ns": pcapLittleNanos, "ng": handPcapNG(binary.BigEndian), "mixed": mixed} {
		r, err := NewReader(bytes.NewReader(data), name)
		require.NoError(t, err)
		plain, err := readAll(r)
		require.ErrorIs(t, err, io.EOF)
		for _, src := range []io.Reader{
			bytes.NewReader(gzipped(t, data)),
			iotest.OneByteReader(bytes.NewReader(data)),
			iotest.OneByteReader(bytes.NewReader(gzipped(t, data))),
		} {
			r, err := NewReader(src, name)
			require.NoError(t, err, name)
			got, err := readAll(r)
			require.ErrorIs(t, err, io.EOF)
			assert.Equal(t, plain, got, name)
		}
	}
}

// threePackets is a generated 3-packet capture and the offsets at which
// each unit (header, records or blocks) ends.
func threePackets(t testing.TB, format Format) ([]byte, []int) {
	var b bytes.Buffer
	w, err := NewWriter(&b, format, layers.LinkTypeEthernet, true)
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	ends := []int{b.Len()}
	for i := range 3 {
		p := Packet{Data: bytes.Repeat([]byte{byte(i)}, 10*i+5), LinkType: layers.LinkTypeEthernet, Time: ngTime(i), Length: 9000}
		require.NoError(t, w.WritePacket(p))
		require.NoError(t, w.Flush())
		ends = append(ends, b.Len())
	}
	return b.Bytes(), ends
}

func TestReaderTruncatedEverywhere(t *testing.T) {
	for _, format := range []Format{FormatPcap, FormatPcapNG} {
		data, ends := threePackets(t, format)
		for cut := 0; cut < len(data); cut++ {
			// Damage inside the file header fails NewReader (packet 0) or,
			// for a pcapng block not yet known to be an interface
			// description, the first read (packet 1).
			r, err := NewReader(bytes.NewReader(data[:cut]), "cut.pcap")
			var got []Packet
			if err == nil {
				got, err = readAll(r)
			}
			whole := 0
			for whole < 3 && ends[whole+1] <= cut {
				whole++
			}
			require.Len(t, got, whole, "%v cut at %d", format, cut)
			if cut == ends[whole] || format == FormatPcapNG && cut == 28 { // a lone section header is a valid, empty pcapng
				require.ErrorIs(t, err, io.EOF, "%v cut at %d", format, cut)
				continue
			}
			var fe *FileError
			require.ErrorAs(t, err, &fe, "%v cut at %d", format, cut)
			assert.ErrorIs(t, err, ErrTruncated)
			assert.Equal(t, "cut.pcap", fe.File)
			if cut < ends[0] {
				assert.LessOrEqual(t, fe.Packet, 1)
				continue
			}
			assert.Equal(t, whole+1, fe.Packet)
			assert.Equal(t, int64(ends[whole]), fe.Offset)
			// The error sticks.
			_, again := r.Next()
			assert.Equal(t, err, again)
		}
		// A gzip stream cut anywhere is an error too (its trailer is missing).
		gz := gzipped(t, data)
		for cut := 0; cut < len(gz); cut++ {
			r, err := NewReader(bytes.NewReader(gz[:cut]), "cut.pcap.gz")
			if err == nil {
				_, err = readAll(r)
			}
			var fe *FileError
			require.ErrorAs(t, err, &fe, "gzip cut at %d", cut)
		}
	}
}

func TestReaderErrorMessage(t *testing.T) {
	data, ends := threePackets(t, FormatPcap)
	r, err := NewReader(bytes.NewReader(data[:ends[1]+20]), "write_bw.pcap")
	require.NoError(t, err)
	_, err = readAll(r)
	assert.EqualError(t, err, "capture: write_bw.pcap: packet 2 at byte 45: truncated record (wanted 15 bytes, got 4)")
	_, err = NewReader(strings.NewReader("hello, world"), "x.txt")
	assert.EqualError(t, err, "capture: x.txt: at byte 0: bad magic 0x68656c6c: not pcap, pcapng or gzip")
}

// TestReaderGzipWithoutCapture: a gzip file whose content is no capture
// says so: it is gzip, and what it holds is not pcap or pcapng.
func TestReaderGzipWithoutCapture(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		_, err := w.Write(b)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return buf.Bytes()
	}
	tests := []struct {
		name    string
		content []byte
		want    string
		is      error
	}{
		{"text", []byte("hello, world"),
			"capture: notes.gz: at byte 0: bad magic 0x68656c6c: gzip-compressed, but its content is not pcap or pcapng", ErrBadMagic},
		{"empty", nil,
			"capture: notes.gz: at byte 0: truncated file header (wanted 4 bytes, got 0): gzip-compressed, but its content is not pcap or pcapng", ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(gz(tt.content)), "notes.gz")
			assert.EqualError(t, err, tt.want)
			assert.ErrorIs(t, err, tt.is)
		})
	}
}

func TestReaderCorrupt(t *testing.T) {
	pcapRecord := func(caplen uint32) []byte {
		b := append([]byte(nil), pcapLittleNanos...)
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = binary.LittleEndian.AppendUint32(b, caplen)
		return binary.LittleEndian.AppendUint32(b, caplen)
	}
	le := binary.LittleEndian
	ng := handPcapNG(le)
	ngWith := func(blocks ...[]byte) []byte { return append(append([]byte(nil), ng...), bytes.Join(blocks, nil)...) }
	epb := func(iface, caplen uint32) []byte {
		return ngBlock(le, blockEPB, le.AppendUint32(nil, iface), make([]byte, 8), le.AppendUint32(nil, caplen), le.AppendUint32(nil, caplen))
	}
	badTrailer := ngBlock(le, 4, make([]byte, 4))
	badTrailer[len(badTrailer)-1] = 1
	for _, tc := range []struct {
		name    string
		data    []byte
		packets int // returned before the error; -1: NewReader fails
		err     error
	}{
		{"empty", nil, -1, ErrTruncated},
		{"bad magic", []byte("GET / HTTP/1.1\r\n"), -1, ErrBadMagic},
		{"bad byte-order magic", []byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4}, -1, ErrBadMagic},
		{"pcapng version 2", ngBlock(le, blockSHB, le.AppendUint32(nil, 0x1a2b3c4d), []byte{2, 0, 0, 0}, make([]byte, 8)), -1, ErrBadBlock},
		{"absurd caplen", pcapRecord(0x7fffffff), 1, ErrCaplen},
		{"caplen just over the limit", pcapRecord(MaxCaplen + 1), 1, ErrCaplen},
		{"block length 13", ngWith([]byte{4, 0, 0, 0, 13, 0, 0, 0, 0}), 3, ErrBadBlock},
		{"block length 8", ngWith([]byte{4, 0, 0, 0, 8, 0, 0, 0}), 3, ErrBadBlock},
		{"block length 1<<30", ngWith([]byte{4, 0, 0, 0, 0, 0, 0, 0x40}), 3, ErrBadBlock},
		{"trailing length differs", ngWith(badTrailer), 3, ErrBadBlock},
		{"undeclared interface", ngWith(epb(7, 0)), 3, ErrBadBlock},
		{"pcapng caplen over limit", ngWith(epb(0, MaxCaplen+1)), 3, ErrCaplen},
		{"packet overruns block", ngWith(epb(0, 400)), 3, ErrBadBlock},
		{"huge interface block", ngWith(ngBlock(le, blockIDB, make([]byte, maxMetaBlock))), 3, ErrBadBlock},
		{"bad if_tsresol", ngWith(ngBlock(le, blockIDB, make([]byte, 8), []byte{9, 0, 1, 0, 20, 0, 0, 0})), 3, ErrBadBlock},
		{"option overruns", ngWith(ngBlock(le, blockIDB, make([]byte, 8), []byte{2, 0, 99, 0})), 3, ErrBadBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), tc.name)
			var got []Packet
			if err == nil {
				require.NotEqual(t, -1, tc.packets, "NewReader should fail")
				got, err = readAll(r)
				assert.Len(t, got, tc.packets)
			} else {
				assert.Equal(t, -1, tc.packets, err.Error())
			}
			var fe *FileError
			require.ErrorAs(t, err, &fe)
			assert.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.name, fe.File)
			assert.Equal(t, max(tc.packets+1, 0), fe.Packet)
			assert.Equal(t, strings.ToLower(err.Error()), err.Error())
		})
	}
}

// rxeManifest reads the pkts column of pcaps/rxe/MANIFEST.md.
func rxeManifest(t *testing.T) map[string]int {
	f, err := os.Open("../pcaps/rxe/MANIFEST.md")
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("pcaps/rxe not present")
	}
	require.NoError(t, err)
	defer f.Close()
	counts := map[string]int{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		cols := strings.Split(sc.Text(), "|")
		if len(cols) < 5 || !strings.HasSuffix(strings.TrimSpace(cols[1]), ".pcap") {
			continue
		}
		n, err := strconv.Atoi(strings.Fields(cols[4])[0])
		require.NoError(t, err, sc.Text())
		counts[strings.TrimSpace(cols[1])] = n
	}
	require.NotEmpty(t, counts)
	return counts
}

func TestReaderRxeCaptures(t *testing.T) {
	counts := rxeManifest(t)
	for name, n := range counts {
		r, err := Open(filepath.Join("../pcaps/rxe", name))
		require.NoError(t, err)
		got, err := readAll(r)
		require.ErrorIs(t, err, io.EOF)
		require.NoError(t, r.Close())
		assert.Len(t, got, n, name)
		for _, p := range got {
			assert.Equal(t, layers.LinkTypeEthernet, p.LinkType)
			assert.Equal(t, len(p.Data), len(p.Data))
		}
	}
}

func TestOpenMulti(t *testing.T) {
	dir := t.TempDir()
	pcap, _ := threePackets(t, FormatPcap)
	ng, _ := threePackets(t, FormatPcapNG)
	files := map[string][]byte{"a.pcap": pcap, "b.pcapng.gz": gzipped(t, ng), "c.pcap": pcapBigEndianSLL2, "bad.pcap": pcap[:len(pcap)-1]}
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	in := func(n string) string { return filepath.Join(dir, n) }
	// c.pcap starts 0.123 s after the others, which start together: it is
	// read last, so bad.pcap's damage stops the stream before it.
	r, err := OpenMulti(in("c.pcap"), in("a.pcap"), in("b.pcapng.gz"), in("bad.pcap"))
	require.NoError(t, err)
	got, err := readAll(r)
	require.Len(t, got, 3+3+2)
	for i, p := range got {
		assert.Equal(t, i+1, p.Number)
	}
	assert.Equal(t, in("a.pcap"), got[0].File)
	assert.Equal(t, in("b.pcapng.gz"), got[3].File)
	var fe *FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, in("bad.pcap"), fe.File)
	assert.Equal(t, 9, fe.Packet)
	require.NoError(t, r.Close())
	assert.ErrorIs(t, r.NextInto(&Packet{}), os.ErrClosed)

	r, err = OpenMulti(in("c.pcap"), in("a.pcap"))
	require.NoError(t, err)
	got, err = readAll(r)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, got, 3+2)
	assert.Equal(t, layers.LinkTypeEthernet, got[0].LinkType)
	assert.Equal(t, layers.LinkTypeLinuxSLL2, got[3].LinkType)
	require.NoError(t, r.Close())

	_, err = OpenMulti(in("a.pcap"), in("missing.pcap"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = OpenMulti()
	assert.Error(t, err)
}

func TestNextIntoDoesNotAllocate(t *testing.T) {
	data := benchCapture(t, 1000)
	r, err := NewReader(bytes.NewReader(data), "bench")
	require.NoError(t, err)
	var p Packet
	require.NoError(t, r.NextInto(&p))
	allocs := testing.AllocsPerRun(500, func() {
		if err := r.NextInto(&p); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}

// benchCapture is an in-memory pcap of n RoCE-sized frames.
func benchCapture(t testing.TB, n int) []byte {
	var b bytes.Buffer
	w, err := NewWriter(&b, FormatPcap, layers.LinkTypeEthernet, true)
	require.NoError(t, err)
	frame := make([]byte, 1078) // Ethernet + IPv4 + UDP + BTH + RETH + 1 KiB + ICRC
	for i := range n {
		p := Packet{Data: frame[:1078-i%3*500], LinkType: layers.LinkTypeEthernet, Time: ngTime(i), Length: 9000}
		require.NoError(t, w.WritePacket(p))
	}
	require.NoError(t, w.Close())
	return b.Bytes()
}

// BenchmarkReader reads a 100k-packet pcap from memory; one op is one
// packet.
func BenchmarkReader(b *testing.B) {
	data := benchCapture(b, 100000)
	b.SetBytes(int64(len(data) / 100000))
	b.ReportAllocs()
	r, err := NewReader(bytes.NewReader(data), "bench")
	require.NoError(b, err)
	var p Packet
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.NextInto(&p); err == io.EOF {
			b.StopTimer()
			r, _ = NewReader(bytes.NewReader(data), "bench")
			b.StartTimer()
		} else if err != nil {
			b.Fatal(err)
		}
	}
}

// TestReaderInterfaceSpeed reads if_speed, which the PFC timeline needs to
// turn pause quanta into time.
func TestReaderInterfaceSpeed(t *testing.T) {
	for _, o := range []order{binary.LittleEndian, binary.BigEndian} {
		r, err := NewReader(bytes.NewReader(handPcapNG(o)), "hand")
		require.NoError(t, err)
		_, err = readAll(r)
		require.ErrorIs(t, err, io.EOF)
		assert.Equal(t, uint64(0), r.InterfaceSpeed(0), "interface 0 gives no speed")
		assert.Equal(t, uint64(100_000_000_000), r.InterfaceSpeed(1))
		assert.Equal(t, uint64(0), r.InterfaceSpeed(2))
	}
}

// windowCapture is a hand-made pcap of n records in byte order o, with
// nanosecond timestamps or not: records of 0 to 1,599 bytes, every fifth
// cut short of its length on the wire, enough of them to cross the 64 KiB
// buffer many times with records straddling its end. It returns the
// packets the file holds, with the offsets of their records.
func windowCapture(o order, nanos bool, n int) ([]byte, []Packet) {
	magic := uint32(0xa1b2c3d4)
	second := uint32(1_000_000)
	if nanos {
		magic, second = 0xa1b23c4d, 1_000_000_000
	}
	data := o.AppendUint32(nil, magic)
	data = o.AppendUint16(data, 2)
	data = o.AppendUint16(data, 4)
	data = o.AppendUint32(o.AppendUint32(o.AppendUint32(o.AppendUint32(data, 0), 0), MaxCaplen), uint32(layers.LinkTypeEthernet))
	var want []Packet
	for i := range n {
		caplen := i * 37 % 1600
		length := caplen
		if i%5 == 0 {
			length += 100
		}
		sec, frac := uint32(1_700_000_000+i), uint32(i*7919)%second
		ns := int64(frac)
		if !nanos {
			ns *= 1000
		}
		want = append(want, Packet{Number: i + 1, Time: time.Unix(int64(sec), ns), Length: length,
			LinkType: layers.LinkTypeEthernet, Data: bytes.Repeat([]byte{byte(i)}, caplen), File: "w.pcap", Offset: int64(len(data))})
		data = o.AppendUint32(o.AppendUint32(o.AppendUint32(o.AppendUint32(data, sec), frac), uint32(caplen)), uint32(length))
		data = append(data, want[i].Data...)
	}
	return data, want
}

// readReusing reads every packet with NextInto into one reused Packet, as
// ibdump does, keeping a copy of each.
// readWindow reads data, a capture file named name, with readReusing:
// from a reader that gives the whole file at once, or one byte a call.
func readWindow(t *testing.T, data []byte, name string, oneByte bool) ([]Packet, error) {
	var src io.Reader = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src)
	}
	r, err := NewReader(src, name)
	require.NoError(t, err)
	return readReusing(r)
}

// requireSamePackets requires got to be want, packet for packet, the
// times compared as instants.
func requireSamePackets(t *testing.T, want, got []Packet) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.True(t, want[i].Time.Equal(got[i].Time), "packet %d: %v, want %v", i+1, got[i].Time, want[i].Time)
		got[i].Time = want[i].Time
		require.Equal(t, want[i], got[i], "packet %d", i+1)
	}
}

func readReusing(r *Reader) ([]Packet, error) {
	var out []Packet
	var p Packet
	for {
		if err := r.NextInto(&p); err != nil {
			return out, err
		}
		q := p
		q.Data = bytes.Clone(p.Data)
		out = append(out, q)
	}
}

// TestReaderWindow checks the records NextInto parses in place from its
// window against the file's known contents, and against the copying reads
// a reader that gets one byte per call makes (its window never holds a
// record whole): the same packets, offsets and errors, in both byte
// orders, with micro- and nanosecond timestamps, snapshot-cut records, a
// file cut anywhere and a record too long.
func TestReaderWindow(t *testing.T) {
	const n = 3000
	for _, tc := range []struct {
		name  string
		o     order
		nanos bool
	}{
		{"little-endian us", binary.LittleEndian, false},
		{"big-endian us", binary.BigEndian, false},
		{"little-endian ns", binary.LittleEndian, true},
		{"big-endian ns", binary.BigEndian, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, want := windowCapture(tc.o, tc.nanos, n)
			read := func(data []byte, oneByte bool) ([]Packet, error) { return readWindow(t, data, "w.pcap", oneByte) }
			for _, oneByte := range []bool{false, true} {
				got, err := read(data, oneByte)
				require.ErrorIs(t, err, io.EOF)
				requireSamePackets(t, want, got)
			}
			// Damage: the file cut inside a record header, inside a
			// record and between records, and a record claiming more
			// than MaxCaplen, deep in the file.
			bad := slices.Clone(data)
			tc.o.PutUint32(bad[want[2500].Offset+8:], MaxCaplen+1)
			for _, d := range []struct {
				data   []byte
				packet int
				is     error
			}{
				{data[:want[1234].Offset+7], 1235, ErrTruncated},
				{data[:want[2000].Offset+16+int64(len(want[2000].Data))/2], 2001, ErrTruncated},
				{data[:want[2999].Offset+16], 3000, ErrTruncated},
				{bad, 2501, ErrCaplen},
			} {
				if d.is == ErrTruncated && len(want[d.packet-1].Data) == 0 && int64(len(d.data)) == want[d.packet-1].Offset+16 {
					continue // a whole empty record: not damage
				}
				windowed, err := read(d.data, false)
				var fe *FileError
				require.ErrorAs(t, err, &fe)
				assert.ErrorIs(t, err, d.is)
				assert.Equal(t, d.packet, fe.Packet)
				assert.Equal(t, want[d.packet-1].Offset, fe.Offset)
				assert.Len(t, windowed, d.packet-1)
				copying, err2 := read(d.data, true)
				require.Error(t, err2)
				assert.Equal(t, err2.Error(), err.Error())
				assert.Equal(t, len(copying), len(windowed))
			}
		})
	}
}

// windowNg is windowCapture's pcapng: a section in byte order o with an
// Ethernet interface in microseconds and an InfiniBand one in nanoseconds
// 10 s off, n enhanced packet blocks on them in turn (some with options,
// a name resolution block to skip now and then), and halfway a new
// section in the other byte order with the same interfaces.
func windowNg(o, other order, n int) ([]byte, []Packet) {
	section := func(o order) []byte {
		u16, u32 := o.AppendUint16, o.AppendUint32
		return bytes.Join([][]byte{
			ngBlock(o, blockSHB, u32(nil, 0x1a2b3c4d), u16(nil, 1), u16(nil, 0), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
			ngBlock(o, blockIDB, u16(nil, 1), u16(nil, 0), u32(nil, 0)),
			ngBlock(o, blockIDB, u16(nil, 247), u16(nil, 0), u32(nil, 0),
				u16(nil, 9), u16(nil, 1), []byte{9, 0, 0, 0}, u16(nil, 14), u16(nil, 8), o.AppendUint64(nil, 10), u16(nil, 0), u16(nil, 0)),
		}, nil)
	}
	data := section(o)
	var want []Packet
	for i := range n {
		if i == n/2 {
			o = other
			data = append(data, section(o)...)
		}
		if i%500 == 7 {
			data = append(data, ngBlock(o, 4, o.AppendUint16(nil, 0), o.AppendUint16(nil, 0))...)
		}
		caplen := i * 37 % 1600
		length := caplen
		if i%5 == 0 {
			length += 100
		}
		ifc := i % 2
		ts := uint64(1_700_000_000_000_000 + i*7919)
		at := time.Unix(int64(ts/1e6), int64(ts%1e6*1000))
		if ifc == 1 {
			ts *= 1000
			at = time.Unix(int64(ts/1e9)+10, int64(ts%1e9))
		}
		lt := layers.LinkTypeEthernet
		if ifc == 1 {
			lt = 247
		}
		p := Packet{Number: i + 1, Time: at, Length: length, LinkType: lt, Interface: ifc,
			Data: bytes.Repeat([]byte{byte(i)}, caplen), File: "w.pcapng", Offset: int64(len(data))}
		want = append(want, p)
		u32 := o.AppendUint32
		parts := [][]byte{u32(nil, uint32(ifc)), u32(nil, uint32(ts>>32)), u32(nil, uint32(ts)), u32(nil, uint32(caplen)), u32(nil, uint32(length)),
			p.Data, make([]byte, -caplen&3)}
		if i%7 == 3 {
			parts = append(parts, o.AppendUint16(nil, 2), o.AppendUint16(nil, 4), u32(nil, 1), o.AppendUint16(nil, 0), o.AppendUint16(nil, 0)) // epb_flags
		}
		data = append(data, ngBlock(o, blockEPB, parts...)...)
	}
	return data, want
}

// TestReaderWindowPcapNG is TestReaderWindow for enhanced packet blocks.
func TestReaderWindowPcapNG(t *testing.T) {
	const n = 3000
	read := func(t *testing.T, data []byte, oneByte bool) ([]Packet, error) {
		return readWindow(t, data, "w.pcapng", oneByte)
	}
	for _, tc := range []struct {
		name      string
		o, second order
	}{
		{"little-endian then big-endian", binary.LittleEndian, binary.BigEndian},
		{"big-endian then little-endian", binary.BigEndian, binary.LittleEndian},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, want := windowNg(tc.o, tc.second, n)
			for _, oneByte := range []bool{false, true} {
				got, err := read(t, data, oneByte)
				require.ErrorIs(t, err, io.EOF)
				requireSamePackets(t, want, got)
			}
			o := tc.o
			trailer := slices.Clone(data) // packet 1001's trailing length says 4 more
			end := want[1001].Offset - 4
			o.PutUint32(trailer[end:], o.Uint32(trailer[end:])+4)
			overrun := slices.Clone(data) // packet 1235 captures more than its block holds
			o.PutUint32(overrun[want[1234].Offset+20:], 2000)
			undeclared := slices.Clone(data) // packet 1237 is on interface 2
			o.PutUint32(undeclared[want[1236].Offset+8:], 2)
			for _, d := range []struct {
				data   []byte
				packet int
				is     error
			}{
				{data[:want[1234].Offset+7], 1235, ErrTruncated},
				{data[:want[1234].Offset+30], 1235, ErrTruncated},
				{data[:want[2999].Offset+28+int64(len(want[2999].Data))], 3000, ErrTruncated},
				{trailer, 1001, ErrBadBlock},
				{overrun, 1235, ErrBadBlock},
				{undeclared, 1237, ErrBadBlock},
			} {
				windowed, err := read(t, d.data, false)
				var fe *FileError
				require.ErrorAs(t, err, &fe)
				assert.ErrorIs(t, err, d.is)
				assert.Equal(t, d.packet, fe.Packet)
				assert.Equal(t, want[d.packet-1].Offset, fe.Offset)
				assert.Len(t, windowed, d.packet-1)
				copying, err2 := read(t, d.data, true)
				require.Error(t, err2)
				assert.Equal(t, err2.Error(), err.Error())
				assert.Equal(t, len(copying), len(windowed))
			}
		})
	}
}
