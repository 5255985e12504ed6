package endpoint

import (
	"errors"
	"net/netip"

	"github.com/google/gopacket"

	"github.com/ibwire/ibwire/layers"
)

// opcodeFor returns the opcode of a packet, from layers' table. The
// endpoint asks only for combinations the table has, so a miss is opcode 0
// (RC SEND FIRST) only in a broken build, and the tests would catch it.
func opcodeFor(svc layers.ServiceType, op layers.Operation, pos layers.Position, imm, inv bool) layers.Opcode {
	o, _ := layers.OpcodeFor(svc, op, pos, imm, inv)
	return o
}

// serviceOf maps a QP type to its transport service.
func serviceOf(t QPType) layers.ServiceType {
	switch t {
	case RC:
		return layers.ServiceRC
	case UC:
		return layers.ServiceUC
	case UD:
		return layers.ServiceUD
	}
	return layers.ServiceUnknown
}

// frameWriter is the gopacket.SerializeBuffer the layers' SerializeTo
// methods write into: one fixed transmit buffer, the payload copied in
// first at the headers' offset and the headers prepended in front of it. It
// never allocates, where gopacket's own buffer would grow a slice per packet.
type frameWriter struct {
	buf        []byte
	start, end int
}

var _ gopacket.SerializeBuffer = (*frameWriter)(nil)

func (f *frameWriter) reset(buf []byte, start, end int) { f.buf, f.start, f.end = buf, start, end }

func (f *frameWriter) Bytes() []byte { return f.buf[f.start:f.end] }

var errFrameFull = errors.New("frame buffer exhausted")

func (f *frameWriter) PrependBytes(n int) ([]byte, error) {
	if n > f.start {
		return nil, errFrameFull
	}
	f.start -= n
	return f.buf[f.start : f.start+n], nil
}

func (f *frameWriter) AppendBytes(n int) ([]byte, error) {
	if f.end+n > len(f.buf) {
		return nil, errFrameFull
	}
	f.end += n
	return f.buf[f.end-n : f.end], nil
}

func (f *frameWriter) Clear() error {
	f.start, f.end = 0, 0
	return nil
}

// Layers and PushLayer serve gopacket.SerializeLayers' bookkeeping, which
// the endpoint does not use: it calls each header's SerializeTo itself.
func (f *frameWriter) Layers() []gopacket.LayerType { return nil }

func (f *frameWriter) PushLayer(gopacket.LayerType) {}

// decodeFeedback is the DecodeFeedback layers' decoders ask for; the
// endpoint reads truncation from their errors instead.
type decodeFeedback struct{}

func (decodeFeedback) SetTruncated() {}

// txBatch is the number of packets a QP queues before writing them to the
// wire in one WriteBatch.
const txBatch = 64

// txState is a QP's transmit queue: fixed buffers reused for every packet.
type txState struct {
	bufs [][MaxDatagram]byte
	dgs  []Datagram
	n    int
	hdr  layers.BTH // the packet being built
	fw   frameWriter
	// the packet being built
	cur     []byte
	hdrLen  int
	plen    int
	pad     int
	pending bool
}

func newTxState() txState {
	return txState{bufs: make([][MaxDatagram]byte, txBatch), dgs: make([]Datagram, txBatch)}
}

// start begins a packet of opcode op with plen payload bytes and returns its
// header (to fill: PSN, AckReq, extended headers) and the payload to fill.
func (qp *QP) start(op layers.Opcode, plen int) (*layers.BTH, []byte) {
	t := &qp.tx
	if t.n == len(t.dgs) {
		qp.flush()
	}
	info := op.Info()
	t.cur = t.bufs[t.n][:]
	t.hdrLen = info.HeaderLength()
	t.plen = plen
	t.pad = -plen & 3
	h := &t.hdr
	h.Opcode = op
	h.SE, h.MigReq, h.FECN, h.BECN, h.AckReq = false, false, false, false, false
	h.TVer, h.Resv6, h.Resv7 = 0, 0, 0
	h.PadCount = uint8(t.pad)
	h.PKey = qp.attr.PKey
	h.DestQP = qp.attr.DestQPN
	t.pending = true
	return h, t.cur[t.hdrLen : t.hdrLen+plen]
}

// finish serializes the headers of the packet begun by start in front of
// its payload, zeroes the pad and ICRC (the wire fills it) and queues it
// for dst.
func (qp *QP) finish(dst netip.Addr, sport uint16, hop uint8) {
	t := &qp.tx
	if !t.pending {
		return
	}
	t.pending = false
	end := t.hdrLen + t.plen
	total := end + t.pad + layers.ICRCLength
	clear(t.cur[end:total])
	t.fw.reset(t.cur[:total], t.hdrLen, total)
	sb, opts := &t.fw, gopacket.SerializeOptions{} // the lengths and checksums are set by hand
	h := &t.hdr
	hs := h.Info().HeaderList()
	for i := len(hs) - 1; i >= 0; i-- {
		if err := h.ETH(hs[i]).SerializeTo(sb, opts); err != nil {
			return
		}
	}
	if err := h.SerializeTo(sb, opts); err != nil || t.fw.start != 0 {
		return
	}
	t.dgs[t.n] = Datagram{
		Src:          netip.AddrPortFrom(qp.dev.addr.Addr(), sport),
		Dst:          netip.AddrPortFrom(dst, layers.RoCEv2Port),
		TrafficClass: qp.attr.TrafficClass,
		HopLimit:     hop,
		Payload:      t.cur[:total],
	}
	t.n++
}

// flush writes the queued packets.
func (qp *QP) flush() {
	t := &qp.tx
	if t.n == 0 {
		return
	}
	n, _ := qp.dev.wire.WriteBatch(t.dgs[:t.n])
	qp.dev.c.sentPkts.Add(uint64(n))
	for i := range t.n {
		t.dgs[i].Payload = nil
	}
	t.n = 0
}

// udpSourcePort is the UDP source port rxe uses for a connected QP
// (ENDPOINT.md §1.5): from the address vector's flow label, or with flow
// label 0 (the norm) from the QP pair, which both ends compute alike.
func udpSourcePort(flowLabel, lqpn, rqpn uint32) uint16 {
	if flowLabel&0xFFFFF == 0 {
		return layers.RXESourcePort(lqpn, rqpn)
	}
	return layers.FlowLabelSourcePort(flowLabel)
}

// udSourcePort is the port of a UD QP.
func udSourcePort(qpn uint32) uint16 { return layers.RXEUDSourcePort(qpn) }
