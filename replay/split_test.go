package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// TestSplitWire: datagrams for the diverted QP reach Diverted, all others
// (and all before Divert) Rest; both views write to the wire; closing
// both closes the wire and stops the reader.
func TestSplitWire(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer, w := wiretest.NewPair(wiretest.Config{})
	defer peer.Close()
	s := NewSplitWire(w)
	// A BTH (12 bytes) with destination QP qpn, and room for the ICRC.
	bth := func(qpn uint32, tag byte) []byte {
		b := make([]byte, 16)
		put24(b[5:8], qpn)
		b[11] = tag
		return b
	}
	send := func(qpn uint32, tag byte) {
		_, err := peer.WriteBatch([]endpoint.Datagram{{Src: peer.LocalAddr(), Dst: w.LocalAddr(), Payload: bth(qpn, tag)}})
		require.NoError(t, err)
	}
	read := func(v endpoint.Wire) (qpn uint32, tag byte) {
		dgs := []endpoint.Datagram{{Payload: make([]byte, 0, endpoint.MaxDatagram)}}
		n, err := v.ReadBatch(dgs)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		assert.Equal(t, peer.LocalAddr(), dgs[0].Src)
		qpn, ok := layers.PeekDestQP(dgs[0].Payload)
		require.True(t, ok)
		return qpn, dgs[0].Payload[11]
	}
	send(0x12, 1) // nothing diverted yet
	q, tag := read(s.Rest())
	assert.Equal(t, [2]uint32{0x12, 1}, [2]uint32{q, uint32(tag)})
	s.Divert(0x12)
	for i, tt := range []struct {
		qpn      uint32
		diverted bool
	}{
		{0x12, true},
		{0x01, false}, // QP1: the CM
		{0x13, false},
		{0x12, true},
	} {
		send(tt.qpn, byte(10+i))
		v := s.Rest()
		if tt.diverted {
			v = s.Diverted()
		}
		q, tag := read(v)
		assert.Equal(t, [2]uint32{tt.qpn, uint32(10 + i)}, [2]uint32{q, uint32(tag)}, "datagram %d", i)
	}
	// Both views send through the wire.
	for _, v := range []endpoint.Wire{s.Diverted(), s.Rest()} {
		_, err := v.WriteBatch([]endpoint.Datagram{{Src: w.LocalAddr(), Dst: peer.LocalAddr(), Payload: bth(0x77, 0)}})
		require.NoError(t, err)
		dgs := []endpoint.Datagram{{Payload: make([]byte, 0, endpoint.MaxDatagram)}}
		n, err := peer.ReadBatch(dgs)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	}
	// A closed view reads no more; the other goes on until closed too.
	require.NoError(t, s.Diverted().Close())
	_, err := s.Diverted().ReadBatch(make([]endpoint.Datagram, 1))
	assert.ErrorIs(t, err, endpoint.ErrWireClosed)
	send(0x12, 99) // for Diverted, which nobody reads any more
	send(0x14, 100)
	_, tag = read(s.Rest())
	assert.Equal(t, byte(100), tag)
	require.NoError(t, s.Rest().Close())
	_, err = s.Rest().ReadBatch(make([]endpoint.Datagram, 1))
	assert.ErrorIs(t, err, endpoint.ErrWireClosed)
	_, err = w.WriteBatch([]endpoint.Datagram{{Dst: peer.LocalAddr(), Payload: bth(1, 0)}})
	assert.ErrorIs(t, err, endpoint.ErrWireClosed, "the last view closed the wire")
}

// TestSplitWireLaggingView: a view nobody reads fills its queue and then
// drops (and counts) what arrives for it; the other view still gets its
// datagrams. Once closed, a view drops everything that arrives for it.
func TestSplitWireLaggingView(t *testing.T) {
	defer goleak.VerifyNone(t)
	peer, w := wiretest.NewPair(wiretest.Config{QueueLen: 4 * splitQueue})
	defer peer.Close()
	s := NewSplitWire(w)
	s.Divert(0x12)
	dg := func(qpn uint32, tag byte) endpoint.Datagram {
		b := make([]byte, 16)
		b[5], b[6], b[7] = byte(qpn>>16), byte(qpn>>8), byte(qpn)
		b[11] = tag
		return endpoint.Datagram{Src: peer.LocalAddr(), Dst: w.LocalAddr(), Payload: b}
	}
	const extra = 10
	var batch []endpoint.Datagram
	for i := range splitQueue + extra {
		batch = append(batch, dg(0x12, byte(i)))
	}
	for len(batch) > 0 {
		n, err := peer.WriteBatch(batch[:min(len(batch), peer.BatchSize())])
		require.NoError(t, err)
		batch = batch[n:]
	}
	_, err := peer.WriteBatch([]endpoint.Datagram{dg(0x01, 0xCC)}) // the CM
	require.NoError(t, err)
	got := make(chan byte, 1)
	go func() {
		dgs := []endpoint.Datagram{{Payload: make([]byte, 0, endpoint.MaxDatagram)}}
		if n, err := s.Rest().ReadBatch(dgs); err == nil && n == 1 {
			got <- dgs[0].Payload[11]
		}
		close(got)
	}()
	select {
	case tag := <-got:
		assert.Equal(t, byte(0xCC), tag)
	case <-time.After(10 * time.Second):
		require.NoError(t, s.Rest().Close()) // unblocks the goroutine
		t.Fatal("the CM's datagram did not get past the full diverted view")
	}
	diverted, rest := s.Dropped()
	assert.Equal(t, [2]uint64{extra, 0}, [2]uint64{diverted, rest})
	assert.Equal(t, uint64(extra), s.Diverted().(interface{ Dropped() uint64 }).Dropped())
	// The queue kept the first ones, in order.
	dgs := make([]endpoint.Datagram, 3)
	for i := range dgs {
		dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
	}
	n, err := s.Diverted().ReadBatch(dgs)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	for i := range n {
		assert.Equal(t, byte(i), dgs[i].Payload[11])
	}
	// A WirePeer on the view reports the view's drops.
	assert.Equal(t, uint64(extra), (&WirePeer{wire: s.Diverted()}).Dropped())

	require.NoError(t, s.Rest().Close())
	_, err = peer.WriteBatch([]endpoint.Datagram{dg(0x01, 0xCD)})
	require.NoError(t, err)
	assert.Eventually(t, func() bool { _, r := s.Dropped(); return r == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, s.Diverted().Close())
}
