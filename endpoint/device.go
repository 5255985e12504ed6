package endpoint

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/ibwire/ibwire/layers"
)

// GID is a 16-byte global identifier; on RoCEv2 it is the IP address, an
// IPv4 address as ::ffff:a.b.c.d.
type GID [16]byte

// Addr returns the IP address the GID stands for (IPv4 unmapped).
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g).Unmap() }

// String prints the GID as an IPv6 address ("::ffff:127.0.0.1").
func (g GID) String() string { return netip.AddrFrom16(g).String() }

// GIDOf returns the RoCEv2 GID of an address.
func GIDOf(a netip.Addr) GID { return GID(a.As16()) }

// Counters are the device's packet counters, named after rxe's hw_counters
// (ENDPOINT.md §1.3) where rxe has one.
type Counters struct {
	SentPkts          uint64 // datagrams written
	RcvdPkts          uint64 // datagrams that passed every acceptance check
	DropShort         uint64 // shorter than their headers, or undecodable
	DropLong          uint64 // longer than MaxDatagram: the wire could not read them whole
	DropAddr          uint64 // destination IP not our GID, or RC/UC source not the QP's peer
	DropQP            uint64 // TVer ≠ 0, QPN 0, unknown QPN, wrong QP type or state
	DropPKey          uint64 // P_Key not in the default partition
	DropQKey          uint64 // UD Q_Key mismatch
	DropICRC          uint64 // ICRC did not verify
	DropQueue         uint64 // QP's input queue full
	DuplicateRequest  uint64
	OutOfSeqRequest   uint64 // sequence NAKs sent
	RcvdSeqErr        uint64 // sequence NAKs received
	RcvdRNRErr        uint64 // RNR NAKs received
	SendRNRErr        uint64 // RNR NAKs sent
	RetryExceededErr  uint64
	RetryRNRExceeded  uint64
	ResponderDrops    uint64 // requests a responder dropped silently (UC/UD errors, OOS after NAK)
	CompleterDrops    uint64 // responses the requester ignored (duplicates, stale or out-of-order READ responses)
	CompleterRetryErr uint64 // retries started by the completer (timeout or sequence NAK)
}

type counters struct {
	sentPkts, rcvdPkts, dropShort, dropLong, dropAddr, dropQP, dropPKey, dropQKey, dropICRC, dropQueue,
	duplicateRequest, outOfSeqRequest, rcvdSeqErr, rcvdRNRErr, sendRNRErr, retryExceeded,
	retryRNRExceeded, responderDrops, completerDrops, completerRetry atomic.Uint64
}

// Device is a RoCEv2 HCA in software over one Wire: its GID is the wire's
// address, it owns the memory regions and QPs made through it, and one
// receive goroutine hands every accepted packet to the QP it is for.
type Device struct {
	wire Wire
	gid  GID
	addr netip.AddrPort
	keys *keyRand

	mrMu     sync.RWMutex
	mrByLKey map[uint32]*MR
	mrByRKey map[uint32]*MR

	qpMu    sync.RWMutex
	qps     map[uint32]*QP
	nextQPN uint32

	free    chan *rxPacket // recycled receive buffers
	closing chan struct{}
	rxDone  chan struct{}
	once    sync.Once
	c       counters
	onDrop  DropHandler
}

// rxPacket is one received datagram with its decoded headers. The receive
// loop fills it and hands it to a QP's goroutine, which recycles it.
type rxPacket struct {
	buf  [MaxDatagram]byte
	n    int
	src  netip.AddrPort
	dst  netip.AddrPort
	tc   uint8
	bth  layers.BTH
	icrc ICRCStatus
}

// firstQPN is the first QPN handed out, as rxe (QPNs below are reserved:
// 0 SMI, 1 GSI).
const firstQPN = 0x11

// NewDevice opens a device over w and starts its receive loop. Close stops
// it and closes w.
func NewDevice(w Wire, opts ...DeviceOption) *Device {
	local := w.LocalAddr()
	d := &Device{
		wire:     w,
		addr:     local,
		gid:      GIDOf(local.Addr()),
		keys:     newKeyRand(),
		mrByLKey: make(map[uint32]*MR),
		mrByRKey: make(map[uint32]*MR),
		qps:      make(map[uint32]*QP),
		nextQPN:  firstQPN,
		free:     make(chan *rxPacket, 4096),
		closing:  make(chan struct{}),
		rxDone:   make(chan struct{}),
	}
	for _, o := range opts {
		o(d)
	}
	go d.receive()
	return d
}

// GID returns the device's GID (index 0 of its one-entry GID table).
func (d *Device) GID() GID { return d.gid }

// Addr returns the wire's address and port.
func (d *Device) Addr() netip.AddrPort { return d.addr }

// Wire returns the wire the device runs over.
func (d *Device) Wire() Wire { return d.wire }

// Counters returns a snapshot of the packet counters.
func (d *Device) Counters() Counters {
	c := &d.c
	return Counters{
		SentPkts: c.sentPkts.Load(), RcvdPkts: c.rcvdPkts.Load(), DropShort: c.dropShort.Load(), DropLong: c.dropLong.Load(),
		DropAddr: c.dropAddr.Load(), DropQP: c.dropQP.Load(), DropPKey: c.dropPKey.Load(),
		DropQKey: c.dropQKey.Load(), DropICRC: c.dropICRC.Load(), DropQueue: c.dropQueue.Load(),
		DuplicateRequest: c.duplicateRequest.Load(), OutOfSeqRequest: c.outOfSeqRequest.Load(),
		RcvdSeqErr: c.rcvdSeqErr.Load(), RcvdRNRErr: c.rcvdRNRErr.Load(), SendRNRErr: c.sendRNRErr.Load(),
		RetryExceededErr: c.retryExceeded.Load(), RetryRNRExceeded: c.retryRNRExceeded.Load(),
		ResponderDrops: c.responderDrops.Load(), CompleterDrops: c.completerDrops.Load(), CompleterRetryErr: c.completerRetry.Load(),
	}
}

// Close destroys every QP, closes the wire and waits for the device's
// goroutines to end.
func (d *Device) Close() error {
	var err error
	d.once.Do(func() {
		close(d.closing)
		d.qpMu.Lock()
		qps := make([]*QP, 0, len(d.qps))
		for _, qp := range d.qps {
			qps = append(qps, qp)
		}
		d.qpMu.Unlock()
		for _, qp := range qps {
			qp.stop()
		}
		err = d.wire.Close()
		<-d.rxDone
	})
	return err
}

func (d *Device) getRx() *rxPacket {
	select {
	case p := <-d.free:
		return p
	default:
		return new(rxPacket)
	}
}

func (d *Device) putRx(p *rxPacket) {
	select {
	case d.free <- p:
	default:
	}
}

// receive is the device's one receive goroutine: it reads batches from the
// wire, applies the checks that need no QP state (ENDPOINT.md §1.3 steps
// 1-4 and 8) and queues each packet to its QP.
func (d *Device) receive() {
	defer close(d.rxDone)
	batch := max(d.wire.BatchSize(), 1)
	dgs := make([]Datagram, batch)
	pkts := make([]*rxPacket, batch)
	for {
		for i := range dgs {
			if pkts[i] == nil {
				pkts[i] = d.getRx()
			}
			dgs[i] = Datagram{Payload: pkts[i].buf[:]}
		}
		n, err := d.wire.ReadBatch(dgs)
		if err != nil {
			if errors.Is(err, ErrWireClosed) {
				return
			}
			select {
			case <-d.closing:
				return
			default:
			}
			continue
		}
		// Slot i holds pkts[i].buf: the wire never moves a buffer to
		// another slot, and marks a datagram it could not deliver.
		for i := 0; i < n; i++ {
			p := pkts[i]
			dg := &dgs[i]
			p.n = len(dg.Payload)
			p.src, p.dst, p.tc, p.icrc = dg.Src, dg.Dst, dg.TrafficClass, dg.ICRC
			if dg.Drop != 0 {
				d.wireDrop(p, dg.Drop)
				continue
			}
			if d.accept(p) {
				pkts[i] = nil
			}
		}
	}
}

// wireDrop counts a datagram the wire could not deliver.
func (d *Device) wireDrop(p *rxPacket, r DropReason) {
	p.n = 0
	if r == DropTooLong {
		d.c.dropLong.Add(1)
	} else {
		r = DropTooShort
		d.c.dropShort.Add(1)
	}
	d.dropped(p, Drop{Reason: r})
}

// accept checks p and queues it to its QP; false means dropped (p stays
// with the caller for reuse).
func (d *Device) accept(p *rxPacket) bool {
	data := p.buf[:p.n]
	if len(data) < layers.BTHLength+layers.ICRCLength {
		d.c.dropShort.Add(1)
		d.dropped(p, Drop{Reason: DropTooShort})
		return false
	}
	if p.dst.Addr().Unmap() != d.addr.Addr().Unmap() {
		d.c.dropAddr.Add(1)
		d.dropped(p, Drop{Reason: DropDestAddr, Peer: d.addr.Addr()})
		return false
	}
	info := layers.Opcode(data[0]).Info()
	if !info.Known || len(data) < info.HeaderLength()+layers.ICRCLength {
		d.c.dropShort.Add(1)
		d.dropped(p, Drop{Reason: DropTooShort})
		return false
	}
	if err := p.bth.DecodeFromBytes(data, decodeFeedback{}); err != nil {
		d.c.dropShort.Add(1)
		d.dropped(p, Drop{Reason: DropTooShort})
		return false
	}
	if p.bth.TVer != 0 || p.bth.DestQP == 0 {
		d.c.dropQP.Add(1)
		d.dropped(p, Drop{Reason: DropHeader})
		return false
	}
	d.qpMu.RLock()
	qp := d.qps[p.bth.DestQP]
	d.qpMu.RUnlock()
	if qp == nil {
		d.c.dropQP.Add(1)
		d.dropped(p, Drop{Reason: DropUnknownQPN})
		return false
	}
	if p.icrc == ICRCBad {
		d.c.dropICRC.Add(1)
		d.dropped(p, Drop{Reason: DropBadICRC})
		return false
	}
	select {
	case qp.inbox <- p:
		return true
	default:
		d.c.dropQueue.Add(1)
		d.dropped(p, Drop{Reason: DropInboxFull})
		return false
	}
}

// register adds a QP and assigns its QPN.
func (d *Device) register(qp *QP, gsi bool) error {
	d.qpMu.Lock()
	defer d.qpMu.Unlock()
	select {
	case <-d.closing:
		return ErrDeviceClosed
	default:
	}
	if gsi {
		if d.qps[1] != nil {
			return fmt.Errorf("create GSI QP: QPN 1 exists: %w", ErrInvalidAttr)
		}
		qp.qpn = 1
	} else {
		for d.qps[d.nextQPN] != nil || d.nextQPN < firstQPN {
			d.nextQPN = (d.nextQPN + 1) & layers.PSNMask
		}
		qp.qpn = d.nextQPN
		d.nextQPN = (d.nextQPN + 1) & layers.PSNMask
	}
	d.qps[qp.qpn] = qp
	return nil
}

func (d *Device) unregister(qp *QP) {
	d.qpMu.Lock()
	if d.qps[qp.qpn] == qp {
		delete(d.qps, qp.qpn)
	}
	d.qpMu.Unlock()
}
