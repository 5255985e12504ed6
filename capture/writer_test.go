package capture

import (
	"bytes"
	"github.com/ibwire/ibwire/layers"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ngTime gives packet i a nanosecond timestamp; the tests give every packet
// an original length (9000) longer than any captured one.
func ngTime(i int) time.Time {
	return time.Unix(1700000000+int64(i), int64(i)*1001001+7)
}

func TestWriterRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 3, 4, 60, 1078, 4200, MaxCaplen}
	for _, tc := range []struct {
		format Format
		lt     layers.LinkType
	}{
		{FormatPcap, layers.LinkTypeEthernet}, {FormatPcap, layers.LinkTypeLinuxSLL2}, {FormatPcap, 0x12345678},
		{FormatPcapNG, layers.LinkTypeInfiniBand}, {FormatPcapNG, layers.LinkTypeLinuxSLL2},
	} {
		for _, nanos := range []bool{false, true} {
			var b bytes.Buffer
			w, err := NewWriter(&b, tc.format, tc.lt, nanos)
			require.NoError(t, err)
			var in []Packet
			for i, n := range sizes {
				p := Packet{Data: bytes.Repeat([]byte{byte(n)}, n), Time: ngTime(i), Length: 9000, LinkType: tc.lt}
				require.NoError(t, w.WritePacket(p))
				in = append(in, p)
			}
			require.NoError(t, w.Close())
			r, err := NewReader(&b, "rt")
			require.NoError(t, err)
			assert.Equal(t, tc.format, r.Format())
			assert.Equal(t, tc.lt, r.LinkType())
			assert.Equal(t, nanos, r.Nanos())
			out, err := readAll(r)
			require.ErrorIs(t, err, io.EOF)
			require.Len(t, out, len(in))
			for i, p := range out {
				ts := in[i].Time
				if !nanos {
					ts = ts.Truncate(time.Microsecond)
				}
				assert.Equal(t, in[i].Data, p.Data)
				assert.True(t, ts.Equal(p.Time), "%v nanos=%v packet %d: %v want %v", tc.format, nanos, i, p.Time, ts)
				assert.Equal(t, len(in[i].Data), len(p.Data))
				assert.Equal(t, max(9000, len(in[i].Data)), p.Length)
				assert.Equal(t, tc.lt, p.LinkType)
			}
		}
	}
}

// TestWriterPcapNGMixed gives each new link type its own interface.
func TestWriterPcapNGMixed(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, FormatPcapNG, layers.LinkTypeEthernet, true)
	require.NoError(t, err)
	lts := []layers.LinkType{layers.LinkTypeInfiniBand, layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL2, layers.LinkTypeInfiniBand}
	for i, lt := range lts {
		require.NoError(t, w.WritePacket(Packet{Data: []byte{byte(i)}, LinkType: lt, Time: ngTime(i), Length: 9000}))
	}
	require.NoError(t, w.Flush())
	r, err := NewReader(&b, "mixed")
	require.NoError(t, err)
	out, err := readAll(r)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, out, len(lts))
	for i, p := range out {
		assert.Equal(t, lts[i], p.LinkType)
		assert.Equal(t, []int{1, 0, 2, 1}[i], p.Interface)
	}
}

// TestWriterKnownBytes compares a one-packet pcap with bytes written out by
// hand (pcapLittleNanos) and checks gopacket's own readers accept ours.
func TestWriterKnownBytes(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, FormatPcap, layers.LinkTypeEthernet, true)
	require.NoError(t, err)
	p := Packet{Data: []byte{0xca, 0xfe}, LinkType: layers.LinkTypeEthernet, Time: time.Unix(1700000000, 999999999)}
	require.NoError(t, w.WritePacket(p))
	require.NoError(t, w.Flush())
	assert.Equal(t, pcapLittleNanos, b.Bytes())

	gr, err := pcapgo.NewReader(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	data, ci, err := gr.ReadPacketData()
	require.NoError(t, err)
	assert.Equal(t, p.Data, data)
	assert.True(t, p.Time.Equal(ci.Timestamp))

	b.Reset()
	w, err = NewWriter(&b, FormatPcapNG, layers.LinkTypeEthernet, false)
	require.NoError(t, err)
	require.NoError(t, w.WritePacket(p))
	require.NoError(t, w.Close())
	ngr, err := pcapgo.NewNgReader(bytes.NewReader(b.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	data, ci, err = ngr.ReadPacketData()
	require.NoError(t, err)
	assert.Equal(t, p.Data, data)
	assert.True(t, p.Time.Truncate(time.Microsecond).Equal(ci.Timestamp))
}

func TestWriterErrors(t *testing.T) {
	w, err := NewWriter(io.Discard, FormatPcap, layers.LinkTypeEthernet, false)
	require.NoError(t, err)
	assert.ErrorIs(t, w.WritePacket(Packet{LinkType: layers.LinkTypeInfiniBand}), ErrLinkType)
	assert.ErrorIs(t, w.WritePacket(Packet{LinkType: layers.LinkTypeEthernet, Data: make([]byte, MaxCaplen+1)}), ErrCaplen)
	require.NoError(t, w.Close())
	assert.Error(t, w.WritePacket(Packet{LinkType: layers.LinkTypeEthernet}))

	_, err = NewWriter(io.Discard, FormatPcapNG, 0x10000, false)
	assert.ErrorIs(t, err, ErrLinkType)
	_, err = NewWriter(io.Discard, Format(7), layers.LinkTypeEthernet, false)
	assert.Error(t, err)
}

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.pcapng")
	w, err := Create(path, FormatPcapNG, layers.LinkTypeRaw, true)
	require.NoError(t, err)
	require.NoError(t, w.WritePacket(Packet{Data: []byte{0x45}, LinkType: layers.LinkTypeRaw, Time: ngTime(0), Length: 9000}))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	r, err := Open(path)
	require.NoError(t, err)
	defer r.Close()
	p, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, layers.LinkTypeRaw, p.LinkType)
	assert.True(t, ngTime(0).Equal(p.Time))
	_, err = Create(filepath.Join(t.TempDir(), "no", "such", "dir"), FormatPcap, layers.LinkTypeRaw, false)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestWriterNamedInterfaces: a pcapng stream with interfaces given up
// front (mergecap's shape) puts each packet on the interface it names,
// whose if_name gopacket's pcapng reader reads back.
func TestWriterNamedInterfaces(t *testing.T) {
	ifaces := []NamedInterface{{"a", layers.LinkTypeEthernet}, {"mirror", layers.LinkTypeEthernet}, {"ib", layers.LinkTypeInfiniBand}}
	var buf bytes.Buffer
	w, err := NewWriterInterfaces(&buf, ifaces, true)
	require.NoError(t, err)
	packets := []Packet{
		{Time: ngTime(1), Data: []byte{1, 2, 3}, LinkType: layers.LinkTypeEthernet, Interface: 1},
		{Time: ngTime(2), Data: []byte{4, 5, 6, 7, 8}, LinkType: layers.LinkTypeInfiniBand, Interface: 2},
		{Time: ngTime(3), Data: []byte{9}, LinkType: layers.LinkTypeEthernet, Interface: 0},
	}
	for _, p := range packets {
		require.NoError(t, w.WritePacket(p))
	}
	assert.ErrorIs(t, w.WritePacket(Packet{Data: []byte{1}, LinkType: layers.LinkTypeEthernet, Interface: 2}), ErrLinkType)
	assert.ErrorIs(t, w.WritePacket(Packet{Data: []byte{1}, LinkType: layers.LinkTypeEthernet, Interface: 3}), ErrLinkType)
	require.NoError(t, w.Flush())

	ng, err := pcapgo.NewNgReader(bytes.NewReader(buf.Bytes()), pcapgo.NgReaderOptions{WantMixedLinkType: true})
	require.NoError(t, err)
	for _, p := range packets {
		data, ci, err := ng.ReadPacketData()
		require.NoError(t, err)
		assert.Equal(t, p.Data, data)
		assert.Equal(t, p.Interface, ci.InterfaceIndex)
		assert.Equal(t, p.Time.UnixNano(), ci.Timestamp.UnixNano())
	}
	_, _, err = ng.ReadPacketData()
	assert.ErrorIs(t, err, io.EOF)
	require.Equal(t, 3, ng.NInterfaces())
	for i, want := range ifaces {
		got, err := ng.Interface(i)
		require.NoError(t, err)
		assert.Equal(t, want.Name, got.Name)
	}
	_, err = NewWriterInterfaces(&buf, nil, false)
	assert.Error(t, err)
}
