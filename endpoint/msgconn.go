package endpoint

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// MsgConn carries messages over a connected RC QP as a net.Conn: each
// Write is one SEND, each Read takes one received message (what is left
// of it comes with the next Read). perftest -R runs its set-up exchange
// this way, over an rdma_cm connection, instead of TCP. One reader and
// one writer at a time, not both at once.
type MsgConn struct {
	qp       *QP
	cq       *CQ
	mr       *MR
	buf      []byte
	size     int
	depth    int
	local    netip.Addr
	remote   netip.Addr
	closed   chan struct{}
	once     sync.Once
	mu       sync.Mutex
	deadline time.Time

	wcs   [8]WC
	recvd []WC // receive completions not read yet
	sent  int  // send completions not waited for yet
	left  []byte
}

// NewMsgConn posts depth receives of size bytes on qp (in INIT or later),
// whose send and receive completions go to cq, and returns the conn; the
// QP's connection (RTR, RTS) may come after.
func NewMsgConn(pd *PD, qp *QP, cq *CQ, size, depth int) (*MsgConn, error) {
	m := &MsgConn{qp: qp, cq: cq, size: size, depth: depth, buf: make([]byte, (depth+1)*size),
		closed: make(chan struct{}), local: qp.Device().Addr().Addr()}
	var err error
	if m.mr, err = pd.RegMR(m.buf, AccessLocalWrite); err != nil {
		return nil, err
	}
	for i := range depth {
		if err := m.post(i); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// SetRemote names the peer for RemoteAddr.
func (m *MsgConn) SetRemote(a netip.Addr) { m.remote = a }

func (m *MsgConn) post(slot int) error {
	return m.qp.PostRecv(RecvWR{ID: uint64(slot), SGL: []SGE{m.mr.SGE(slot*m.size, m.size)}})
}

// poll waits for completions and sorts them; it returns once one of the
// wanted kind is there.
func (m *MsgConn) poll(wantRecv bool) error {
	for {
		if wantRecv && len(m.recvd) > 0 || !wantRecv && m.sent > 0 {
			return nil
		}
		if n := m.cq.Poll(m.wcs[:]); n > 0 {
			for _, wc := range m.wcs[:n] {
				if wc.Status != StatusSuccess {
					return fmt.Errorf("message conn: %v", wc)
				}
				if wc.Op == WCRecv {
					m.recvd = append(m.recvd, wc)
				} else {
					m.sent++
				}
			}
			continue
		}
		m.mu.Lock()
		d := m.deadline
		m.mu.Unlock()
		ctx := context.Background()
		if !d.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d)
			defer cancel()
		}
		select {
		case <-m.cq.Notify():
		case <-m.closed:
			return net.ErrClosed
		case <-ctx.Done():
			return os.ErrDeadlineExceeded
		}
	}
}

// Read returns the next message, or what is left of it.
func (m *MsgConn) Read(b []byte) (int, error) {
	if len(m.left) > 0 {
		n := copy(b, m.left)
		m.left = m.left[n:]
		return n, nil
	}
	if err := m.poll(true); err != nil {
		return 0, err
	}
	wc := m.recvd[0]
	m.recvd = m.recvd[1:]
	slot := int(wc.ID)
	msg := m.buf[slot*m.size : slot*m.size+int(min(wc.ByteLen, uint32(m.size)))]
	n := copy(b, msg)
	m.left = append(m.left[:0], msg[n:]...)
	return n, m.post(slot)
}

// Write sends b as one message and waits for its completion.
func (m *MsgConn) Write(b []byte) (int, error) {
	if len(b) > m.size {
		return 0, fmt.Errorf("message conn: %d bytes, messages hold %d: %w", len(b), m.size, ErrInvalidWR)
	}
	off := m.depth * m.size
	copy(m.buf[off:], b)
	if err := m.qp.PostSend(&SendWR{Op: WRSend, SGL: []SGE{m.mr.SGE(off, len(b))}}); err != nil {
		return 0, err
	}
	if err := m.poll(false); err != nil {
		return 0, err
	}
	m.sent--
	return len(b), nil
}

// Close unblocks Read and Write; the QP is the caller's.
func (m *MsgConn) Close() error {
	m.once.Do(func() { close(m.closed) })
	return nil
}

// LocalAddr is this side's address (its GID's).
func (m *MsgConn) LocalAddr() net.Addr { return &net.IPAddr{IP: m.local.AsSlice()} }

// RemoteAddr is the peer's address (SetRemote).
func (m *MsgConn) RemoteAddr() net.Addr { return &net.IPAddr{IP: m.remote.AsSlice()} }

// SetDeadline bounds Read and Write.
func (m *MsgConn) SetDeadline(t time.Time) error {
	m.mu.Lock()
	m.deadline = t
	m.mu.Unlock()
	return nil
}

// SetReadDeadline is SetDeadline.
func (m *MsgConn) SetReadDeadline(t time.Time) error { return m.SetDeadline(t) }

// SetWriteDeadline is SetDeadline.
func (m *MsgConn) SetWriteDeadline(t time.Time) error { return m.SetDeadline(t) }

var _ net.Conn = (*MsgConn)(nil)
