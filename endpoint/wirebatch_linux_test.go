//go:build linux

package endpoint

import (
	"net"
	"net/netip"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// wireMixItem is one datagram of a mixed batch: a legitimate RoCEv2 packet
// (psn ≥ 0) or a stranger's oversize or truncated one.
type wireMixItem struct {
	payload []byte
	legit   bool
}

// wireMix is legitimate datagrams with a stranger's between them: 5000
// zeros (what broke ibpeer serve in issue 17), one byte past MaxDatagram,
// and datagrams too short to hold a BTH and an ICRC.
func wireMix(src, dst netip.AddrPort) []wireMixItem {
	strangers := [][]byte{
		make([]byte, 5000),
		make([]byte, MaxDatagram+1),
		{0x04, 0, 0xFF},
		make([]byte, minRoCEDatagram-1),
		make([]byte, 9000),
	}
	var mix []wireMixItem
	var synth icrcSynth
	for i := range 12 {
		p := testRoCEPayload([]int{minRoCEDatagram, 64, 1040, MaxDatagram}[i%4], loQPN(0x31), uint32(i), byte(i))
		if err := synth.fill(src, dst, 0, p); err != nil {
			panic(err)
		}
		mix = append(mix, wireMixItem{payload: p, legit: true})
		if i%3 != 2 { // sometimes two legitimate ones in a row
			mix = append(mix, wireMixItem{payload: strangers[i%len(strangers)]})
		}
	}
	return mix
}

// TestWireBatchKeepsSlots sends legitimate datagrams with oversize and
// truncated ones between them, all waiting before the wire reads, and
// checks every slot ReadBatch fills: it still holds the caller's buffer of
// that index (the device pairs slot i with its packet i by that buffer),
// and it carries what was sent in that place, or is marked dropped.
func TestWireBatchKeepsSlots(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name string
		open func(t *testing.T) Wire
	}{
		{"udp", func(t *testing.T) Wire {
			w, err := ListenUDP(netip.MustParseAddrPort("127.81.17.1:0"))
			require.NoError(t, err)
			t.Cleanup(func() { w.Close() })
			return w
		}},
		{"packet", func(t *testing.T) Wire { return openPacketWire(t, "lo", "127.81.17.2") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.open(t)
			conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.81.17.9:0")))
			require.NoError(t, err)
			defer conn.Close()
			// DF and IP Identification 0, as the UDP wire sends, so that
			// the ICRCs filled below match the packet wire's exact check.
			rc, err := conn.SyscallConn()
			require.NoError(t, err)
			require.NoError(t, rc.Control(func(fd uintptr) {
				err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
			}))
			require.NoError(t, err)
			src := conn.LocalAddr().(*net.UDPAddr).AddrPort()
			mix := wireMix(src, w.LocalAddr())
			require.LessOrEqual(t, len(mix), w.BatchSize(), "the mix fits one batch")
			for _, m := range mix {
				_, err := conn.WriteToUDPAddrPort(m.payload, w.LocalAddr())
				require.NoError(t, err)
			}

			bufs := make([][MaxDatagram]byte, w.BatchSize())
			dgs := make([]Datagram, w.BatchSize())
			var got []Datagram // copies, in arrival order
			lastPSN := func() bool {
				return len(got) > 0 && len(got[len(got)-1].Payload) >= 12 && got[len(got)-1].Payload[11] == 11
			}
			deadline := time.Now().Add(5 * time.Second)
			for !lastPSN() && time.Now().Before(deadline) {
				for i := range dgs {
					dgs[i] = Datagram{Payload: bufs[i][:0]}
				}
				n, err := w.ReadBatch(dgs)
				require.NoError(t, err)
				for i, dg := range dgs[:n] {
					if len(dg.Payload) > 0 {
						require.Same(t, &bufs[i][0], unsafe.SliceData(dg.Payload), "slot %d holds another slot's buffer", i)
					}
					if dg.Src != src {
						continue // another program's RoCEv2 on lo
					}
					dg.Payload = append([]byte(nil), dg.Payload...)
					got = append(got, dg)
				}
			}
			require.True(t, lastPSN(), "the last legitimate datagram arrived")
			type slot struct {
				drop    DropReason
				payload []byte
			}
			var want, have []slot
			for _, m := range mix {
				switch {
				case len(m.payload) > MaxDatagram:
					want = append(want, slot{DropTooLong, nil})
				case !m.legit && tt.name == "packet":
					want = append(want, slot{DropTooShort, nil})
				default: // the UDP wire delivers a short datagram; the device drops it
					want = append(want, slot{0, m.payload})
				}
			}
			for _, dg := range got {
				have = append(have, slot{dg.Drop, dg.Payload})
				if dg.Drop == 0 && len(dg.Payload) >= minRoCEDatagram {
					assert.NotEqual(t, ICRCBad, dg.ICRC, "PSN %d", dg.Payload[11])
				}
			}
			assert.Equal(t, want, have)
		})
	}
}
