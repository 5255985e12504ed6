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

// hostile describes one packet an attacker sends, built with layers.
type hostile struct {
	op      layers.Opcode
	psn     layers.PSN
	ackReq  bool
	pkey    uint16 // 0: 0xFFFF
	qpn     uint32 // 0: the victim's QPN
	tver    uint8
	reth    layers.RETH
	atomic  layers.AtomicETH
	deth    layers.DETH
	aeth    layers.AETH
	ack     layers.AtomicAckETH
	payload []byte
}

func (h hostile) bytes(victimQPN uint32) []byte {
	b := layers.BTH{Opcode: h.op, PKey: h.pkey, DestQP: h.qpn, PSN: h.psn, AckReq: h.ackReq, TVer: h.tver}
	if b.PKey == 0 {
		b.PKey = endpoint.DefaultPKey
	}
	if b.DestQP == 0 {
		b.DestQP = victimQPN
	}
	b.RETH, b.AtomicETH, b.DETH, b.AETH, b.AtomicAckETH = h.reth, h.atomic, h.deth, h.aeth, h.ack
	b.Trailer.Pad = make([]byte, -len(h.payload)&3)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, b.SerializableLayers(h.payload)...); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// response is what the victim answered, decoded.
type response struct {
	op   layers.Opcode
	psn  layers.PSN
	syn  layers.AETHSyndrome
	orig uint64
}

func ack(psn layers.PSN) response {
	return response{op: 0x11, psn: psn, syn: layers.MakeAckSyndrome(0x1F)}
}

func nak(psn layers.PSN, c layers.NAKCode) response {
	return response{op: 0x11, psn: psn, syn: layers.MakeNakSyndrome(c)}
}

// victim is an endpoint under attack over wiretest: the attacker owns the
// other wire and speaks raw packets as QPN attackerQPN.
type victim struct {
	*peer
	attacker *wiretest.Wire
	src      netip.AddrPort
	p0       layers.PSN
	mu       sync.Mutex
	got      []response
	ro       *endpoint.MR // a second region, remote-read only
	roAll    []byte
}

const attackerQPN = 0x99

func newVictim(t *testing.T, typ endpoint.QPType, access endpoint.Access) *victim {
	wa, wb := wiretest.NewPair(wiretest.Config{})
	v := &victim{attacker: wa, src: wa.LocalAddr(), p0: 0xFFFF00} // near the wrap on purpose
	v.peer = newPeer(t, wb, peerOpts{typ: typ, memSize: 4096})
	v.roAll = make([]byte, 3*guardLen)
	for i := range v.roAll {
		v.roAll[i] = guardByte
	}
	var err error
	v.ro, err = v.pd.RegMR(v.roAll[guardLen:2*guardLen], endpoint.AccessRemoteRead)
	require.NoError(t, err)
	ca := endpoint.ConnectAttr{Remote: wa.LocalAddr().Addr(), RemoteQPN: attackerQPN, RemotePSN: v.p0, LocalPSN: 0x1000,
		MTU: layers.MTU1024, MinRNRTimer: 3, QKey: 0x11111111}
	if access == 0 {
		ca.NoAccess = true
	} else {
		ca.Access = access
	}
	require.NoError(t, v.qp.Connect(ca))
	go drainWire(wa, func(dg endpoint.Datagram) {
		var b layers.BTH
		if b.DecodeFromBytes(dg.Payload, gopacket.NilDecodeFeedback) != nil {
			return
		}
		r := response{op: b.Opcode, psn: b.PSN}
		if b.Info().Has(layers.HdrAETH) {
			r.syn = b.AETH.Syndrome
		}
		if b.Info().Has(layers.HdrAtomicAckETH) {
			r.orig = b.AtomicAckETH.OrigRemoteData
		}
		v.mu.Lock()
		v.got = append(v.got, r)
		v.mu.Unlock()
	})
	return v
}

// drainWire reads w until it is closed, handing each datagram to fn (nil:
// discard), so that an attacker's side of a wiretest pair neither loses
// what the victim answers nor lets the pair's queue fill.
func drainWire(w endpoint.Wire, fn func(endpoint.Datagram)) {
	dgs := make([]endpoint.Datagram, 8)
	for i := range dgs {
		dgs[i].Payload = make([]byte, endpoint.MaxDatagram)
	}
	for {
		for i := range dgs {
			dgs[i].Payload = dgs[i].Payload[:cap(dgs[i].Payload)]
		}
		n, err := w.ReadBatch(dgs)
		if err != nil {
			return
		}
		if fn != nil {
			for _, dg := range dgs[:n] {
				fn(dg)
			}
		}
	}
}

// reconnect takes the victim's QP through RESET back to RTS with the
// attributes Connect gave it, changed by tweak.
func (v *victim) reconnect(tweak func(*endpoint.QPAttr)) {
	attr, err := v.qp.Query()
	if err != nil {
		panic(err)
	}
	tweak(&attr)
	for _, s := range []struct {
		state endpoint.QPState
		mask  endpoint.AttrMask
	}{
		{endpoint.StateReset, 0},
		{endpoint.StateInit, endpoint.AttrAccess},
		{endpoint.StateRTR, endpoint.AttrAV | endpoint.AttrPathMTU | endpoint.AttrDestQPN | endpoint.AttrRQPSN | endpoint.AttrMaxDestRdAtomic | endpoint.AttrMinRNRTimer},
		{endpoint.StateRTS, endpoint.AttrSQPSN | endpoint.AttrTimeout | endpoint.AttrRetryCnt | endpoint.AttrRNRRetry | endpoint.AttrMaxRdAtomic},
	} {
		attr.State = s.state
		if err := v.qp.Modify(attr, endpoint.AttrState|s.mask); err != nil {
			panic(err)
		}
	}
}

func (v *victim) send(h hostile) { v.wire.Inject(v.src, h.bytes(v.qp.QPN())) }

func (v *victim) responses() []response {
	time.Sleep(time.Millisecond)
	synctest.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]response(nil), v.got...)
}

var all = endpoint.AccessRemoteWrite | endpoint.AccessRemoteRead | endpoint.AccessRemoteAtomic

func TestAdversarial(t *testing.T) {
	mtuBytes := make([]byte, 1024)
	for _, tc := range []struct {
		name      string
		typ       endpoint.QPType
		access    endpoint.Access
		attack    func(v *victim)
		want      func(v *victim) []response
		state     endpoint.QPState
		counter   func(c endpoint.Counters) uint64 // must be 1 after the attack
		untouched bool                             // the region must still be all zero
		check     func(t *testing.T, v *victim)    // more checks after the attack
	}{
		{
			name: "bad rkey", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey() ^ 0x5A5A, DMALength: 8}, payload: []byte("12345678")})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "VA outside the region", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr() + uint64(v.mr.Len()), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "VA below the region", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr() - 4, RKey: v.mr.RKey(), DMALength: 8}, payload: []byte("evilevil")})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "WRITE length beyond the region", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x06, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr() + 3072 + 8, RKey: v.mr.RKey(), DMALength: 2048}, payload: mtuBytes})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "READ length beyond the region", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0C, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr() + 4000, RKey: v.mr.RKey(), DMALength: 100}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "WRITE to a read-only region", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.ro.Addr(), RKey: v.ro.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKRemoteAccessError)} },
		},
		{
			name: "atomic on an unaligned VA", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x14, psn: v.p0, ackReq: true, atomic: layers.AtomicETH{VA: v.mr.Addr() + 3, RKey: v.mr.RKey(), SwapAddData: 1}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "READ without remote read access on the QP", typ: endpoint.RC, access: endpoint.AccessRemoteWrite, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0C, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 8}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "opcode sequence: MIDDLE without FIRST", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x07, psn: v.p0, payload: mtuBytes})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "opcode sequence: SEND LAST inside a WRITE", typ: endpoint.RC, access: all, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x06, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 2048}, payload: mtuBytes})
				v.send(hostile{op: 0x02, psn: v.p0.Add(1), ackReq: true, payload: mtuBytes})
			},
			want: func(v *victim) []response { return []response{nak(v.p0.Add(1), layers.NAKInvalidRequest)} },
		},
		{
			name: "WRITE payload larger than the MTU", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 1028}, payload: make([]byte, 1028)})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "WRITE payload shorter than its RETH length", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 16}, payload: make([]byte, 8)})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "RETH length over 2^31", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0C, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 1<<31 + 1}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "unsupported opcode FLUSH", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.send(hostile{op: 0x1C, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 8}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "SEND larger than the receive buffer", typ: endpoint.RC, access: all, state: endpoint.StateErr,
			attack: func(v *victim) {
				if err := v.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{v.mr.SGE(0, 16)}}); err != nil {
					panic(err)
				}
				v.send(hostile{op: 0x04, psn: v.p0, ackReq: true, payload: []byte("0123456789abcdefTOO-LONG-FOR-IT!")})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
			check: func(t *testing.T, v *victim) {
				require.Equal(t, make([]byte, len(v.mem)-16), v.mem[16:], "nothing past the receive SGE")
				wcs := waitWCs(t, v.rcq, 1)
				require.Equal(t, uint64(1), wcs[0].ID)
				require.Equal(t, endpoint.StatusLocLenErr, wcs[0].Status)
			},
		},
		{
			name: "SEND with no receive WR", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x04, psn: v.p0, ackReq: true, payload: []byte("hi")})
			},
			want: func(v *victim) []response {
				return []response{{op: 0x11, psn: v.p0, syn: layers.MakeRNRNakSyndrome(3)}}
			},
			counter: func(c endpoint.Counters) uint64 { return c.SendRNRErr },
		},
		{
			name: "PSN far ahead: one sequence NAK, then silence until back in sequence", typ: endpoint.RC, access: all, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0.Add(1000), ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
				v.send(hostile{op: 0x0A, psn: v.p0.Add(1001), ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
				v.send(hostile{op: 0x0A, psn: v.p0.Add(5_000_000), ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr() + 8, RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("good")})
			},
			want: func(v *victim) []response {
				return []response{nak(v.p0, layers.NAKPSNSequenceError), ack(v.p0)}
			},
			counter: func(c endpoint.Counters) uint64 { return c.OutOfSeqRequest },
			check: func(t *testing.T, v *victim) {
				require.Equal(t, make([]byte, 8), v.mem[0:8], "the evil WRITEs were not executed")
				require.Equal(t, []byte("good"), v.mem[8:12])
				require.Equal(t, make([]byte, len(v.mem)-12), v.mem[12:])
			},
		},
		{
			name: "PSN far behind: a duplicate, re-ACKed without executing", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0.Add(-1000), ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return []response{ack(v.p0.Add(-1))} },
			counter: func(c endpoint.Counters) uint64 { return c.DuplicateRequest },
		},
		{
			name: "atomic replayed, not re-executed", typ: endpoint.RC, access: all, state: endpoint.StateRTS,
			attack: func(v *victim) {
				h := hostile{op: 0x14, psn: v.p0, ackReq: true, atomic: layers.AtomicETH{VA: v.mr.Addr() + 8, RKey: v.mr.RKey(), SwapAddData: 5}}
				v.send(h)
				v.send(h)
				v.send(hostile{op: 0x14, psn: v.p0.Add(1), ackReq: true, atomic: layers.AtomicETH{VA: v.mr.Addr() + 8, RKey: v.mr.RKey(), SwapAddData: 5}})
			},
			want: func(v *victim) []response {
				return []response{
					{op: 0x12, psn: v.p0, syn: layers.MakeAckSyndrome(0x1F), orig: 0},
					{op: 0x12, psn: v.p0, syn: layers.MakeAckSyndrome(0x1F), orig: 0},
					{op: 0x12, psn: v.p0.Add(1), syn: layers.MakeAckSyndrome(0x1F), orig: 5},
				}
			},
		},
		{
			name: "duplicate READ re-executed inside its span, dropped outside", typ: endpoint.RC, access: all, state: endpoint.StateRTS,
			attack: func(v *victim) {
				read := func(psn layers.PSN, off, n uint32) hostile {
					return hostile{op: 0x0C, psn: psn, ackReq: true, reth: layers.RETH{VA: v.mr.Addr() + uint64(off), RKey: v.mr.RKey(), DMALength: n}}
				}
				v.send(read(v.p0, 0, 2048))           // two responses: p0, p0+1
				v.send(read(v.p0.Add(1), 1024, 1024)) // the second half again
				v.send(read(v.p0.Add(1), 1024, 2048)) // beyond the original: dropped
				v.send(read(v.p0.Add(-5), 0, 8))      // no such resource: dropped
			},
			want: func(v *victim) []response {
				syn := layers.MakeAckSyndrome(0x1F)
				return []response{{op: 0x0D, psn: v.p0, syn: syn}, {op: 0x0F, psn: v.p0.Add(1), syn: syn}, {op: 0x10, psn: v.p0.Add(1), syn: syn}}
			},
		},
		{
			name: "max_dest_rd_atomic 0: READ is an invalid request", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.reconnect(func(a *endpoint.QPAttr) { a.MaxDestRdAtomic = 0 })
				v.send(hostile{op: 0x0C, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 8}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "max_dest_rd_atomic 0: atomic is an invalid request", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateErr,
			attack: func(v *victim) {
				v.reconnect(func(a *endpoint.QPAttr) { a.MaxDestRdAtomic = 0 })
				v.send(hostile{op: 0x14, psn: v.p0, ackReq: true, atomic: layers.AtomicETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), SwapAddData: 1}})
			},
			want: func(v *victim) []response { return []response{nak(v.p0, layers.NAKInvalidRequest)} },
		},
		{
			name: "UC bad rkey: dropped silently", typ: endpoint.UC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x2A, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey() ^ 0x5A5A, DMALength: 8}, payload: []byte("evilevil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.ResponderDrops },
		},
		{
			name: "UC VA outside the region: dropped silently", typ: endpoint.UC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x2A, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr() + uint64(v.mr.Len()) - 4, RKey: v.mr.RKey(), DMALength: 8}, payload: []byte("evilevil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.ResponderDrops },
		},
		{
			name: "UC opcode sequence: MIDDLE without FIRST, dropped silently", typ: endpoint.UC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x27, psn: v.p0, payload: mtuBytes})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.ResponderDrops },
		},
		{
			name: "UC opcode sequence: SEND LAST inside a WRITE, the message dropped", typ: endpoint.UC, access: all, state: endpoint.StateRTS,
			attack: func(v *victim) {
				if err := v.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{v.mr.SGE(2048, 2048)}}); err != nil {
					panic(err)
				}
				v.send(hostile{op: 0x26, psn: v.p0, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 2048}, payload: mtuBytes})
				v.send(hostile{op: 0x22, psn: v.p0.Add(1), payload: mtuBytes})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.ResponderDrops },
			check: func(t *testing.T, v *victim) {
				require.Equal(t, make([]byte, 2048), v.mem[2048:], "the SEND LAST wrote nothing")
				require.Zero(t, v.rcq.Len(), "no receive completion")
			},
		},
		{
			name: "UC SEND with no receive WR: dropped silently", typ: endpoint.UC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x24, psn: v.p0, payload: []byte("hi")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.ResponderDrops },
		},
		{
			name: "wrong P_Key", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, pkey: 0x1234, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropPKey },
		},
		{
			name: "bad ICRC", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				b := hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")}.bytes(v.qp.QPN())
				b[len(b)-1] ^= 0xFF
				v.wire.InjectRaw(v.src, b)
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropICRC },
		},
		{
			name: "truncated inside the RETH", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				b := hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")}.bytes(v.qp.QPN())
				v.wire.Inject(v.src, b[:20])
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropShort },
		},
		{
			name: "truncated inside the BTH", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				b := hostile{op: 0x04, psn: v.p0, ackReq: true}.bytes(v.qp.QPN())
				v.wire.InjectRaw(v.src, b[:7])
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropShort },
		},
		{
			name: "oversize datagram", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				// A valid WRITE ONLY but for its length: past MaxDatagram,
				// the wire cannot read it whole.
				evil := make([]byte, endpoint.MaxDatagram)
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: uint32(len(evil))}, payload: evil})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropLong },
		},
		{
			name: "transport version not 0", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, tver: 1, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropQP },
		},
		{
			name: "unknown destination QPN", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x0A, psn: v.p0, ackReq: true, qpn: 0x4242, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropQP },
		},
		{
			name: "source address not the QP's peer", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				b := hostile{op: 0x0A, psn: v.p0, ackReq: true, reth: layers.RETH{VA: v.mr.Addr(), RKey: v.mr.RKey(), DMALength: 4}, payload: []byte("evil")}.bytes(v.qp.QPN())
				v.wire.Inject(netip.MustParseAddrPort("127.0.0.9:4791"), b)
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropAddr },
		},
		{
			name: "UD opcode at an RC QP", typ: endpoint.RC, access: all, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				v.send(hostile{op: 0x64, psn: v.p0, deth: layers.DETH{QKey: 0x11111111, SrcQP: attackerQPN}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropQP },
		},
		{
			name: "UD wrong Q_Key", typ: endpoint.UD, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				if err := v.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{v.mr.SGE(0, 4096)}}); err != nil {
					panic(err)
				}
				v.send(hostile{op: 0x64, psn: 5, deth: layers.DETH{QKey: 0x22222222, SrcQP: attackerQPN}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropQKey },
		},
		{
			name: "UD wrong P_Key", typ: endpoint.UD, untouched: true, state: endpoint.StateRTS,
			attack: func(v *victim) {
				if err := v.qp.PostRecv(endpoint.RecvWR{ID: 1, SGL: []endpoint.SGE{v.mr.SGE(0, 4096)}}); err != nil {
					panic(err)
				}
				v.send(hostile{op: 0x64, psn: 5, pkey: 0x8001, deth: layers.DETH{QKey: 0x11111111, SrcQP: attackerQPN}, payload: []byte("evil")})
			},
			want:    func(v *victim) []response { return nil },
			counter: func(c endpoint.Counters) uint64 { return c.DropPKey },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := newVictim(t, tc.typ, tc.access)
				defer v.close(t)
				tc.attack(v)
				require.Equal(t, tc.want(v), v.responses())
				require.Equal(t, tc.state, v.qp.State())
				if tc.counter != nil {
					require.Equal(t, uint64(1), tc.counter(v.dev.Counters()))
				}
				v.guardsIntact(t)
				for i := 0; i < guardLen; i++ {
					require.Equal(t, byte(guardByte), v.roAll[i])
					require.Equal(t, byte(guardByte), v.roAll[2*guardLen+i])
				}
				if tc.untouched {
					require.Equal(t, make([]byte, len(v.mem)), v.mem, "the region is untouched")
				}
				if tc.typ == endpoint.UD {
					require.Zero(t, v.rcq.Len(), "no receive completion")
				}
				if tc.check != nil {
					tc.check(t, v)
				}
			})
		})
	}
}
