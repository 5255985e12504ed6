package endpoint_test

import (
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// sent is one datagram seen by a wiretest Observe hook.
type sent struct {
	at   time.Time
	from netip.AddrPort
	bth  layers.BTH
}

// recorder keeps what each side sent, decoded, with the virtual time.
type recorder struct {
	mu  sync.Mutex
	log []sent
}

func (r *recorder) observe(from, _ netip.AddrPort, payload []byte) {
	var s sent
	s.at, s.from = time.Now(), from
	buf := append([]byte(nil), payload...)
	if s.bth.DecodeFromBytes(buf, gopacket.NilDecodeFeedback) != nil {
		return
	}
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) from(a netip.Addr) []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sent
	for _, s := range r.log {
		if s.from.Addr() == a {
			out = append(out, s)
		}
	}
	return out
}

// TestRetryExhausted: with every packet lost, the requester retransmits
// retry_cnt times, each exactly one local ACK timeout (4.096 µs × 2^t)
// after the previous transmission, then completes RETRY_EXC_ERR one
// timeout after the last, and the QP is in ERR with later WRs flushed.
func TestRetryExhausted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  uint8
		retryCnt uint8
		size     int // message size: 1 or 3 packets at MTU 1024
	}{
		{"t10-retry3-one-packet", 10, 3, 100},
		{"t14-retry6-three-packets", 14, 6, 3000},
		{"t8-retry0", 8, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				wa, wb := wiretest.NewPair(wiretest.Config{AtoB: wiretest.Faults{Loss: 1}, Observe: rec.observe})
				a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC}), newPeer(t, wb, peerOpts{typ: endpoint.RC})
				defer a.close(t)
				defer b.close(t)
				connect(t, a, b, layers.MTU1024, func(c *endpoint.ConnectAttr) {
					c.Timeout, c.RetryCnt, c.ZeroRetryCnt = tc.timeout, tc.retryCnt, tc.retryCnt == 0
				})
				d := time.Duration(4096<<tc.timeout) * time.Nanosecond
				start := time.Now()
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRWrite,
					SGL: []endpoint.SGE{a.mr.SGE(0, tc.size)}, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
				require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 2, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 8)}}))
				wcs := waitWCs(t, a.scq, 2)
				require.Equal(t, endpoint.StatusRetryExcErr, wcs[0].Status)
				require.Equal(t, uint64(1), wcs[0].ID)
				require.Equal(t, endpoint.StatusWRFlushErr, wcs[1].Status)
				require.Equal(t, endpoint.StateErr, a.qp.State())

				pkts := (tc.size + 1023) / 1024
				tx := rec.from(a.dev.Addr().Addr())
				// The WRITE's packets, then the SEND's, are sent at
				// start; each retry resends both from the first PSN.
				perRound := pkts + 1
				require.Len(t, tx, perRound*(int(tc.retryCnt)+1))
				for round := 0; round <= int(tc.retryCnt); round++ {
					want := start.Add(time.Duration(round) * d)
					for i := range perRound {
						s := tx[round*perRound+i]
						require.Equal(t, want, s.at, "round %d packet %d", round, i)
						require.Equal(t, a.psn.Add(i), s.bth.PSN, "round %d packet %d", round, i)
					}
				}
				require.Equal(t, uint64(1), a.dev.Counters().RetryExceededErr)
			})
		})
	}
}

// TestRetryExhaustedAt checks the time of the error completion itself.
func TestRetryExhaustedAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wa, wb := wiretest.NewPair(wiretest.Config{AtoB: wiretest.Faults{Loss: 1}})
		a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC}), newPeer(t, wb, peerOpts{typ: endpoint.RC})
		defer a.close(t)
		defer b.close(t)
		connect(t, a, b, layers.MTU1024, func(c *endpoint.ConnectAttr) { c.Timeout, c.RetryCnt = 12, 5 })
		start := time.Now()
		require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRRead,
			SGL: []endpoint.SGE{a.mr.SGE(0, 64)}, RemoteAddr: b.mr.Addr(), RKey: b.mr.RKey()}))
		wcs := waitWCs(t, a.scq, 1)
		require.Equal(t, endpoint.StatusRetryExcErr, wcs[0].Status)
		// retry_cnt retries, then one more timeout: 6 × 4.096 µs × 2^12.
		require.Equal(t, 6*time.Duration(4096<<12), time.Since(start))
	})
}

// TestRNR: a responder without receive WRs answers SENDs with RNR NAKs
// carrying its min_rnr_timer code; the requester waits that long each time
// and succeeds once receives are posted, or fails with RNR_RETRY_EXC_ERR
// when rnr_retry runs out.
func TestRNR(t *testing.T) {
	t.Run("recovers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			wa, wb := wiretest.NewPair(wiretest.Config{Observe: rec.observe})
			a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC}), newPeer(t, wb, peerOpts{typ: endpoint.RC})
			defer a.close(t)
			defer b.close(t)
			const code = layers.RNRTimerCode(14) // 1.28 ms
			connect(t, a, b, layers.MTU1024, func(c *endpoint.ConnectAttr) { c.MinRNRTimer = code })
			fillRandom(a.mem[:2500], 9)
			start := time.Now()
			require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 2500)}}))
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			require.Zero(t, a.scq.Len(), "no completion while the receiver has no WR")
			require.NoError(t, b.qp.PostRecv(endpoint.RecvWR{ID: 9, SGL: []endpoint.SGE{b.mr.SGE(100, 4000)}}))
			requireSuccess(t, waitWCs(t, a.scq, 1))
			rwc := waitWCs(t, b.rcq, 1)
			requireSuccess(t, rwc)
			require.Equal(t, uint32(2500), rwc[0].ByteLen)
			require.Equal(t, a.mem[:2500], b.mem[100:2600])

			var naks []sent
			for _, s := range rec.from(b.dev.Addr().Addr()) {
				if s.bth.Info().Operation == layers.OpAcknowledge && s.bth.AETH.Syndrome.IsRNRNak() {
					naks = append(naks, s)
				}
			}
			// 0, 1.28, 2.56, 3.84 ms: four RNR NAKs before the post at 5 ms.
			require.Len(t, naks, 4)
			for i, n := range naks {
				require.Equal(t, layers.MakeRNRNakSyndrome(code), n.bth.AETH.Syndrome)
				require.Equal(t, a.psn, n.bth.PSN, "RNR NAK carries the SEND's first PSN")
				require.Equal(t, start.Add(time.Duration(i)*code.Duration()), n.at)
			}
			require.Equal(t, uint64(4), b.dev.Counters().SendRNRErr)
		})
	})
	t.Run("exhausted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			wa, wb := wiretest.NewPair(wiretest.Config{})
			a, b := newPeer(t, wa, peerOpts{typ: endpoint.RC}), newPeer(t, wb, peerOpts{typ: endpoint.RC})
			defer a.close(t)
			defer b.close(t)
			connect(t, a, b, layers.MTU1024, func(c *endpoint.ConnectAttr) { c.MinRNRTimer, c.RNRRetry = 1, 2 })
			start := time.Now()
			require.NoError(t, a.qp.PostSend(&endpoint.SendWR{ID: 1, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 10)}}))
			wcs := waitWCs(t, a.scq, 1)
			require.Equal(t, endpoint.StatusRNRRetryExcErr, wcs[0].Status)
			// Three RNR NAKs: two retries 10 µs apart, then the error.
			require.Equal(t, 20*time.Microsecond, time.Since(start))
			require.Equal(t, uint64(3), a.dev.Counters().RcvdRNRErr)
			require.Equal(t, endpoint.StateErr, a.qp.State())
		})
	})
}
