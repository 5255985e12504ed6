package device

import (
	"encoding/hex"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/peer/peertest"
)

// TestPcapWireSkipsDroppedSlots: --pcap records the datagrams read, not the
// empty slots a wire marks for an oversize one it could not read.
func TestPcapWireSkipsDroppedSlots(t *testing.T) {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	path := filepath.Join(t.TempDir(), "rx.pcap")
	pw, err := NewPcapWire(wb, path)
	require.NoError(t, err)
	stranger := netip.MustParseAddrPort("127.0.0.3:4791")
	good := make([]byte, 12+4)
	good[0] = 0x04
	wb.InjectRaw(stranger, make([]byte, 5000))
	wb.Inject(wa.LocalAddr(), good)

	dgs := make([]endpoint.Datagram, 4)
	var drops, kept int
	for drops+kept < 2 {
		for i := range dgs {
			dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
		}
		n, err := pw.ReadBatch(dgs)
		require.NoError(t, err)
		for _, dg := range dgs[:n] {
			if dg.Drop != 0 {
				drops++
			} else {
				kept++
			}
		}
	}
	require.NoError(t, pw.Close())
	assert.Equal(t, 1, drops)
	frames := peertest.ReadFrames(t, path)
	require.Len(t, frames, 1)
	assert.Equal(t, 20+8+len(good), len(frames[0].Data))
}

// TestIPFrame: the headers gopacket serializes are, byte for byte, those
// ibpeer built by hand before (IPv4: DF, ID 0, header checksum, UDP
// checksum 0; IPv6: UDP checksum over the pseudo-header), and the frames
// read back as IP/UDP with the datagram's fields.
func TestIPFrame(t *testing.T) {
	payload := []byte{0x04, 0x40, 0xff, 0xff, 0, 0, 0x12, 0x34, 0x80, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3}
	for _, tc := range []struct {
		src, dst string
		hop      uint8
		want     string
	}{ // want: the hand-built frames of ibpeer before gopacket built them
		{"192.0.2.1:4791", "192.0.2.2:49152", 0, "4568002f000040004011b652c0000201c000020212b7c000001b00000440ffff0000123480000001deadbeef010203"},
		{"[2001:db8::1]:4791", "[2001:db8::2]:49152", 0, "66800000001b114020010db800000000000000000000000120010db800000000000000000000000212b7c000001b99760440ffff0000123480000001deadbeef010203"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			dg := endpoint.Datagram{Src: netip.MustParseAddrPort(tc.src), Dst: netip.MustParseAddrPort(tc.dst),
				TrafficClass: 0x68, HopLimit: tc.hop, Payload: payload}
			b, err := ipFrame(gopacket.NewSerializeBuffer(), dg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, hex.EncodeToString(b))
		})
	}
}
