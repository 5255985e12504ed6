package perftest

// perftest's latency tests after the set-up they share with the bandwidth
// tests (perftest 6.06, ib_write_lat.c, ib_read_lat.c, ib_send_lat.c,
// ib_atomic_lat.c):
//
//   - ib_read_lat and ib_atomic_lat: the client posts one READ (or atomic)
//     at a time, the next once the last completed; the server takes no part
//     and waits in the closing handshake, then prints a line of dashes and
//     no result.
//   - ib_send_lat: a ping-pong of SENDs; the client sends first, each side
//     sends once it has received, and both print a result.
//   - ib_write_lat: the same ping-pong with RDMA WRITEs, the server first,
//     each into the
//     second half of the peer's buffer, its last byte the sender's count
//     (what perftest polls for; this side waits for QP.RemoteWrites and
//     checks that byte).
//
// The set-up has one handshake more than a bandwidth test's before the
// traffic; then the sides end with one more and "done" (perftest's
// ctx_close_connection), except ib_write_lat's, which close the
// connection and nothing else. The figures are perftest's: the time between
// consecutive posts, halved for SEND (a round trip carries two messages),
// sorted, through perf.LatStats; the row counts every iteration.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/internal/peer/exchange"
	"github.com/ibwire/ibwire/internal/peer/perf"
	"github.com/ibwire/ibwire/setup"
)

// runLatency runs a latency test from its traffic to its end.
func (j *job) runLatency(ctx context.Context, stdout io.Writer, conn net.Conn, p *setup.PerftestConn, cmx *exchange.PerftestCM, guard *qpGuard,
	local, remote setup.PerftestDest, qp *endpoint.QP, cq *endpoint.CQ, mr *endpoint.MR, rx int) error {
	// #4: perftest 6.06's latency tests shake hands four times before
	// their traffic, whatever the operation (a capture of ib_read_lat and
	// ib_send_lat between two rxe guests shows four 108-byte exchanges,
	// then the traffic, then one more and "done").
	if _, err := p.HandshakeChecked(local, guard.check); err != nil {
		return err
	}
	if err := guard.drain(p, local); err != nil {
		return err
	}
	if j.isServer() && (j.Op() == "read" || j.Op() == "atomic") {
		// The client's READs and atomics need nothing from this side:
		// wait for its end, then check the QP, as the bandwidth server
		// does before the client may tear it down.
		if _, err := p.HandshakeChecked(local, guard.check); err != nil {
			return err
		}
		if st, err := qp.Query(); err == nil && st.State != endpoint.StateRTS {
			return fmt.Errorf("the QP ended in %v", st.State)
		}
		if err := j.done(ctx, p, cmx); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, perf.ResultLine)
		return err
	}
	samples, err := j.latencyTraffic(ctx, qp, cq, mr, remote, rx)
	if err != nil {
		return err
	}
	row := perf.LatStats(uint64(j.Size), samples)
	row.Iterations = uint64(j.Iters) // perftest counts iterations, not the gaps between them
	if err := perf.WriteLatTable(stdout, []perf.LatRow{row}); err != nil {
		return err
	}
	if j.Op() == "write" {
		return j.awaitPeerClose(conn)
	}
	if _, err := p.HandshakeChecked(local, guard.check); err != nil { // closing
		return err
	}
	return j.done(ctx, p, cmx)
}

// latencyTraffic runs the iterations and returns the latencies in
// microseconds: one per gap between consecutive posts.
func (j *job) latencyTraffic(ctx context.Context, qp *endpoint.QP, cq *endpoint.CQ, mr *endpoint.MR, remote setup.PerftestDest, rx int) ([]float64, error) {
	wcs := completions{cq: cq, stall: j.Stall, buf: make([]endpoint.WC, 16)}
	pingPong := j.Op() == "send" || j.Op() == "write"
	half := mr.Len() / 2
	mem := mr.Bytes()
	posted := make([]time.Duration, 0, j.Iters)
	start := time.Now()
	sent, received, recvsPosted := 0, 0, rx
	for sent < j.Iters || pingPong && received < j.Iters {
		// A ping-pong side waits for the peer's message before sending
		// its own, except the first message of the side that starts.
		waits := pingPong && received < j.Iters && (sent > 0 || !startsPingPong(j.Op(), j.isServer()))
		if waits && j.Op() == "write" {
			if err := j.awaitWrite(ctx, qp, uint64(received+1)); err != nil {
				return nil, err
			}
			// the peer's count, where perftest's poll looks
			if got, want := mem[half+j.Size-1], byte(received+1); got != want {
				return nil, fmt.Errorf("WRITE %d ended with byte %#02x, want the peer's count %#02x", received, got, want)
			}
			received++
		} else if waits {
			wc, err := wcs.next(ctx, true)
			if err != nil {
				return nil, fmt.Errorf("receive %d: %w", received, err)
			}
			if wc.ByteLen != uint32(j.Size) {
				return nil, fmt.Errorf("SEND %d carried %d bytes, want %d", received, wc.ByteLen, j.Size)
			}
			received++
			if recvsPosted < j.Iters {
				if err := postLatencyRecvs(qp, mr, j.Size, 1); err != nil {
					return nil, err
				}
				recvsPosted++
			}
		}
		if sent < j.Iters {
			wr := endpoint.SendWR{Op: endpoint.WRSend, SGL: []endpoint.SGE{mr.SGE(0, j.Size)}}
			if j.Op() != "send" {
				wr = j.wr(mr, 0, remote, sent)
			}
			if j.Op() == "write" {
				// before the post: the QP reads it after
				mem[j.Size-1] = byte(sent + 1)
			}
			wr.ID = uint64(sent)
			posted = append(posted, time.Since(start))
			if err := qp.PostSend(&wr); err != nil {
				return nil, err
			}
			if _, err := wcs.next(ctx, false); err != nil {
				return nil, fmt.Errorf("work request %d: %w", sent, err)
			}
			sent++
		}
	}
	rttFactor := 1.0
	if pingPong {
		rttFactor = 2
	}
	samples := make([]float64, 0, len(posted))
	for i := 1; i < len(posted); i++ {
		samples = append(samples, float64(posted[i]-posted[i-1])/float64(time.Microsecond)/rttFactor)
	}
	return samples, nil
}

// startsPingPong says whether this side sends the first message of a
// ping-pong: ib_send_lat's client, but ib_write_lat's server (the first
// RoCE frame of interop/testdata/rxe_send_lat.pcap.gz comes from the
// client, that of rxe_write_lat.pcap.gz from the server).
func startsPingPong(op string, server bool) bool {
	return server == (op == "write")
}

// postLatencyRecvs posts n receives of size bytes into the second half of
// the region, away from what this side sends.
func postLatencyRecvs(qp *endpoint.QP, mr *endpoint.MR, size, n int) error {
	for range n {
		if err := qp.PostRecv(endpoint.RecvWR{SGL: []endpoint.SGE{mr.SGE(mr.Len()/2, size)}}); err != nil {
			return err
		}
	}
	return nil
}

// completions hands out one CQ's completions by kind, receives or this
// side's own work requests, keeping the other kind for later: a SEND
// ping-pong waits for each on the CQ both share.
type completions struct {
	cq    *endpoint.CQ
	stall time.Duration
	buf   []endpoint.WC
	held  [2][]endpoint.WC // [0] sends, [1] receives
}

// next returns the oldest completion of the kind asked for, waiting at
// most the stall time for one; a completion in error is an error.
func (c *completions) next(ctx context.Context, recv bool) (endpoint.WC, error) {
	kind := 0
	if recv {
		kind = 1
	}
	var timer *time.Timer
	for len(c.held[kind]) == 0 {
		n := c.cq.Poll(c.buf)
		if n == 0 {
			if timer == nil {
				timer = time.NewTimer(c.stall)
				defer timer.Stop()
			}
			select {
			case <-c.cq.Notify():
			case <-ctx.Done():
				return endpoint.WC{}, ctx.Err()
			case <-timer.C:
				return endpoint.WC{}, fmt.Errorf("%w for %v", perf.ErrStall, c.stall)
			}
			continue
		}
		for _, wc := range c.buf[:n] {
			k := 0
			if wc.Op == endpoint.WCRecv || wc.Op == endpoint.WCRecvWithImm {
				k = 1
			}
			c.held[k] = append(c.held[k], wc)
		}
	}
	wc := c.held[kind][0]
	c.held[kind] = c.held[kind][1:]
	if wc.Status != endpoint.StatusSuccess {
		return wc, &perf.WCError{WR: int(wc.ID), WC: wc}
	}
	return wc, nil
}

// awaitWrite waits until the QP has placed n of the peer's WRITEs, at most
// the stall time after the last one.
func (j *job) awaitWrite(ctx context.Context, qp *endpoint.QP, n uint64) error {
	var timer *time.Timer
	for qp.RemoteWrites() < n {
		if timer == nil {
			timer = time.NewTimer(j.Stall)
			defer timer.Stop()
		}
		select {
		case <-qp.RemoteWriteNotify():
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			return fmt.Errorf("%w for %v: %d of %d WRITEs arrived", perf.ErrStall, j.Stall, qp.RemoteWrites(), j.Iters)
		}
	}
	return nil
}

// awaitPeerClose ends ib_write_lat's exchange, which has no closing
// message: it closes this side's half and waits (at most the stall time)
// for the peer to close its own. perftest closes after its last
// completion, which needs this side's ACK of its last WRITE; closing the
// device before the peer is done could leave that ACK unsent.
func (j *job) awaitPeerClose(conn net.Conn) error {
	if c, ok := conn.(interface{ CloseWrite() error }); ok {
		if err := c.CloseWrite(); err != nil {
			return err
		}
	}
	if err := conn.SetReadDeadline(time.Now().Add(j.Stall)); err != nil {
		return err
	}
	var b [64]byte
	for {
		n, err := conn.Read(b[:])
		if n > 0 {
			return fmt.Errorf("ib_write_lat's peer sent %d bytes after the traffic, where perftest sends none", n)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("waiting for the peer to close the set-up connection: %w", err)
		}
	}
}
