//go:build linux

package endpoint_test

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/internal/looptest"
	"github.com/ibwire/ibwire/layers"
)

// strangerDatagrams are what another address sends to a server's UDP 4791
// in TestStrangerDatagramsInBatch: oversize ones (5000 zeros is issue 17's
// case) and ones too short for a BTH and an ICRC.
var strangerDatagrams = [][]byte{
	make([]byte, 5000),
	{0x04, 0x00, 0xFF},
	make([]byte, endpoint.MaxDatagram+1),
	make([]byte, 15),
	make([]byte, 9000),
}

// strangerWires opens a client's and a server's wire and says how a
// stranger reaches the server.
type strangerWires func(t *testing.T) (client, server endpoint.Wire, send func([]byte) error)

// strangerSocket sends from a UDP socket on 127.0.0.3 to the server's
// RoCEv2 port.
func strangerSocket(t *testing.T, server netip.AddrPort) func([]byte) error {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.3:0")))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return func(b []byte) error {
		_, err := conn.WriteToUDPAddrPort(b, server)
		return err
	}
}

// TestStrangerDatagramsInBatch runs `ibpeer write --verify`'s pattern
// (WRITE a random block, READ it back, compare) between two devices while
// a stranger keeps sending oversize and truncated datagrams to the
// server's port, so that they share the server's receive batches with the
// client's packets (issue 17: every run failed REM_INV_REQ_ERR when a
// dropped datagram moved the others of its batch). Every run must pass,
// and the server counts each of the stranger's datagrams dropped, by
// reason, naming the stranger.
func TestStrangerDatagramsInBatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name  string
		wires strangerWires
	}{
		{"wiretest", func(t *testing.T) (endpoint.Wire, endpoint.Wire, func([]byte) error) {
			wa, wb := wiretest.NewPair(wiretest.Config{})
			stranger := netip.MustParseAddrPort("127.0.0.3:4791")
			return wa, wb, func(b []byte) error { wb.InjectRaw(stranger, b); return nil }
		}},
		{"udp loopback", func(t *testing.T) (endpoint.Wire, endpoint.Wire, func([]byte) error) {
			looptest.Hold(t)
			wa, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.1:4791"))
			if err != nil {
				t.Skipf("loopback UDP 4791 unavailable: %v", err)
			}
			wb, err := endpoint.ListenUDP(netip.MustParseAddrPort("127.0.0.2:4791"))
			if err != nil {
				wa.Close()
				t.Skipf("loopback UDP 4791 unavailable: %v", err)
			}
			return wa, wb, strangerSocket(t, wb.LocalAddr())
		}},
		{"packet lo", func(t *testing.T) (endpoint.Wire, endpoint.Wire, func([]byte) error) {
			wa, err := endpoint.OpenPacketWire("lo", netip.MustParseAddr("127.81.18.1"))
			if errors.Is(err, unix.EPERM) {
				t.Skipf("packet sockets need CAP_NET_RAW: %v", err)
			}
			require.NoError(t, err)
			wb, err := endpoint.OpenPacketWire("lo", netip.MustParseAddr("127.81.18.2"))
			if err != nil {
				wa.Close()
			}
			require.NoError(t, err)
			return wa, wb, strangerSocket(t, wb.LocalAddr())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wa, wb, send := tt.wires(t)
			const size, runs = 64 << 10, 20
			a := newPeer(t, wa, peerOpts{typ: endpoint.RC, memSize: 2 * size})
			b := newPeer(t, wb, peerOpts{typ: endpoint.RC, memSize: size})
			defer b.close(t)
			defer a.close(t)
			connect(t, a, b, layers.MTU1024, nil)

			var sent, long atomic.Int64
			strange := func() {
				for _, d := range strangerDatagrams {
					if send(d) == nil {
						sent.Add(1)
						if len(d) > endpoint.MaxDatagram {
							long.Add(1)
						}
					}
				}
			}
			// One round before each run, so that every run meets the
			// stranger however fast it goes, and more from a goroutine
			// while it runs.
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(100 * time.Microsecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					strange()
				}
			}()
			stopStranger := func() {
				select {
				case <-stop:
				default:
					close(stop)
				}
				wg.Wait()
			}
			defer stopStranger()

			failed := 0
			for run := range runs {
				strange()
				fillRandom(a.mem[:size], uint64(run+1))
				clear(a.mem[size:])
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite, SGL: []endpoint.SGE{a.mr.SGE(0, size)},
					RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRRead, SGL: []endpoint.SGE{a.mr.SGE(size, size)},
					RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
				wcs := waitWCs(t, a.scq, 2)
				if wcs[0].Status != endpoint.StatusSuccess || wcs[1].Status != endpoint.StatusSuccess || !bytes.Equal(a.mem[:size], a.mem[size:]) {
					failed++
					t.Logf("run %d: %v, %v, data equal %v", run, wcs[0].Status, wcs[1].Status, bytes.Equal(a.mem[:size], a.mem[size:]))
					break // the QP is in error now
				}
			}
			stopStranger()
			// The rounds sent before each run have been read: the
			// server read the run's requests, sent after them, from
			// the same queue.
			k := b.dev.Counters()
			t.Logf("stranger sent %d datagrams (%d oversize); server counters %+v", sent.Load(), long.Load(), k)
			assert.Zero(t, failed, "runs failed of %d", runs)
			perRound := uint64(0)
			for _, d := range strangerDatagrams {
				if len(d) > endpoint.MaxDatagram {
					perRound++
				}
			}
			assert.GreaterOrEqual(t, k.DropLong, runs*perRound, "oversize datagrams are counted")
			assert.LessOrEqual(t, k.DropLong, uint64(long.Load()))
			assert.GreaterOrEqual(t, k.DropShort, runs*(uint64(len(strangerDatagrams))-perRound), "truncated datagrams are counted")
			a.guardsIntact(t)
			b.guardsIntact(t)
		})
	}
}
