package capture

import (
	"encoding/binary"
	"fmt"
	"github.com/ibwire/ibwire/layers"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// LiveSource captures frames from one Linux interface through an AF_PACKET
// socket (root or CAP_NET_RAW). Frames come up as the interface's link
// type: Ethernet for Ethernet and loopback devices, raw IP for tun-like
// ones. A VLAN tag the kernel stripped into PACKET_AUXDATA is put back into
// the frame, so what is written matches tcpdump. One goroutine reads; Close
// may be called from another and wakes it.
type LiveSource struct {
	name     string
	file     *os.File // the socket, non-blocking and known to the runtime poller
	conn     syscall.RawConn
	ifindex  int
	loopback bool
	linkType layers.LinkType
	snaplen  int
	n        int
	stats    Stats
	closed   atomic.Bool // the poller reports a close as "use of closed file"; callers want os.ErrClosed

	// recvmsg state, kept here so that reading allocates nothing.
	msg    unix.Msghdr
	iov    unix.Iovec
	from   unix.RawSockaddrLinklayer
	oob    [128]byte
	got    int
	errno  syscall.Errno
	recvFn func(fd uintptr) bool
}

// htons converts to network order, as the AF_PACKET protocol fields want.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

// OpenLive opens iface for capture with snaplen bytes per frame (0 or more
// than MaxCaplen means MaxCaplen) and, if filter is not nil, attaches it
// in the kernel (RoCEFilter, or a program from ParseFilter). The interface
// is not put into promiscuous mode; see SetPromiscuous.
func OpenLive(iface string, snaplen int, filter []bpf.RawInstruction) (*LiveSource, error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if snaplen <= 0 || snaplen > MaxCaplen {
		snaplen = MaxCaplen
	}
	// Protocol 0: the socket receives nothing until bind names ETH_P_ALL,
	// so no frame slips through before the filter is attached.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("capture: open %s: packet socket: %w", iface, err)
	}
	fail := func(what string, err error) (*LiveSource, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("capture: open %s: %s: %w", iface, what, err)
	}
	if filter != nil {
		if len(filter) == 0 || len(filter) > 4096 {
			return fail("filter", fmt.Errorf("%d instructions", len(filter)))
		}
		prog := make([]unix.SockFilter, len(filter))
		for i, ins := range filter {
			prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
			return fail("attach filter", err)
		}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
		return fail("PACKET_AUXDATA", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fail("SO_TIMESTAMPNS", err)
	}
	if err := setReceiveBuffer(fd, DefaultLiveBuffer); err != nil {
		return fail("receive buffer", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return fail("bind", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	s := &LiveSource{name: iface, ifindex: ifi.Index, snaplen: snaplen}
	switch ll, _ := sa.(*unix.SockaddrLinklayer); {
	case ll == nil:
		return fail("link type", fmt.Errorf("unexpected socket address %T", sa))
	case ll.Hatype == unix.ARPHRD_ETHER:
		s.linkType = layers.LinkTypeEthernet
	case ll.Hatype == unix.ARPHRD_LOOPBACK: // lo has a zeroed Ethernet header
		s.linkType, s.loopback = layers.LinkTypeEthernet, true
	case ll.Hatype == unix.ARPHRD_NONE: // tun and friends: no link header
		s.linkType = layers.LinkTypeRaw
	default:
		return fail("link type", fmt.Errorf("ARPHRD %d is not supported", ll.Hatype))
	}
	s.file = os.NewFile(uintptr(fd), "packet:"+iface)
	if s.conn, err = s.file.SyscallConn(); err != nil {
		s.file.Close()
		return nil, fmt.Errorf("capture: open %s: %w", iface, err)
	}
	s.recvFn = s.recv
	return s, nil
}

// DefaultLiveBuffer is the socket receive buffer OpenLive asks for. The
// kernel's default (net.core.rmem_default, about 208 KiB) holds fewer than a
// hundred full-size frames, since each is charged with its buffer overhead
// (about 2.3 KiB for a 1400-byte frame); a reader delayed a few
// milliseconds by a busy machine then loses a burst. 32 MiB holds some
// 14,000 such frames: tcpdump's 2 MiB ring holds about as many frames in
// a tighter layout.
const DefaultLiveBuffer = 32 << 20

// setReceiveBuffer sets the socket's receive buffer to n bytes. As root
// (CAP_NET_ADMIN) SO_RCVBUFFORCE passes net.core.rmem_max; otherwise
// SO_RCVBUF takes what that limit allows.
func setReceiveBuffer(fd, n int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n); err == nil {
		return nil
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
}

// SetBufferSize sets the socket's receive buffer to n bytes (tcpdump's -B),
// in place of DefaultLiveBuffer.
func (s *LiveSource) SetBufferSize(n int) error {
	var err error
	cerr := s.conn.Control(func(fd uintptr) { err = setReceiveBuffer(int(fd), n) })
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("capture: %s: receive buffer of %d bytes: %w", s.name, n, err)
	}
	return nil
}

// Name returns the interface name.
func (s *LiveSource) Name() string { return s.name }

// LinkType returns the link type of the captured frames.
func (s *LiveSource) LinkType() layers.LinkType { return s.linkType }

// SetPromiscuous puts the interface into promiscuous mode (or takes it
// out), needed to see mirrored traffic addressed to other hosts. The
// kernel undoes it when the socket closes.
func (s *LiveSource) SetPromiscuous(on bool) error {
	opt := unix.PACKET_DROP_MEMBERSHIP
	if on {
		opt = unix.PACKET_ADD_MEMBERSHIP
	}
	var err error
	cerr := s.conn.Control(func(fd uintptr) {
		err = unix.SetsockoptPacketMreq(int(fd), unix.SOL_PACKET, opt, &unix.PacketMreq{Ifindex: int32(s.ifindex), Type: unix.PACKET_MR_PROMISC})
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("capture: %s: promiscuous mode: %w", s.name, err)
	}
	return nil
}

// Stats returns the counters since OpenLive. The kernel resets its
// counters on every read, so they are accumulated here. It may run while
// another goroutine reads, but not concurrently with itself.
func (s *LiveSource) Stats() (Stats, error) {
	var st *unix.TpacketStats
	var err error
	cerr := s.conn.Control(func(fd uintptr) {
		st, err = unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
	})
	if err == nil {
		err = cerr
	}
	if err != nil {
		return s.stats, fmt.Errorf("capture: %s: statistics: %w", s.name, err)
	}
	s.stats.Received += uint64(st.Packets)
	s.stats.Dropped += uint64(st.Drops)
	return s.stats, nil
}

// Close closes the socket; a blocked NextInto returns an error matching
// os.ErrClosed.
func (s *LiveSource) Close() error {
	s.closed.Store(true)
	return s.file.Close()
}

// SetReadDeadline makes a blocked NextInto return an error matching
// os.ErrDeadlineExceeded at t; the zero time means no deadline.
func (s *LiveSource) SetReadDeadline(t time.Time) error { return s.file.SetReadDeadline(t) }

// Next returns the next frame in freshly allocated memory.
func (s *LiveSource) Next() (Packet, error) {
	var p Packet
	err := s.NextInto(&p)
	return p, err
}

// recv is one non-blocking recvmsg; false asks the poller to wait.
func (s *LiveSource) recv(fd uintptr) bool {
	// MSG_TRUNC makes the result the frame's full length, not what fitted.
	n, _, e := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.msg)), unix.MSG_TRUNC)
	for e == unix.EINTR {
		n, _, e = unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&s.msg)), unix.MSG_TRUNC)
	}
	if e == unix.EAGAIN {
		return false
	}
	s.got, s.errno = int(n), e
	return true
}

// NextInto reads the next frame into p, reusing p.Data's memory; after the
// first frame it allocates nothing.
func (s *LiveSource) NextInto(p *Packet) error {
	// 4 spare bytes let a stripped VLAN tag go back in.
	if cap(p.Data) < s.snaplen+4 {
		p.Data = make([]byte, s.snaplen+4)
	}
	buf := p.Data[:s.snaplen+4]
	for {
		s.iov.Base = &buf[0]
		s.iov.SetLen(s.snaplen)
		s.msg = unix.Msghdr{Name: (*byte)(unsafe.Pointer(&s.from)), Namelen: uint32(unsafe.Sizeof(s.from)), Iov: &s.iov, Control: &s.oob[0]}
		s.msg.SetIovlen(1)
		s.msg.SetControllen(len(s.oob))
		if err := s.conn.Read(s.recvFn); err != nil {
			if s.closed.Load() {
				err = os.ErrClosed
			}
			return fmt.Errorf("capture: %s: %w", s.name, err)
		}
		if s.errno != 0 {
			return fmt.Errorf("capture: %s: recvmsg: %w", s.name, s.errno)
		}
		// On loopback every frame is seen leaving and arriving; keep one,
		// as libpcap does.
		if s.loopback && s.from.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		break
	}
	length, caplen := s.got, min(s.got, s.snaplen)
	stamp, aux, haveAux := time.Time{}, unix.TpacketAuxdata{}, false
	oob := s.oob[:s.msg.Controllen]
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if int(h.Len) < unix.SizeofCmsghdr || int(h.Len) > len(oob) {
			break
		}
		data := oob[unix.CmsgLen(0):h.Len]
		switch {
		case h.Level == unix.SOL_PACKET && h.Type == unix.PACKET_AUXDATA && len(data) >= int(unsafe.Sizeof(aux)):
			aux, haveAux = *(*unix.TpacketAuxdata)(unsafe.Pointer(&data[0])), true
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&data[0]))
			stamp = time.Unix(int64(ts.Sec), int64(ts.Nsec))
		}
		oob = oob[min(len(oob), unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0))):]
	}
	if stamp.IsZero() {
		stamp = time.Now()
	}
	data := buf[:caplen]
	if haveAux && aux.Status&unix.TP_STATUS_VLAN_VALID != 0 && s.linkType == layers.LinkTypeEthernet && caplen >= 12 {
		tpid := uint16(0x8100)
		if aux.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 {
			tpid = aux.Vlan_tpid
		}
		copy(buf[16:caplen+4], buf[12:caplen]) // after the MAC addresses
		binary.BigEndian.PutUint16(buf[12:], tpid)
		binary.BigEndian.PutUint16(buf[14:], aux.Vlan_tci)
		data, length = buf[:caplen+4], length+4
	}
	s.n++
	p.Data = data
	p.Time, p.Length = stamp, length
	p.LinkType, p.Interface, p.Number = s.linkType, s.ifindex, s.n
	return nil
}
