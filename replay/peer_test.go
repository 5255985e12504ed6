package replay

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
)

// serveFake runs fp behind a real UDP wire: each request read from the wire
// goes to fp, and what fp answers goes back to the request's sender.
// It counts the requests whose ICRC the wire found bad.
func serveFake(t *testing.T, w endpoint.Wire, fp *fakePeer, badICRC *int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		dgs := make([]endpoint.Datagram, 8)
		for i := range dgs {
			dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
		}
		for {
			for i := range dgs {
				dgs[i].Payload = dgs[i].Payload[:0]
			}
			n, err := w.ReadBatch(dgs)
			for _, d := range dgs[:n] {
				if d.ICRC == endpoint.ICRCBad {
					*badICRC++
				}
				if fp.Send(d.Payload) != nil {
					continue
				}
				for len(fp.out) > 0 {
					r := <-fp.out
					_, err := w.WriteBatch([]endpoint.Datagram{{Src: w.LocalAddr(), Dst: d.Src, Payload: r}})
					if err != nil {
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return done
}

// TestCompareOverUDPWire plays the captured requests to a fake responder
// across two real UDP wires on loopback.
func TestCompareOverUDPWire(t *testing.T) {
	for _, name := range []string{"write_bw.pcap", "read_bw.pcap", "atomic_fadd.pcap"} {
		t.Run(name, func(t *testing.T) {
			p := loadPlan(t, name)
			fp := newFakePeer(p, nil)
			server, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.3:0"))
			require.NoError(t, err)
			bad := 0
			served := serveFake(t, server, fp, &bad)
			client, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.4:0"))
			require.NoError(t, err)
			peer := NewWirePeer(client, server.LocalAddr())
			res, err := Compare(context.Background(), p, fp, peer,
				CompareOptions{Payload: true, Timeout: 2 * time.Second, Linger: 10 * time.Millisecond})
			require.NoError(t, err)
			require.NoError(t, peer.Close())
			require.NoError(t, server.Close())
			<-served
			assert.False(t, res.Differ())
			assert.Equal(t, p.Responses(), len(res.Live))
			assert.Zero(t, bad, "requests whose ICRC the responder's wire rejected")
			assert.Zero(t, peer.Strays())
		})
	}
}

func TestWirePeerTimeoutAndClose(t *testing.T) {
	w, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.4:0"))
	require.NoError(t, err)
	p := NewWirePeer(w, netip.MustParseAddrPort("127.0.0.3:9"))
	buf := make([]byte, 64)
	_, err = p.Receive(buf, 5*time.Millisecond)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, p.Close())
	_, err = p.Receive(buf, time.Second)
	assert.True(t, errors.Is(err, endpoint.ErrWireClosed), "%v", err)
}

// TestWireSenderUDP replays a capture through a real UDP wire and checks
// what arrives: the same transport packets, each with an ICRC that verifies
// for the new addresses.
func TestWireSenderUDP(t *testing.T) {
	c, err := Load("../pcaps/rxe/rc_pingpong.pcap", LoadOptions{Decode: decodeOpts()})
	require.NoError(t, err)
	rx, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.3:0"))
	require.NoError(t, err)
	defer rx.Close()
	tx, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.4:0"))
	require.NoError(t, err)
	s := NewWireSender(tx, rx.LocalAddr())
	sum, err := Play(context.Background(), c, s, PaceOptions{PPS: 20000})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	assert.Equal(t, int64(80), sum.Packets)
	var want [][]byte
	for _, f := range c.Frames {
		if f.RoCEv2 {
			want = append(want, f.Datagram())
		}
	}
	dgs := make([]endpoint.Datagram, 16)
	got := 0
	for got < len(want) {
		for i := range dgs {
			dgs[i].Payload = make([]byte, 0, endpoint.MaxDatagram)
		}
		n, err := rx.ReadBatch(dgs)
		require.NoError(t, err)
		for _, d := range dgs[:n] {
			w := want[got]
			assert.Equal(t, w[:len(w)-4], d.Payload[:len(d.Payload)-4], "datagram %d", got+1)
			assert.Equal(t, endpoint.ICRCGood, d.ICRC, "datagram %d", got+1)
			got++
		}
	}
}
