package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
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
		return get24(dgs[0].Payload[5:8]), dgs[0].Payload[11]
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
