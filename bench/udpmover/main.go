// Command udpmover moves datagrams of one size between two plain UDP
// sockets as fast as batched system calls allow: the baseline
// bench/endpoint-vs-udp.sh sets the endpoint's RDMA WRITE goodput against.
//
//	udpmover recv --addr 127.0.0.2:9000 --size 4136 --n 500000
//	udpmover send --addr 127.0.0.1:9001 --to 127.0.0.2:9000 --size 4136 --n 500000
//
// Both ends are blocking sockets on their own locked OS threads, moving
// --batch datagrams per sendmmsg/recvmmsg call, with the socket buffers the
// endpoint's UDP wire asks for (7 MiB, the FORCE variants when allowed).
// The receiver prints one line, "udpmover: N datagrams, B bytes in S s:
// R MB/s", R being UDP payload bytes (10^6 per MB) over the time from the
// first datagram to the last; it stops after --n datagrams or once nothing
// has arrived for --idle. The sender sends --n datagrams and exits; what
// the receiver's socket could not take is lost, so R is the receiver's
// limit, whichever end is slower.
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "send" && os.Args[1] != "recv") {
		fmt.Fprintln(os.Stderr, "usage: udpmover send|recv --addr IP:PORT [--to IP:PORT] [--size B] [--n N] [--batch K]")
		os.Exit(2)
	}
	role := os.Args[1]
	fs := flag.NewFlagSet("udpmover "+role, flag.ExitOnError)
	addr := fs.String("addr", "", "local `IP:PORT`")
	to := fs.String("to", "", "the receiver's `IP:PORT` (send)")
	size := fs.Int("size", 4136, "bytes per datagram (UDP payload)")
	n := fs.Int("n", 500000, "datagrams to move")
	batch := fs.Int("batch", 64, "datagrams per sendmmsg/recvmmsg call")
	idle := fs.Duration("idle", 300*time.Millisecond, "the receiver stops once nothing arrived for this long")
	_ = fs.Parse(os.Args[2:])
	local, err := netip.ParseAddrPort(*addr)
	if err != nil {
		fail("--addr: %v", err)
	}
	runtime.LockOSThread()
	fd := open(local, *idle)
	defer unix.Close(fd)
	b := newBatch(*batch, *size)
	if role == "recv" {
		recv(fd, b, *n)
		return
	}
	dst, err := netip.ParseAddrPort(*to)
	if err != nil {
		fail("--to: %v", err)
	}
	send(fd, b, dst, *n)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "udpmover: "+format+"\n", a...)
	os.Exit(1)
}

// open returns a blocking IPv4 UDP socket bound to local, whose reads give
// up after idle.
func open(local netip.AddrPort, idle time.Duration) int {
	if !local.Addr().Is4() {
		fail("%v: IPv4 only", local)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_UDP)
	if err != nil {
		fail("socket: %v", err)
	}
	const buf = 7 << 20
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, buf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, buf)
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, buf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, buf)
	}
	tv := unix.NsecToTimeval(idle.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		fail("SO_RCVTIMEO: %v", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: local.Addr().As4(), Port: int(local.Port())}); err != nil {
		fail("bind %v: %v", local, err)
	}
	return fd
}

type batch struct {
	msgs []unix.Mmsghdr
	iovs []unix.Iovec
	bufs []byte
	name unix.RawSockaddrInet4
}

func newBatch(n, size int) *batch {
	b := &batch{msgs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n), bufs: make([]byte, n*size)}
	for i := range b.msgs {
		b.iovs[i].Base = &b.bufs[i*size]
		b.iovs[i].SetLen(size)
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.SetIovlen(1)
	}
	return b
}

func recv(fd int, b *batch, n int) {
	var first, last time.Time
	got, timed, bytes := 0, 0, 0
	for got < n {
		k, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(len(b.msgs)), 0, 0, 0)
		if e == unix.EAGAIN && got > 0 {
			break // idle: the sender is done
		}
		if e == unix.EAGAIN || e == unix.EINTR {
			continue
		}
		if e != 0 {
			fail("recvmmsg: %v", e)
		}
		now := time.Now()
		if got == 0 {
			first = now
			// the first call's datagrams arrived before first: count from
			// the next call on
			got = int(k)
			continue
		}
		last = now
		got += int(k)
		timed += int(k)
		for i := range int(k) {
			bytes += int(b.msgs[i].Len)
		}
	}
	s := last.Sub(first).Seconds()
	if s <= 0 {
		fail("received %d datagrams, too few to time", got)
	}
	fmt.Printf("udpmover: %d datagrams, %d bytes in %.3f s: %.1f MB/s\n", timed, bytes, s, float64(bytes)/s/1e6)
}

func send(fd int, b *batch, dst netip.AddrPort, n int) {
	b.name = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: dst.Addr().As4()}
	p := (*[2]byte)(unsafe.Pointer(&b.name.Port))
	p[0], p[1] = byte(dst.Port()>>8), byte(dst.Port())
	for i := range b.msgs {
		b.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.name))
		b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrInet4
	}
	for sent := 0; sent < n; {
		k := min(len(b.msgs), n-sent)
		m, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&b.msgs[0])), uintptr(k), 0, 0, 0)
		if e == unix.EINTR || e == unix.EAGAIN || e == unix.ENOBUFS {
			continue
		}
		if e != 0 {
			fail("sendmmsg: %v", e)
		}
		sent += int(m)
	}
}
