package main

import (
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
)

// TestPcapWireSkipsDroppedSlots: --pcap records the datagrams read, not the
// empty slots a wire marks for an oversize one it could not read.
func TestPcapWireSkipsDroppedSlots(t *testing.T) {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	path := filepath.Join(t.TempDir(), "rx.pcap")
	pw, err := newPcapWire(wb, path)
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
	frames := readFrames(t, path)
	require.Len(t, frames, 1)
	assert.Equal(t, 20+8+len(good), len(frames[0].Data))
}
