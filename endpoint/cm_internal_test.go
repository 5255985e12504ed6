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

// Answers to strangers (the REJ to a REQ that gets no connection) leave
// the last send slots to the connections' own messages: under a flood of
// REQs, a legitimate client's REP still finds a slot.
func TestCMReservedSendSlots(t *testing.T) {
	dev := NewDevice(&nullWire{done: make(chan struct{})})
	defer dev.Close()
	cm, err := NewCM(dev, CMConfig{})
	require.NoError(t, err)
	defer cm.Close()
	src := netip.MustParseAddr("127.0.0.2")
	m := layers.NewCMMAD(layers.CMAttrREQ, 1)
	m.CM.REQ = layers.CMReq{LocalCommID: 5, ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, 9), TransportServiceType: layers.CMTransportRC}
	req, err := m.Bytes()
	require.NoError(t, err)
	tests := []struct {
		name    string
		free    int // send slots free before the REQ
		wantREJ bool
	}{
		{name: "slots to spare", free: cmReservedSlots + 1, wantREJ: true},
		{name: "only the reserved ones", free: cmReservedSlots},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after int
			require.NoError(t, cm.do(func() {
				cm.pollSend()
				hidden := append([]int(nil), cm.sfree[tc.free:]...) // as if in flight
				cm.sfree = cm.sfree[:tc.free]
				before = len(cm.sfree)
				cm.handle(src, req) // no listener: REJ "invalid service ID"
				after = len(cm.sfree)
				cm.sfree = append(cm.sfree, hidden...)
			}))
			if tc.wantREJ {
				assert.Equal(t, before-1, after, "the REJ took a slot")
			} else {
				assert.Equal(t, before, after, "no REJ")
			}
		})
	}
}

// A received REQ that the CM answers reclaims send slots (pollSend) in the
// middle of a batch of receive completions: the two must not share the
// buffer they poll into. They did, so the send completions overwrote the
// receive batch; pollRecv then reposted send slot numbers as receive
// buffers, one buffer was posted twice, and rxe-style floods of REQs raced
// the QP's writes against the CM's reads (TestServeCMUnderFlood, -race).
func TestCMPollRecvKeepsItsBatch(t *testing.T) {
	dev := NewDevice(&nullWire{done: make(chan struct{})})
	defer dev.Close()
	cm, err := NewCM(dev, CMConfig{})
	require.NoError(t, err)
	defer cm.Close()
	m := layers.NewCMMAD(layers.CMAttrREQ, 1)
	m.CM.REQ = layers.CMReq{LocalCommID: 5, ServiceID: layers.IPCMServiceID(layers.PortSpaceTCP, 9), TransportServiceType: layers.CMTransportRC}
	req, err := m.Bytes()
	require.NoError(t, err)
	require.NoError(t, cm.do(func() {
		// Two REQs received into the first two buffers, and two sends
		// completed, waiting in the send CQ.
		for range 2 {
			wr, ok := cm.qp.rq.take()
			require.True(t, ok)
			b := cm.rbuf[int(wr.id)*cmRecvSlot : (int(wr.id)+1)*cmRecvSlot]
			b[20] = 0x45 // an IPv4 GRH
			copy(b[layers.GRHLength:], req)
			cm.rcq.push(WC{ID: wr.id, Op: WCRecv, ByteLen: cmRecvSlot})
		}
		for _, slot := range cm.sfree[len(cm.sfree)-2:] {
			cm.scq.push(WC{ID: uint64(slot), Op: WCSend})
		}
		cm.sfree = cm.sfree[:len(cm.sfree)-2]
		cm.pollRecv()
	}))
	rq := cm.qp.rq
	rq.mu.Lock()
	defer rq.mu.Unlock()
	require.Equal(t, cmRecvSlots, rq.n, "every receive buffer posted again")
	seen := map[uint64]int{}
	for i := range rq.n {
		seen[rq.ring[(rq.head+i)%len(rq.ring)].id]++
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "receive buffer %d posted %d times", id, n)
	}
	assert.Equal(t, cmRecvSlots, len(seen), "distinct receive buffers posted")
}
