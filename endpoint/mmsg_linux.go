package endpoint

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsgSocket is what the UDP and packet wires share as sockets: the
// runtime poller's handle on the socket, what closes it, the wire's address
// and batch size, and whether it was closed. kind and where name the socket
// in errors ("endpoint: udp read on 127.0.0.2:4791: ...").
type mmsgSocket struct {
	raw         syscall.RawConn
	closer      io.Closer
	local       netip.AddrPort
	batch       int
	closed      atomic.Bool
	kind, where string
}

// LocalAddr returns the address and port the wire is bound to (IPv4 in its
// 4-byte form).
func (s *mmsgSocket) LocalAddr() netip.AddrPort { return s.local }

// BatchSize returns the most datagrams one system call moves.
func (s *mmsgSocket) BatchSize() int { return s.batch }

// Close closes the socket; a blocked ReadBatch returns ErrWireClosed.
func (s *mmsgSocket) Close() error {
	if s.closed.Swap(true) {
		return ErrWireClosed
	}
	return s.closer.Close()
}

// ioError turns a system call's error into the wire's: ErrWireClosed once
// the wire is closed.
func (s *mmsgSocket) ioError(op string, err error) error {
	if s.closed.Load() || errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return ErrWireClosed
	}
	return fmt.Errorf("endpoint: %s %s on %s: %w", s.kind, op, s.where, err)
}

// mmsgBatch is what the UDP and packet wires share of one recvmmsg or
// sendmmsg call: the message headers, which of them the next call moves,
// and the result. Each wire lays out its own iovecs, addresses and control
// buffers behind the headers. The system calls run non-blocking inside the
// runtime poller's Read and Write, which park the goroutine until the socket
// is ready; recvFn and sendFn are bound once, so a call allocates nothing.
type mmsgBatch struct {
	msgs []unix.Mmsghdr

	start, count int // messages [start, count) go to the next system call
	done         int // messages the last call moved
	errno        syscall.Errno
	recvFn       func(fd uintptr) bool
	sendFn       func(fd uintptr) bool
}

func newMmsgBatch(n int) mmsgBatch {
	return mmsgBatch{msgs: make([]unix.Mmsghdr, n)}
}

// bind sets recvFn and sendFn; it must run once the batch has its final
// address (inside the wire's own batch struct).
func (b *mmsgBatch) bind() {
	b.recvFn = b.recv
	b.sendFn = b.send
}

func (b *mmsgBatch) recv(fd uintptr) bool {
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(b.count), unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false // wait for the poller to say the socket is readable
	}
	b.done, b.errno = int(n), e
	return true
}

func (b *mmsgBatch) send(fd uintptr) bool {
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.msgs[b.start])), uintptr(b.count-b.start), unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false
	}
	b.done, b.errno = int(n), e
	return true
}

// receive blocks until recvmmsg has filled messages [0, done) of the first
// count; done may be 0 after a wake-up that found nothing.
func (b *mmsgBatch) receive(raw syscall.RawConn) error {
	if err := raw.Read(b.recvFn); err != nil {
		return err
	}
	if b.errno != 0 {
		return os.NewSyscallError("recvmmsg", b.errno)
	}
	return nil
}

// sendAll sends messages [0, count) in order, as many system calls as the
// kernel needs, and returns how many went out.
func (b *mmsgBatch) sendAll(raw syscall.RawConn) (int, error) {
	for b.start = 0; b.start < b.count; b.start += b.done {
		if err := raw.Write(b.sendFn); err != nil {
			return b.start, err
		}
		if b.errno != 0 {
			return b.start, os.NewSyscallError("sendmmsg", b.errno)
		}
		if b.done == 0 { // never seen; guards the loop
			return b.start, errors.New("sendmmsg sent nothing")
		}
	}
	return b.count, nil
}

// readBatch blocks until at least one message arrives and returns how many
// of dgs it filled, at most the batch size. Message i always lands in slot i, whose
// payload buffer prepare points message i at (buf is the slot's buffer, cut
// to MaxDatagram); parse then fills the slot from message i, or marks it
// dropped. Nothing is ever swapped between slots: the caller pairs slot i
// with whatever owns buffer i, so a dropped message must stay in its own.
func (s *mmsgSocket) readBatch(dgs []Datagram, b *mmsgBatch, prepare func(i int, buf []byte), parse func(i int, dg *Datagram)) (int, error) {
	if s.closed.Load() {
		return 0, ErrWireClosed
	}
	b.count = min(len(dgs), s.batch)
	if b.count == 0 {
		return 0, nil
	}
	for i := range b.count {
		p := dgs[i].Payload[:cap(dgs[i].Payload)]
		if len(p) < minRoCEDatagram {
			return 0, fmt.Errorf("endpoint: %s read: datagram %d has a %d-byte buffer, want at least %d", s.kind, i, len(p), minRoCEDatagram)
		}
		b.msgs[i].Hdr.Flags = 0
		prepare(i, p[:min(len(p), MaxDatagram)])
	}
	for {
		if err := b.receive(s.raw); err != nil {
			return 0, s.ioError("read", err)
		}
		for i := range b.done {
			parse(i, &dgs[i])
		}
		if b.done > 0 {
			return b.done, nil
		}
	}
}

// writeBatches sends dgs in chunks of at most the batch size: pack
// prepares a chunk in the wire's batch b (setting its count to what it
// packed, and saying why it stopped short), sendAll sends it. It returns how
// many datagrams went out and the first error.
func (s *mmsgSocket) writeBatches(dgs []Datagram, b *mmsgBatch, pack func(chunk []Datagram) (int, error)) (int, error) {
	if s.closed.Load() {
		return 0, ErrWireClosed
	}
	sent := 0
	for sent < len(dgs) {
		chunk := dgs[sent:min(len(dgs), sent+s.batch)]
		packed, err := pack(chunk)
		n, werr := b.sendAll(s.raw)
		if werr != nil {
			return sent + n, s.ioError("write", werr)
		}
		sent += packed
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}
