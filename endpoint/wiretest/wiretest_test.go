package wiretest_test

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// packet returns a UDP payload (BTH … ICRC) as craft frames it between
// the pair's default addresses, with the ICRC craft computed over the
// whole Ethernet/IPv4 frame (IP ID 0, DF, as rxe with PMTU discovery).
func craftPacket(t *testing.T, psn layers.PSN, n int) (payload []byte, sport uint16) {
	t.Helper()
	cfg := craft.Config{Encap: craft.RoCEv2}
	cfg.Requester, cfg.Responder = craft.DefaultRequester, craft.DefaultResponder
	cfg.Requester.IPv4, cfg.Responder.IPv4 = net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)
	b, err := craft.NewBuilder(cfg)
	require.NoError(t, err)
	f, err := b.Build(craft.Sample(0x04, psn, n), time.Time{})
	require.NoError(t, err)
	require.Equal(t, []byte{0x40, 0x00}, f.Data[14+6:14+8], "craft sets DF")
	udpLen := int(binary.BigEndian.Uint16(f.Data[14+20+4:]))
	// The UDP length, not the frame, delimits the payload: short frames
	// carry Ethernet padding.
	return f.Data[14+20+8 : 14+20+udpLen], binary.BigEndian.Uint16(f.Data[14+20:])
}

func read(t *testing.T, w *wiretest.Wire) []endpoint.Datagram {
	t.Helper()
	dgs := make([]endpoint.Datagram, 16)
	for i := range dgs {
		dgs[i].Payload = make([]byte, endpoint.MaxDatagram)
	}
	n, err := w.ReadBatch(dgs)
	require.NoError(t, err)
	return dgs[:n]
}

// TestICRCMatchesCraft: the ICRC the wire fills equals the one craft
// computes over a real frame, and the reader marks it good.
func TestICRCMatchesCraft(t *testing.T) {
	a, b := wiretest.NewPair(wiretest.Config{})
	defer a.Close()
	for _, n := range []int{0, 1, 3, 100, 1024} {
		want, sport := craftPacket(t, 7, n)
		out := append([]byte(nil), want...)
		clear(out[len(out)-4:])
		src := netip.AddrPortFrom(a.LocalAddr().Addr(), sport)
		_, err := a.WriteBatch([]endpoint.Datagram{{Src: src, Dst: b.LocalAddr(), Payload: out}})
		require.NoError(t, err)
		require.Equal(t, want, out, "size %d: WriteBatch fills the ICRC in place", n)
		got := read(t, b)
		require.Len(t, got, 1)
		require.Equal(t, want, got[0].Payload)
		require.Equal(t, endpoint.ICRCGood, got[0].ICRC)
		require.Equal(t, src, got[0].Src)
	}
}

func TestFaults(t *testing.T) {
	payload := func() []byte { return make([]byte, 12+8+4) }
	for _, tc := range []struct {
		name   string
		faults wiretest.Faults
		check  func(t *testing.T, got []endpoint.Datagram, st wiretest.Stats)
	}{
		{"loss", wiretest.Faults{Loss: 1}, func(t *testing.T, got []endpoint.Datagram, st wiretest.Stats) {
			require.Empty(t, got)
			require.Equal(t, uint64(10), st.Lost)
		}},
		{"duplicate", wiretest.Faults{Duplicate: 1}, func(t *testing.T, got []endpoint.Datagram, st wiretest.Stats) {
			require.Len(t, got, 20)
			require.Equal(t, uint64(10), st.Duplicated)
		}},
		{"corrupt", wiretest.Faults{Corrupt: 1}, func(t *testing.T, got []endpoint.Datagram, st wiretest.Stats) {
			require.Len(t, got, 10)
			for _, dg := range got {
				require.Equal(t, endpoint.ICRCBad, dg.ICRC)
			}
		}},
		{"reorder", wiretest.Faults{Reorder: 0.5, ReorderWindow: time.Millisecond}, func(t *testing.T, got []endpoint.Datagram, st wiretest.Stats) {
			require.Len(t, got, 10)
			inOrder := true
			for i, dg := range got {
				if dg.Payload[11] != byte(i) {
					inOrder = false
				}
			}
			require.False(t, inOrder)
			require.NotZero(t, st.Reordered)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, b := wiretest.NewPair(wiretest.Config{AtoB: tc.faults, Seed: 3})
				defer a.Close()
				var got []endpoint.Datagram
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						dgs := make([]endpoint.Datagram, 4)
						for i := range dgs {
							dgs[i].Payload = make([]byte, endpoint.MaxDatagram)
						}
						n, err := b.ReadBatch(dgs)
						if err != nil {
							return
						}
						got = append(got, dgs[:n]...)
					}
				}()
				for i := range 10 {
					p := payload()
					p[11] = byte(i) // PSN
					_, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: p}})
					require.NoError(t, err)
				}
				time.Sleep(time.Second)
				synctest.Wait()
				require.NoError(t, a.Close())
				<-done
				tc.check(t, got, a.Stats())
			})
		})
	}
}

// TestDelayAndSetFaults: datagrams arrive exactly one delay later on the
// virtual clock, and faults change at run time.
func TestDelayAndSetFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := wiretest.NewPair(wiretest.Config{AtoB: wiretest.Faults{Delay: 3 * time.Millisecond}})
		defer a.Close()
		start := time.Now()
		_, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: make([]byte, 16)}})
		require.NoError(t, err)
		require.Len(t, read(t, b), 1)
		require.Equal(t, 3*time.Millisecond, time.Since(start))

		a.SetFaults(wiretest.Faults{Loss: 1})
		_, err = a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: make([]byte, 16)}})
		require.NoError(t, err)
		a.SetFaults(wiretest.Faults{})
		_, err = a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: make([]byte, 16)}})
		require.NoError(t, err)
		require.Len(t, read(t, b), 1)
		require.Equal(t, wiretest.Stats{Written: 3, Delivered: 2, Lost: 1}, a.Stats())
	})
}

// TestDrop: Drop loses exactly the datagrams it picks, in both
// directions, sees each with its addresses, and leaves the dice alone: the
// random faults decide the rest as they would without it.
func TestDrop(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		name  string
		pick  func(i byte) bool
		lossy bool
	}{
		{name: "none", pick: func(byte) bool { return false }},
		{name: "one", pick: func(i byte) bool { return i == 7 }},
		{name: "every third", pick: func(i byte) bool { return i%3 == 0 }},
		{name: "one among random loss", pick: func(i byte) bool { return i == 7 }, lossy: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// delivered writes n numbered datagrams each way and returns
			// the numbers that arrived at each end.
			delivered := func(drop func(from, to netip.AddrPort, payload []byte) bool) (atB, atA []byte) {
				cfg := wiretest.Config{Drop: drop, Seed: 3}
				if tc.lossy {
					cfg.AtoB, cfg.BtoA = wiretest.Faults{Loss: 0.3}, wiretest.Faults{Loss: 0.3}
				}
				a, b := wiretest.NewPair(cfg)
				defer a.Close()
				for i := range n {
					p := make([]byte, 16)
					p[11] = byte(i)
					_, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: p}})
					require.NoError(t, err)
					_, err = b.WriteBatch([]endpoint.Datagram{{Dst: a.LocalAddr(), Payload: append([]byte(nil), p...)}})
					require.NoError(t, err)
				}
				collect := func(w, from *wiretest.Wire) (got []byte) {
					for from.Stats().Delivered > uint64(len(got)) {
						for _, dg := range read(t, w) {
							got = append(got, dg.Payload[11])
						}
					}
					return got
				}
				return collect(b, a), collect(a, b)
			}
			var seen []netip.AddrPort
			atB, atA := delivered(func(from, to netip.AddrPort, payload []byte) bool {
				seen = append(seen, from, to)
				return tc.pick(payload[11])
			})
			baseB, baseA := delivered(nil)
			want := func(base []byte) (out []byte) {
				for _, i := range base {
					if !tc.pick(i) {
						out = append(out, i)
					}
				}
				return out
			}
			require.Equal(t, want(baseB), atB, "A to B")
			require.Equal(t, want(baseA), atA, "B to A")
			require.Len(t, seen, 2*2*n, "asked about every datagram")
			require.Equal(t, netip.MustParseAddrPort("127.0.0.1:4791"), seen[0])
			require.Equal(t, netip.MustParseAddrPort("127.0.0.2:4791"), seen[1])
		})
	}
}

// TestSeedDeterminism: the same seed loses the same datagrams.
func TestSeedDeterminism(t *testing.T) {
	pattern := func(seed uint64) []byte {
		a, b := wiretest.NewPair(wiretest.Config{AtoB: wiretest.Faults{Loss: 0.5}, Seed: seed})
		defer a.Close()
		var delivered []byte
		for i := range 40 {
			p := make([]byte, 16)
			p[11] = byte(i)
			_, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: p}})
			require.NoError(t, err)
		}
		for a.Stats().Delivered > uint64(len(delivered)) {
			for _, dg := range read(t, b) {
				delivered = append(delivered, dg.Payload[11])
			}
		}
		return delivered
	}
	require.Equal(t, pattern(1), pattern(1))
	require.NotEqual(t, pattern(1), pattern(2))
}

func TestClose(t *testing.T) {
	a, b := wiretest.NewPair(wiretest.Config{})
	errc := make(chan error)
	go func() {
		_, err := b.ReadBatch(make([]endpoint.Datagram, 1))
		errc <- err
	}()
	require.NoError(t, a.Close())
	require.ErrorIs(t, <-errc, endpoint.ErrWireClosed)
	_, err := a.WriteBatch([]endpoint.Datagram{{Payload: make([]byte, 16)}})
	require.ErrorIs(t, err, endpoint.ErrWireClosed)
	require.NoError(t, b.Close())
}

// TestOversizeKeepsItsSlot: a datagram longer than MaxDatagram, written or
// injected, reads as the kernel wires read one — its own slot, empty and
// marked DropTooLong, with its sender — and the datagrams around it arrive
// whole, each in its place.
func TestOversizeKeepsItsSlot(t *testing.T) {
	stranger := netip.MustParseAddrPort("127.0.0.3:4791")
	for _, tc := range []struct {
		name string
		send func(a, b *wiretest.Wire, payload []byte)
	}{
		{"written", func(a, b *wiretest.Wire, p []byte) {
			_, err := a.WriteBatch([]endpoint.Datagram{{Dst: b.LocalAddr(), Payload: p}})
			require.NoError(t, err)
		}},
		{"injected", func(a, b *wiretest.Wire, p []byte) { b.InjectRaw(a.LocalAddr(), p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := wiretest.NewPair(wiretest.Config{})
			defer a.Close()
			first, _ := craftPacket(t, 1, 16)
			second, _ := craftPacket(t, 2, 16)
			tc.send(a, b, first)
			tc.send(a, b, make([]byte, 5000))
			b.InjectRaw(stranger, make([]byte, endpoint.MaxDatagram+1))
			tc.send(a, b, second)
			var got []endpoint.Datagram
			for len(got) < 4 {
				got = append(got, read(t, b)...)
			}
			require.Len(t, got, 4)
			require.Equal(t, first, got[0].Payload)
			require.Zero(t, got[0].Drop)
			for i, src := range []netip.AddrPort{a.LocalAddr(), stranger} {
				require.Equal(t, endpoint.DropTooLong, got[1+i].Drop, "slot %d", 1+i)
				require.Empty(t, got[1+i].Payload, "slot %d", 1+i)
				require.Equal(t, src.Addr(), got[1+i].Src.Addr(), "slot %d", 1+i)
			}
			require.Equal(t, second, got[3].Payload)
			require.Zero(t, got[3].Drop)
		})
	}
}
