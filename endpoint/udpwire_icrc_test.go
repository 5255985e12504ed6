package endpoint

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/capture"
	"github.com/ibwire/ibwire/layers"
)

// splitRoCEFrame takes an Ethernet frame carrying RoCEv2 and returns what a
// UDP socket would report: the addresses and the UDP payload, plus the IPv4
// Identification the socket would not show.
func splitRoCEFrame(t *testing.T, frame []byte) (src, dst netip.AddrPort, ipID uint16, payload []byte) {
	t.Helper()
	require.GreaterOrEqual(t, len(frame), 14+40+8)
	ip := frame[14:]
	var udp []byte
	switch binary.BigEndian.Uint16(frame[12:]) {
	case 0x0800:
		ipID = binary.BigEndian.Uint16(ip[4:])
		s, d := netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
		udp = ip[20:binary.BigEndian.Uint16(ip[2:])]
		src, dst = netip.AddrPortFrom(s, binary.BigEndian.Uint16(udp)), netip.AddrPortFrom(d, binary.BigEndian.Uint16(udp[2:]))
	case 0x86DD:
		s, d := netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40]))
		udp = ip[40 : 40+binary.BigEndian.Uint16(ip[4:])]
		src, dst = netip.AddrPortFrom(s, binary.BigEndian.Uint16(udp)), netip.AddrPortFrom(d, binary.BigEndian.Uint16(udp[2:]))
	default:
		t.Fatalf("not IPv4 or IPv6: ethertype %#x", frame[12:14])
	}
	return src, dst, ipID, udp[8:binary.BigEndian.Uint16(udp[4:])]
}

// wantStatus is what verify must say about a correct packet with IP ID id.
func wantStatus(src netip.AddrPort, id uint16) ICRCStatus {
	if src.Addr().Is4() && id != 0 {
		return ICRCUnverifiable
	}
	return ICRCGood
}

// TestICRCVerifyKnownAnswers feeds scapy's known-answer frames (IPv4 with
// IP ID 0x1000+i, and IPv6) through the receive check as a UDP socket would
// see them.
func TestICRCVerifyKnownAnswers(t *testing.T) {
	for _, file := range []string{"scapy-rocev2.json", "scapy-rocev2-ipv6.json", "scapy-rocev2-probes.json"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", file))
		require.NoError(t, err)
		var doc struct {
			Vectors []struct {
				Name string
				Hex  string
			}
			Negative []struct {
				Name string
				Hex  string
			}
		}
		require.NoError(t, json.Unmarshal(raw, &doc))
		require.NotEmpty(t, doc.Vectors)
		var s icrcSynth
		for _, v := range doc.Vectors {
			frame, err := hex.DecodeString(v.Hex)
			require.NoError(t, err)
			src, dst, id, payload := splitRoCEFrame(t, frame)
			got, gotID := s.verify(src, dst, payload)
			assert.Equal(t, wantStatus(src, id), got, "%s: %s", file, v.Name)
			if got == ICRCUnverifiable {
				assert.Equal(t, id, gotID, "%s: %s: the IP ID the ICRC implies", file, v.Name)
			}
			// Writing it again with our ID (0) gives the ICRC layers computes
			// over the whole frame with ID 0.
			binary.BigEndian.PutUint16(frame[14+4:], 0)
			require.NoError(t, s.fill(src, dst, 0, payload))
			if src.Addr().Is4() {
				gotCRC, wantCRC, err := layers.VerifyICRC(layers.EncapRoCEv2IPv4, frame[14:14+ipv4UDPHeaderLen+len(payload)])
				require.NoError(t, err)
				assert.Equal(t, wantCRC, gotCRC, "%s: %s: fill", file, v.Name)
			}
		}
		for _, v := range doc.Negative {
			frame, err := hex.DecodeString(v.Hex)
			require.NoError(t, err)
			src, dst, _, payload := splitRoCEFrame(t, frame)
			got, _ := s.verify(src, dst, payload)
			assert.Equal(t, ICRCBad, got, "%s: %s", file, v.Name)
		}
	}
}

// TestICRCVerifyRxeCaptures checks every RoCEv2 packet Linux rxe sent in the
// project's captures: rxe picks a fresh IP ID per packet, and the check must
// accept each one and recover that ID.
func TestICRCVerifyRxeCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "pcaps", "rxe", "*.pcap"))
	require.NoError(t, err)
	// The interop samples: rxe's packets to and from ibpeer.
	interop, err := filepath.Glob(filepath.Join("..", "pcaps", "rxe", "interop", "*.pcap"))
	require.NoError(t, err)
	files = append(files, interop...)
	if len(files) == 0 {
		t.Skip("no rxe captures in pcaps/rxe")
	}
	var s icrcSynth
	checked := 0
	for _, f := range files {
		r, err := capture.Open(f)
		require.NoError(t, err)
		var p capture.Packet
		for {
			err := r.NextInto(&p)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if !capture.MatchRoCE(p.Data) || binary.BigEndian.Uint16(p.Data[12:]) == 0x8915 {
				continue
			}
			src, dst, id, payload := splitRoCEFrame(t, p.Data)
			got, gotID := s.verify(src, dst, payload)
			require.Equal(t, wantStatus(src, id), got, "%s frame %d", f, p.Number)
			if got == ICRCUnverifiable {
				require.Equal(t, id, gotID, "%s frame %d", f, p.Number)
			}
			checked++
		}
		r.Close()
	}
	t.Logf("%d rxe packets checked", checked)
	assert.Positive(t, checked)
}

// TestICRCIPv4EveryID builds one packet, gives it each of the 65536 IP IDs
// and checks that the receive check accepts every one and names the ID,
// and that a flipped bit anywhere in the payload is rejected.
func TestICRCIPv4EveryID(t *testing.T) {
	for _, payloadLen := range []int{minRoCEDatagram, 64, 1024 + 16, MaxDatagram} {
		frame := make([]byte, ipv4UDPHeaderLen+payloadLen)
		frame[0] = 0x45
		binary.BigEndian.PutUint16(frame[2:], uint16(len(frame)))
		binary.BigEndian.PutUint16(frame[6:], ipv4DontFragment)
		frame[8], frame[9] = 64, udpProto
		copy(frame[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
		binary.BigEndian.PutUint16(frame[20:], 0xC123)
		binary.BigEndian.PutUint16(frame[22:], layers.RoCEv2Port)
		binary.BigEndian.PutUint16(frame[24:], uint16(8+payloadLen))
		copy(frame[28:], testRoCEPayload(payloadLen, 0x12, 0x345, 7))
		src := netip.MustParseAddrPort("10.0.0.1:49443")
		dst := netip.MustParseAddrPort("10.0.0.2:4791")
		payload := frame[ipv4UDPHeaderLen:]
		var s icrcSynth
		setID := func(id uint16) {
			binary.BigEndian.PutUint16(frame[4:], id)
			crc, err := layers.ComputeICRC(layers.EncapRoCEv2IPv4, frame)
			require.NoError(t, err)
			binary.LittleEndian.PutUint32(frame[len(frame)-4:], crc)
		}
		for _, tt := range []struct {
			id   uint16
			want ICRCStatus
		}{{0, ICRCGood}, {1, ICRCUnverifiable}, {0x8000, ICRCUnverifiable}, {0xFFFF, ICRCUnverifiable}, {0x1234, ICRCUnverifiable}} {
			setID(tt.id)
			got, id := s.verify(src, dst, payload)
			assert.Equal(t, tt.want, got, "length %d ID %#x", payloadLen, tt.id)
			assert.Equal(t, tt.id, id, "length %d ID %#x", payloadLen, tt.id)
		}
		if payloadLen == 64 {
			for id := range 1 << 16 {
				setID(uint16(id))
				got, gotID := s.verify(src, dst, payload)
				if wantStatus(src, uint16(id)) != got || gotID != uint16(id) {
					t.Fatalf("ID %#x: got %v with ID %#x", id, got, gotID)
				}
			}
		}
		// Flip each bit of the BTH, the payload and the ICRC in turn.
		setID(0x4242)
		rejected, flips := 0, 0
		for i := range payload {
			for bit := range 8 {
				if i == 4 { // BTH byte 4 (FECN, BECN) is masked: not protected
					continue
				}
				payload[i] ^= 1 << bit
				if got, _ := s.verify(src, dst, payload); got == ICRCBad {
					rejected++
				}
				flips++
				payload[i] ^= 1 << bit
			}
			if payloadLen > 64 && i > 64 {
				break // the long packets: the first bytes are enough
			}
		}
		// A single-bit error is a burst shorter than 33 bits, which CRC-32
		// always detects; the ID space is what lets through 2^-16 of
		// random corruptions, and no single flip lies in it here.
		assert.Equal(t, flips, rejected, "length %d: single-bit flips rejected", payloadLen)
	}
}

func TestICRCVerifyShortAndIPv6Bad(t *testing.T) {
	var s icrcSynth
	v4 := netip.MustParseAddrPort("10.0.0.1:1")
	v6 := netip.MustParseAddrPort("[fe80::1]:1")
	got, _ := s.verify(v4, v4, make([]byte, minRoCEDatagram-1))
	assert.Equal(t, ICRCBad, got)
	p := testRoCEPayload(64, 1, 1, 1)
	require.NoError(t, s.fill(v6, v6, 0, p))
	got, _ = s.verify(v6, v6, p)
	assert.Equal(t, ICRCGood, got)
	p[len(p)-1] ^= 0x80
	got, _ = s.verify(v6, v6, p)
	assert.Equal(t, ICRCBad, got, "IPv6 has no ID space to hide in")
}

func BenchmarkICRCVerifyIPv4(b *testing.B) {
	var s icrcSynth
	src := netip.MustParseAddrPort("10.0.0.1:49443")
	dst := netip.MustParseAddrPort("10.0.0.2:4791")
	p := testRoCEPayload(1024+16, 1, 1, 1)
	require.NoError(b, s.fill(src, dst, 0, p))
	p[len(p)-1] ^= 1 // ICRCBad: the slowest path
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		s.verify(src, dst, p)
	}
}

// BenchmarkICRCFill is the send side's ICRC of a full 4096-byte MTU
// segment and of a 64-byte one.
func BenchmarkICRCFill(b *testing.B) {
	for _, l := range []int{64, 4096 + 16} {
		b.Run(fmt.Sprint(l), func(b *testing.B) {
			var s icrcSynth
			src := netip.MustParseAddrPort("10.0.0.1:49443")
			dst := netip.MustParseAddrPort("10.0.0.2:4791")
			p := testRoCEPayload(l, 1, 1, 1)
			b.ReportAllocs()
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				_ = s.fill(src, dst, 0, p)
			}
		})
	}
}

// FuzzICRCVerify feeds arbitrary received payloads to the receive check:
// it never panics, and a payload whose ICRC it reports good verifies again
// after fill rewrote it.
func FuzzICRCVerify(f *testing.F) {
	f.Add(testRoCEPayload(64, 1, 1, 1), true)
	f.Add(testRoCEPayload(minRoCEDatagram, 1, 1, 1), false)
	f.Add([]byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, payload []byte, v4 bool) {
		src, dst := netip.MustParseAddrPort("10.0.0.1:49152"), netip.MustParseAddrPort("10.0.0.2:4791")
		if !v4 {
			src, dst = netip.MustParseAddrPort("[fd00::1]:49152"), netip.MustParseAddrPort("[fd00::2]:4791")
		}
		var s icrcSynth
		status, _ := s.verify(src, dst, payload)
		if len(payload) < minRoCEDatagram {
			if status != ICRCBad {
				t.Fatalf("%d-byte payload: %v", len(payload), status)
			}
			return
		}
		if len(payload) > MaxDatagram {
			return
		}
		p := append([]byte(nil), payload...)
		if err := s.fill(src, dst, 0, p); err != nil {
			t.Fatal(err)
		}
		if status, _ := s.verify(src, dst, p); status != ICRCGood {
			t.Fatalf("after fill: %v", status)
		}
	})
}
