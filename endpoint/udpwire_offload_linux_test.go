//go:build linux

package endpoint

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/layers"
)

// TestUDPWireOffload sends runs of datagrams the UDP wire may segment
// (equal lengths, a shorter last one, same traffic class and hop limit)
// with segmentation offload on, refused by the kernel on either side (the
// probes replaced), or turned off, and checks that every datagram arrives
// on its own, in order, with its bytes, traffic class, hop limit and a
// good ICRC, read four slots at a time (so coalesced runs are handed out
// across calls). Where a capture on lo is possible it counts the frames
// the kernel passed: one per run with offload, one per datagram without.
func TestUDPWireOffload(t *testing.T) {
	defer goleak.VerifyNone(t)
	refuse := func(int) error { return unix.ENOPROTOOPT }
	const v4a, v4b, v6a, v6b = "127.0.0.1:0", "127.0.0.2:4791", "[::1]:0", "[::1]:4791"
	tests := []struct {
		name         string
		a, b         string
		gsoProbe     func(int) error
		groEnable    func(int) error
		opts         []UDPOption
		gso, gro     bool
		framesPerRun bool // the capture sees one frame per run, not per datagram
	}{
		{"offload", v4a, v4b, udpGSOProbe, udpGROEnable, nil, true, true, true},
		{"offload ipv6", v6a, v6b, udpGSOProbe, udpGROEnable, nil, true, true, true},
		{"kernel refuses UDP_SEGMENT", v4a, v4b, refuse, udpGROEnable, nil, false, true, false},
		{"kernel refuses UDP_GRO", v4a, v4b, udpGSOProbe, refuse, nil, true, false, true},
		{"kernel refuses both", v4a, v4b, refuse, refuse, nil, false, false, false},
		{"turned off", v4a, v4b, udpGSOProbe, udpGROEnable, []UDPOption{WithUDPOffload(false)}, false, false, false},
	}
	const marker = 0xC0FFE1
	// two runs and a sentinel: 20×1040 + 500 (TC 2), 3×1056 + 64 (TC 3)
	var lengths []int
	var tcs []uint8
	for range 20 {
		lengths, tcs = append(lengths, 1040), append(tcs, 2)
	}
	lengths, tcs = append(lengths, 500), append(tcs, 2)
	for range 3 {
		lengths, tcs = append(lengths, 1056), append(tcs, 3)
	}
	lengths, tcs = append(lengths, 64), append(tcs, 3)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saveGSO, saveGRO := udpGSOProbe, udpGROEnable
			udpGSOProbe, udpGROEnable = tt.gsoProbe, tt.groEnable
			looptest.Hold(t) // the capture sees UDP 4791 only
			wa, wb := udpListenPair(t, tt.a, tt.b, tt.opts...)
			udpGSOProbe, udpGROEnable = saveGSO, saveGRO
			assert.Equal(t, tt.gso, wa.gso.Load(), "sender segments")
			assert.Equal(t, tt.gro, wb.gro != nil, "receiver takes coalesced runs")

			src, cerr := capture.OpenLive("lo", 0, capture.RoCEFilter())
			if cerr == nil {
				defer src.Close()
			}
			sent := make([]Datagram, len(lengths)+1)
			for i, l := range lengths {
				sent[i] = Datagram{Dst: wb.LocalAddr(), TrafficClass: tcs[i], HopLimit: 64, Payload: testRoCEPayload(l, marker, uint32(i), byte(i))}
			}
			sentinel := len(lengths)
			sent[sentinel] = Datagram{Dst: wb.LocalAddr(), TrafficClass: 4, HopLimit: 64, Payload: testRoCEPayload(64, marker, uint32(sentinel), 0)}
			n, err := wa.WriteBatch(sent)
			require.NoError(t, err)
			require.Equal(t, len(sent), n)

			var got []Datagram
			for len(got) < len(sent) {
				dgs := wireReadBuffers(4)
				k, err := wb.ReadBatch(dgs)
				require.NoError(t, err)
				got = append(got, dgs[:k]...)
			}
			require.Len(t, got, len(sent))
			for i, dg := range got {
				assert.Equal(t, sent[i].Payload, dg.Payload, "datagram %d bytes (ICRC included)", i)
				assert.Equal(t, sent[i].TrafficClass, dg.TrafficClass, "datagram %d traffic class", i)
				assert.Equal(t, sent[i].HopLimit, dg.HopLimit, "datagram %d TTL", i)
				assert.Equal(t, wa.LocalAddr(), dg.Src, "datagram %d source", i)
				assert.Equal(t, ICRCGood, dg.ICRC, "datagram %d ICRC", i)
				assert.Zero(t, dg.Drop, "datagram %d", i)
			}

			if cerr != nil {
				t.Logf("no live capture on lo (needs CAP_NET_RAW), frames not counted: %v", cerr)
				return
			}
			require.NoError(t, src.SetReadDeadline(time.Now().Add(3*time.Second)))
			frames := 0
			var p capture.Packet
			for {
				require.NoError(t, src.NextInto(&p), "capturing our datagrams")
				hdr := 14 + 20 + 8 // lo's zero Ethernet header, IPv4, UDP
				if len(p.Data) > 14 && p.Data[14]>>4 == 6 {
					hdr = 14 + 40 + 8
				}
				if len(p.Data) < hdr+layers.BTHLength {
					continue
				}
				bth := p.Data[hdr:]
				if len(bth) < layers.BTHLength || binary.BigEndian.Uint32(bth[4:])&0xFFFFFF != marker {
					continue
				}
				if binary.BigEndian.Uint32(bth[8:])&0xFFFFFF == uint32(sentinel) {
					break
				}
				frames++
			}
			if tt.framesPerRun {
				assert.Equal(t, 2, frames, "frames on lo: one per run")
			} else {
				assert.Equal(t, len(lengths), frames, "frames on lo: one per datagram")
			}
		})
	}
}

// TestUDPWireGROTooLong: with UDP_GRO a datagram longer than MaxDatagram
// still keeps one slot, empty and marked DropTooLong, whether it came
// alone or at the head of a run, and the datagrams after it arrive whole.
func TestUDPWireGROTooLong(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, opts := range [][]UDPOption{nil, {WithUDPOffload(false)}} {
		wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0", opts...)
		big := testRoCEPayload(MaxDatagram, 1, 1, 1)
		big = append(big, make([]byte, 100)...)
		_, err := wa.WriteBatch([]Datagram{
			{Dst: wb.LocalAddr(), Payload: big},
			{Dst: wb.LocalAddr(), Payload: testRoCEPayload(64, 1, 2, 1)},
			{Dst: wb.LocalAddr(), Payload: testRoCEPayload(64, 1, 3, 1)},
		})
		require.NoError(t, err)
		got := udpReadN(t, wb, 3)
		assert.Equal(t, DropTooLong, got[0].Drop)
		assert.Empty(t, got[0].Payload)
		assert.Equal(t, wa.LocalAddr(), got[0].Src)
		for i, psn := range []uint32{2, 3} {
			assert.Zero(t, got[i+1].Drop)
			assert.Equal(t, ICRCGood, got[i+1].ICRC)
			assert.Equal(t, psn, binary.BigEndian.Uint32(got[i+1].Payload[8:]))
		}
	}
}

// TestUDPWireGSORefusedAtSend: a kernel that takes UDP_SEGMENT at set-up
// may still refuse a segmented message (here: UDP checksums turned off
// with SO_NO_CHECK, which Linux does not segment, EINVAL); the wire stops
// segmenting and sends the rest one datagram per message, none lost and
// none twice.
func TestUDPWireGSORefusedAtSend(t *testing.T) {
	defer goleak.VerifyNone(t)
	wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0")
	require.True(t, wa.gso.Load(), "this kernel segments UDP")
	var serr error
	require.NoError(t, wa.raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
	}))
	require.NoError(t, serr)
	sent := make([]Datagram, 10)
	for i := range sent {
		sent[i] = Datagram{Dst: wb.LocalAddr(), HopLimit: 64, Payload: testRoCEPayload(1040, 7, uint32(i), byte(i))}
	}
	n, err := wa.WriteBatch(sent)
	require.NoError(t, err)
	assert.Equal(t, len(sent), n)
	assert.False(t, wa.gso.Load(), "the wire stopped segmenting")
	got := udpReadN(t, wb, len(sent))
	require.Len(t, got, len(sent))
	for i, dg := range got {
		assert.Equal(t, sent[i].Payload, dg.Payload, "datagram %d", i)
		assert.Equal(t, ICRCGood, dg.ICRC, "datagram %d", i)
	}
}

// TestUDPWireReadContract: with offload or without, ReadBatch fills at
// most BatchSize slots, returns at once for no slots, and refuses a buffer
// too small for a BTH and an ICRC before it reads anything.
func TestUDPWireReadContract(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, on := range []bool{true, false} {
		wa, wb := udpListenPair(t, "127.0.0.1:0", "127.0.0.2:0", WithUDPBatchSize(4), WithUDPOffload(on))
		assert.Equal(t, on, wb.gro != nil, "offload %v", on)
		n, err := wb.ReadBatch(nil)
		require.NoError(t, err)
		assert.Zero(t, n)
		small := wireReadBuffers(2)
		small[1].Payload = make([]byte, 0, minRoCEDatagram-1)
		_, err = wb.ReadBatch(small)
		require.ErrorContains(t, err, "want at least")

		sent := make([]Datagram, 8)
		for i := range sent {
			sent[i] = Datagram{Dst: wb.LocalAddr(), Payload: testRoCEPayload(1040, 5, uint32(i), byte(i))}
		}
		_, err = wa.WriteBatch(sent)
		require.NoError(t, err)
		var got []Datagram
		for len(got) < len(sent) {
			dgs := wireReadBuffers(10)
			k, err := wb.ReadBatch(dgs)
			require.NoError(t, err)
			require.LessOrEqual(t, k, 4, "offload %v: at most BatchSize", on)
			got = append(got, dgs[:k]...)
		}
		for i, dg := range got {
			assert.Equal(t, sent[i].Payload, dg.Payload, "offload %v: datagram %d", on, i)
		}
	}
}
