package decode_test

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/decode"
	"github.com/ibwire/ibwire/layers"
)

// gsoSuper puts the UDP payloads of frames (crafted RoCEv2 packets of one
// direction) under the first one's Ethernet, IP and UDP headers, as a
// capture before UDP segmentation shows a GSO run: lengths of the whole,
// IPv4 checksum redone.
func gsoSuper(t *testing.T, frames []craft.Frame) []byte {
	t.Helper()
	first := frames[0].Data
	ipLen := 20
	if first[12] == 0x86 && first[13] == 0xDD {
		ipLen = 40
	}
	hdr := 14 + ipLen + 8
	out := append([]byte(nil), first[:hdr]...)
	for _, f := range frames {
		out = append(out, f.Data[hdr:]...)
	}
	ip := out[14:]
	if ipLen == 20 {
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
		ip[10], ip[11] = 0, 0
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for sum > 0xFFFF {
			sum = sum>>16 + sum&0xFFFF
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	} else {
		binary.BigEndian.PutUint16(ip[4:], uint16(len(ip)-40))
	}
	binary.BigEndian.PutUint16(ip[ipLen+4:], uint16(len(ip)-ipLen))
	return out
}

// writeFrames crafts one RDMA WRITE of size bytes at MTU 1024 and returns
// its request packets (FIRST, MIDDLE..., LAST).
func writeFrames(t *testing.T, encap craft.Encap, size int) []craft.Frame {
	t.Helper()
	c, err := craft.New(craft.Config{Encap: encap})
	require.NoError(t, err)
	require.NoError(t, c.Run([]craft.Op{{Kind: craft.OpWrite, Data: make([]byte, size), VA: 0x7f0000000000, RKey: 1}}, craft.Faults{}))
	var out []craft.Frame
	for _, f := range c.Frames() {
		if f.Info.From == craft.Requester {
			out = append(out, f)
		}
	}
	return out
}

func TestGSORunRecognised(t *testing.T) {
	w4 := writeFrames(t, craft.RoCEv2, 8*1024+100) // FIRST, 7 MIDDLE, LAST of 100 bytes
	w6 := writeFrames(t, craft.RoCEv2IPv6, 8*1024+100)
	require.Len(t, w4, 9)
	tests := []struct {
		name           string
		frames         []craft.Frame
		damage         bool // a payload byte of the first segment flipped
		segments, size int  // 0: not a run, a bad ICRC
	}{
		{"IPv4, six MIDDLEs", w4[1:7], false, 6, 1040},
		{"IPv4, MIDDLEs and a short LAST", w4[3:9], false, 6, 1040},
		{"IPv6, MIDDLEs and a short LAST", w6[2:9], false, 7, 1040},
		{"IPv4, four MIDDLEs just past 4096 bytes", w4[1:5], false, 4, 1040},
		{"three MIDDLEs: a MIDDLE of no MTU size", w4[1:4], false, 3, 1040},
		{"FIRST and MIDDLE at MTU 1024, as on lo", w4[0:2], false, 2, 1056},
		{"MIDDLE and a short LAST", w4[7:9], false, 2, 1040},
		{"a LAST with a bad ICRC: not looked at", w4[8:9], true, 0, 0},
		{"first segment damaged", w4[1:7], true, 0, 0},
		{"a segment missing: PSNs skip", append(append([]craft.Frame{}, w4[1:3]...), w4[4:8]...), false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := gsoSuper(t, tc.frames)
			if tc.damage {
				data[14+20+8+layers.BTHLength+100] ^= 1
			}
			p := decode.NewDecoder(decode.Options{}).Decode(decode.Input{Number: 1, Length: len(data), LinkType: layers.LinkTypeEthernet, Data: data})
			require.NoError(t, p.Err)
			require.Equal(t, layers.CRCBad, p.ICRC, "the run's ICRC does not verify over the whole")
			a := decode.NewAnalyzer(decode.AnalyzerOptions{})
			a.Analyze(p)
			n, s, ok := p.GSORun()
			st := a.Conversations()[0].Dir[0]
			if tc.segments == 0 {
				assert.False(t, ok)
				assert.Empty(t, p.GSONote())
				assert.True(t, p.Analysis.Has(decode.FindICRCBad))
				assert.False(t, p.Analysis.Has(decode.FindGSORun))
				assert.Equal(t, uint64(1), st.ICRCErrors)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.segments, n, "segments")
			assert.Equal(t, tc.size, s, "segment size")
			assert.True(t, p.Analysis.Has(decode.FindGSORun))
			assert.False(t, p.Analysis.Has(decode.FindICRCBad), "a run is not an ICRC error")
			assert.Equal(t, uint64(0), st.ICRCErrors)
			assert.Equal(t, uint64(1), st.GSORuns)
			assert.Equal(t, decode.SevWarn, p.Analysis.Severity)
			assert.Contains(t, p.GSONote(), "UDP GSO run of "+strconv.Itoa(tc.segments)+" segments of "+strconv.Itoa(tc.size)+" bytes captured before segmentation (a capture on loopback); capture with ibpeer --udp-offload=off to see each packet")
		})
	}
}

// TestGSORunCapturedOnLo reads a capture taken with ibdump -i lo while
// ibpeer write (8 KiB, MTU 1024, offload auto) ran against ibpeer serve on
// loopback: the kernel shows the WRITE as two runs, FIRST with a MIDDLE
// (1056 bytes, then 1040) and five MIDDLEs with the LAST, then the ACK.
func TestGSORunCapturedOnLo(t *testing.T) {
	src, err := capture.Open("testdata/gso_lo_write.pcap")
	require.NoError(t, err)
	defer src.Close()
	d := decode.NewDecoder(decode.Options{})
	a := decode.NewAnalyzer(decode.AnalyzerOptions{})
	want := []struct{ segments, size int }{{2, 1056}, {6, 1040}, {0, 0}}
	for i, w := range want {
		pk, err := src.Next()
		require.NoError(t, err)
		p := d.Decode(decode.Input{Number: i + 1, Length: len(pk.Data), LinkType: src.LinkType(), Data: pk.Data})
		a.Analyze(p)
		n, s, ok := p.GSORun()
		assert.Equal(t, w.segments != 0, ok, "frame %d", i+1)
		assert.Equal(t, w.segments, n, "frame %d segments", i+1)
		assert.Equal(t, w.size, s, "frame %d segment size", i+1)
		assert.False(t, p.Analysis.Has(decode.FindICRCBad), "frame %d", i+1)
		assert.False(t, p.Analysis.Has(decode.FindPSNGap), "frame %d: the run holds the PSNs between", i+1)
	}
	_, err = src.Next()
	assert.Error(t, err, "three frames")
}
