//go:build linux

package endpoint

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDPWire is the Wire over a kernel UDP socket bound to one address and
// port (normally layers.RoCEv2Port). It moves batches with recvmmsg/sendmmsg and
// never allocates per datagram.
//
// IPv4: the socket stays unconnected and uses IP_PMTUDISC_DO, so Linux sends
// every datagram with DF and IP Identification 0 (ENDPOINT.md §1.4); the
// ICRC written into each datagram hashes ID 0 and is therefore what rxe
// computes over the packet it receives. On receive the sender's ID is
// unknown: ReadBatch reports ICRCGood when the ICRC matches ID 0 and
// ICRCUnverifiable when it matches some other ID, which lets through one
// corrupted packet in 65536 (see icrcSynth.verify).
//
// IPv6: UDP_NO_CHECK6_RX accepts the zero UDP checksum rxe sends, and every
// ICRC is verified exactly.
//
// Datagrams always leave from the wire's own UDP port; Datagram.Src's port
// is ignored on write. When bound to a wildcard address the wire learns
// each datagram's destination address from IP_PKTINFO, and a write must
// name its source address in Datagram.Src (the kernel is told with
// IP_PKTINFO), because the ICRC hashes it.
//
// The address and port have one owner: a second wire on them, or on the
// wildcard beside them, fails with EADDRINUSE (no SO_REUSEADDR, which would
// let the kernel share each one's datagrams out between both). Give each
// peer on one machine its own address (127.0.0.1 and 127.0.0.2).
//
// Bound to a loopback address, the wire uses UDP segmentation offload
// where the kernel has it (WithUDPOffload): WriteBatch hands runs of equal
// datagrams to the kernel as one UDP_SEGMENT message, and with UDP_GRO the
// receiving wire reads such a run as one message and cuts it back into its
// datagrams, each checked on its own. On loopback the run crosses the
// stack as one packet instead of one per datagram, which is most of the
// cost of a datagram there; each datagram keeps its own bytes, ICRC,
// traffic class and TTL. Where the kernel refuses either option the wire
// moves one datagram per message, as on any other address.
//
// The batches are recvmmsg/sendmmsg calls of the wire's own rather than
// x/net/ipv4's PacketConn.ReadBatch/WriteBatch, which allocate a net.IP and
// a net.UDPAddr for every datagram read (BenchmarkUDPLoopback runs both).
type UDPWire struct {
	mmsgSocket
	conn     *net.UDPConn
	v4       bool
	wildcard bool
	scopeID  uint32      // interface of a link-local IPv6 bind, for sends
	gso      atomic.Bool // sends runs of datagrams as one UDP_SEGMENT message

	rx     *udpBatch // owned by the one ReadBatch goroutine
	gro    *groRx    // with UDP_GRO: the reader's coalesced messages
	txPool sync.Pool // of *udpBatch, one per concurrent WriteBatch
}

// udpOOBSize holds the control messages of one datagram: on receive TOS or
// traffic class, TTL or hop limit and PKTINFO, on send the same three (at
// most 88 bytes either way).
const udpOOBSize = 128

// udpBatch is the kernel-facing state of one recvmmsg/sendmmsg call,
// allocated once and reused.
type udpBatch struct {
	mmsgBatch
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // large enough for an Inet4 too
	oob   []byte
	ends  []int // on send: datagrams carried by messages [0, m]
	synth icrcSynth
}

func newUDPBatch(n int) *udpBatch {
	b := &udpBatch{
		mmsgBatch: newMmsgBatch(n),
		iovs:      make([]unix.Iovec, n),
		names:     make([]unix.RawSockaddrInet6, n),
		oob:       make([]byte, n*udpOOBSize),
		ends:      make([]int, n),
	}
	for i := range b.msgs {
		h := &b.msgs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Iov = &b.iovs[i]
		h.SetIovlen(1)
		h.Control = &b.oob[i*udpOOBSize]
	}
	b.bind()
	return b
}

// ListenUDP opens a UDPWire on addr (IPv4 or IPv6; port 0 picks one). An
// IPv4-mapped IPv6 address counts as IPv4.
func ListenUDP(addr netip.AddrPort, opts ...UDPOption) (*UDPWire, error) {
	cfg := newUDPConfig(opts)
	ip := addr.Addr().Unmap()
	if !ip.IsValid() {
		return nil, fmt.Errorf("endpoint: listen udp: invalid address %v", addr)
	}
	addr = netip.AddrPortFrom(ip, addr.Port())
	w := &UDPWire{v4: ip.Is4(), wildcard: ip.IsUnspecified()}
	offload := cfg.offload && ip.IsLoopback()
	w.batch, w.kind = cfg.batch, "udp"
	network := "udp6"
	if w.v4 {
		network = "udp4"
	}
	var sockErr error
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if err := c.Control(func(fd uintptr) {
			if sockErr = w.setSockopts(int(fd), cfg); sockErr == nil && offload {
				w.gso.Store(udpGSOProbe(int(fd)) == nil)
				if udpGROEnable(int(fd)) == nil {
					w.gro = &groRx{}
				}
			}
		}); err != nil {
			return err
		}
		return sockErr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		var se *os.SyscallError
		if errors.Is(err, unix.EADDRINUSE) && errors.As(err, &se) {
			return nil, fmt.Errorf("endpoint: listen udp %v: address in use: another socket has UDP port %d on this address or on the wildcard (another ibpeer, or rdma_rxe): %w", addr, addr.Port(), se)
		}
		return nil, fmt.Errorf("endpoint: listen udp %v: %w", addr, err)
	}
	w.conn = pc.(*net.UDPConn)
	if w.raw, err = w.conn.SyscallConn(); err != nil {
		w.conn.Close()
		return nil, fmt.Errorf("endpoint: listen udp %v: %w", addr, err)
	}
	la := w.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	w.local = netip.AddrPortFrom(la.Addr().Unmap(), la.Port())
	w.closer, w.where = w.conn, w.local.String()
	if z := addr.Addr().Zone(); z != "" {
		ifi, err := net.InterfaceByName(z)
		if err != nil {
			w.conn.Close()
			return nil, fmt.Errorf("endpoint: listen udp %v: zone: %w", addr, err)
		}
		w.scopeID = uint32(ifi.Index)
	}
	w.rx = newUDPBatch(w.batch)
	w.txPool.New = func() any { return newUDPBatch(w.batch) }
	return w, nil
}

// udpGROEnable asks the kernel to hand the socket runs of datagrams as one
// message (Linux 5.0 and later); tests replace it to force the fallback.
var udpGROEnable = func(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_GRO, 1)
}

// udpGSOProbe asks the kernel whether the socket can segment (Linux 4.18
// and later); tests replace it to force the fallback.
var udpGSOProbe = func(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_UDP, unix.UDP_SEGMENT, 0)
}

func (w *UDPWire) setSockopts(fd int, cfg udpConfig) error {
	set := func(level, opt, v int, name string) error {
		if err := unix.SetsockoptInt(fd, level, opt, v); err != nil {
			return os.NewSyscallError("setsockopt "+name, err)
		}
		return nil
	}
	// No SO_REUSEADDR or SO_REUSEPORT: with either, a second wire on the
	// same address and port binds too and the kernel shares the datagrams
	// out between them, so two servers would each lose half of their
	// clients' packets. UDP has no TIME_WAIT to wait out on a restart.
	if cfg.sockBuf > 0 {
		// The FORCE variants pass net.core.[rw]mem_max with CAP_NET_ADMIN;
		// without it the plain ones are capped silently, which is fine.
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.sockBuf) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.sockBuf)
		}
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, cfg.sockBuf) != nil {
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, cfg.sockBuf)
		}
	}
	if w.v4 {
		if err := set(unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO, "IP_MTU_DISCOVER"); err != nil {
			return err
		}
		if err := set(unix.IPPROTO_IP, unix.IP_RECVTOS, 1, "IP_RECVTOS"); err != nil {
			return err
		}
		if err := set(unix.IPPROTO_IP, unix.IP_RECVTTL, 1, "IP_RECVTTL"); err != nil {
			return err
		}
		if w.wildcard {
			return set(unix.IPPROTO_IP, unix.IP_PKTINFO, 1, "IP_PKTINFO")
		}
		return nil
	}
	if err := set(unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1, "IPV6_V6ONLY"); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO, "IPV6_MTU_DISCOVER"); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_RX, 1, "UDP_NO_CHECK6_RX"); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1, "IPV6_RECVTCLASS"); err != nil {
		return err
	}
	if err := set(unix.IPPROTO_IPV6, unix.IPV6_RECVHOPLIMIT, 1, "IPV6_RECVHOPLIMIT"); err != nil {
		return err
	}
	if w.wildcard {
		return set(unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1, "IPV6_RECVPKTINFO")
	}
	return nil
}

// ReadBatch blocks until at least one datagram arrives and fills dgs[:n]
// (at most BatchSize at a time): payload, addresses, the traffic class and
// the received TTL or hop limit in HopLimit (rdma_cm answers with the TTL
// of the peer's request, ENDPOINT.md §1.5), and the ICRC verdict. A
// datagram longer than MaxDatagram or than its buffer keeps its slot,
// empty and marked DropTooLong (the kernel truncated it).
func (w *UDPWire) ReadBatch(dgs []Datagram) (int, error) {
	if w.gro != nil {
		return w.readGRO(dgs)
	}
	b := w.rx
	return w.readBatch(dgs, &b.mmsgBatch, func(i int, buf []byte) {
		b.iovs[i].Base = &buf[0]
		b.iovs[i].SetLen(len(buf))
		h := &b.msgs[i].Hdr
		h.Namelen = unix.SizeofSockaddrInet6
		h.SetControllen(udpOOBSize)
	}, func(i int, dg *Datagram) { w.parseReceived(b, i, dg) })
}

// parseReceived fills dg from message i of the batch: addresses, traffic
// class and the ICRC verdict, or DropTooLong for a datagram the kernel
// truncated.
func (w *UDPWire) parseReceived(b *udpBatch, i int, dg *Datagram) {
	m := &b.msgs[i]
	dg.Payload = dg.Payload[:m.Len]
	w.parseCmsgs(b, i, dg)
	if m.Hdr.Flags&unix.MSG_TRUNC != 0 {
		dg.Payload, dg.Drop = dg.Payload[:0], DropTooLong
		return
	}
	dg.ICRC, _ = b.synth.verify(dg.Src, dg.Dst, dg.Payload)
}

// parseCmsgs fills dg's addresses and traffic class from message i and
// resets its verdict; it returns the segment size a UDP_GRO control
// message gives (0 without one).
func (w *UDPWire) parseCmsgs(b *udpBatch, i int, dg *Datagram) (seg int) {
	m := &b.msgs[i]
	dg.Src = sockaddrToAddrPort(&b.names[i])
	dg.Dst = w.local
	dg.TrafficClass, dg.HopLimit = 0, 0
	dg.ICRC, dg.Drop = ICRCBad, 0
	oob := b.oob[i*udpOOBSize : i*udpOOBSize+int(m.Hdr.Controllen)]
	for len(oob) >= unix.CmsgLen(0) {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < unix.CmsgLen(0) || l > len(oob) {
			break
		}
		data := oob[unix.CmsgLen(0):l]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TOS && len(data) >= 1:
			dg.TrafficClass = data[0]
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			dg.TrafficClass = uint8(binary.NativeEndian.Uint32(data))
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TTL && len(data) >= 4:
			dg.HopLimit = uint8(binary.NativeEndian.Uint32(data))
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_HOPLIMIT && len(data) >= 4:
			dg.HopLimit = uint8(binary.NativeEndian.Uint32(data))
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			dg.Dst = netip.AddrPortFrom(netip.AddrFrom4(pi.Addr), w.local.Port())
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			dg.Dst = netip.AddrPortFrom(netip.AddrFrom16(pi.Addr).Unmap(), w.local.Port())
		case h.Level == unix.SOL_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			seg = int(binary.NativeEndian.Uint32(data))
		}
		oob = oob[min(unix.CmsgSpace(l-unix.CmsgLen(0)), len(oob)):]
	}
	return seg
}

// groMsgs is how many messages one recvmmsg reads on a wire with UDP_GRO,
// each into a buffer that holds the largest UDP payload.
const (
	groMsgs   = 16
	groBufLen = 1 << 16
)

// groRx is the reader's state with UDP_GRO: the messages the last
// recvmmsg read, each a run of datagrams of one size (the last may be
// shorter) or a single datagram, and how far ReadBatch has handed them out.
type groRx struct {
	b         *udpBatch
	bufs      []byte
	meta      [groMsgs]Datagram // addresses and traffic class of each message
	seg       [groMsgs]int      // segment size, or the whole length
	done      int               // messages the last recvmmsg filled
	next, off int               // the next datagram: message and offset
}

// readGRO is ReadBatch with UDP_GRO: it cuts each message back into its
// datagrams and copies each into the next slot's buffer, checking its ICRC
// on its own. What does not fit dgs waits for the next call.
func (w *UDPWire) readGRO(dgs []Datagram) (int, error) {
	if w.closed.Load() {
		return 0, ErrWireClosed
	}
	g := w.gro
	if g.b == nil {
		g.b = newUDPBatch(groMsgs)
		g.bufs = make([]byte, groMsgs*groBufLen)
	}
	b := g.b
	limit := min(len(dgs), w.batch)
	if limit == 0 {
		return 0, nil
	}
	for i := range limit {
		if c := cap(dgs[i].Payload); c < minRoCEDatagram {
			return 0, fmt.Errorf("endpoint: udp read: datagram %d has a %d-byte buffer, want at least %d", i, c, minRoCEDatagram)
		}
	}
	n := 0
	for {
		for n < limit && g.next < g.done {
			m := &b.msgs[g.next]
			meta := &g.meta[g.next]
			dg := &dgs[n]
			buf := dg.Payload[:min(cap(dg.Payload), MaxDatagram)]
			l := min(g.seg[g.next], int(m.Len)-g.off)
			dg.Src, dg.Dst, dg.TrafficClass, dg.HopLimit = meta.Src, meta.Dst, meta.TrafficClass, meta.HopLimit
			dg.ICRC, dg.Drop = ICRCBad, 0
			if l > len(buf) || m.Hdr.Flags&unix.MSG_TRUNC != 0 {
				dg.Payload, dg.Drop = buf[:0], DropTooLong
				if m.Hdr.Flags&unix.MSG_TRUNC != 0 {
					l = int(m.Len) - g.off // the rest of a cut message is lost with it
				}
			} else {
				start := g.next*groBufLen + g.off
				dg.Payload = buf[:copy(buf, g.bufs[start:start+l])]
				dg.ICRC, _ = b.synth.verify(dg.Src, dg.Dst, dg.Payload)
			}
			n++
			if g.off += l; g.off >= int(m.Len) || l == 0 {
				g.next, g.off = g.next+1, 0
			}
		}
		if n > 0 {
			return n, nil
		}
		b.count = groMsgs
		for i := range groMsgs {
			b.iovs[i].Base = &g.bufs[i*groBufLen]
			b.iovs[i].SetLen(groBufLen)
			h := &b.msgs[i].Hdr
			h.Flags = 0
			h.Namelen = unix.SizeofSockaddrInet6
			h.SetControllen(udpOOBSize)
		}
		if err := b.receive(w.raw); err != nil {
			return 0, w.ioError("read", err)
		}
		for i := range b.done {
			seg := w.parseCmsgs(b, i, &g.meta[i])
			if seg <= 0 {
				seg = int(b.msgs[i].Len)
			}
			g.seg[i] = seg
		}
		g.done, g.next, g.off = b.done, 0, 0
	}
}

func sockaddrToAddrPort(sa *unix.RawSockaddrInet6) netip.AddrPort {
	port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
	if sa.Family == unix.AF_INET {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
}

// WriteBatch fills each datagram's ICRC and sends dgs in order, BatchSize
// at a time. TrafficClass and HopLimit travel as per-datagram control
// messages (IP_TOS/IP_TTL, IPV6_TCLASS/IPV6_HOPLIMIT), so datagrams with
// different values share one sendmmsg call.
//
// On a wire with UDP segmentation offload (see ListenUDP) consecutive
// datagrams to the same destination with the same traffic class and hop
// limit, all of one length but the last, which may be shorter, go to the
// kernel as one message with a UDP_SEGMENT control message: the kernel
// cuts it back into exactly those datagrams, each with its own ICRC
// filled here, as if each had been sent alone. When the kernel refuses a
// segmented message (EIO or EINVAL) the wire stops segmenting and sends
// the rest one datagram per message.
func (w *UDPWire) WriteBatch(dgs []Datagram) (int, error) {
	if w.closed.Load() {
		return 0, ErrWireClosed
	}
	b := w.txPool.Get().(*udpBatch)
	defer w.txPool.Put(b)
	sent := 0
	for sent < len(dgs) {
		chunk := dgs[sent:min(len(dgs), sent+w.batch)]
		packed, err := w.pack(b, chunk)
		n, werr := b.sendAll(w.raw)
		if werr != nil {
			done := 0
			if n > 0 {
				done = b.ends[n-1]
			}
			if n < b.count && b.ends[n]-done > 1 && w.gso.Load() && (errors.Is(werr, unix.EIO) || errors.Is(werr, unix.EINVAL)) {
				w.gso.Store(false)
				sent += done
				continue // the rest again, one datagram per message
			}
			return sent + done, w.ioError("write", werr)
		}
		sent += packed
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// maxGSOSegments is the most datagrams one segmented message carries
// (Linux's UDP_MAX_SEGMENTS was 64 before 6.x raised it), and maxGSOBytes
// the most UDP payload one carries (an IPv4 packet's 65535 bytes less its
// headers).
const (
	maxGSOSegments = 64
	maxGSOBytes    = 65535 - ipv4UDPHeaderLen
)

// pack prepares chunk for sendmmsg: one message per datagram, or per run
// of datagrams the kernel segments (WriteBatch). It stops at the first
// datagram it cannot send and returns how many it packed and why it
// stopped; b.ends[m] is how many of chunk's datagrams messages [0, m]
// carry.
func (w *UDPWire) pack(b *udpBatch, chunk []Datagram) (int, error) {
	gso := w.gso.Load()
	m := 0
	var (
		open          bool
		first, k      int // the open message's first datagram and count
		seg, total    int
		curDst        netip.AddrPort
		curSrc        netip.Addr
		curTC, curHop uint8
		short         bool // the open message ends in a shorter datagram
	)
	closeMsg := func() {
		h := &b.msgs[m].Hdr
		h.Iov = &b.iovs[first]
		h.SetIovlen(k)
		h.Namelen = w.putSockaddr(&b.names[m], curDst)
		oob := b.oob[m*udpOOBSize : (m+1)*udpOOBSize]
		n := w.putSendCmsgs(oob, curTC, curHop, curSrc)
		if k > 1 {
			n += putCmsgUint16(oob[n:], unix.SOL_UDP, unix.UDP_SEGMENT, uint16(seg))
		}
		h.SetControllen(n)
		if n == 0 {
			h.Control = nil
		} else {
			h.Control = &oob[0]
		}
		b.ends[m] = first + k
		m++
		open = false
	}
	for i := range chunk {
		dg := &chunk[i]
		dst := netip.AddrPortFrom(dg.Dst.Addr().Unmap(), dg.Dst.Port())
		var err error
		if dst.Addr().Is4() != w.v4 || !dst.Addr().IsValid() {
			err = fmt.Errorf("endpoint: udp write from %v: datagram %d: destination %v is not of the wire's address family", w.local, i, dg.Dst)
		}
		src := w.local
		if err == nil && w.wildcard {
			src = netip.AddrPortFrom(dg.Src.Addr().Unmap(), w.local.Port())
			if !src.Addr().IsValid() || src.Addr().Is4() != w.v4 || src.Addr().IsUnspecified() {
				err = fmt.Errorf("endpoint: udp write from %v: datagram %d: a wildcard-bound wire needs the source address in Datagram.Src, have %v", w.local, i, dg.Src)
			}
		}
		if err == nil {
			if ferr := b.synth.fill(src, dst, 0, dg.Payload); ferr != nil {
				err = fmt.Errorf("endpoint: udp write from %v: datagram %d: %w", w.local, i, ferr)
			}
		}
		if err != nil {
			if open {
				closeMsg()
			}
			b.count = m
			return i, err
		}
		b.iovs[i].Base = &dg.Payload[0]
		b.iovs[i].SetLen(len(dg.Payload))
		l := len(dg.Payload)
		if open && gso && !short && k < maxGSOSegments && l <= seg && total+l <= maxGSOBytes &&
			dst == curDst && src.Addr() == curSrc && dg.TrafficClass == curTC && dg.HopLimit == curHop {
			k++
			total += l
			short = l < seg
			continue
		}
		if open {
			closeMsg()
		}
		open, first, k, seg, total, short = true, i, 1, l, l, false
		curDst, curSrc, curTC, curHop = dst, src.Addr(), dg.TrafficClass, dg.HopLimit
	}
	if open {
		closeMsg()
	}
	b.count = m
	return len(chunk), nil
}

func (w *UDPWire) putSockaddr(sa *unix.RawSockaddrInet6, dst netip.AddrPort) uint32 {
	port := (*[2]byte)(unsafe.Pointer(&sa.Port))
	binary.BigEndian.PutUint16(port[:], dst.Port())
	if w.v4 {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		sa4.Family = unix.AF_INET
		sa4.Addr = dst.Addr().As4()
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	sa.Flowinfo = 0
	sa.Addr = dst.Addr().As16()
	sa.Scope_id = 0
	if dst.Addr().IsLinkLocalUnicast() {
		sa.Scope_id = w.scopeID
	}
	return unix.SizeofSockaddrInet6
}

// putSendCmsgs writes the control messages of one datagram and returns
// their length: the traffic class and hop limit when not zero (the socket's
// own values are never changed, so a datagram without them gets TOS 0 and
// the system's default TTL, never a previous datagram's), and the source
// address on a wildcard-bound wire. Per-datagram control messages rather
// than setsockopt calls cached by value: BenchmarkUDPWireControlMessages
// measures them at about 0.15 µs (4%) per 64-byte datagram on loopback,
// while socket options cached by value would have to split a batch at
// every change of ECN bits and serialise concurrent writers around each
// setsockopt+sendmmsg pair.
func (w *UDPWire) putSendCmsgs(oob []byte, tc, hop uint8, src netip.Addr) int {
	n := 0
	if w.v4 {
		if tc != 0 {
			n += putCmsgInt(oob[n:], unix.IPPROTO_IP, unix.IP_TOS, int32(tc))
		}
		if hop != 0 {
			n += putCmsgInt(oob[n:], unix.IPPROTO_IP, unix.IP_TTL, int32(hop))
		}
		if w.wildcard {
			data := putCmsgHeader(oob[n:], unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
			pi := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			*pi = unix.Inet4Pktinfo{Spec_dst: src.As4()}
			n += unix.CmsgSpace(unix.SizeofInet4Pktinfo)
		}
		return n
	}
	if tc != 0 {
		n += putCmsgInt(oob[n:], unix.IPPROTO_IPV6, unix.IPV6_TCLASS, int32(tc))
	}
	if hop != 0 {
		n += putCmsgInt(oob[n:], unix.IPPROTO_IPV6, unix.IPV6_HOPLIMIT, int32(hop))
	}
	if w.wildcard {
		data := putCmsgHeader(oob[n:], unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
		pi := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
		*pi = unix.Inet6Pktinfo{Addr: src.As16()}
		n += unix.CmsgSpace(unix.SizeofInet6Pktinfo)
	}
	return n
}

func putCmsgHeader(b []byte, level, typ int32, dataLen int) []byte {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(dataLen))
	data := b[unix.CmsgLen(0):unix.CmsgSpace(dataLen)]
	clear(data)
	return data
}

func putCmsgInt(b []byte, level, typ int32, v int32) int {
	binary.NativeEndian.PutUint32(putCmsgHeader(b, level, typ, 4), uint32(v))
	return unix.CmsgSpace(4)
}

func putCmsgUint16(b []byte, level, typ int32, v uint16) int {
	binary.NativeEndian.PutUint16(putCmsgHeader(b, level, typ, 2), v)
	return unix.CmsgSpace(2)
}

var _ Wire = (*UDPWire)(nil)
