package endpoint

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/layers"
)

// nullWire is a Wire that drops what it is given and never delivers.
type nullWire struct{ done chan struct{} }

func (w *nullWire) ReadBatch(dgs []Datagram) (int, error) {
	<-w.done
	return 0, net.ErrClosed
}
func (w *nullWire) WriteBatch(dgs []Datagram) (int, error) { return len(dgs), nil }
func (w *nullWire) LocalAddr() netip.AddrPort              { return netip.MustParseAddrPort("127.0.0.1:4791") }
func (w *nullWire) BatchSize() int                         { return 8 }
func (w *nullWire) Close() error                           { close(w.done); return nil }

// The CM's receive path allocates nothing for a message it drops, and
// little for one it answers (a DREQ of an unknown connection gets its
// DREP).
func TestCMHandleAllocs(t *testing.T) {
	dev := NewDevice(&nullWire{done: make(chan struct{})})
	defer dev.Close()
	cm, err := NewCM(dev, CMConfig{})
	require.NoError(t, err)
	defer cm.Close()
	src := netip.MustParseAddr("127.0.0.2")
	mad := func(attr layers.CMAttribute, set func(m *layers.MAD)) []byte {
		m := layers.NewCMMAD(attr, 1)
		set(m)
		b, err := m.Bytes()
		require.NoError(t, err)
		return b
	}
	rtu := mad(layers.CMAttrRTU, func(m *layers.MAD) { m.CM.RTU = layers.CMRtu{LocalCommID: 5, RemoteCommID: 6} })
	dreq := mad(layers.CMAttrDREQ, func(m *layers.MAD) { m.CM.DREQ = layers.CMDreq{LocalCommID: 5, RemoteCommID: 6} })
	var dropped, answered float64
	require.NoError(t, cm.do(func() {
		dropped = testing.AllocsPerRun(100, func() { cm.handle(src, rtu) })
		answered = testing.AllocsPerRun(20, func() {
			cm.handle(src, dreq)
			cm.pollSend()
		})
	}))
	t.Logf("allocations: %v for a dropped RTU, %v for a DREQ answered", dropped, answered)
	assert.Zero(t, dropped, "an RTU for no connection")
	assert.LessOrEqual(t, answered, 4.0, "a DREQ answered with a DREP")
}
