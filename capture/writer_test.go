package capture

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ngInfo gives packet i a nanosecond timestamp and an original length
// longer than any captured one.
func ngInfo(i int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Unix(1700000000+int64(i), int64(i)*1001001+7), Length: 9000}
}

func TestWriterRoundTrip(t *testing.T) {
	sizes := []int{0, 1, 3, 4, 60, 1078, 4200, MaxCaplen}
	for _, tc := range []struct {
		format Format
		lt     LinkType
	}{
		{FormatPcap, LinkTypeEthernet}, {FormatPcap, LinkTypeLinuxSLL2}, {FormatPcap, 0x12345678},
		{FormatPcapNG, LinkTypeInfiniBand}, {FormatPcapNG, LinkTypeLinuxSLL2},
	} {
		for _, nanos := range []bool{false, true} {
			var b bytes.Buffer
			w, err := NewWriter(&b, tc.format, tc.lt, nanos)
			require.NoError(t, err)
			var in []Packet
			for i, n := range sizes {
				p := Packet{Data: bytes.Repeat([]byte{byte(n)}, n), Info: ngInfo(i), LinkType: tc.lt}
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
				ts := in[i].Info.Timestamp
				if !nanos {
					ts = ts.Truncate(time.Microsecond)
				}
				assert.Equal(t, in[i].Data, p.Data)
				assert.True(t, ts.Equal(p.Info.Timestamp), "%v nanos=%v packet %d: %v want %v", tc.format, nanos, i, p.Info.Timestamp, ts)
				assert.Equal(t, len(in[i].Data), p.Info.CaptureLength)
				assert.Equal(t, max(9000, len(in[i].Data)), p.Info.Length)
				assert.Equal(t, tc.lt, p.LinkType)
			}
		}
	}
}

// TestWriterPcapNGMixed gives each new link type its own interface.
func TestWriterPcapNGMixed(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, FormatPcapNG, LinkTypeEthernet, true)
	require.NoError(t, err)
	lts := []LinkType{LinkTypeInfiniBand, LinkTypeEthernet, LinkTypeLinuxSLL2, LinkTypeInfiniBand}
	for i, lt := range lts {
		require.NoError(t, w.WritePacket(Packet{Data: []byte{byte(i)}, LinkType: lt, Info: ngInfo(i)}))
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
	w, err := NewWriter(&b, FormatPcap, LinkTypeEthernet, true)
	require.NoError(t, err)
	p := Packet{Data: []byte{0xca, 0xfe}, LinkType: LinkTypeEthernet, Info: gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, 999999999)}}
	require.NoError(t, w.WritePacket(p))
	require.NoError(t, w.Flush())
	assert.Equal(t, pcapLittleNanos, b.Bytes())

	gr, err := pcapgo.NewReader(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	data, ci, err := gr.ReadPacketData()
	require.NoError(t, err)
	assert.Equal(t, p.Data, data)
	assert.True(t, p.Info.Timestamp.Equal(ci.Timestamp))

	b.Reset()
	w, err = NewWriter(&b, FormatPcapNG, LinkTypeEthernet, false)
	require.NoError(t, err)
	require.NoError(t, w.WritePacket(p))
	require.NoError(t, w.Close())
	ngr, err := pcapgo.NewNgReader(bytes.NewReader(b.Bytes()), pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	data, ci, err = ngr.ReadPacketData()
	require.NoError(t, err)
	assert.Equal(t, p.Data, data)
	assert.True(t, p.Info.Timestamp.Truncate(time.Microsecond).Equal(ci.Timestamp))
}

func TestWriterErrors(t *testing.T) {
	w, err := NewWriter(io.Discard, FormatPcap, LinkTypeEthernet, false)
	require.NoError(t, err)
	assert.ErrorIs(t, w.WritePacket(Packet{LinkType: LinkTypeInfiniBand}), ErrLinkType)
	assert.ErrorIs(t, w.WritePacket(Packet{LinkType: LinkTypeEthernet, Data: make([]byte, MaxCaplen+1)}), ErrCaplen)
	require.NoError(t, w.Close())
	assert.Error(t, w.WritePacket(Packet{LinkType: LinkTypeEthernet}))

	_, err = NewWriter(io.Discard, FormatPcapNG, 0x10000, false)
	assert.ErrorIs(t, err, ErrLinkType)
	_, err = NewWriter(io.Discard, Format(7), LinkTypeEthernet, false)
	assert.Error(t, err)
}

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.pcapng")
	w, err := Create(path, FormatPcapNG, LinkTypeRaw, true)
	require.NoError(t, err)
	require.NoError(t, w.WritePacket(Packet{Data: []byte{0x45}, LinkType: LinkTypeRaw, Info: ngInfo(0)}))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	r, err := Open(path)
	require.NoError(t, err)
	defer r.Close()
	p, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, LinkTypeRaw, p.LinkType)
	assert.True(t, ngInfo(0).Timestamp.Equal(p.Info.Timestamp))
	_, err = Create(filepath.Join(t.TempDir(), "no", "such", "dir"), FormatPcap, LinkTypeRaw, false)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
