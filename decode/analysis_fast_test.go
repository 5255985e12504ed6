package decode

// The analysis's shortcuts, held to the general paths they stand in for.

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// corpusFiles are the captures of the repository the analysis tests read,
// and the benchmark capture when IBWIRE_BENCH_PCAP names it.
func corpusFiles(t *testing.T) []string {
	var files []string
	for _, pat := range []string{"../pcaps/*.pcap", "../pcaps/rxe/*.pcap", "../pcaps/rxe/interop/*.pcap", "../testdata/*.pcap*",
		"../testdata/vectors/*.pcap*", "../capture/testdata/*.pcap*"} {
		m, err := filepath.Glob(pat)
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.Greater(t, len(files), 60)
	if f := os.Getenv("IBWIRE_BENCH_PCAP"); f != "" {
		files = append(files, f)
	}
	return files
}

// TestCachedIPv4AgreesWithMap: the direction cachedIPv4 finds for an IPv4
// packet without building its key is the one the map holds under the key
// packetKey builds, over the corpus, with connections retired often
// (MaxLive 2) and not.
func TestCachedIPv4AgreesWithMap(t *testing.T) {
	hits := 0
	for _, f := range corpusFiles(t) {
		for _, maxLive := range []int{0, 2} {
			a := NewAnalyzer(AnalyzerOptions{MaxLive: maxLive})
			dec := NewDecoder(Options{})
			r, err := capture.Open(f)
			require.NoError(t, err)
			var cp capture.Packet
			for {
				err := r.NextInto(&cp)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					break // a damaged record ends the file here
				}
				p := dec.Decode(cp)
				if s, d := p.Headers.IPv4.SrcIP, p.Headers.IPv4.DstIP; p.IsIB() && p.HasIPv4() && len(s) == 4 && len(d) == 4 {
					// What transport asks of each IPv4 packet.
					b := &p.Headers.BTH
					var k dirKey
					packetKey(&k, p, b.DestQP)
					got := a.cachedIPv4(binary.BigEndian.Uint32(s), binary.BigEndian.Uint32(d), b.DestQP)
					if got != nil {
						hits++
						require.Same(t, a.dirs[k], got, "%s frame %d", f, cp.Number)
						require.Equal(t, k, got.key, "%s frame %d", f, cp.Number)
					}
				}
				a.Analyze(p)
			}
			r.Close()
		}
	}
	assert.Greater(t, hits, 1000)
}

// TestDirectionV4Key: a direction keeps its key in v4 and v4QP only when
// the key is an IPv4 packet's (two mapped IPv4 addresses, no LID, no DETH
// source QP), and cachedIPv4 finds it in the slot cacheIndex gives.
func TestDirectionV4Key(t *testing.T) {
	v4 := func(b ...byte) addrKey { return addrKeyOfBytes(b) }
	v6 := addrKeyOfBytes([]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 1})
	withLID := v4(10, 0, 0, 1)
	withLID.lid = 7
	for _, tc := range []struct {
		name string
		key  dirKey
		v4   bool
	}{
		{"IPv4", dirKey{src: v4(10, 0, 0, 1), dst: v4(10, 0, 0, 2), qp: 0x11}, true},
		{"IPv4 QP 0xffffff", dirKey{src: v4(255, 255, 255, 255), dst: v4(0, 0, 0, 0), qp: 0xffffff}, true},
		{"IPv4 UD", dirKey{src: v4(10, 0, 0, 1), dst: v4(10, 0, 0, 2), qp: 0x11, udSrc: udSrcFlag | 0x12}, false},
		{"IPv6", dirKey{src: v6, dst: v4(10, 0, 0, 2), qp: 0x11}, false},
		{"LID", dirKey{src: addrKey{lid: 1}, dst: addrKey{lid: 2}, qp: 0x11}, false},
		{"IPv4 and a LID", dirKey{src: withLID, dst: v4(10, 0, 0, 2), qp: 0x11}, false},
		{"none", dirKey{qp: 0x11}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnalyzer(AnalyzerOptions{})
			d := a.direction(&tc.key, layers.ServiceRC)
			if !tc.v4 {
				assert.Equal(t, noV4, d.v4QP)
				return
			}
			assert.Equal(t, tc.key.qp, d.v4QP)
			src, dst := uint32(tc.key.src.lo), uint32(tc.key.dst.lo)
			assert.Equal(t, uint64(src)<<32|uint64(dst), d.v4)
			assert.Equal(t, tc.key.cacheIndex(), dirCacheIndex(tc.key.qp, src, dst))
			assert.Same(t, d, a.cachedIPv4(src, dst, tc.key.qp))
		})
	}
}

// TestCachedIPv4Misses: a direction in the slot of an IPv4 packet's key is
// found only when it is that key's: not for another QP or other addresses
// whose key the slot may hold as well.
func TestCachedIPv4Misses(t *testing.T) {
	r, err := capture.Open("../pcaps/rxe/write_bw.pcap")
	require.NoError(t, err)
	defer r.Close()
	var cp capture.Packet
	dec := NewDecoder(Options{})
	var p *Packet
	for p == nil || !p.IsIB() || !p.HasIPv4() {
		require.NoError(t, r.NextInto(&cp))
		p = dec.Decode(cp)
	}
	qp := p.Headers.BTH.DestQP
	var k dirKey
	packetKey(&k, p, qp)
	src, dst := uint32(k.src.lo), uint32(k.dst.lo)

	a := NewAnalyzer(AnalyzerOptions{})
	assert.Nil(t, a.cachedIPv4(src, dst, qp), "nothing cached yet")
	d := a.direction(&k, layers.ServiceRC)
	assert.Same(t, d, a.cachedIPv4(src, dst, qp))

	other := a.direction(&dirKey{src: k.src, dst: k.dst, qp: qp ^ 1}, layers.ServiceRC)
	a.cache[dirCacheIndex(qp, src, dst)] = other
	assert.Nil(t, a.cachedIPv4(src, dst, qp), "another QP's direction in the slot")
	a.cache[dirCacheIndex(qp^1, src, dst)] = d
	assert.Nil(t, a.cachedIPv4(src, dst, qp^1), "another QP's packet")

	swapped := a.direction(&dirKey{src: k.dst, dst: k.src, qp: qp}, layers.ServiceRC)
	a.cache[dirCacheIndex(qp, src, dst)] = swapped
	assert.Nil(t, a.cachedIPv4(src, dst, qp), "the reverse direction in the slot")
	ud := a.direction(&dirKey{src: k.src, dst: k.dst, qp: qp, udSrc: udSrcFlag | 5}, layers.ServiceUD)
	a.cache[dirCacheIndex(qp, src, dst)] = ud
	assert.Nil(t, a.cachedIPv4(src, dst, qp), "a UD direction of the same addresses and QP in the slot")
}
