package endpoint_test

import (
	"context"
	"encoding/binary"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/endpoint/wiretest"
	"github.com/ibwire/ibwire/layers"
)

// forgedREQ is a REQ a flooder sends for rping's service: comm ID id, a
// QPN derived from it, and the Max CM Retries and CM response timeouts
// (4.096 µs × 2^timeout) given, from src to dst.
func forgedREQ(t *testing.T, id uint32, retries, timeout uint8, src, dst netip.Addr) []byte {
	t.Helper()
	m := layers.NewCMMAD(layers.CMAttrREQ, uint64(id))
	s, d := endpoint.GIDOf(src), endpoint.GIDOf(dst)
	s4, d4 := src.As4(), dst.As4()
	m.CM.REQ = layers.CMReq{LocalCommID: id, ServiceID: rpingService, LocalQPN: 0x10000 + id&0xFFFF,
		ResponderResources: 1, InitiatorDepth: 1, RemoteCMResponseTimeout: timeout,
		TransportServiceType: layers.CMTransportRC, StartingPSN: layers.PSN(id & 0xFFFFFF), LocalCMResponseTimeout: timeout,
		RetryCount: 7, PKey: endpoint.DefaultPKey, PathMTU: layers.MTU1024, RNRRetryCount: 7, MaxCMRetries: retries,
		Primary: layers.CMPath{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: s[:], RemoteGID: d[:], HopLimit: 64},
		IPCM:    layers.IPCMHeader{Valid: true, IPVersion: 4, SrcPort: 40000, SrcIP: s4[:], DstIP: d4[:]}}
	b, err := m.Bytes()
	require.NoError(t, err)
	return b
}

// cmSent counts the CM messages one side sends, by destination and kind.
type cmSent struct {
	mu sync.Mutex
	// reps counts the REPs to each remote comm ID; rejs the REJs by reason.
	reps map[uint32]int
	rejs map[layers.CMRejectReason]int
	n    int // REPs in all
}

func (s *cmSent) observe(to netip.Addr, from, dst netip.AddrPort, p []byte) {
	if dst.Addr() != to || len(p) < 20+layers.MADLength || p[0] != 0x64 {
		return
	}
	mad := p[20 : 20+layers.MADLength]
	s.mu.Lock()
	defer s.mu.Unlock()
	switch layers.CMAttribute(binary.BigEndian.Uint16(mad[16:18])) {
	case layers.CMAttrREP:
		s.reps[binary.BigEndian.Uint32(mad[24+4:])]++
		s.n++
	case layers.CMAttrREJ:
		s.rejs[layers.CMRejectReason(binary.BigEndian.Uint16(mad[24+10:]))]++
	}
}

func (s *cmSent) counts() (reps int, most int, rejs map[layers.CMRejectReason]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.reps {
		most = max(most, n)
	}
	rejs = map[layers.CMRejectReason]int{}
	for k, v := range s.rejs {
		rejs[k] = v
	}
	return s.n, most, rejs
}

// acceptAll is a passive application that answers every connection
// request at once, each with an RC QP of its own on its own goroutine. It
// has no bound of its own: what bounds the connections it holds is the
// CM's. Established connections from legit go to est.
func acceptAll(ctx context.Context, p *cmPeer, l *endpoint.CMListener, legit netip.Addr, est chan<- *endpoint.QP) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			qp, err := p.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: p.scq, RecvCQ: p.rcq})
			if err != nil {
				_ = c.Reject(nil)
				continue
			}
			wg.Go(func() {
				if c.Accept(ctx, qp, endpoint.DefaultCMParam()) == nil && c.Remote() == legit {
					est <- qp
					return
				}
				qp.Destroy()
			})
		}
	})
	return wg.Wait
}

// TestCMFlood: REQs that are never completed (one dangling, thousands
// forged with their own comm IDs and QPNs) do not keep a legitimate
// client out; the pending connections stay under the CM's bound, the
// flood beyond it is answered REJ "no resources", and each forged REQ gets
// its REP no more often than its Max CM Retries say.
func TestCMFlood(t *testing.T) {
	tests := []struct {
		name    string
		forged  int   // REQs the flooder sends before each legitimate run
		retries uint8 // the forged REQs' Max CM Retries
		timeout uint8 // and CM response timeouts
		// quiet is when the last REP to the flooder has gone.
		quiet time.Duration
	}{
		{name: "one dangling REQ", forged: 1, retries: 15, timeout: 20, quiet: 16 * 4300 * time.Millisecond},
		{name: "flood of short-lived REQs", forged: 700, retries: 2, timeout: 14, quiet: 3 * 70 * time.Millisecond},
		{name: "flood of REQs asking for the longest wait", forged: 700, retries: 15, timeout: 31, quiet: 16 * 69 * time.Second},
		{name: "flood of REQs asking for no retry", forged: 700, retries: 0, timeout: 10, quiet: 5 * time.Millisecond},
	}
	const runs = 3
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client, server := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
				flooder := netip.MustParseAddr("127.0.0.66")
				sent := &cmSent{reps: map[uint32]int{}, rejs: map[layers.CMRejectReason]int{}}
				wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
					Observe: func(from, to netip.AddrPort, p []byte) { sent.observe(flooder, from, to, p) }})
				a, b := newCMPeer(t, wa, endpoint.CMConfig{}), newCMPeer(t, wb, endpoint.CMConfig{})
				defer a.close(t)
				defer b.close(t)
				l, err := b.cm.Listen(rpingService)
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				est := make(chan *endpoint.QP, runs)
				wait := acceptAll(ctx, b, l, client, est)

				id := uint32(0x5000_0000)
				peak := 0
				for run := range runs {
					for range tc.forged {
						id++
						require.NoError(t, b.cm.HandleMAD(flooder, forgedREQ(t, id, tc.retries, tc.timeout, flooder, server)))
						peak = max(peak, b.cm.PendingPassive())
					}
					// The legitimate client: connect, then a SEND.
					start := time.Now()
					qp, err := a.pd.CreateQP(endpoint.QPConfig{Type: endpoint.RC, SendCQ: a.scq, RecvCQ: a.rcq})
					require.NoError(t, err)
					_, err = a.cm.Connect(ctx, qp, server, rpingService, 0, endpoint.DefaultCMParam())
					require.NoError(t, err, "run %d", run)
					sqp := <-est
					require.NoError(t, sqp.PostRecv(endpoint.RecvWR{ID: 9, SGL: []endpoint.SGE{b.mr.SGE(0, 64)}}))
					require.NoError(t, qp.PostSend(&endpoint.SendWR{ID: 9, Op: endpoint.WRSend, SGL: []endpoint.SGE{a.mr.SGE(0, 64)}}))
					requireSuccess(t, waitWCs(t, a.scq, 1))
					requireSuccess(t, waitWCs(t, b.rcq, 1))
					assert.Less(t, time.Since(start), time.Second, "run %d: connected and sent", run)
					qp.Destroy()
					sqp.Destroy()
				}
				assert.LessOrEqual(t, peak, endpoint.DefaultCMMaxPending, "pending connections")

				// Each forged REQ had its REP and at most Max CM Retries
				// more, and then no more.
				time.Sleep(tc.quiet + time.Second)
				reps, most, rejs := sent.counts()
				assert.LessOrEqual(t, most, 1+int(tc.retries), "REPs to one forged REQ")
				assert.Positive(t, reps)
				if tc.forged*runs > endpoint.DefaultCMMaxPending {
					assert.Positive(t, rejs[layers.RejNoResources], "REJs \"no resources\" to the flood beyond the bound: %v", rejs)
				}
				time.Sleep(time.Hour)
				again, _, _ := sent.counts()
				assert.Equal(t, reps, again, "REPs to the flooder after its REQs' retries ran out")
				assert.Zero(t, b.cm.PendingPassive(), "pending connections after the flood")
				cancel()
				require.NoError(t, l.Close())
				wait()
			})
		})
	}
}

// A REQ the application never accepts nor rejects is not held forever:
// once its requester has given up (its retries of the longer of its
// response timeout and ours), it is answered REJ "timeout" and leaves the
// listener's queue.
func TestCMUnansweredREQExpires(t *testing.T) {
	tests := []struct {
		name    string
		retries uint8
		timeout uint8
		gone    time.Duration // when the REQ is forgotten
	}{
		{name: "short timeouts: ours (4.3 s) counts", retries: 2, timeout: 10, gone: 3 * 4295 * time.Millisecond},
		{name: "long timeouts: the REQ's count", retries: 1, timeout: 23, gone: 2 * 34360 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				client, server := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
				sent := &cmSent{reps: map[uint32]int{}, rejs: map[layers.CMRejectReason]int{}}
				wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
					Observe: func(from, to netip.AddrPort, p []byte) { sent.observe(client, from, to, p) }})
				defer wa.Close()
				b := newCMPeer(t, wb, endpoint.CMConfig{})
				defer b.close(t)
				l, err := b.cm.Listen(rpingService)
				require.NoError(t, err)
				defer l.Close()
				require.NoError(t, b.cm.HandleMAD(client, forgedREQ(t, 7, tc.retries, tc.timeout, client, server)))
				time.Sleep(tc.gone - 10*time.Millisecond)
				assert.Equal(t, 1, b.cm.PendingPassive(), "before the requester gave up")
				time.Sleep(20 * time.Millisecond)
				assert.Zero(t, b.cm.PendingPassive(), "after")
				_, _, rejs := sent.counts()
				assert.Equal(t, map[layers.CMRejectReason]int{layers.RejTimeout: 1}, rejs)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err = l.Accept(ctx)
				assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing left to accept")
			})
		})
	}
}

// A REQ sent again and again gets its REP again, but no more often in all
// than its Max CM Retries allow: repeating a REQ cannot make the passive
// side send REPs without end.
func TestCMRepeatedREQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client, server := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
		sent := &cmSent{reps: map[uint32]int{}, rejs: map[layers.CMRejectReason]int{}}
		wa, wb := wiretest.NewPair(wiretest.Config{A: netip.AddrPortFrom(client, 4791), B: netip.AddrPortFrom(server, 4791),
			Observe: func(from, to netip.AddrPort, p []byte) { sent.observe(client, from, to, p) }})
		defer wa.Close()
		b := newCMPeer(t, wb, endpoint.CMConfig{})
		defer b.close(t)
		l, err := b.cm.Listen(rpingService)
		require.NoError(t, err)
		defer l.Close()
		req := forgedREQ(t, 7, 2, 20, client, server)
		require.NoError(t, b.cm.HandleMAD(client, req))
		c, err := l.Accept(context.Background())
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- c.Accept(context.Background(), b.qp, endpoint.DefaultCMParam()) }()
		synctest.Wait()
		for range 50 {
			require.NoError(t, b.cm.HandleMAD(client, req))
		}
		require.ErrorIs(t, <-done, endpoint.ErrCMTimeout)
		synctest.Wait()
		reps, _, rejs := sent.counts()
		assert.Equal(t, 3, reps, "the REP and Max CM Retries (2) more")
		assert.Equal(t, map[layers.CMRejectReason]int{layers.RejTimeout: 1}, rejs)
	})
}
